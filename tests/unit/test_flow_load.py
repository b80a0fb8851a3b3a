"""The one way a call parses a flow: in a thread, through a bounded cache of parsed flows."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from argent import limits
from argent.errors import FlowParseError
from argent.flows import parse
from argent.flows.load import PARSED_FLOWS, parse_flow_async
from argent.flows.model import EchoStep, Flow
from argent.runner.execute import FlowRequest, execute_flow
from argent.runner.files import DiskFlowFiles


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    PARSED_FLOWS.clear()
    yield
    PARSED_FLOWS.clear()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the parser really read (cache hits do not show up here)."""
    seen: list[str] = []
    real = parse.parse_flow

    def counting(text: str) -> Flow:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(parse, "parse_flow", counting)
    return seen


def echo_flow(message: str) -> str:
    return f"steps:\n  - echo: {message}\n"


async def test_the_loop_keeps_running_while_a_flow_parses() -> None:
    # Long enough to take well over 25 ms also through libyaml (ruamel.yaml.clib).
    text = "steps:\n" + "".join(f"  - tap: {{ id: b{i}, within: {{ role: list }} }}\n" for i in range(4_000))
    ticks = 0
    done = asyncio.Event()

    async def tick() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)
    before = ticks
    flow = await parse_flow_async(text)
    done.set()
    await ticker
    assert len(flow.steps) == 4_000
    assert ticks - before >= 5  # a parse on the loop itself would let the ticker run at most once


async def test_a_text_is_parsed_once_and_its_flow_shared(parses: list[str]) -> None:
    first = await parse_flow_async(echo_flow("a"))
    again = await parse_flow_async(echo_flow("a"))
    other = await parse_flow_async(echo_flow("b"))
    assert first is again
    assert first.steps == (EchoStep("a"),) and other.steps == (EchoStep("b"),)
    assert parses == [echo_flow("a"), echo_flow("b")]


async def test_a_parse_error_is_kept_too_and_raised_afresh_each_time(parses: list[str]) -> None:
    text = "steps:\n  - echo: a\n  - bogus: 1\n"
    errors = []
    for _ in range(3):
        with pytest.raises(FlowParseError) as info:
            await parse_flow_async(text)
        errors.append(info.value)
    assert parses == [text]
    assert len({id(err) for err in errors}) == 3
    assert {(err.message, err.error_code, err.line, err.step) for err in errors} == {
        (errors[0].message, "FLOW_ENTRY_UNRECOGNIZED", 3, "2")
    }


async def test_the_cache_keeps_the_most_recently_used_entries(
    parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "PARSED_FLOW_CACHE_ENTRIES", 3)
    for name in "abcd":  # `a` goes when `d` comes
        await parse_flow_async(echo_flow(name))
    await parse_flow_async(echo_flow("b"))  # a hit: `b` is now the freshest
    await parse_flow_async(echo_flow("e"))  # `c` goes
    assert len(PARSED_FLOWS) == 3
    parses.clear()
    for name in "bdeac":
        await parse_flow_async(echo_flow(name))
    assert parses == [echo_flow("a"), echo_flow("c")]


async def test_the_cache_is_bounded_in_bytes(parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "PARSED_FLOW_CACHE_BYTES", 4_000)
    big = echo_flow("x" * 5_000)
    await parse_flow_async(big)
    await parse_flow_async(big)
    assert parses == [big, big]  # heavier than the whole cache: never kept
    for i in range(40):
        await parse_flow_async(echo_flow(f"m{i:02d}-" + "y" * 100))
    assert 0 < len(PARSED_FLOWS) < 40
    assert PARSED_FLOWS.weight <= 4_000


async def test_a_fragment_run_many_times_is_parsed_once(tmp_path: Path, parses: list[str]) -> None:
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "main.yaml").write_text("steps:\n" + "  - run: frag.yaml\n" * 30)
    (flows / "frag.yaml").write_text(echo_flow("again"))
    request = FlowRequest(name="main", project_root=str(tmp_path), prerequisite_acknowledged=True)
    result: Any = await execute_flow(request, files=DiskFlowFiles(), tools=NoTools(), devices=None)
    assert result.ok
    assert [step.message for step in result.steps if step.kind == "echo"] == ["again"] * 30
    assert sorted(parses) == sorted([(flows / "main.yaml").read_text(), echo_flow("again")])


class NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: Any) -> Any:
        raise AssertionError("no tool runs in these flows")
