"""Chromium device benchmarks on the example shop page, measured in one run.

    .venv/bin/python bench/bench_device.py [--repeat 50]

1. per-step latency (median and p90 of ``--repeat`` runs) of `tap`, `assert` and `snapshot` on
   examples/shop, each step run through the engine with the real directives on real headless Chromium;
2. the snapshot pixel diff of two 1000x800 PNG-decoded frames against a plain numpy ``abs(a - b)`` of the
   same arrays (target <= 3x).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import RESULTS

from argent.devices.chromium import ChromiumDeviceProvider
from argent.devices.web.targets import resolve_launch_target
from argent.flows.parse import parse_flow
from argent.runner import pixels
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import run_flow
from argent.runner.files import DiskFlowFiles

SHOP = Path(__file__).resolve().parents[1] / "examples" / "shop"
STEPS = {
    "tap": "tap: { id: add-to-cart }",
    "assert": 'assert: { visible: "Add to cart" }',
    "snapshot": "snapshot: bench",
}


class _NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: Any) -> Any:
        raise AssertionError("no tools in this benchmark")


async def step_latencies(repeat: int) -> dict[str, dict[str, float]]:
    provider = ChromiumDeviceProvider()
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        flow_path = Path(tmp) / "bench.yaml"
        files = DiskFlowFiles()
        directives = DeviceDirectives(scratch_dir=tmp)
        try:
            device = await provider.boot()
            await device.navigate(resolve_launch_target(str(SHOP), None))
            for kind, line in STEPS.items():
                text = f"steps:\n  - {line}\n"
                flow_path.write_text(text)
                ref = await files.locate(str(flow_path))
                flow = parse_flow(text)
                samples = []
                for i in range(repeat + 1):
                    result = await run_flow(
                        flow,
                        ref,
                        "bench",
                        files=files,
                        tools=_NoTools(),
                        directives=directives,
                        device=device,
                        platform="chromium",
                        update_baselines=(kind == "snapshot" and i == 0),
                    )
                    step = result.steps[0]
                    assert step.status == "pass", (kind, step.reason)
                    if i:  # the first run warms up (and adopts the snapshot baseline)
                        samples.append(step.duration_ms)
                ordered = sorted(samples)
                out[kind] = {
                    "median_ms": statistics.median(ordered),
                    "p90_ms": ordered[int(len(ordered) * 0.9) - 1],
                }
        finally:
            await provider.close_all()
    return out


def diff_ratio(repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, size=(800, 1000, 4), dtype=np.uint8)
    b = a.copy()
    b[300:400, 200:600, :3] ^= 0x7F  # a changed block, the rest equal
    a_png, b_png = pixels.encode_png(a), pixels.encode_png(b)
    da, db = pixels.decode_png(a_png), pixels.decode_png(b_png)

    def ours() -> None:
        pixels.diff_images(da, db)

    def bare() -> None:
        np.abs(da.astype(np.int16) - db.astype(np.int16))

    def median_ms(fn: Any) -> float:
        samples = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t0) * 1000)
        return statistics.median(samples)

    ours_ms, bare_ms = median_ms(ours), median_ms(bare)
    return {"diff_images_ms": ours_ms, "numpy_abs_ms": bare_ms, "ratio": ours_ms / bare_ms}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    results = {"steps": asyncio.run(step_latencies(args.repeat)), "pixel_diff": diff_ratio(args.repeat)}
    for kind, row in results["steps"].items():
        print(f"{kind:<9} median {row['median_ms']:.1f} ms, p90 {row['p90_ms']:.1f} ms")
    diff = results["pixel_diff"]
    print(
        f"diff      {diff['diff_images_ms']:.2f} ms vs numpy abs {diff['numpy_abs_ms']:.2f} ms = {diff['ratio']:.2f}x"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "device.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
