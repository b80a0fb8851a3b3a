"""The flow language as values: a ``Flow`` is a tree of steps, one frozen class per directive.

The values steps are made of live in ``argent.flows.values``; each directive's model lives in its
own module of ``argent.flows.directives`` (with its grammar, label and writer) and is re-exported
here. A parsed flow holds what the YAML means, not how it was spelled; ``argent.flows.write``
turns it back into the canonical spelling. Each step carries the 1-based ``line`` of its entry in
the file (0 when built in code) so that every later message can point the user at the right place.
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs import frozen

from argent.devices.registry import PLATFORMS
from argent.flows.directives import (
    DEVICE_STEP_TYPES,
    STEP_TYPES,
    AssertStep,
    AwaitStep,
    ChromiumApp,
    DialogsStep,
    EchoStep,
    IdleStep,
    LaunchStep,
    LongPressStep,
    PinchStep,
    PressStep,
    RotateStep,
    RunStep,
    ScriptStep,
    ScrollToStep,
    SelectStep,
    SnapshotStep,
    Step,
    TapStep,
    ToolStep,
    TypeStep,
    UploadStep,
    WaitStep,
    WhenStep,
)
from argent.flows.values import (
    DIRECTIONS,
    Condition,
    ConditionKind,
    PlatformGuard,
    Point,
    Selector,
    Target,
    TextMode,
)

__all__ = [
    "DEVICE_STEP_TYPES",
    "DIRECTIONS",
    "PLATFORMS",
    "STEP_TYPES",
    "AssertStep",
    "AwaitStep",
    "ChromiumApp",
    "Condition",
    "ConditionKind",
    "DialogsStep",
    "EchoStep",
    "Flow",
    "IdleStep",
    "LaunchStep",
    "LongPressStep",
    "PinchStep",
    "PlatformGuard",
    "Point",
    "PressStep",
    "RotateStep",
    "RunStep",
    "ScriptStep",
    "ScrollToStep",
    "SelectStep",
    "Selector",
    "SnapshotStep",
    "Step",
    "TapStep",
    "Target",
    "TextMode",
    "ToolStep",
    "TypeStep",
    "UploadStep",
    "WaitStep",
    "WhenStep",
    "evolve",
    "leading_step",
    "walk_steps",
]


@frozen
class Flow:
    steps: tuple[Step, ...] = ()
    execution_prerequisite: str = ""

    @property
    def is_e2e(self) -> bool:
        """An e2e flow's first non-echo step is a `launch`."""
        return isinstance(leading_step(self.steps), LaunchStep)


def leading_step(steps: tuple[Step, ...]) -> Step | None:
    """The first step that is not an `echo` (what decides whether a flow launches its own app)."""
    for step in steps:
        if not isinstance(step, EchoStep):
            return step
    return None


#: Walks of the step tuples seen last, by the tuple's id (the tuple held too, so the id stays its
#: own): a parsed flow is a cached frozen value, walked by every call that runs it.
_WALKED: dict[int, tuple[tuple[Step, ...], tuple[Step, ...]]] = {}
_WALKED_KEPT = 256


def walk_steps(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    """Every step in authored order, `when:` children included (depth first)."""
    known = _WALKED.get(id(steps))
    if known is not None and known[0] is steps:
        return known[1]
    out: list[Step] = []
    stack: list[Step] = list(reversed(steps))
    while stack:
        step = stack.pop()
        out.append(step)
        if isinstance(step, WhenStep):
            stack.extend(reversed(step.steps))
    walked = tuple(out)
    if type(steps) is tuple:  # a frozen flow's steps (a list could change under the memo)
        if len(_WALKED) >= _WALKED_KEPT:
            _WALKED.clear()
        _WALKED[id(steps)] = (steps, walked)
    return walked


def evolve(step: Any, **changes: Any) -> Any:
    """A copy of a frozen value with some fields changed."""
    return attrs.evolve(step, **changes)
