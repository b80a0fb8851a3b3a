"""The engines side by side in one run: the example shop flow on Firefox and on Chromium, per step and
whole, and device start-up per engine (issue 22).

    .venv/bin/python bench/bench_engines.py [--repeat 5] [--boots 5]

1. start-up: ``boot()`` of the engine's provider until the device is ready (a page at 1000x800), then
   ``stop``; the engines alternate, ``--boots`` each (the first Firefox boot of a machine also prepares
   its profile template: one untimed warm-up boot per engine comes first). Target: Firefox <= 2x Chromium.
2. the shop: examples/.argent/flows/shop.yaml (a copy, baselines adopted on a warm-up run) run through
   the engine with the real directives on one device per engine, ``--repeat`` times alternating; the
   median of each step and of the whole run. Target: each Firefox step <= 1.5x the same step on Chromium.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from common import report

from argent.devices.hub import DeviceHub
from argent.flows.parse import parse_flow
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import run_flow
from argent.runner.files import DiskFlowFiles

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ENGINES = ("chromium", "firefox")


class _NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: Any) -> Any:
        raise AssertionError("no tools in this benchmark")


async def startup(hub: DeviceHub, boots: int) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    for engine in ENGINES:  # warm-up: caches, Firefox's profile template
        device = await hub.boot(engine)
        await hub.stop(device.id)
    for _ in range(boots):
        for engine in ENGINES:
            t0 = time.perf_counter()
            device = await hub.boot(engine)
            seconds[engine].append(time.perf_counter() - t0)
            await hub.stop(device.id)
    return seconds


async def shop_runs(hub: DeviceHub, repeat: int) -> dict[str, dict[str, list[float]]]:
    """Per engine: each step's label -> its durations (ms), and ``whole`` -> the runs' wall times."""
    out: dict[str, dict[str, list[float]]] = {engine: {} for engine in ENGINES}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "examples"
        shutil.copytree(EXAMPLES, root)
        for png in (root / ".argent" / "flows" / "__baselines__").rglob("*.png"):
            png.unlink()
        path = root / ".argent" / "flows" / "shop.yaml"
        text = path.read_text()
        flow = parse_flow(text)
        files = DiskFlowFiles()
        ref = await files.locate(str(path))
        directives = DeviceDirectives(scratch_dir=tmp)
        devices = {engine: await hub.boot(engine) for engine in ENGINES}
        for i in range(repeat + 1):
            for engine in ENGINES:
                t0 = time.perf_counter()
                result = await run_flow(
                    flow,
                    ref,
                    "shop",
                    files=files,
                    tools=_NoTools(),
                    directives=directives,
                    device=devices[engine],
                    platform=engine,
                    update_baselines=i == 0,
                )
                whole = (time.perf_counter() - t0) * 1000
                bad = [(s.index, s.kind, s.reason) for s in result.steps if s.status not in ("pass", "skip")]
                assert not bad, (engine, bad)
                if i == 0:  # the warm-up adopts the baselines
                    continue
                rows = out[engine]
                rows.setdefault("whole", []).append(whole)
                for step in result.steps:
                    if step.status == "pass" and step.kind != "echo":
                        rows.setdefault(f"{step.index + 1:>2} {step.kind}", []).append(step.duration_ms)
    return out


async def measure(repeat: int, boots: int) -> dict[str, dict[str, Any]]:
    hub = DeviceHub()
    try:
        started = await startup(hub, boots)
        steps = await shop_runs(hub, repeat)
    finally:
        await hub.close_all()
    chromium_s, firefox_s = (statistics.median(started[e]) for e in ENGINES)
    results: dict[str, dict[str, Any]] = {
        "startup": {
            "chromium_s": chromium_s,
            "firefox_s": firefox_s,
            "ratio": firefox_s / chromium_s,
            "target": "<= 2x",
        }
    }
    for label in steps["chromium"]:
        c, f = (
            statistics.median(steps["chromium"][label]),
            statistics.median(steps["firefox"].get(label, [0.0])),
        )
        results[f"shop {label}"] = {
            "chromium_ms": c,
            "firefox_ms": f,
            "ratio": f / c if c else float("nan"),
            "target": "" if label == "whole" else "<= 1.5x",
        }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--boots", type=int, default=5)
    args = parser.parse_args()
    report("engines", asyncio.run(measure(args.repeat, args.boots)))


if __name__ == "__main__":
    main()
