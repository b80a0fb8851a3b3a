"""The values steps are made of: what to find on screen, where to touch it, what to wait for.

Every directive's model (``argent.flows.directives``) is built from these; they hold what the YAML
means, not how it was spelled.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from attrs import field, frozen


def condition_platform(platform: str) -> str:
    """The platform `when: { platform }` compares with: a remote iOS device (``ios-remote``) is ios."""
    return "ios" if platform == "ios-remote" else platform


DIRECTIONS: tuple[str, ...] = ("up", "down", "left", "right")
ConditionKind: TypeAlias = Literal["exists", "visible", "hidden", "text"]
TextMode: TypeAlias = Literal["contains", "equals", "matches"]


@frozen
class Selector:
    """What to find on screen. A bare YAML string is a *loose* text selector."""

    text: str | None = None
    text_matches: str | None = None
    identifier: str | None = None
    role: str | None = None
    #: A CSS selector the element matches (web engines; resolved by the browser).
    css: str | None = None
    any: bool = False
    loose: bool = False
    within: Selector | None = None
    after: Selector | None = None
    next: Selector | None = None


@frozen
class Point:
    """A coordinate target, normalized 0–1 fractions of the screen."""

    x: float
    y: float


Target: TypeAlias = Selector | Point


@frozen
class Condition:
    """A UI condition of `await`, `assert` and `when`."""

    kind: ConditionKind
    selector: Selector
    mode: TextMode | None = None
    expected: str | None = None


@frozen
class PlatformGuard:
    platform: str


def step_line() -> Any:
    """The ``line`` field every step has: the 1-based line of its entry (0 when built in code),
    keyword-only and left out of equality."""
    return field(default=0, eq=False, kw_only=True)
