"""The runner's vocabulary: the ``Run``, what it calls out to, and the one way a line is reported.

Every other runner module speaks these words and none of them imports the engine: the step
handlers (``argent.runner.handlers``) get the step loop passed in as a ``StepLoop``, so the engine
can look them up from a table without a cycle. ``push`` is the single choke point every line goes
through (the call's step budget, the progress callback, the yield to the event loop).
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
from argent.flows.model import Condition, EchoStep, Flow, RunStep, Step, ToolStep, WhenStep
from argent.flows.names import fragment_display_name, step_target_label
from argent.flows.values import condition_platform
from argent.runner.budget import StepBudget
from argent.runner.files import FlowFiles, FlowRef
from argent.runner.report import FlowRunResult, StepReport, StepStatus

#: Argument names that target one device; re-bound to the run's device for every tool declaring them.
DEVICE_ARG_KEYS: tuple[str, ...] = ("udid", "device_id", "device")
#: Argument name of a device *scope* list (teardown tools); filled with the run's device when absent.
DEVICE_LIST_KEY = "devices"

RUN_ABORTED = "run aborted"
RUN_ABORTED_DURING_WAIT = "run aborted during wait"
RUN_ABORTED_DURING_DELAY = "run aborted during delay"
NEEDS_DEVICE = "step needs a device but the flow was resolved as device-free — pass an explicit device"
WHEN_BLOCK_SKIPPED = "when block skipped"
WHEN_GUARD_ERRORED = "when guard errored"

ProgressCallback = Callable[[StepReport], Awaitable[None]]


# --------------------------------------------------------------------------------------------
# What a run calls out to


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
class ToolVerdict:
    """A tool's own judgement of its result as a flow step (the tool's module decides it, not the runner).

    ``with_result``: the step's line still carries the result, the args and the output hint."""

    status: StepStatus
    reason: str
    with_result: bool = True


@frozen
class ToolOutcome:
    """What a tool call gave a `tool:` step; ``verdict`` None is a pass."""

    result: Any = None
    output_hint: str | None = None
    verdict: ToolVerdict | None = None


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
    #: Flows this call parsed, by text (see ``argent.runner.load.read_flow``).
    parsed: dict[str, Flow] = field(factory=dict)
    stopped: bool = False
    #: Why the run stopped, repeated on every line skipped after it (None: an earlier fail/error).
    stop_reason: str | None = None
    #: What to undo when this run ends (its `run:` fragments share it; a nested run has its own), last
    #: first: a `dialogs:` answer set on a device holds until the flow that set it ends.
    on_end: list[Callable[[], None]] = field(factory=list)

    @property
    def current_platform(self) -> str | None:
        """The platform `when: { platform }` compares with (``ios-remote`` counts as ios)."""
        platform = self.device.platform if self.device is not None else self.platform
        return None if platform is None else condition_platform(platform)

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


class StepLoop(Protocol):
    """The engine as a step handler sees it: a block or a fragment runs its steps one level deeper,
    a nested flow-execute runs a whole flow as a child run."""

    async def exec_steps(self, run: Run, steps: Sequence[Step], depth: int) -> None: ...

    async def execute_run(self, run: Run, flow: Flow) -> FlowRunResult: ...


class StepHandler(Protocol):
    """How the runner carries out the steps of one executor hook (see ``argent.runner.handlers``).

    ``execute`` reports the step's own lines through ``push``; ``needs_device`` says whether this
    one step acts on a device (a `run:` or a nested flow-execute: their own steps decide)."""

    def needs_device(self, step: Any, tools: ToolInvoker, platform_known: bool) -> bool: ...

    async def execute(self, loop: StepLoop, run: Run, step: Any, depth: int, top: StackEntry) -> None: ...


# --------------------------------------------------------------------------------------------
# Lines


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


async def push_leaf(run: Run, report: StepReport) -> None:
    """The one line of a leaf step; a ``fail`` or ``error`` stops the run.

    Past the budget the step loop ends before the next step, so a leaf reported then is the one
    that spent the budget (a nested run, a tool that ran flows): its line closes the step — one
    that would read as a pass fails on the limit — and a nested run carries the failure up."""
    if run.budget.exhausted and report.status != "fail" and report.status != "error":
        report = budget_exceeded_line(report, run.budget)
    await push(run, report, closing=True)
    if report.status == "fail" or report.status == "error":
        run.stopped = True


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


async def skip_step(run: Run, step: Step, depth: int, flow: str, reason: str | None) -> None:
    """One skip line for ``step`` (children of a block expanded); a `run:` stays one line."""
    if run.budget.exhausted:
        return
    shown = fragment_display_name(step.target, run.name) if isinstance(step, RunStep) else flow
    message = step.message if isinstance(step, EchoStep) else None
    await push(run, line(run, step, "skip", shown, depth, None, reason=reason, message=message))
    if isinstance(step, WhenStep):
        await skip_block(run, step.steps, depth + 1, flow, reason)


async def refuse_step(run: Run, step: Step, depth: int, flow: str, reason: str) -> None:
    """An error line for ``step`` that never ran; a block's children are skipped without a reason."""
    await push(run, line(run, step, "error", flow, depth, None, reason=reason))
    if isinstance(step, WhenStep):
        await skip_block(run, step.steps, depth + 1, flow, None)


async def skip_block(run: Run, steps: Sequence[Step], depth: int, flow: str, reason: str | None) -> None:
    for step in steps:
        if run.budget.exhausted:
            return
        await skip_step(run, step, depth, flow, reason)


def error_message(exc: BaseException) -> str:
    if isinstance(exc, ArgentError):
        return exc.message
    text = str(exc)
    return text if text else type(exc).__name__


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
# Tools and the run's device


def tool_name(step: ToolStep) -> str:
    return step.tool if isinstance(step.tool, str) else str(step.tool)


def tool_needs_device(tools: ToolInvoker, name: str) -> bool:
    """A tool that takes a device id. An unknown tool needs none: its step reports that the tool
    does not exist, which says more than "no device" would."""
    params = tools.params(name)
    return params is not None and any(key in params for key in DEVICE_ARG_KEYS)


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
