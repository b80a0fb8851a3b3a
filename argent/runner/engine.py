"""The async flow engine: steps in, one ``StepReport`` per line out.

``run_flow`` executes a parsed ``Flow`` and returns its ``FlowRunResult``. Everything a run
needs travels in one ``Run`` object (``argent.runner.run``): the files, the tools, the device
directives, the device, the abort event, the progress callback and the run stack that `run:`
fragments and nested flow-execute runs share.

The loop follows the upstream step semantics: a global 0-based ``index`` per line, a skip
flood after the first ``fail``/``error`` (block children expanded, a skipped `run:` stays one
line), ``run aborted`` skips for every line once the abort event is set, and every report handed to
``on_progress`` the moment it is appended, so the progress stream equals ``steps``. What a step
does is its handler's business (``argent.runner.handlers``): the engine names no directive and no
tool.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from argent.devices.base import Device
from argent.flows.model import Flow, Step
from argent.runner.budget import StepBudget
from argent.runner.files import FlowFiles, FlowRef
from argent.runner.handlers import STEP_HANDLERS, handler_for
from argent.runner.report import FlowRunResult
from argent.runner.run import (
    DEVICE_ARG_KEYS,
    DEVICE_LIST_KEY,
    NEEDS_DEVICE,
    RUN_ABORTED,
    RUN_ABORTED_DURING_DELAY,
    RUN_ABORTED_DURING_WAIT,
    WHEN_BLOCK_SKIPPED,
    WHEN_GUARD_ERRORED,
    DirectiveContext,
    DirectiveExecutor,
    DirectiveOutcome,
    GuardOutcome,
    ProgressCallback,
    Run,
    StackEntry,
    ToolCallContext,
    ToolInvoker,
    ToolOutcome,
    ToolVerdict,
    delay_seconds,
    line,
    push,
    refuse_step,
    skip_step,
    sleep_or_abort,
)

__all__ = [
    "DEVICE_ARG_KEYS",
    "DEVICE_LIST_KEY",
    "NEEDS_DEVICE",
    "RUN_ABORTED",
    "RUN_ABORTED_DURING_DELAY",
    "RUN_ABORTED_DURING_WAIT",
    "WHEN_BLOCK_SKIPPED",
    "WHEN_GUARD_ERRORED",
    "DirectiveContext",
    "DirectiveExecutor",
    "DirectiveOutcome",
    "GuardOutcome",
    "ProgressCallback",
    "Run",
    "StackEntry",
    "ToolCallContext",
    "ToolInvoker",
    "ToolOutcome",
    "ToolVerdict",
    "delay_seconds",
    "exec_steps",
    "execute_run",
    "line",
    "push",
    "run_flow",
    "sleep_or_abort",
]


async def run_flow(
    flow: Flow,
    root: FlowRef,
    name: str,
    *,
    files: FlowFiles,
    tools: ToolInvoker,
    directives: DirectiveExecutor | None = None,
    device: Device | None = None,
    device_explicit: bool = False,
    platform: str | None = None,
    update_baselines: bool = False,
    project_root: str | None = None,
    abort: asyncio.Event | None = None,
    on_progress: ProgressCallback | None = None,
    budget: StepBudget | None = None,
) -> FlowRunResult:
    """Run ``flow`` (read from ``root``, reported as ``name``) to its end and summarize it;
    ``budget`` is the call's (see ``StepBudget``), shared with the tools its steps call."""
    run = Run(
        files=files,
        tools=tools,
        root=root,
        name=name,
        directives=directives,
        device=device,
        device_explicit=device_explicit,
        platform=platform,
        update_baselines=update_baselines,
        project_root=project_root,
        abort=abort if abort is not None else asyncio.Event(),
        on_progress=on_progress,
        budget=budget if budget is not None else StepBudget(),
    )
    return await execute_run(run, flow)


async def execute_run(run: Run, flow: Flow) -> FlowRunResult:
    """Execute ``flow`` as ``run``'s root; the root is on the run stack while its steps run."""
    started_on = run.device.id if run.device is not None else ""
    started_at, clock = round(time.time() * 1000), time.monotonic()
    run.stack.append(StackEntry(run.root, run.name))
    try:
        await exec_steps(run, flow.steps, 0)
    finally:
        run.stack.pop()
        while run.on_end:
            run.on_end.pop()()
    nested = len(run.stack) > 0
    return FlowRunResult(
        flow=run.name,
        device=started_on,
        steps=run.steps,
        execution_prerequisite=flow.execution_prerequisite,
        aborted=run.abort.is_set(),
        baseline_writes=list(run.baseline_writes) if run.baseline_writes and not nested else None,
        started_at=started_at,
        duration_ms=round((time.monotonic() - clock) * 1000),
    )


async def exec_steps(run: Run, steps: Sequence[Step], depth: int) -> None:
    """Execute ``steps`` at ``depth`` inside the flow on top of the run stack."""
    top = run.stack[-1]
    flow = top.display
    abort = run.abort
    budget = run.budget
    handlers = STEP_HANDLERS
    for step in steps:
        if budget.exhausted:
            return
        if run.stopped:
            await skip_step(run, step, depth, flow, run.stop_reason)
            continue
        handler = handlers.get(type(step)) or handler_for(step)
        if run.device is None and handler.needs_device(step, run.tools, run.current_platform is not None):
            run.stopped = True
            await refuse_step(run, step, depth, flow, NEEDS_DEVICE)
            continue
        if abort.is_set():
            run.stopped = True
            run.stop_reason = RUN_ABORTED
            await skip_step(run, step, depth, flow, RUN_ABORTED)
            continue
        await handler.execute(LOOP, run, step, depth, top)


class _Loop:
    """The engine as the ``StepLoop`` the handlers of blocks, fragments and nested flows call back."""

    async def exec_steps(self, run: Run, steps: Sequence[Step], depth: int) -> None:
        await exec_steps(run, steps, depth)

    async def execute_run(self, run: Run, flow: Flow) -> FlowRunResult:
        return await execute_run(run, flow)


LOOP = _Loop()
