"""The flow language as values: one small frozen class per directive.

A parsed flow is a tree of these classes. They hold what the YAML means, not how it
was spelled; ``argent.flows.write`` turns them back into the canonical spelling.
Each step carries the 1-based ``line`` of its entry in the file (0 when built in code)
so that every later message can point the user at the right place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import attrs
from attrs import field, frozen

PLATFORMS: tuple[str, ...] = ("ios", "android", "chromium", "vega")
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


@frozen
class ChromiumApp:
    path: str
    args: tuple[str, ...] | None = None


def _line() -> Any:
    return field(default=0, eq=False, kw_only=True)


@frozen
class EchoStep:
    message: str
    line: int = _line()
    kind: ClassVar[str] = "echo"


@frozen
class LaunchStep:
    """`launch`: a bare app id / target, or a per-platform map."""

    app: str | None = None
    apps: Mapping[str, str] = field(factory=dict, hash=False)
    chromium: ChromiumApp | None = None
    line: int = _line()
    kind: ClassVar[str] = "launch"

    def app_for(self, platform: str) -> str | None:
        """The app id or target to launch on ``platform`` (chromium never falls back to native)."""
        if platform == "chromium":
            if self.chromium is not None:
                return self.chromium.path
            return self.app
        if self.app is not None:
            return self.app
        return self.apps.get(platform) or self.apps.get("native")


@frozen
class RunStep:
    """`run:` a fragment, by a path relative to the file that names it (always ends in .yaml)."""

    target: str
    line: int = _line()
    kind: ClassVar[str] = "run"


@frozen
class WhenStep:
    guard: Condition | PlatformGuard
    steps: tuple[Step, ...]
    line: int = _line()
    kind: ClassVar[str] = "when"


@frozen
class ToolStep:
    """`tool:` steps are not validated at parse time: name, args and delay are kept as written."""

    tool: Any
    args: Any = field(factory=dict, hash=False)
    delay_ms: Any = None
    line: int = _line()
    kind: ClassVar[str] = "tool"


@frozen
class ScriptStep:
    path: str
    args: tuple[str, ...] = ()
    timeout_ms: float | None = None
    short: bool = field(default=True, eq=False)
    line: int = _line()
    kind: ClassVar[str] = "script"


@frozen
class TapStep:
    target: Target
    times: int | None = None
    line: int = _line()
    kind: ClassVar[str] = "tap"


@frozen
class LongPressStep:
    target: Target
    duration_ms: float | None = None
    line: int = _line()
    kind: ClassVar[str] = "long-press"


@frozen
class TypeStep:
    into: Selector
    text: str
    submit: bool = True
    line: int = _line()
    kind: ClassVar[str] = "type"


@frozen
class AwaitStep:
    condition: Condition
    timeout_ms: float | None = None
    line: int = _line()
    kind: ClassVar[str] = "await"


@frozen
class IdleStep:
    """`await: { idle: true }` — reports under kind `await`."""

    stable_for_ms: int | None = None
    timeout_ms: float | None = None
    line: int = _line()
    kind: ClassVar[str] = "await"


@frozen
class AssertStep:
    condition: Condition
    line: int = _line()
    kind: ClassVar[str] = "assert"


@frozen
class WaitStep:
    ms: float
    line: int = _line()
    kind: ClassVar[str] = "wait"


@frozen
class ScrollToStep:
    target: Selector
    direction: str = "down"
    within: Selector | None = None
    line: int = _line()
    kind: ClassVar[str] = "scroll-to"


@frozen
class PinchStep:
    scale: float
    on: Selector | None = None
    line: int = _line()
    kind: ClassVar[str] = "pinch"


@frozen
class RotateStep:
    by: float
    on: Selector | None = None
    line: int = _line()
    kind: ClassVar[str] = "rotate"


@frozen
class SnapshotStep:
    name: str
    max_mismatch: float | None = None
    crop_on: Selector | None = None
    line: int = _line()
    kind: ClassVar[str] = "snapshot"


Step: TypeAlias = (
    EchoStep
    | LaunchStep
    | RunStep
    | WhenStep
    | ToolStep
    | ScriptStep
    | TapStep
    | LongPressStep
    | TypeStep
    | AwaitStep
    | IdleStep
    | AssertStep
    | WaitStep
    | ScrollToStep
    | PinchStep
    | RotateStep
    | SnapshotStep
)

#: Directives that act on a device screen.
DEVICE_STEP_TYPES: tuple[type, ...] = (
    LaunchStep,
    TapStep,
    LongPressStep,
    TypeStep,
    AwaitStep,
    IdleStep,
    AssertStep,
    ScrollToStep,
    PinchStep,
    RotateStep,
    SnapshotStep,
)


@frozen
class Flow:
    steps: tuple[Step, ...] = ()
    execution_prerequisite: str = ""

    @property
    def is_e2e(self) -> bool:
        """An e2e flow's first non-echo step is a `launch`."""
        for step in self.steps:
            if isinstance(step, EchoStep):
                continue
            return isinstance(step, LaunchStep)
        return False


def walk_steps(steps: tuple[Step, ...]) -> list[Step]:
    """Every step in authored order, `when:` children included (depth first)."""
    out: list[Step] = []
    stack: list[Step] = list(reversed(steps))
    while stack:
        step = stack.pop()
        out.append(step)
        if isinstance(step, WhenStep):
            stack.extend(reversed(step.steps))
    return out


def evolve(step: Any, **changes: Any) -> Any:
    """A copy of a frozen value with some fields changed."""
    return attrs.evolve(step, **changes)
