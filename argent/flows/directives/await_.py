"""`await:` — wait up to a timeout for a UI condition, or `{ idle: true }` for the screen to hold still.

Both forms report under the kind `await`; they are two models with two executor hooks.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from attrs import frozen

from argent import limits
from argent.flows.canonical import condition_summary, condition_to_data, num
from argent.flows.directives.base import Directive, Nodes, Step
from argent.flows.grammar import CONDITION_KEYS, Reject, only_keys
from argent.flows.js import is_integer, tidy
from argent.flows.labels import condition_text, selector_label
from argent.flows.values import Condition, step_line

_IDLE_FEASIBILITY = (
    "idle needs a timeout of at least {needed}ms to hold still for {default}{stable}ms: a settle is 3 reads "
    "spanning 2 200ms polls, and the hold is counted across those polls rather than after them — so the "
    "wait has to contain whichever of the two is longer, plus the 200ms of budget the closing round has "
    "to have left to be allowed to start. Raise `timeout`{lower}"
)
_IDLE_POLL_MS = 200
_IDLE_MIN_SETTLE_MS = 2 * _IDLE_POLL_MS
_MAX_STABLE_FOR_MS = 600_000


@frozen
class AwaitStep:
    condition: Condition
    timeout_ms: float | None = None
    line: int = step_line()
    kind: ClassVar[str] = "await"
    executor: ClassVar[str] = "await"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return condition_text(self.condition, selector_label)

    def to_data(self) -> dict[str, Any]:
        body = condition_to_data(self.condition)
        if self.timeout_ms is not None:
            body["timeout"] = num(self.timeout_ms)
        return {"await": body}

    def summary(self) -> str:
        return f"await: {condition_summary(self.condition)}"


@frozen
class IdleStep:
    """`await: { idle: true }` — reports under kind `await`."""

    stable_for_ms: int | None = None
    timeout_ms: float | None = None
    line: int = step_line()
    kind: ClassVar[str] = "await"
    executor: ClassVar[str] = "idle"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return None

    def to_data(self) -> dict[str, Any]:
        body: dict[str, Any] = {"idle": True}
        if self.stable_for_ms is not None:
            body["stableFor"] = self.stable_for_ms
        if self.timeout_ms is not None:
            body["timeout"] = num(self.timeout_ms)
        return {"await": body}

    def summary(self) -> str:
        return "await: screen idle"


def parse(nodes: Nodes, body: Any, line: int) -> Step:
    mapping = nodes.mapping(body)
    legal = (*CONDITION_KEYS, "idle")
    if mapping is None:
        raise Reject(f"await needs a condition ({', '.join(legal)})")
    if "idle" in mapping:
        return _idle(nodes, mapping, line)
    condition = nodes.condition(body, "await")
    timeout = _timeout(nodes, mapping)
    return AwaitStep(condition=condition, timeout_ms=timeout, line=line)


def _timeout(nodes: Nodes, mapping: dict[str, Any]) -> float | int | None:
    if "timeout" not in mapping:
        return None
    timeout = nodes.number(mapping["timeout"])
    if timeout is None or not math.isfinite(timeout) or timeout <= 0:
        raise Reject("await.timeout needs a positive number of milliseconds (e.g. `timeout: 10000`)")
    return tidy(timeout)


def _idle(nodes: Nodes, mapping: dict[str, Any], line: int) -> IdleStep:
    mixed = [key for key in mapping if key in CONDITION_KEYS]
    if mixed:
        keys = "`, `".join(mixed)
        raise Reject(f"await mixes `idle` with `{keys}` — a step checks exactly one condition")
    only_keys("await", mapping, ("idle", "stableFor", "timeout"))
    if nodes.scalar(mapping["idle"]) is not True:
        raise Reject("idle takes only `true` (`await: { idle: true }`)")
    stable: int | None = None
    if "stableFor" in mapping:
        number = nodes.number(mapping["stableFor"])
        if not is_integer(number) or not 0 <= number <= _MAX_STABLE_FOR_MS:
            raise Reject(f"idle.stableFor needs an integer between 0 and {_MAX_STABLE_FOR_MS} (milliseconds)")
        stable = int(number)
    timeout = _timeout(nodes, mapping)
    effective_stable = limits.DEFAULT_IDLE_STABLE_FOR_MS if stable is None else stable
    needed = max(_IDLE_MIN_SETTLE_MS, effective_stable) + _IDLE_POLL_MS
    effective_timeout = limits.DEFAULT_IDLE_TIMEOUT_MS if timeout is None else timeout
    if effective_timeout < needed:
        raise Reject(
            _IDLE_FEASIBILITY.format(
                needed=needed,
                default="the default " if stable is None else "",
                stable=effective_stable,
                lower="" if stable is None else " or lower `stableFor`",
            )
        )
    return IdleStep(stable_for_ms=stable, timeout_ms=timeout, line=line)


AWAIT = Directive(key="await", models=(AwaitStep, IdleStep), parse=parse)
