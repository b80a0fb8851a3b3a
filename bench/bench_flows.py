"""Flow language and runner benchmarks, each a ratio against a bare baseline measured in the same run.

    .venv/bin/python bench/bench_flows.py [--repeat N]

1. parse+validate of a 5,000-step flow vs a bare ``ruamel.yaml`` round-trip load of the same text
   (target <= 2x);
2. a 20-deep `run:` chain executed by flow-execute (resolution, reads, parses, guards) vs bare loads
   of the same 20 files;
3. runner overhead for 10,000 echo steps vs a bare loop that builds the same report objects and
   awaits the same progress callback (target <= 3x);
4. parse+validate of an 8 MiB flow (4,000 steps, half of them echoes of a 4,000-character message)
   vs ruamel's C safe loader (``YAML(typ="safe", pure=False)``, libyaml from ``ruamel.yaml.clib``)
   loading the same text (target <= 2x; skipped without ``ruamel.yaml.clib``).

Prints a table and writes ``bench/results/flows.json``. Medians of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from common import median_seconds, report
from ruamel.yaml import YAML

from argent.flows.model import EchoStep, Flow
from argent.flows.parse import parse_flow
from argent.runner.execute import FlowRequest, execute_flow
from argent.runner.files import DiskFlowFiles, FlowRef
from argent.runner.report import StepReport

STEP_SHAPES = (
    "  - echo: step {i}\n",
    "  - tap: {{ id: button-{i}, within: {{ role: list }} }}\n",
    '  - await: {{ visible: "Row {i}", timeout: 5000 }}\n',
    "  - tool: gesture-scroll\n    args: {{ x: 0.5, y: 0.5, deltaY: {i} }}\n",
    "  - when: {{ platform: chromium }}\n    steps:\n      - wait: 10\n",
)


def big_flow_text(steps: int) -> str:
    body = "".join(STEP_SHAPES[i % len(STEP_SHAPES)].format(i=i) for i in range(steps))
    return "executionPrerequisite: bench\nsteps:\n" + body


def bench_parse(repeat: int) -> dict[str, float]:
    text = big_flow_text(5000)
    yaml = YAML(typ="rt")
    yaml.version = (1, 2)
    bare = median_seconds(lambda: yaml.load(text), repeat)
    ours = median_seconds(lambda: parse_flow(text), repeat)
    return {"bare_load_s": bare, "parse_validate_s": ours, "ratio": ours / bare}


def eight_mib_flow_text(mib: int = 8) -> str:
    """About ``mib`` MiB of flow: the shapes above, every other step an echo of 4,000 characters."""
    filler = "x" * 4000
    parts = ["executionPrerequisite: bench\nsteps:\n"]
    size = len(parts[0])
    i = 0
    while size < mib * 1024 * 1024:
        step = STEP_SHAPES[i % len(STEP_SHAPES)].format(i=i) if i % 2 else f"  - echo: step {i} {filler}\n"
        parts.append(step)
        size += len(step)
        i += 1
    return "".join(parts)


def bench_parse_big(repeat: int) -> dict[str, float] | None:
    yaml = YAML(typ="safe", pure=False)
    if yaml.Parser is None or yaml.Parser.__module__.startswith("ruamel.yaml.parser"):
        return None  # no libyaml: nothing to compare with
    text = eight_mib_flow_text()
    bare_s: list[float] = []
    ours_s: list[float] = []
    for _ in range(repeat):  # interleaved: both see the same machine load
        bare_s.append(median_seconds(lambda: yaml.load(text), 1))
        ours_s.append(median_seconds(lambda: parse_flow(text), 1))
    bare, ours = statistics.median(bare_s), statistics.median(ours_s)
    return {"mib": len(text) / 2**20, "c_safe_load_s": bare, "parse_validate_s": ours, "ratio": ours / bare}


class _NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: Any) -> Any:
        raise AssertionError("no tools in this benchmark")


def bench_chain(repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        flows = Path(tmp) / ".argent" / "flows"
        flows.mkdir(parents=True)
        texts = []
        for i in range(20):
            nxt = f"  - run: n{i + 1}\n" if i < 19 else ""
            text = f"steps:\n  - echo: level {i}\n{nxt}"
            (flows / f"n{i}.yaml").write_text(text)
            texts.append(text)
        yaml = YAML(typ="rt")
        yaml.version = (1, 2)

        def bare() -> None:
            for i in range(20):
                yaml.load((flows / f"n{i}.yaml").read_text())

        request = FlowRequest(name="n0", project_root=tmp, prerequisite_acknowledged=True)

        def ours() -> None:
            result = asyncio.run(execute_flow(request, files=DiskFlowFiles(), tools=_NoTools(), devices=None))
            assert getattr(result, "ok", False), result

        bare_s = median_seconds(bare, repeat)
        ours_s = median_seconds(ours, repeat)
    return {"bare_loads_s": bare_s, "chain_run_s": ours_s, "ratio": ours_s / bare_s}


def bench_runner(repeat: int) -> dict[str, float]:
    from argent.runner.engine import run_flow

    n = 10_000
    messages = [f"message {i}" for i in range(n)]
    flow = Flow(steps=tuple(EchoStep(m) for m in messages))
    root = FlowRef(key="bench\0bench.yaml", path="/bench/bench.yaml", canonical="/bench/bench.yaml")

    async def sink(report: StepReport) -> None:
        return None

    async def engine() -> None:
        result = await run_flow(
            flow, root, "bench", files=DiskFlowFiles(), tools=_NoTools(), on_progress=sink
        )
        assert len(result.steps) == n

    async def bare_loop() -> None:
        reports = []
        for i, message in enumerate(messages):
            t0 = time.monotonic()
            report = StepReport(
                index=i,
                kind="echo",
                status="pass",
                flow="bench",
                message=message,
                duration_ms=round((time.monotonic() - t0) * 1000, 3),
            )
            reports.append(report)
            await sink(report)

    bare = median_seconds(lambda: asyncio.run(bare_loop()), repeat)
    ours = median_seconds(lambda: asyncio.run(engine()), repeat)
    return {"bare_loop_s": bare, "engine_s": ours, "ratio": ours / bare}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results = {
        "parse_5000_steps": bench_parse(args.repeat),
        "run_chain_20_deep": bench_chain(args.repeat),
        "runner_10000_echoes": bench_runner(args.repeat),
    }
    big = bench_parse_big(args.repeat)
    if big is not None:
        results["parse_8mib_vs_c_safe"] = big
    report("flows", results)


if __name__ == "__main__":
    main()
