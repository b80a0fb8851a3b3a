"""The `tool:` step: a call through the run's ``ToolInvoker``, judged by the tool's own verdict.

The runner knows no tool by name here. A tool that is the runner's own (flow-execute: a nested
run on the shared stack) is looked up in ``RUNNER_TOOLS``; any other tool is invoked, and its
``ToolOutcome.verdict`` — set by the tool's module — decides whether the step failed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from argent.flows.model import ToolStep
from argent.runner.composition import FLOW_EXECUTE_TOOL, NestedFlowHandler
from argent.runner.report import StepReport
from argent.runner.run import (
    RUN_ABORTED_DURING_DELAY,
    Run,
    StackEntry,
    StepHandler,
    StepLoop,
    ToolCallContext,
    ToolInvoker,
    bind_device_args,
    delay_seconds,
    error_message,
    line,
    push_leaf,
    sleep_or_abort,
    tool_name,
    tool_needs_device,
)

#: Tools the runner carries out itself, by name: their step handler replaces the tool call.
RUNNER_TOOLS: Mapping[str, StepHandler] = {FLOW_EXECUTE_TOOL: NestedFlowHandler()}


class ToolHandler:
    """`tool:` — a runner tool's own handler, else the tool call."""

    def needs_device(self, step: ToolStep, tools: ToolInvoker, platform_known: bool) -> bool:
        name = tool_name(step)
        own = RUNNER_TOOLS.get(name)
        if own is not None:
            return own.needs_device(step, tools, platform_known)
        return tool_needs_device(tools, name)

    async def execute(self, loop: StepLoop, run: Run, step: ToolStep, depth: int, top: StackEntry) -> None:
        own = RUNNER_TOOLS.get(tool_name(step))
        if own is not None:
            await own.execute(loop, run, step, depth, top)
            return
        await push_leaf(run, await exec_tool(run, step, depth, top))


async def exec_tool(run: Run, step: ToolStep, depth: int, top: StackEntry) -> StepReport:
    """Call the step's tool; its line (the tool's verdict, else a pass with its result)."""
    flow = top.display
    t0 = time.monotonic()
    name = tool_name(step)
    raw = step.args if step.args is not None else {}
    if not isinstance(raw, Mapping):
        reason = f"the args of a {name} tool step must be a map, not {type(raw).__name__}"
        return line(run, step, "error", flow, depth, t0, tool=name, reason=reason)
    args = bind_device_args(run, run.tools.params(name), raw)
    delay = delay_seconds(step.delay_ms)
    if delay and await sleep_or_abort(run.abort, delay):
        return line(run, step, "skip", flow, depth, t0, tool=name, reason=RUN_ABORTED_DURING_DELAY)
    ctx = ToolCallContext(
        device=run.device,
        platform=run.current_platform,
        abort=run.abort,
        project_root=run.project_root,
        flow=flow,
        budget=run.budget,
    )
    try:
        outcome = await run.tools.invoke(name, args, ctx)
    except Exception as exc:
        return line(run, step, "error", flow, depth, t0, tool=name, reason=error_message(exc))
    verdict = outcome.verdict
    if verdict is not None and not verdict.with_result:
        return line(run, step, verdict.status, flow, depth, t0, tool=name, reason=verdict.reason)
    fields: dict[str, Any] = {}
    if verdict is not None:
        fields["reason"] = verdict.reason
    return line(
        run,
        step,
        "pass" if verdict is None else verdict.status,
        flow,
        depth,
        t0,
        tool=name,
        result=outcome.result,
        output_hint=outcome.output_hint,
        args=args,
        **fields,
    )
