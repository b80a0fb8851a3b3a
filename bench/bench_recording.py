"""Recording: what one more step costs a recording that already holds many.

    .venv/bin/python bench/bench_recording.py [--repeat N]

1. the recorder on a host recording (``flow-add-echo`` and ``flow-add-step`` of a no-op tool,
   alternating, each read back from and written to the file atomically): 200 appends against
   10 x 20 appends — linear recording is a ratio near 1 (target <= 3x);
2. the recording document alone (``FlowDocument.append``, no tool and no file): the same ratio;
3. for the record, the text-level round trip the recorder used to do for every append
   (``append_step``: the whole file parsed before and after, loaded and dumped by ruamel): 40 appends.

Prints a table and writes ``bench/results/recording.json``. Medians of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

from attrs import frozen
from common import median_seconds, report

from argent.flows.model import AwaitStep, Condition, EchoStep, Flow, Selector, Step, TapStep, ToolStep
from argent.flows.write import FlowDocument, append_step, flow_to_yaml
from argent.tools.recording import Recorder
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec


@frozen
class _NoArgs:
    pass


async def _noop(args: _NoArgs, ctx: ToolContext) -> Any:
    return {"ok": True}


def _registry() -> ToolRegistry:
    registry = ToolRegistry([ToolSpec("noop", "does nothing", _NoArgs, _noop)])
    for spec in Recorder(registry).specs():
        registry.register(spec)
    return registry


async def _record(appends: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        registry = _registry()
        where = {"name": "bench", "project_root": tmp}
        await registry.invoke("flow-start-recording", {**where, "executionPrerequisite": "bench"})
        for i in range(appends):
            if i % 2:
                await registry.invoke("flow-add-step", {**where, "command": "noop", "args": "{}"})
            else:
                await registry.invoke("flow-add-echo", {**where, "message": f"step {i}"})
        text = (Path(tmp) / ".argent" / "flows" / "bench.yaml").read_text()
        assert text.count("\n  - ") == appends, text[:200]


def _steps(n: int) -> list[Step]:
    shapes: list[Any] = [
        lambda i: EchoStep(f"step {i}"),
        lambda i: TapStep(target=Selector(identifier=f"button-{i}", within=Selector(role="list"))),
        lambda i: ToolStep("gesture-scroll", {"x": 0.5, "y": 0.5, "deltaY": i}),
        lambda i: AwaitStep(Condition("visible", Selector(text=f"Row {i}")), timeout_ms=5000),
    ]
    return [shapes[i % len(shapes)](i) for i in range(n)]


def _document(steps: list[Step]) -> None:
    document = FlowDocument.parse(flow_to_yaml(Flow(execution_prerequisite="bench")))
    for step in steps:
        document = document.append(step)


def _round_trip(steps: list[Step]) -> None:
    text = flow_to_yaml(Flow(execution_prerequisite="bench"))
    for step in steps:
        text = append_step(text, step)


def _linearity(run: Any, repeat: int) -> dict[str, float]:
    t20 = median_seconds(lambda: run(20), repeat)
    t200 = median_seconds(lambda: run(200), repeat)
    return {"appends_20_s": t20, "appends_200_s": t200, "ratio_200_vs_10x20": t200 / (10 * t20)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    steps = _steps(200)
    results = {
        "recorder_200_vs_20_appends": _linearity(lambda n: asyncio.run(_record(n)), args.repeat),
        "document_200_vs_20_appends": _linearity(lambda n: _document(steps[:n]), args.repeat),
        "round_trip_40_appends": {"seconds": median_seconds(lambda: _round_trip(steps[:40]), 1)},
    }
    report("recording", results)


if __name__ == "__main__":
    main()
