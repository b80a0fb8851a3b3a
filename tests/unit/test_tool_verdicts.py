"""Tools report their own verdicts: a `tool:` step fails, skips or passes by the verdict its tool's
``ToolSpec`` declares, through the real registry invoker — the runner knows no tool by name."""

from __future__ import annotations

from typing import Any

from attrs import frozen

from argent.flows.parse import parse_flow
from argent.runner.engine import run_flow
from argent.runner.files import FlowRef
from argent.runner.run import ToolVerdict
from argent.tools.args import arg
from argent.tools.device_tools import device_tools
from argent.tools.invoker import RegistryInvoker
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec
from argent.tools.verdicts import await_ui_element_verdict, run_sequence_verdict
from tests.unit.test_runner_engine import NoFiles

ROOT = FlowRef(
    key="/p/.argent/flows\0main.yaml",
    path="/p/.argent/flows/main.yaml",
    canonical="/p/.argent/flows/main.yaml",
)


@frozen
class ProbeArgs:
    level: int = arg(0)


async def _probe(args: ProbeArgs, ctx: ToolContext) -> Any:
    return {"level": args.level}


def _judge(result: Any) -> ToolVerdict | None:
    level = result["level"]
    if level == 1:
        return ToolVerdict("fail", "too high", with_result=False)
    if level == 2:
        return ToolVerdict("skip", "not today")
    return None


async def _run(text: str) -> Any:
    registry = ToolRegistry(
        [ToolSpec("probe", "a probe", ProbeArgs, _probe, output_hint="json", verdict=_judge)]
    )
    return await run_flow(parse_flow(text), ROOT, "main", files=NoFiles(), tools=RegistryInvoker(registry))


async def test_a_tool_s_own_verdict_fails_its_step_and_stops_the_run() -> None:
    result = await _run("steps:\n  - tool: probe\n    args: { level: 1 }\n  - echo: later\n")
    first = result.steps[0]
    assert (first.status, first.reason, first.tool) == ("fail", "too high", "probe")
    assert first.result is None and first.args is None and first.output_hint is None
    assert [s.status for s in result.steps] == ["fail", "skip"]


async def test_a_verdict_may_keep_the_result_on_the_line() -> None:
    result = await _run("steps:\n  - tool: probe\n    args: { level: 2 }\n")
    line = result.steps[0]
    assert (line.status, line.reason) == ("skip", "not today")
    assert line.result == {"level": 2} and line.args == {"level": 2} and line.output_hint == "json"


async def test_no_verdict_is_a_pass_with_the_result() -> None:
    result = await _run("steps:\n  - tool: probe\n")
    assert (result.steps[0].status, result.steps[0].reason, result.steps[0].result) == (
        "pass",
        None,
        {"level": 0},
    )


def test_await_ui_element_declares_its_verdict() -> None:
    spec = next(s for s in device_tools(devices=None) if s.name == "await-ui-element")  # type: ignore[arg-type]
    assert spec.verdict is await_ui_element_verdict
    outcome = spec.outcome({"success": False, "note": "no element matched"})
    assert outcome.verdict == ToolVerdict(
        "fail", "await-ui-element condition not met: no element matched", with_result=False
    )
    assert spec.outcome({"success": True}).verdict is None


def test_run_sequence_verdicts() -> None:
    stopped = {"completed": 1, "total": 3, "steps": [{"tool": "a"}, {"tool": "tap", "error": "boom"}]}
    assert run_sequence_verdict(stopped) == ToolVerdict(
        "fail", "run-sequence stopped at tap after 1 of 3 steps: boom"
    )
    cut = {"completed": 1, "total": 3, "steps": [{"tool": "a"}]}
    assert run_sequence_verdict(cut) == ToolVerdict("skip", "run-sequence was aborted after 1 of 3 steps")
    assert run_sequence_verdict({"completed": 1, "total": 1, "steps": [{"tool": "a"}]}) is None
    assert run_sequence_verdict("text") is None
