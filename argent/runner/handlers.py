"""The step handlers, in one table: how the runner carries out each directive.

The engine looks a step's handler up here and never names a directive or a tool itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from argent.flows.model import (
    DEVICE_STEP_TYPES,
    EchoStep,
    RunStep,
    ScriptStep,
    Step,
    ToolStep,
    WaitStep,
    WhenStep,
)
from argent.runner.composition import FLOW_EXECUTE_TOOL, RunHandler
from argent.runner.leaves import DeviceHandler, EchoHandler, WaitHandler
from argent.runner.run import StepHandler, ToolInvoker
from argent.runner.script import ScriptHandler
from argent.runner.tool_step import ToolHandler
from argent.runner.when import WhenHandler

__all__ = ["FLOW_EXECUTE_TOOL", "STEP_HANDLERS", "handler_for", "step_needs_device"]

_DEVICE = DeviceHandler()

#: The handler of each step class.
STEP_HANDLERS: Mapping[type, StepHandler] = {
    EchoStep: EchoHandler(),
    WaitStep: WaitHandler(),
    RunStep: RunHandler(),
    WhenStep: WhenHandler(),
    ToolStep: ToolHandler(),
    ScriptStep: ScriptHandler(),
    **{cls: _DEVICE for cls in DEVICE_STEP_TYPES},
}


def handler_for(step: Step) -> StepHandler:
    return STEP_HANDLERS[type(step)]


def step_needs_device(step: Step, tools: ToolInvoker, platform_known: bool) -> bool:
    """Whether this one step acts on a device (a `run:` or nested flow-execute: its own steps decide)."""
    return handler_for(step).needs_device(step, tools, platform_known)
