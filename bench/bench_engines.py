"""The shop flow on each browser engine, side by side in one run: device start-up, each step, the whole flow.

    .venv/bin/python bench/bench_engines.py [--repeat 5] [--boots 10] [--engines chromium,webkit]

For each engine (its binary at hand): the median of ``--boots`` boots (``provider.boot()``: the
browser started, its page ready at 1000x800; the engines alternate boot by boot; the first boot of
each, which for WebKit also starts argent's Xvfb, is counted apart as ``first_boot_s``), and
``--repeat`` runs of the shop flow on examples/shop through each engine with the real directives on
one device per engine, the engines taking turns run by run (a first round warms up): the median of
each step and of the whole run. Each engine's figures are also given as a ratio of Chromium's, the reference.
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

from common import RESULTS

from argent.devices.registry import ENGINES, engine_named, provider_of
from argent.flows.parse import parse_flow
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import run_flow
from argent.runner.files import DiskFlowFiles

SHOP = Path(__file__).resolve().parents[1] / "examples" / "shop"
FLOW = """steps:
  - launch: { chromium: site }
  - tap: Dismiss
  - assert: { hidden: Dismiss }
  - tap: { id: add-to-cart }
  - await: { text: { in: { id: cart-count }, equals: "1" } }
  - type: { into: { id: email }, text: "bob@example.com\\n" }
  - await: { text: { in: { id: greeting }, contains: "Welcome, bob" } }
  - press: Shift+Tab
  - scroll-to: Product 28
  - assert: { visible: Product 28 }
"""


class _NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: Any) -> Any:
        raise AssertionError("no tools in this benchmark")


def _provider(platform: str) -> Any:
    engine = engine_named(platform)
    assert engine is not None
    return provider_of(engine)


async def bench_boots(platforms: list[str], repeat: int) -> dict[str, dict[str, float]]:
    """Device start-up per engine, the engines alternating boot by boot (a drift of the machine's load
    falls on all of them alike): the first boot of each, then the median of ``repeat`` more."""
    providers = {p: _provider(p) for p in platforms}
    boots: dict[str, list[float]] = {p: [] for p in platforms}
    try:
        for _ in range(repeat + 1):
            for platform, provider in providers.items():
                t0 = time.perf_counter()
                device = await provider.boot()
                boots[platform].append(time.perf_counter() - t0)
                await provider.stop(device.id)
    finally:
        for provider in providers.values():
            await provider.close_all()
    return {p: {"first_boot_s": b[0], "boot_s": statistics.median(b[1:])} for p, b in boots.items()}


async def bench_flows(platforms: list[str], repeat: int) -> dict[str, dict[str, Any]]:
    """The shop flow on one device per engine, the engines taking turns run by run (the first of a
    round alternates; a first round warms up): the median of each step and of the whole run."""
    providers = {p: _provider(p) for p in platforms}
    steps: dict[str, dict[str, list[float]]] = {p: {} for p in platforms}
    wholes: dict[str, list[float]] = {p: [] for p in platforms}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            flows = Path(tmp)
            (flows / "site").mkdir()
            (flows / "site" / "index.html").write_text((SHOP / "index.html").read_text())
            path = flows / "shop.yaml"
            path.write_text(FLOW)
            files = DiskFlowFiles()
            ref = await files.locate(str(path))
            flow = parse_flow(FLOW)
            devices = {p: await provider.boot() for p, provider in providers.items()}
            for i in range(repeat + 1):
                for platform in platforms if i % 2 == 0 else platforms[::-1]:
                    t0 = time.perf_counter()
                    result = await run_flow(
                        flow,
                        ref,
                        "shop",
                        files=files,
                        tools=_NoTools(),
                        directives=DeviceDirectives(scratch_dir=tmp),
                        device=devices[platform],
                        platform=platform,
                    )
                    whole = time.perf_counter() - t0
                    bad = [(s.index, s.kind, s.status, s.reason) for s in result.steps if s.status != "pass"]
                    assert not bad, (platform, bad)
                    if i == 0:
                        continue
                    wholes[platform].append(whole)
                    for s in result.steps:
                        steps[platform].setdefault(f"{s.index}:{s.kind}", []).append(s.duration_ms)
    finally:
        for provider in providers.values():
            await provider.close_all()
    return {
        p: {
            "steps_ms": {name: statistics.median(samples) for name, samples in steps[p].items()},
            "flow_s": statistics.median(wholes[p]),
        }
        for p in platforms
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--boots", type=int, default=10, help="boots per engine, the engines alternating")
    parser.add_argument("--engines", default=",".join(e.platform for e in ENGINES))
    args = parser.parse_args()
    platforms: list[str] = []
    for platform in args.engines.split(","):
        engine = engine_named(platform)
        if engine is None or engine.unavailable_reason() is not None:
            print(f"{platform}: skipped ({engine.unavailable_reason() if engine else 'no such engine'})")
            continue
        platforms.append(platform)
    results = asyncio.run(bench_flows(platforms, args.repeat))
    for platform, boot in asyncio.run(bench_boots(platforms, args.boots)).items():
        results[platform].update(boot)
    ref = results.get("chromium")
    for platform, row in results.items():
        ratio = f" ({row['flow_s'] / ref['flow_s']:.2f}x chromium)" if ref and platform != "chromium" else ""
        print(
            f"{platform:<9} boot {row['boot_s']:.2f} s (first {row['first_boot_s']:.2f} s), "
            f"shop flow {row['flow_s']:.2f} s{ratio}"
        )
        for name, ms in row["steps_ms"].items():
            against = ""
            if ref and platform != "chromium" and ref["steps_ms"].get(name):
                against = f"  ({ms / ref['steps_ms'][name]:.2f}x)"
            print(f"    {name:<14} {ms:8.1f} ms{against}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "engines.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
