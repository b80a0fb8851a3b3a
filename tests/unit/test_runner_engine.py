"""The step loop of the flow engine, driven with Flow objects built in code."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from attrs import define, field

from argent.errors import ToolExecutionError
from argent.flows.model import (
    AwaitStep,
    Condition,
    EchoStep,
    Flow,
    IdleStep,
    PlatformGuard,
    RunStep,
    Selector,
    SnapshotStep,
    Step,
    TapStep,
    ToolStep,
    WaitStep,
    WhenStep,
)
from argent.runner.composition import nested_flow_failure
from argent.runner.engine import (
    NEEDS_DEVICE,
    DirectiveContext,
    DirectiveOutcome,
    GuardOutcome,
    ToolCallContext,
    ToolOutcome,
    delay_seconds,
    run_flow,
)
from argent.runner.files import FlowFileError, FlowRef
from argent.runner.report import FlowRunResult, PrerequisiteNotice, StepReport
from argent.tools.verdicts import await_ui_element_verdict, run_sequence_verdict

ROOT = FlowRef(
    key="/p/.argent/flows\0main.yaml",
    path="/p/.argent/flows/main.yaml",
    canonical="/p/.argent/flows/main.yaml",
)


# --------------------------------------------------------------------------------------------
# Doubles


@define
class FakeDevice:
    id: str
    platform: str


ToolFn = Callable[[dict[str, Any], ToolCallContext], Awaitable[Any]]
#: The verdicts the tools of these names declare on their ToolSpec.
TOOL_VERDICTS = {"await-ui-element": await_ui_element_verdict, "run-sequence": run_sequence_verdict}


@define
class FakeTools:
    declared: dict[str, frozenset[str]] = field(factory=dict)
    impl: dict[str, ToolFn] = field(factory=dict)
    calls: list[tuple[str, dict[str, Any], float]] = field(factory=list)

    def params(self, tool: str) -> frozenset[str] | None:
        return self.declared.get(tool)

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        self.calls.append((tool, args, time.monotonic()))
        fn = self.impl.get(tool)
        if fn is None:
            return ToolOutcome(result={"ok": True}, output_hint="text")
        result = await fn(args, ctx)
        # As the registry does: the tool's own verdict on its result (declared by the tool's module).
        verdict = TOOL_VERDICTS.get(tool)
        return ToolOutcome(result=result, verdict=verdict(result) if verdict is not None else None)


@define
class FakeDirectives:
    outcome: DirectiveOutcome = field(factory=lambda: DirectiveOutcome("pass"))
    guard: GuardOutcome = field(factory=lambda: GuardOutcome("met"))
    raises: Exception | None = None
    executed: list[Step] = field(factory=list)
    checked: list[tuple[Condition, float, DirectiveContext]] = field(factory=list)

    async def execute(self, step: Step, device: Any, ctx: DirectiveContext) -> DirectiveOutcome:
        self.executed.append(step)
        if self.raises is not None:
            raise self.raises
        return self.outcome

    async def check(
        self, condition: Condition, device: Any, grace_ms: float, ctx: DirectiveContext
    ) -> GuardOutcome:
        self.checked.append((condition, grace_ms, ctx))
        return self.guard


class NoFiles:
    """Files of a flow that composes nothing: every lookup fails."""

    async def locate(self, path: str) -> FlowRef:
        raise FlowFileError(f"no file {path}")

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef:
        raise FlowFileError(f"ENOENT: no such file or directory, open '{target}'")

    async def named_flow(self, project_root: str, name: str) -> FlowRef:
        raise FlowFileError(f"no flow {name}")

    async def read_text(self, ref: FlowRef) -> str:
        raise FlowFileError(f"no file {ref.path}")

    def local_path(self, ref: FlowRef, relative: str) -> str | None:
        return None


async def run(
    *steps: Step,
    tools: FakeTools | None = None,
    directives: FakeDirectives | None = None,
    device: FakeDevice | None = None,
    platform: str | None = None,
    abort: asyncio.Event | None = None,
    progress: list[StepReport] | None = None,
    prerequisite: str = "",
) -> FlowRunResult:
    seen = progress

    async def on_progress(report: StepReport) -> None:
        assert seen is not None
        seen.append(report)

    return await run_flow(
        Flow(steps=steps, execution_prerequisite=prerequisite),
        ROOT,
        "main",
        files=NoFiles(),
        tools=tools or FakeTools(),
        directives=directives,
        device=device,
        platform=platform,
        abort=abort,
        on_progress=on_progress if seen is not None else None,
    )


def shape(result: FlowRunResult) -> list[str]:
    return [f"{s.kind}:{s.status}:{s.depth}" for s in result.steps]


VISIBLE_NEWS = Condition("visible", Selector(text="What's new", loose=True))
SAVE = TapStep(Selector(text="Save", loose=True))
DEVICE = FakeDevice("chromium-cdp-9222", "chromium")


# --------------------------------------------------------------------------------------------
# Plain runs


async def test_empty_flow_passes_with_no_steps_and_no_tool_calls() -> None:
    tools = FakeTools()
    result = await run(tools=tools)
    assert result.steps == []
    assert result.ok and not result.aborted
    assert (result.passed, result.failed, result.skipped, result.errored) == (0, 0, 0, 0)
    assert tools.calls == []
    assert result.device == ""


async def test_echo_lines_pass_carry_message_and_count_in_no_counter() -> None:
    result = await run(EchoStep("Hello"), EchoStep("World"))
    assert [(s.index, s.kind, s.status, s.message, s.flow, s.depth) for s in result.steps] == [
        (0, "echo", "pass", "Hello", "main", 0),
        (1, "echo", "pass", "World", "main", 0),
    ]
    assert (result.passed, result.failed, result.skipped, result.errored) == (0, 0, 0, 0)
    assert result.ok
    assert all(s.target is None and isinstance(s.duration_ms, float) for s in result.steps)


async def test_a_throwing_tool_errors_stops_the_run_and_progress_equals_steps() -> None:
    async def boom(args: dict[str, Any], ctx: ToolCallContext) -> Any:
        raise ToolExecutionError("[Tool:explode] explode failed: disk on fire")

    tools = FakeTools(declared={"ok": frozenset(), "explode": frozenset()}, impl={"explode": boom})
    progress: list[StepReport] = []
    result = await run(
        ToolStep("ok"),
        ToolStep("explode"),
        ToolStep("ok"),
        EchoStep("after"),
        tools=tools,
        progress=progress,
    )
    assert [s.status for s in result.steps] == ["pass", "error", "skip", "skip"]
    assert result.steps[1].reason == "[Tool:explode] explode failed: disk on fire"
    assert result.steps[1].tool == "explode"
    assert result.steps[2].reason is None and result.steps[3].message == "after"
    assert progress == result.steps
    assert (result.passed, result.errored, result.skipped, result.failed) == (1, 1, 1, 0)
    assert not result.ok
    assert [c[0] for c in tools.calls] == ["ok", "explode"]


async def test_a_passing_tool_line_carries_tool_result_hint_and_bound_args() -> None:
    tools = FakeTools(declared={"describe": frozenset({"udid", "depth"})})
    result = await run(ToolStep("describe", {"udid": "STALE", "depth": 2}), tools=tools, device=DEVICE)
    line = result.steps[0]
    assert (line.status, line.tool, line.result, line.output_hint) == (
        "pass",
        "describe",
        {"ok": True},
        "text",
    )
    assert line.args == {"udid": DEVICE.id, "depth": 2}
    assert tools.calls[0][1] == {"udid": DEVICE.id, "depth": 2}


async def test_device_keys_are_stripped_and_rebound_only_where_declared() -> None:
    tools = FakeTools(
        declared={
            "plain": frozenset({"x"}),
            "both": frozenset({"device_id", "device"}),
            "sweep": frozenset({"devices"}),
        }
    )
    await run(
        ToolStep("plain", {"x": 1, "udid": "OLD", "device": "OLD", "devices": ["OLD"]}),
        ToolStep("both", {"udid": "OLD"}),
        ToolStep("sweep", {}),
        ToolStep("sweep", {"devices": ["KEEP"]}),
        tools=tools,
        device=DEVICE,
    )
    assert [c[1] for c in tools.calls] == [
        {"x": 1},
        {"device_id": DEVICE.id, "device": DEVICE.id},
        {"devices": [DEVICE.id]},
        {"devices": ["KEEP"]},
    ]


async def test_delay_ms_sleeps_before_the_tool_is_invoked() -> None:
    tools = FakeTools(declared={"t": frozenset()})
    t0 = time.monotonic()
    result = await run(ToolStep("t", {}, delay_ms=60), tools=tools)
    assert tools.calls[0][2] - t0 >= 0.055
    assert result.steps[0].duration_ms >= 55


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(None, 0.0), (0, 0.0), ("", 0.0), ("soon", 0.0), (-5, 0.0), (250, 0.25), ("250", 0.25), (True, 0.001)],
)
def test_delay_ms_coercion_sleeps_truthy_numbers_and_numeric_strings(value: Any, seconds: float) -> None:
    assert delay_seconds(value) == pytest.approx(seconds)


async def test_unmet_await_ui_element_result_fails_the_step_and_stops_the_run() -> None:
    async def unmet(args: dict[str, Any], ctx: ToolCallContext) -> Any:
        return {"success": False, "note": "no element matched"}

    tools = FakeTools(declared={"await-ui-element": frozenset({"udid"})}, impl={"await-ui-element": unmet})
    result = await run(ToolStep("await-ui-element", {}), EchoStep("later"), tools=tools, device=DEVICE)
    assert shape(result) == ["tool:fail:0", "echo:skip:0"]
    assert result.steps[0].reason == "await-ui-element condition not met: no element matched"


async def test_a_nested_run_sequence_that_stopped_fails_the_step() -> None:
    async def seq(args: dict[str, Any], ctx: ToolCallContext) -> Any:
        return {"completed": 1, "total": 3, "steps": [{"tool": "a"}, {"tool": "tap", "error": "boom"}]}

    tools = FakeTools(declared={"run-sequence": frozenset()}, impl={"run-sequence": seq})
    result = await run(ToolStep("run-sequence", {}), tools=tools)
    assert result.steps[0].status == "fail"
    assert result.steps[0].reason == "run-sequence stopped at tap after 1 of 3 steps: boom"


async def test_the_tool_gets_the_run_device_platform_and_abort_event() -> None:
    got: list[ToolCallContext] = []

    async def capture(args: dict[str, Any], ctx: ToolCallContext) -> Any:
        got.append(ctx)
        return None

    abort = asyncio.Event()
    tools = FakeTools(declared={"t": frozenset()}, impl={"t": capture})
    await run(ToolStep("t"), tools=tools, device=FakeDevice("remote:X", "ios-remote"), abort=abort)
    assert got[0].device is not None and got[0].device.id == "remote:X"
    assert got[0].platform == "ios"
    assert got[0].abort is abort
    assert got[0].flow == "main"


async def test_wait_passes_and_measures_its_duration() -> None:
    result = await run(WaitStep(40))
    assert result.steps[0].status == "pass"
    assert result.steps[0].duration_ms >= 35
    assert result.steps[0].target is None


# --------------------------------------------------------------------------------------------
# Skip flood


async def test_after_a_failure_every_later_line_skips_without_reason_and_blocks_expand() -> None:
    directives = FakeDirectives(outcome=DirectiveOutcome("fail", reason="never visible"))
    result = await run(
        SAVE,
        EchoStep("note"),
        WhenStep(
            VISIBLE_NEWS,
            (
                TapStep(Selector(text="Dismiss", loose=True)),
                WhenStep(PlatformGuard("ios"), (EchoStep("deep"),)),
            ),
        ),
        RunStep("helpers/login.yaml"),
        directives=directives,
        device=DEVICE,
    )
    assert shape(result) == [
        "tap:fail:0",
        "echo:skip:0",
        "when:skip:0",
        "tap:skip:1",
        "when:skip:1",
        "echo:skip:2",
        "run:skip:0",
    ]
    assert [s.index for s in result.steps] == list(range(7))
    assert all(s.reason is None for s in result.steps[1:])
    assert result.steps[1].message == "note" and result.steps[5].message == "deep"
    assert result.steps[0].target == '"Save"'
    assert result.steps[3].target == '"Dismiss"'
    assert result.steps[4].target == "platform ios"
    # a skipped run: line is one line, attributed to the fragment it names
    assert (result.steps[6].flow, result.steps[6].target) == ("login", "helpers/login.yaml")
    assert result.skipped == 4 and result.failed == 1  # echo lines count in no counter


# --------------------------------------------------------------------------------------------
# Abort


async def test_an_already_aborted_echo_only_run_skips_with_run_aborted() -> None:
    abort = asyncio.Event()
    abort.set()
    result = await run(EchoStep("hi"), abort=abort)
    assert [(s.status, s.reason, s.message) for s in result.steps] == [("skip", "run aborted", "hi")]
    assert (result.passed, result.failed, result.skipped, result.errored) == (0, 0, 0, 0)
    assert result.aborted and not result.ok


async def test_abort_skips_every_remaining_line_as_run_aborted() -> None:
    abort = asyncio.Event()

    async def trip(args: dict[str, Any], ctx: ToolCallContext) -> Any:
        abort.set()
        return "done"

    tools = FakeTools(declared={"trip": frozenset()}, impl={"trip": trip})
    result = await run(
        ToolStep("trip"),
        WhenStep(PlatformGuard("chromium"), (EchoStep("a"), EchoStep("b"))),
        EchoStep("tail"),
        WaitStep(5),
        tools=tools,
        platform="chromium",
        abort=abort,
    )
    assert shape(result) == [
        "tool:pass:0",
        "when:skip:0",
        "echo:skip:1",
        "echo:skip:1",
        "echo:skip:0",
        "wait:skip:0",
    ]
    assert [s.reason for s in result.steps] == [None] + ["run aborted"] * 5
    assert result.aborted and not result.ok


async def test_abort_during_a_wait_cuts_it_short() -> None:
    abort = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, abort.set)
    t0 = time.monotonic()
    result = await run(WaitStep(10_000), EchoStep("after"), WaitStep(5), abort=abort)
    assert time.monotonic() - t0 < 2
    assert [(s.status, s.reason) for s in result.steps] == [
        ("skip", "run aborted during wait"),
        ("skip", "run aborted"),
        ("skip", "run aborted"),
    ]
    assert result.aborted and not result.ok


async def test_abort_during_a_tool_delay_skips_without_invoking() -> None:
    abort = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, abort.set)
    tools = FakeTools(declared={"t": frozenset()})
    result = await run(ToolStep("t", {}, delay_ms=10_000), abort=abort, tools=tools)
    assert [(s.status, s.reason, s.tool) for s in result.steps] == [("skip", "run aborted during delay", "t")]
    assert tools.calls == []


async def test_a_clean_run_is_not_aborted() -> None:
    result = await run(EchoStep("x"))
    assert result.aborted is False


# --------------------------------------------------------------------------------------------
# Progress


async def test_each_line_reaches_progress_the_moment_it_is_appended() -> None:
    lengths: list[int] = []
    result_box: list[FlowRunResult] = []

    steps: list[StepReport] = []

    async def on_progress(report: StepReport) -> None:
        steps.append(report)
        lengths.append(report.index)
        await asyncio.sleep(0)

    flow = Flow(
        steps=(EchoStep("a"), WhenStep(PlatformGuard("ios"), (EchoStep("b"),)), WaitStep(1), EchoStep("c"))
    )
    result = await run_flow(
        flow, ROOT, "main", files=NoFiles(), tools=FakeTools(), platform="ios", on_progress=on_progress
    )
    result_box.append(result)
    assert steps == result.steps
    assert lengths == list(range(len(result.steps)))


async def test_progress_is_awaited_before_the_next_step_starts() -> None:
    order: list[str] = []

    async def slow_progress(report: StepReport) -> None:
        await asyncio.sleep(0.01)
        order.append(f"progress {report.index}")

    async def tool(args: dict[str, Any], ctx: ToolCallContext) -> Any:
        order.append("tool")
        return None

    await run_flow(
        Flow(steps=(EchoStep("a"), ToolStep("t"))),
        ROOT,
        "main",
        files=NoFiles(),
        tools=FakeTools(declared={"t": frozenset()}, impl={"t": tool}),
        on_progress=slow_progress,
    )
    assert order == ["progress 0", "tool", "progress 1"]


# --------------------------------------------------------------------------------------------
# when:


async def test_platform_guard_is_evaluated_statically_against_the_given_platform() -> None:
    result = await run(
        WhenStep(PlatformGuard("ios"), (EchoStep("ios only"),)),
        WhenStep(PlatformGuard("android"), (EchoStep("android only"), EchoStep("more"))),
        EchoStep("done"),
        platform="ios",
    )
    assert shape(result) == [
        "when:pass:0",
        "echo:pass:1",
        "when:skip:0",
        "echo:skip:1",
        "echo:skip:1",
        "echo:pass:0",
    ]
    assert result.steps[0].reason == "condition met (platform ios)"
    assert result.steps[2].reason == "condition not met (platform android) — block skipped (2 steps)"
    assert result.steps[3].reason == "when block skipped"
    assert result.ok and result.skipped == 1 and result.passed == 1


async def test_ios_remote_device_matches_a_platform_ios_guard() -> None:
    result = await run(
        WhenStep(PlatformGuard("ios"), (EchoStep("x"),)), device=FakeDevice("remote:ABC", "ios-remote")
    )
    assert result.steps[0].status == "pass"


async def test_unmet_ui_guard_skips_the_block_and_the_run_stays_ok() -> None:
    directives = FakeDirectives(guard=GuardOutcome("unmet"))
    result = await run(
        WhenStep(VISIBLE_NEWS, (SAVE, WhenStep(PlatformGuard("ios"), (EchoStep("deep"),)))),
        EchoStep("done"),
        directives=directives,
        device=DEVICE,
    )
    assert [f"{s.kind}:{s.status}" for s in result.steps] == [
        "when:skip",
        "tap:skip",
        "when:skip",
        "echo:skip",
        "echo:pass",
    ]
    assert (
        result.steps[0].reason
        == """condition not met (visible text="What's new") — block skipped (2 steps)"""
    )
    assert result.steps[0].target == """visible "What's new\""""
    assert [s.reason for s in result.steps[1:4]] == ["when block skipped"] * 3
    assert [s.depth for s in result.steps] == [0, 1, 1, 2, 0]
    assert result.ok
    assert directives.checked[0][1] == 1000


async def test_one_child_block_says_step_not_steps() -> None:
    result = await run(WhenStep(PlatformGuard("vega"), (EchoStep("x"),)), platform="ios")
    assert result.steps[0].reason == "condition not met (platform vega) — block skipped (1 step)"


async def test_met_ui_guard_runs_children_one_level_deeper_and_failures_stop_the_run() -> None:
    directives = FakeDirectives(guard=GuardOutcome("met"), outcome=DirectiveOutcome("fail", reason="nope"))
    result = await run(
        WhenStep(VISIBLE_NEWS, (SAVE, EchoStep("not reached"))),
        EchoStep("after"),
        directives=directives,
        device=DEVICE,
    )
    assert shape(result) == ["when:pass:0", "tap:fail:1", "echo:skip:1", "echo:skip:0"]
    assert result.steps[0].reason == """condition met (visible text="What's new")"""
    assert not result.ok


async def test_indeterminate_ui_guard_errors_the_marker_and_children_say_guard_errored() -> None:
    directives = FakeDirectives(guard=GuardOutcome("indeterminate", "could not read the UI tree: boom"))
    result = await run(
        WhenStep(VISIBLE_NEWS, (SAVE,)),
        EchoStep("after"),
        directives=directives,
        device=DEVICE,
    )
    assert shape(result) == ["when:error:0", "tap:skip:1", "echo:skip:0"]
    assert result.steps[0].reason == (
        """could not evaluate when guard (visible text="What's new"): could not read the UI tree: boom"""
    )
    assert result.steps[1].reason == "when guard errored"
    assert result.steps[2].reason is None
    assert not result.ok


async def test_aborted_ui_guard_skips_marker_and_children_as_run_aborted() -> None:
    abort = asyncio.Event()
    directives = FakeDirectives(guard=GuardOutcome("aborted"))
    result = await run(
        WhenStep(VISIBLE_NEWS, (SAVE, EchoStep("x"))), directives=directives, device=DEVICE, abort=abort
    )
    assert [(s.status, s.reason) for s in result.steps] == [("skip", "run aborted")] * 3


# --------------------------------------------------------------------------------------------
# Device directives


async def test_directive_without_executor_is_not_supported_on_this_device_yet() -> None:
    result = await run(SAVE, EchoStep("x"), device=DEVICE)
    assert shape(result) == ["tap:error:0", "echo:skip:0"]
    assert result.steps[0].reason == "tap is not supported on this device yet"


async def test_directive_without_a_device_errors_and_stops() -> None:
    result = await run(EchoStep("a"), SAVE, EchoStep("b"))
    assert shape(result) == ["echo:pass:0", "tap:error:0", "echo:skip:0"]
    assert result.steps[1].reason == NEEDS_DEVICE


async def test_directive_outcome_fields_reach_the_report() -> None:
    directives = FakeDirectives(
        outcome=DirectiveOutcome(
            "pass",
            reason="baseline written",
            artifacts={"baseline": "/b.png"},
            snapshot_key="home__chromium-1x1",
        )
    )
    result = await run(SnapshotStep("home"), directives=directives, device=DEVICE)
    line = result.steps[0]
    assert (line.status, line.reason, line.snapshot_key, line.artifacts) == (
        "pass",
        "baseline written",
        "home__chromium-1x1",
        {"baseline": "/b.png"},
    )
    assert line.target == '"home"'


async def test_a_directive_that_raises_errors_with_its_message() -> None:
    directives = FakeDirectives(raises=RuntimeError("tree source outage"))
    result = await run(AwaitStep(VISIBLE_NEWS), IdleStep(), directives=directives, device=DEVICE)
    assert shape(result) == ["await:error:0", "await:skip:0"]
    assert result.steps[0].reason == "tree source outage"


async def test_a_launch_that_moves_the_run_changes_the_device_of_later_steps() -> None:
    moved = FakeDevice("chromium-cdp-9333", "chromium")
    directives = FakeDirectives(outcome=DirectiveOutcome("pass", device=moved))
    tools = FakeTools(declared={"t": frozenset({"udid"})})
    result = await run(SAVE, ToolStep("t"), directives=directives, device=DEVICE, tools=tools)
    assert tools.calls[0][1] == {"udid": moved.id}
    assert result.device == DEVICE.id  # the device the run started on


# --------------------------------------------------------------------------------------------
# Nested flow-execute scoring


def _nested(steps: list[StepReport], aborted: bool = False) -> FlowRunResult:
    return FlowRunResult(flow="sub", device="", steps=steps, aborted=aborted)


def _rep(kind: str, status: Any, reason: str | None = None, tool: str | None = None) -> StepReport:
    return StepReport(index=0, kind=kind, status=status, flow="sub", reason=reason, tool=tool)


def test_nested_flow_results_score_the_tool_line() -> None:
    assert nested_flow_failure(_nested([_rep("echo", "pass")])) is None
    assert nested_flow_failure(_nested([_rep("echo", "skip")], aborted=True)) == (
        "skip",
        'flow "sub" was aborted',
    )
    failed = _nested(
        [_rep("tool", "pass", tool="a"), _rep("tap", "fail", "never visible"), _rep("echo", "skip")]
    )
    assert nested_flow_failure(failed) == (
        "fail",
        'flow "sub" failed: 1 passed, 1 failed, 0 errored (tap: never visible)',
    )
    errored = _nested([_rep("tool", "error", "boom", tool="explode")])
    assert nested_flow_failure(errored) == (
        "fail",
        'flow "sub" failed: 0 passed, 0 failed, 1 errored (explode: boom)',
    )
    notice = PrerequisiteNotice(flow="sub", execution_prerequisite="Logged in")
    assert nested_flow_failure(notice) == (
        "error",
        'flow "sub" did not run — its execution prerequisite was not acknowledged: Logged in. '
        "Add prerequisiteAcknowledged: true to the step's args, or compose with run: instead.",
    )


# --------------------------------------------------------------------------------------------
# Overhead


async def test_ten_thousand_echo_steps_cost_little_more_than_building_their_reports() -> None:
    steps = tuple(EchoStep(f"m{i}") for i in range(10_000))
    flow = Flow(steps=steps)

    def bare() -> list[StepReport]:
        out: list[StepReport] = []
        for i, step in enumerate(steps):
            t0 = time.monotonic()
            out.append(
                StepReport(
                    index=i,
                    kind="echo",
                    status="pass",
                    flow="main",
                    depth=0,
                    message=step.message,
                    duration_ms=round((time.monotonic() - t0) * 1000, 3),
                )
            )
        return out

    best_bare = best_engine = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        bare()
        best_bare = min(best_bare, time.perf_counter() - t0)
        t0 = time.perf_counter()
        result = await run_flow(flow, ROOT, "main", files=NoFiles(), tools=FakeTools())
        best_engine = min(best_engine, time.perf_counter() - t0)
        assert len(result.steps) == 10_000
    # The target is 3x; the test allows headroom for noisy machines.
    assert best_engine <= 5 * best_bare, (best_engine, best_bare)
