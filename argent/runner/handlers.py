"""The step handlers, in one table: how the runner carries out each directive's executor hook.

Each directive's model names its ``executor`` hook (``argent.flows.directives``); this table maps
the hooks to the runner's handlers. A device directive (``on_device``) that has no handler of its
own here goes to the run's ``DirectiveExecutor`` (``argent.runner.directives`` dispatches it by the
same hook). The engine looks every step's handler up here and never names a directive or a tool.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from argent.flows.directives import STEP_TYPES
from argent.flows.model import Step
from argent.runner.composition import FLOW_EXECUTE_TOOL, RunHandler
from argent.runner.leaves import DeviceHandler, EchoHandler, WaitHandler
from argent.runner.run import Run, StackEntry, StepHandler, StepLoop, ToolInvoker, line, push_leaf
from argent.runner.script import ScriptHandler
from argent.runner.tool_step import ToolHandler
from argent.runner.when import WhenHandler

__all__ = ["FLOW_EXECUTE_TOOL", "HOOK_HANDLERS", "STEP_HANDLERS", "handler_for", "step_needs_device"]


class UnsupportedHandler:
    """A directive this runner has no handler for: one error line that says so."""

    def needs_device(self, step: Any, tools: ToolInvoker, platform_known: bool) -> bool:
        return False

    async def execute(self, loop: StepLoop, run: Run, step: Step, depth: int, top: StackEntry) -> None:
        reason = f"{step.kind} is not supported by this runner"
        await push_leaf(run, line(run, step, "error", top.display, depth, time.monotonic(), reason=reason))


DEVICE_HANDLER = DeviceHandler()
UNSUPPORTED = UnsupportedHandler()

#: The runner's own handler of each executor hook (device directives: ``DEVICE_HANDLER``).
HOOK_HANDLERS: Mapping[str, StepHandler] = {
    "echo": EchoHandler(),
    "wait": WaitHandler(),
    "run": RunHandler(),
    "when": WhenHandler(),
    "tool": ToolHandler(),
    "script": ScriptHandler(),
}


def _resolve(model: Any) -> StepHandler:
    own = HOOK_HANDLERS.get(model.executor)
    if own is not None:
        return own
    return DEVICE_HANDLER if model.on_device else UNSUPPORTED


#: The handler of every registered step class, resolved once from the directive table.
STEP_HANDLERS: Mapping[type, StepHandler] = {model: _resolve(model) for model in STEP_TYPES}


def handler_for(step: Step) -> StepHandler:
    handler = STEP_HANDLERS.get(type(step))
    return handler if handler is not None else _resolve(step)


def step_needs_device(step: Step, tools: ToolInvoker, platform_known: bool) -> bool:
    """Whether this one step acts on a device (a `run:` or nested flow-execute: its own steps decide)."""
    return handler_for(step).needs_device(step, tools, platform_known)
