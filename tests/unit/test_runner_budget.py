"""The step budget of one call: a fan-out of `run:` fragments ends at the limit, with one error
line naming it; the engine gives the loop back while it runs."""

from __future__ import annotations

import asyncio
import time

import pytest

from argent.flows.model import EchoStep, Flow
from argent.flows.parse import parse_flow
from argent.limits import ENGINE_YIELD_SECONDS, MAX_STEPS_PER_CALL
from argent.runner import budget as budget_module
from argent.runner.budget import STEP_BUDGET_EXCEEDED, StepBudget
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.report import FlowRunResult
from tests.unit.test_runner_composition import FLOWS, MemberFiles, NoteTools


def fan_out(levels: int, width: int) -> dict[str, str]:
    """f0 runs f1 ``width`` times, f1 runs f2 ``width`` times, ...: width**levels fragment runs."""
    texts = {f"{FLOWS}/main.yaml": "steps:\n  - run: f0\n"}
    for level in range(levels):
        body = "".join(f"  - run: f{level + 1}\n" for _ in range(width))
        texts[f"{FLOWS}/f{level}.yaml"] = "steps:\n" + body
    texts[f"{FLOWS}/f{levels}.yaml"] = "steps:\n  - tool: note\n"
    return texts


async def run_main(files: MemberFiles, max_steps: int, **kwargs: object) -> FlowRunResult:
    root = await files.named_flow("/client/proj", "main")
    flow = parse_flow(await files.read_text(root))
    return await run_flow(
        flow,
        root,
        "main",
        files=files,
        tools=NoteTools(),
        project_root="/client/proj",
        budget=StepBudget(limit=max_steps),
        **kwargs,  # type: ignore[arg-type]
    )


def test_the_default_limit_is_named_and_sane() -> None:
    assert 10_000 <= MAX_STEPS_PER_CALL <= 1_000_000


async def test_a_run_fan_out_stops_at_the_limit_with_an_error_naming_it() -> None:
    files = MemberFiles(fan_out(levels=8, width=10))  # 10**8 fragment runs if nothing stopped it
    t0 = time.monotonic()
    result = await run_main(files, max_steps=2_000)
    assert time.monotonic() - t0 < 10
    assert len(result.steps) == 2_001
    last = result.steps[-1]
    assert last.status == "error"
    assert last.reason == STEP_BUDGET_EXCEEDED.format(limit=2_000)
    assert "MAX_STEPS_PER_CALL" in last.reason and "steps_per_call" in last.reason
    assert [s.index for s in result.steps] == list(range(2_001))
    assert not result.ok and result.errored == 1


async def test_echo_lines_count_and_an_echo_past_the_limit_errors_the_run() -> None:
    files = MemberFiles({f"{FLOWS}/main.yaml": "steps:\n" + "  - echo: hi\n" * 50})
    result = await run_main(files, max_steps=10)
    assert len(result.steps) == 11
    assert result.steps[-1].kind == "echo" and result.steps[-1].status == "error"
    assert result.errored == 1 and not result.ok


async def test_skip_floods_count_too_so_a_failed_call_reports_a_bounded_number_of_lines() -> None:
    files = MemberFiles({f"{FLOWS}/main.yaml": "steps:\n  - run: nosuch\n" + "  - echo: hi\n" * 500})
    result = await run_main(files, max_steps=100)
    assert len(result.steps) == 101
    assert [s.status for s in result.steps[:3]] == ["error", "skip", "skip"]
    assert result.steps[-1].reason == STEP_BUDGET_EXCEEDED.format(limit=100)


async def test_a_flow_within_the_limit_is_untouched() -> None:
    files = MemberFiles({f"{FLOWS}/main.yaml": "steps:\n" + "  - echo: hi\n" * 10})
    result = await run_main(files, max_steps=10)
    assert len(result.steps) == 10 and result.ok


async def test_nested_flow_execute_runs_share_the_budget_and_carry_the_failure_up() -> None:
    files = MemberFiles(
        {
            f"{FLOWS}/main.yaml": (
                "steps:\n  - echo: before\n  - tool: flow-execute\n"
                "    args: { name: child, project_root: /client/proj }\n  - echo: after\n"
            ),
            f"{FLOWS}/child.yaml": "steps:\n" + "  - tool: note\n" * 30,
        }
    )
    result = await run_main(files, max_steps=20)
    nested = result.steps[-1]
    assert nested.tool == "flow-execute" and nested.status == "fail"
    assert STEP_BUDGET_EXCEEDED.format(limit=20) in (nested.reason or "")
    child = nested.result
    assert isinstance(child, FlowRunResult)
    assert len(child.steps) == 20  # 1 line of the parent + 19 of the child + the limit's error line
    assert child.steps[-1].reason == STEP_BUDGET_EXCEEDED.format(limit=20)
    assert not result.ok


async def test_the_engine_gives_the_loop_back_while_a_long_run_runs() -> None:
    files = MemberFiles({})
    root = await files.named_flow("/client/proj", "main")
    flow = Flow(steps=tuple(EchoStep("hi") for _ in range(60_000)))
    runs = asyncio.create_task(run_flow(flow, root, "main", files=files, tools=NoteTools()))
    seen_while_running = 0
    while not runs.done():
        await asyncio.sleep(0)
        seen_while_running += 0 if runs.done() else 1
    result = await runs
    assert len(result.steps) == 60_000 and result.ok
    assert seen_while_running > 1


class FlowRunningTools(NoteTools):
    """A `runner` tool that runs a 50-echo flow itself, as a recorded flow-execute step does."""

    def params(self, tool: str) -> frozenset[str] | None:
        return frozenset() if tool in ("note", "runner") else None

    async def invoke(self, tool: str, args: dict[str, object], ctx: ToolCallContext) -> ToolOutcome:
        if tool != "runner":
            return ToolOutcome()
        files = MemberFiles({})
        root = await files.named_flow("/client/proj", "inner")
        inner = Flow(steps=tuple(EchoStep("inner") for _ in range(50)))
        result = await run_flow(inner, root, "inner", files=files, tools=self, budget=ctx.budget)
        return ToolOutcome(result=result)


async def test_a_tool_that_runs_flows_spends_the_calls_budget_and_its_step_fails_on_it() -> None:
    files = MemberFiles(
        {f"{FLOWS}/main.yaml": "steps:\n  - echo: first\n  - tool: runner\n  - echo: after\n"}
    )
    root = await files.named_flow("/client/proj", "main")
    flow = parse_flow(await files.read_text(root))
    budget = StepBudget(limit=20)
    result = await run_flow(flow, root, "main", files=files, tools=FlowRunningTools(), budget=budget)
    assert budget.exhausted
    assert [(s.kind, s.status) for s in result.steps] == [("echo", "pass"), ("tool", "error")]
    assert result.steps[-1].reason == STEP_BUDGET_EXCEEDED.format(limit=20)
    assert not result.ok


def test_due_for_yield_is_true_once_per_engine_yield_period(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pacing itself, on a clock the test sets: false within a period, true at its end, then
    false again for the next whole period (the mutants of issue 24 that survived the fan-out tests)."""
    now = [100.0]
    monkeypatch.setattr(budget_module.time, "monotonic", lambda: now[0])
    budget = StepBudget()
    assert budget.due_for_yield() is False
    now[0] = 100.0 + ENGINE_YIELD_SECONDS / 2
    assert budget.due_for_yield() is False
    now[0] = 100.0 + ENGINE_YIELD_SECONDS
    assert budget.due_for_yield() is True
    assert budget.due_for_yield() is False  # the next period starts now
    now[0] = (100.0 + ENGINE_YIELD_SECONDS) + ENGINE_YIELD_SECONDS / 2
    assert budget.due_for_yield() is False
    now[0] = (100.0 + ENGINE_YIELD_SECONDS) + ENGINE_YIELD_SECONDS
    assert budget.due_for_yield() is True
