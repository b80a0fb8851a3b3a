"""The `when:` block: its guard decides, then its children run one level deeper or are skipped.

A platform guard compares with the run's platform; a UI guard is evaluated by the run's
``DirectiveExecutor`` with the short assert grace. An unmet guard skips the block, an
indeterminate one errors and stops the run, an aborted one skips the block as aborted.
"""

from __future__ import annotations

import time

from argent.flows.model import PlatformGuard, WhenStep
from argent.flows.names import condition_label
from argent.limits import DEFAULT_ASSERT_GRACE_MS
from argent.runner.run import (
    NEEDS_DEVICE,
    RUN_ABORTED,
    WHEN_BLOCK_SKIPPED,
    WHEN_GUARD_ERRORED,
    DirectiveContext,
    GuardOutcome,
    Run,
    StackEntry,
    StepLoop,
    ToolInvoker,
    error_message,
    line,
    push,
    skip_block,
)


class WhenHandler:
    """`when:` — a platform guard needs no device once the run's platform is known."""

    def needs_device(self, step: WhenStep, tools: ToolInvoker, platform_known: bool) -> bool:
        return not (isinstance(step.guard, PlatformGuard) and platform_known)

    async def execute(self, loop: StepLoop, run: Run, step: WhenStep, depth: int, top: StackEntry) -> None:
        await exec_when(loop, run, step, depth, top)


async def _ui_guard(run: Run, step: WhenStep, depth: int, top: StackEntry) -> GuardOutcome:
    device = run.device
    if device is None:
        return GuardOutcome("indeterminate", NEEDS_DEVICE)
    if run.directives is None:
        return GuardOutcome("indeterminate", "when is not supported on this device yet")
    assert not isinstance(step.guard, PlatformGuard)
    ctx = DirectiveContext(run=run, flow=top.display, depth=depth, containing=top.ref)
    try:
        return await run.directives.check(step.guard, device, DEFAULT_ASSERT_GRACE_MS, ctx)
    except Exception as exc:
        return GuardOutcome("indeterminate", error_message(exc))


async def exec_when(loop: StepLoop, run: Run, step: WhenStep, depth: int, top: StackEntry) -> None:
    flow = top.display
    t0 = time.monotonic()
    guard = step.guard
    label = condition_label(guard)
    if isinstance(guard, PlatformGuard):
        met = run.current_platform == guard.platform
    else:
        outcome = await _ui_guard(run, step, depth, top)
        if outcome.state == "aborted":
            await push(run, line(run, step, "skip", flow, depth, t0, reason=RUN_ABORTED))
            await skip_block(run, step.steps, depth + 1, flow, RUN_ABORTED)
            return
        if outcome.state == "indeterminate":
            reason = f"could not evaluate when guard ({label}): {outcome.reason or 'no reason given'}"
            run.stopped = True
            await push(run, line(run, step, "error", flow, depth, t0, reason=reason))
            await skip_block(run, step.steps, depth + 1, flow, WHEN_GUARD_ERRORED)
            return
        met = outcome.state == "met"
    if not met:
        n = len(step.steps)
        reason = f"condition not met ({label}) — block skipped ({n} step{'' if n == 1 else 's'})"
        await push(run, line(run, step, "skip", flow, depth, t0, reason=reason))
        await skip_block(run, step.steps, depth + 1, flow, WHEN_BLOCK_SKIPPED)
        return
    await push(run, line(run, step, "pass", flow, depth, t0, reason=f"condition met ({label})"))
    await loop.exec_steps(run, step.steps, depth + 1)
