"""The step handlers of the leaves that need no file and no tool: `echo`, `wait`, and the device
directives, which the run's ``DirectiveExecutor`` carries out."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from argent.flows.model import EchoStep, Step, WaitStep
from argent.runner.report import StepReport
from argent.runner.run import (
    NEEDS_DEVICE,
    RUN_ABORTED_DURING_WAIT,
    DirectiveContext,
    Run,
    StackEntry,
    StepLoop,
    ToolInvoker,
    error_message,
    line,
    push,
    push_leaf,
    sleep_or_abort,
)


class EchoHandler:
    """`echo:` — a pass line carrying the message (the hot path: no device, no await but the
    progress callback)."""

    def needs_device(self, step: Any, tools: ToolInvoker, platform_known: bool) -> bool:
        return False

    async def execute(self, loop: StepLoop, run: Run, step: EchoStep, depth: int, top: StackEntry) -> None:
        t0 = time.monotonic()
        report = StepReport(
            index=len(run.steps),
            kind="echo",
            status="pass",
            flow=top.display,
            depth=depth,
            message=step.message,
            duration_ms=round((time.monotonic() - t0) * 1000.0, 3),
        )
        budget = run.budget
        if budget.exhausted or budget.used >= budget.limit:
            await push(run, report)  # the line past the budget: ``push`` turns it into the error
            return
        budget.used += 1  # ``push`` inlined: a long run of echoes is the engine's hottest loop
        run.steps.append(report)
        if run.on_progress is not None:
            await run.on_progress(report)
        if budget.due_for_yield():
            await asyncio.sleep(0)


class WaitHandler:
    """`wait:` — sleep, cut short by the abort."""

    def needs_device(self, step: Any, tools: ToolInvoker, platform_known: bool) -> bool:
        return False

    async def execute(self, loop: StepLoop, run: Run, step: WaitStep, depth: int, top: StackEntry) -> None:
        flow = top.display
        t0 = time.monotonic()
        if await sleep_or_abort(run.abort, max(0.0, float(step.ms)) / 1000.0):
            report = line(run, step, "skip", flow, depth, t0, reason=RUN_ABORTED_DURING_WAIT)
        else:
            report = line(run, step, "pass", flow, depth, t0)
        await push_leaf(run, report)


class DeviceHandler:
    """A device directive (tap, type, launch, snapshot, await, …): the run's ``DirectiveExecutor``
    carries it out on the run's device; a launch may move the run onto another device."""

    def needs_device(self, step: Any, tools: ToolInvoker, platform_known: bool) -> bool:
        return True

    async def execute(self, loop: StepLoop, run: Run, step: Step, depth: int, top: StackEntry) -> None:
        flow = top.display
        t0 = time.monotonic()
        device = run.device
        if device is None:
            await push_leaf(run, line(run, step, "error", flow, depth, t0, reason=NEEDS_DEVICE))
            return
        if run.directives is None:
            reason = f"{step.kind} is not supported on this device yet"
            await push_leaf(run, line(run, step, "error", flow, depth, t0, reason=reason))
            return
        ctx = DirectiveContext(run=run, flow=flow, depth=depth, containing=top.ref)
        try:
            outcome = await run.directives.execute(step, device, ctx)
        except Exception as exc:
            await push_leaf(run, line(run, step, "error", flow, depth, t0, reason=error_message(exc)))
            return
        if outcome.device is not None:
            run.device = outcome.device
        report = line(
            run,
            step,
            outcome.status,
            flow,
            depth,
            t0,
            reason=outcome.reason,
            warning=outcome.warning,
            artifacts=outcome.artifacts,
            snapshot_key=outcome.snapshot_key,
        )
        await push_leaf(run, report)
