"""The async flow engine: steps in, one ``StepReport`` per line out.

``run_flow`` executes a parsed ``Flow`` and returns its ``FlowRunResult``. Everything a run
needs travels in one ``Run`` object: the files (``FlowFiles``), the tools (``ToolInvoker``),
the device directives (``DirectiveExecutor``), the device, the abort event, the progress
callback and the run stack that `run:` fragments and nested flow-execute runs share.

The loop follows the upstream step semantics: a global 0-based ``index`` per line, a skip
flood after the first ``fail``/``error`` (block children expanded, a skipped `run:` stays one
line), ``run aborted`` skips for every line once the abort event is set, and every report handed to
``on_progress`` the moment it is appended, so the progress stream equals ``steps``.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from attrs import define, field, frozen

from argent.devices.base import Device
from argent.errors import ArgentError
from argent.flows.model import (
    DEVICE_STEP_TYPES,
    Condition,
    EchoStep,
    Flow,
    PlatformGuard,
    RunStep,
    ScriptStep,
    Step,
    ToolStep,
    WaitStep,
    WhenStep,
)
from argent.flows.names import condition_label, fragment_display_name, step_target_label
from argent.limits import DEFAULT_ASSERT_GRACE_MS
from argent.runner.budget import StepBudget
from argent.runner.files import FlowFiles, FlowRef
from argent.runner.report import FlowRunResult, StepReport, StepStatus

#: Argument names that target one device; re-bound to the run's device for every tool declaring them.
DEVICE_ARG_KEYS: tuple[str, ...] = ("udid", "device_id", "device")
#: Argument name of a device *scope* list (teardown tools); filled with the run's device when absent.
DEVICE_LIST_KEY = "devices"
#: The tool a `tool:` step names to run another saved flow; the runner runs it itself.
FLOW_EXECUTE_TOOL = "flow-execute"

RUN_ABORTED = "run aborted"
RUN_ABORTED_DURING_WAIT = "run aborted during wait"
RUN_ABORTED_DURING_DELAY = "run aborted during delay"
NEEDS_DEVICE = "step needs a device but the flow was resolved as device-free — pass an explicit device"
WHEN_BLOCK_SKIPPED = "when block skipped"
WHEN_GUARD_ERRORED = "when guard errored"

ProgressCallback = Callable[[StepReport], Awaitable[None]]


# --------------------------------------------------------------------------------------------
# What the engine calls out to


@frozen
class ToolCallContext:
    """What a `tool:` step's tool gets besides its arguments."""

    device: Device | None
    platform: str | None
    abort: asyncio.Event
    project_root: str | None
    flow: str
    #: The call's step budget: a tool that runs flows (a nested recording step) spends it too.
    budget: StepBudget = field(factory=StepBudget)


@frozen
class ToolOutcome:
    result: Any = None
    output_hint: str | None = None


class ToolInvoker(Protocol):
    """The tools a run's `tool:` steps call (the tool registry implements it)."""

    def params(self, tool: str) -> frozenset[str] | None:
        """The argument names ``tool`` declares; None when there is no such tool."""
        ...

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        """Run ``tool``; any exception becomes the step's ``error`` with its message."""
        ...


@frozen
class DirectiveOutcome:
    """What a device directive did. ``device`` set: the run moved onto that device (a launch)."""

    status: StepStatus
    reason: str | None = None
    warning: str | None = None
    artifacts: dict[str, str] | None = None
    snapshot_key: str | None = None
    device: Device | None = None


GuardState = Literal["met", "unmet", "indeterminate", "aborted"]


@frozen
class GuardOutcome:
    """A `when:` UI guard: met, unmet, indeterminate (with ``reason``) or cut short by the abort."""

    state: GuardState
    reason: str | None = None


@frozen
class DirectiveContext:
    """Where a directive runs: the run, and the flow, depth and file that contain the step."""

    run: Run
    flow: str
    depth: int
    containing: FlowRef


class DirectiveExecutor(Protocol):
    """Device directives (tap, type, launch, snapshot, await, …) and `when:` UI guards."""

    async def execute(self, step: Step, device: Device, ctx: DirectiveContext) -> DirectiveOutcome: ...

    async def check(
        self, condition: Condition, device: Device, grace_ms: float, ctx: DirectiveContext
    ) -> GuardOutcome: ...


# --------------------------------------------------------------------------------------------
# The run


@frozen
class StackEntry:
    """One flow on the run stack: its file and the display name its lines carry."""

    ref: FlowRef
    display: str


@define(eq=False)
class Run:
    """One execution of one flow. Nested flow-execute runs share ``stack``, ``abort``,
    ``budget`` and ``baseline_writes`` with their parent; each run has its own ``steps``."""

    files: FlowFiles
    tools: ToolInvoker
    root: FlowRef
    name: str
    directives: DirectiveExecutor | None = None
    device: Device | None = None
    device_explicit: bool = False
    platform: str | None = None
    update_baselines: bool = False
    project_root: str | None = None
    abort: asyncio.Event = field(factory=asyncio.Event)
    on_progress: ProgressCallback | None = None
    stack: list[StackEntry] = field(factory=list)
    baseline_writes: list[Any] = field(factory=list)
    steps: list[StepReport] = field(factory=list)
    budget: StepBudget = field(factory=StepBudget)
    #: Flows this call parsed, by text (see ``composition.read_flow``).
    parsed: dict[str, Flow] = field(factory=dict)
    stopped: bool = False
    #: Why the run stopped, repeated on every line skipped after it (None: an earlier fail/error).
    stop_reason: str | None = None

    @property
    def current_platform(self) -> str | None:
        """The platform `when: { platform }` compares with (``ios-remote`` counts as ios)."""
        platform = self.device.platform if self.device is not None else self.platform
        return "ios" if platform == "ios-remote" else platform

    def child(self, root: FlowRef, name: str, *, update_baselines: bool, project_root: str | None) -> Run:
        """A nested run: same files, tools, device, platform, abort and stack; its own report."""
        return Run(
            files=self.files,
            tools=self.tools,
            root=root,
            name=name,
            directives=self.directives,
            device=self.device,
            device_explicit=self.device_explicit,
            platform=self.platform,
            update_baselines=update_baselines,
            project_root=project_root,
            abort=self.abort,
            on_progress=None,
            stack=self.stack,
            baseline_writes=self.baseline_writes,
            budget=self.budget,
            parsed=self.parsed,
        )


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
    run.stack.append(StackEntry(run.root, run.name))
    try:
        await exec_steps(run, flow.steps, 0)
    finally:
        run.stack.pop()
    nested = len(run.stack) > 0
    return FlowRunResult(
        flow=run.name,
        device=started_on,
        steps=run.steps,
        execution_prerequisite=flow.execution_prerequisite,
        aborted=run.abort.is_set(),
        baseline_writes=list(run.baseline_writes) if run.baseline_writes and not nested else None,
    )


# --------------------------------------------------------------------------------------------
# The step loop


def _ms_since(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000.0, 3)


async def push(run: Run, report: StepReport, *, closing: bool = False) -> None:
    """Append one line and hand it to the progress callback (the single choke point).

    Each line spends the call's budget; the line past it becomes the error that names the limit,
    and after it nothing more is reported but ``closing`` lines: the one line of each nested
    flow-execute still open, so every enclosing run carries the failure up to the root."""
    budget = run.budget
    if budget.exhausted:
        if not closing:
            return
    elif not budget.take():
        budget.exhausted = True
        run.stopped = True
        report = budget_exceeded_line(report, budget)
    run.steps.append(report)
    if run.on_progress is not None:
        await run.on_progress(report)
    if budget.due_for_yield():
        await asyncio.sleep(0)


def budget_exceeded_line(report: StepReport, budget: StepBudget) -> StepReport:
    """The error line of the step that found the call's budget spent (an echo line included:
    such an error counts, see ``FlowRunResult.counted``)."""
    return StepReport(
        index=report.index,
        kind=report.kind,
        status="error",
        flow=report.flow,
        depth=report.depth,
        target=report.target,
        tool=report.tool,
        reason=budget.message,
        duration_ms=report.duration_ms,
    )


def line(
    run: Run,
    step: Step,
    status: StepStatus,
    flow: str,
    depth: int,
    t0: float | None,
    **fields: Any,
) -> StepReport:
    """A report for ``step`` at the next index; ``t0`` None means a line that took no time."""
    return StepReport(
        index=len(run.steps),
        kind=step.kind,
        status=status,
        flow=flow,
        depth=depth,
        target=step_target_label(step),
        duration_ms=0.0 if t0 is None else _ms_since(t0),
        **fields,
    )


async def exec_steps(run: Run, steps: Sequence[Step], depth: int) -> None:
    """Execute ``steps`` at ``depth`` inside the flow on top of the run stack."""
    top = run.stack[-1]
    flow = top.display
    reports = run.steps
    abort = run.abort
    budget = run.budget
    monotonic = time.monotonic
    for step in steps:
        if budget.exhausted:
            return
        if run.stopped:
            await skip_step(run, step, depth, flow, run.stop_reason)
            continue
        cls = type(step)
        if cls is EchoStep and not abort.is_set() and budget.used < budget.limit:
            # The hot path: no device, no awaits but the progress callback (and a yield when due).
            t0 = monotonic()
            report = StepReport(
                index=len(reports),
                kind="echo",
                status="pass",
                flow=flow,
                depth=depth,
                message=step.message,  # type: ignore[union-attr]
                duration_ms=round((monotonic() - t0) * 1000.0, 3),
            )
            budget.used += 1
            reports.append(report)
            if run.on_progress is not None:
                await run.on_progress(report)
            if budget.due_for_yield():
                await asyncio.sleep(0)
            continue
        if run.device is None and step_needs_device(step, run.tools, run.current_platform is not None):
            run.stopped = True
            await push(run, line(run, step, "error", flow, depth, None, reason=NEEDS_DEVICE))
            if cls is WhenStep:
                await skip_block(run, step.steps, depth + 1, flow, None)  # type: ignore[union-attr]
            continue
        if abort.is_set():
            run.stopped = True
            run.stop_reason = RUN_ABORTED
            await skip_step(run, step, depth, flow, RUN_ABORTED)
            continue
        if cls is RunStep:
            from argent.runner.composition import exec_run_step

            await exec_run_step(run, step, depth)  # type: ignore[arg-type]
            continue
        if cls is WhenStep:
            await exec_when(run, step, depth, top)  # type: ignore[arg-type]
            continue
        report = await exec_leaf(run, step, depth, top)
        if budget.exhausted and report.status != "fail" and report.status != "error":
            # The step spent the rest of the call's budget (a tool that ran flows): it fails on it.
            report = budget_exceeded_line(report, budget)
        # Past the budget the loop ends above, so a leaf reported now is the one that spent it:
        # its line closes the step (a nested run carries the failure up to the root).
        await push(run, report, closing=True)
        if report.status == "fail" or report.status == "error":
            run.stopped = True


async def skip_step(run: Run, step: Step, depth: int, flow: str, reason: str | None) -> None:
    """One skip line for ``step`` (children of a block expanded); a `run:` stays one line."""
    if run.budget.exhausted:
        return
    shown = fragment_display_name(step.target, run.name) if isinstance(step, RunStep) else flow
    message = step.message if isinstance(step, EchoStep) else None
    await push(run, line(run, step, "skip", shown, depth, None, reason=reason, message=message))
    if isinstance(step, WhenStep):
        await skip_block(run, step.steps, depth + 1, flow, reason)


async def skip_block(run: Run, steps: Sequence[Step], depth: int, flow: str, reason: str | None) -> None:
    for step in steps:
        if run.budget.exhausted:
            return
        await skip_step(run, step, depth, flow, reason)


def step_needs_device(step: Step, tools: ToolInvoker, platform_known: bool) -> bool:
    """Whether this one step acts on a device (a `run:` or nested flow-execute: its own steps decide)."""
    if isinstance(step, DEVICE_STEP_TYPES):
        return True
    if isinstance(step, WhenStep):
        return not (isinstance(step.guard, PlatformGuard) and platform_known)
    if isinstance(step, ToolStep):
        name = tool_name(step)
        if name == FLOW_EXECUTE_TOOL:
            return False
        return tool_needs_device(tools, name)
    return False


def tool_needs_device(tools: ToolInvoker, name: str) -> bool:
    """A tool that takes a device id. An unknown tool needs none: its step reports that the tool
    does not exist, which says more than "no device" would."""
    params = tools.params(name)
    return params is not None and any(key in params for key in DEVICE_ARG_KEYS)


def tool_name(step: ToolStep) -> str:
    return step.tool if isinstance(step.tool, str) else str(step.tool)


# --------------------------------------------------------------------------------------------
# Abort-aware sleeping


async def sleep_or_abort(abort: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds``; True when the abort event cut it short (or was already set)."""
    if abort.is_set():
        return True
    if seconds <= 0:
        return False
    try:
        async with asyncio.timeout(seconds):
            await abort.wait()
    except TimeoutError:
        return False
    return True


def delay_seconds(value: Any) -> float:
    """A tool step's ``delayMs`` as seconds: truthy numbers and numeric strings, else 0."""
    if value is None or value is False:
        return 0.0
    if value is True:
        return 0.001
    ms: float
    if isinstance(value, int | float):
        ms = float(value)
    elif isinstance(value, str):
        try:
            ms = float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return 0.0
    else:
        return 0.0
    if not math.isfinite(ms) or ms <= 0:
        return 0.0
    return ms / 1000.0


# --------------------------------------------------------------------------------------------
# Leaves


async def exec_leaf(run: Run, step: Step, depth: int, top: StackEntry) -> StepReport:
    flow = top.display
    t0 = time.monotonic()
    if isinstance(step, WaitStep):
        if await sleep_or_abort(run.abort, max(0.0, float(step.ms)) / 1000.0):
            return line(run, step, "skip", flow, depth, t0, reason=RUN_ABORTED_DURING_WAIT)
        return line(run, step, "pass", flow, depth, t0)
    if isinstance(step, ToolStep):
        if tool_name(step) == FLOW_EXECUTE_TOOL:
            from argent.runner.composition import exec_nested_flow

            return await exec_nested_flow(run, step, depth, top)
        return await exec_tool(run, step, depth, top)
    if isinstance(step, ScriptStep):
        from argent.runner.script import exec_script

        status, reason = await exec_script(step, run, top.ref)
        return line(run, step, status, flow, depth, t0, reason=reason)
    if isinstance(step, EchoStep):  # reached only when the run is being aborted
        return line(run, step, "pass", flow, depth, t0, message=step.message)
    return await exec_directive(run, step, depth, top)


async def exec_directive(run: Run, step: Step, depth: int, top: StackEntry) -> StepReport:
    flow = top.display
    t0 = time.monotonic()
    device = run.device
    if device is None:
        return line(run, step, "error", flow, depth, t0, reason=NEEDS_DEVICE)
    if run.directives is None:
        return line(
            run, step, "error", flow, depth, t0, reason=f"{step.kind} is not supported on this device yet"
        )
    ctx = DirectiveContext(run=run, flow=flow, depth=depth, containing=top.ref)
    try:
        outcome = await run.directives.execute(step, device, ctx)
    except Exception as exc:
        return line(run, step, "error", flow, depth, t0, reason=error_message(exc))
    if outcome.device is not None:
        run.device = outcome.device
    return line(
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


def bind_device_args(run: Run, params: frozenset[str] | None, args: Mapping[str, Any]) -> dict[str, Any]:
    """Recorded args with device keys stripped, then re-bound to the run's device where declared."""
    out = {k: v for k, v in args.items() if k not in DEVICE_ARG_KEYS}
    device_id = run.device.id if run.device is not None else None
    if params is None or DEVICE_LIST_KEY not in params:
        out.pop(DEVICE_LIST_KEY, None)
    elif device_id is not None and (DEVICE_LIST_KEY not in out or run.device_explicit):
        out[DEVICE_LIST_KEY] = [device_id]
    if params is not None and device_id is not None:
        for key in DEVICE_ARG_KEYS:
            if key in params:
                out[key] = device_id
    return out


async def exec_tool(run: Run, step: ToolStep, depth: int, top: StackEntry) -> StepReport:
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
    result = outcome.result
    if name == "await-ui-element" and isinstance(result, Mapping) and result.get("success") is False:
        note = result.get("note")
        reason = "await-ui-element condition not met" + (f": {note}" if note else "")
        return line(run, step, "fail", flow, depth, t0, tool=name, reason=reason)
    if name == "run-sequence" and isinstance(result, Mapping):
        verdict = run_sequence_verdict(result)
        if verdict is not None:
            status, reason = verdict
            return line(
                run,
                step,
                status,
                flow,
                depth,
                t0,
                tool=name,
                reason=reason,
                result=result,
                output_hint=outcome.output_hint,
                args=args,
            )
    return line(
        run,
        step,
        "pass",
        flow,
        depth,
        t0,
        tool=name,
        result=result,
        output_hint=outcome.output_hint,
        args=args,
    )


def run_sequence_verdict(result: Mapping[str, Any]) -> tuple[StepStatus, str] | None:
    """A nested `run-sequence` reports a stopped or cut-short sequence in its result, not by raising."""
    steps = result.get("steps")
    if not isinstance(steps, list):
        return None

    def count(key: str) -> Any:
        value = result.get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else 0

    for entry in steps:
        if isinstance(entry, Mapping) and isinstance(entry.get("error"), str):
            tool = entry.get("tool") if isinstance(entry.get("tool"), str) else "step"
            return (
                "fail",
                f"run-sequence stopped at {tool} after {count('completed')} of {count('total')} steps: "
                f"{entry['error']}",
            )
    total = count("total")
    if total > 0 and len(steps) < total:
        return "skip", f"run-sequence was aborted after {count('completed')} of {total} steps"
    return None


def error_message(exc: BaseException) -> str:
    if isinstance(exc, ArgentError):
        return exc.message
    text = str(exc)
    return text if text else type(exc).__name__


# --------------------------------------------------------------------------------------------
# when:


async def exec_when(run: Run, step: WhenStep, depth: int, top: StackEntry) -> None:
    flow = top.display
    t0 = time.monotonic()
    guard = step.guard
    label = condition_label(guard)
    if isinstance(guard, PlatformGuard):
        met = run.current_platform == guard.platform
    else:
        device = run.device
        outcome: GuardOutcome
        if device is None:
            outcome = GuardOutcome("indeterminate", NEEDS_DEVICE)
        elif run.directives is None:
            outcome = GuardOutcome("indeterminate", "when is not supported on this device yet")
        else:
            ctx = DirectiveContext(run=run, flow=flow, depth=depth, containing=top.ref)
            try:
                outcome = await run.directives.check(guard, device, DEFAULT_ASSERT_GRACE_MS, ctx)
            except Exception as exc:
                outcome = GuardOutcome("indeterminate", error_message(exc))
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
    await exec_steps(run, step.steps, depth + 1)
