"""argent against Playwright for Python on the example shop flow, same page, same Chromium.

    .venv/bin/pip install -e '.[bench]'        # Playwright's Python package; no browser download
    .venv/bin/python bench/bench_vs_playwright.py [--rounds 5]

examples/.argent/flows/shop.yaml runs through argent's engine with the real directives on a
Chromium argent launches; a Playwright script does the same steps (the same selectors, the same
waits a Playwright user writes: auto-waiting actions and ``expect``) on a Chromium Playwright
launches from the same binary (``executable_path``) with argent's launch flags, headless, at
1000x800 and DPR 1. The shop page is served over loopback HTTP. Each side runs once to warm up
(and to adopt its snapshot baselines), then ``--rounds`` interleaved rounds (the side that goes
first alternates). The launch (browser start and the page load) is left out of every figure.

Printed: per step kind (tap, type, snapshot, scroll-to, and the rest) the median over the rounds
of the time a flow spends in that kind, with the ratio ours / Playwright; the whole flow (from the
end of the launch to the end of the flow) likewise; and the conditions (cores, load).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import http.server
import io
import json
import os
import platform
import statistics
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from common import RESULTS
from PIL import Image

from argent.devices.chromium import ChromiumDeviceProvider, find_chromium
from argent.devices.chromium.launcher import BASE_FLAGS
from argent.flows.parse import parse_flow
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import StepReport

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FLOW = EXAMPLES / ".argent" / "flows" / "shop.yaml"
SHOP = EXAMPLES / "shop"
LAUNCH_LINE = "  - launch: { chromium: ../../shop }\n"
WIDTH, HEIGHT = 1000, 800
#: Flags Playwright sets itself (the pipe instead of a port, its own profile and headless mode).
_PLAYWRIGHT_OWNS = ("--headless", "--remote-debugging-port", "--remote-debugging-address", "--user-data-dir")
#: The step kinds each side reports (one line per kind); the rest are summed under "other".
KINDS = ("tap", "type", "snapshot", "scroll-to")
#: The per-kind targets (ours / Playwright); the whole flow's target is ``WHOLE_TARGET``.
STEP_TARGET = 1.2
WHOLE_TARGET = 1.0
#: The mismatch a snapshot tolerates, in percent of the pixels (argent's default).
MAX_MISMATCH = 0.5


# --------------------------------------------------------------------------------------------
# The page, served over loopback HTTP


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


# --------------------------------------------------------------------------------------------
# argent


class _NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("the shop flow calls no tools")


class Argent:
    """The shop flow through argent's engine on one Chromium argent launched."""

    def __init__(self, url: str, project: Path) -> None:
        flows = project / ".argent" / "flows"
        flows.mkdir(parents=True)
        text = FLOW.read_text()
        assert LAUNCH_LINE in text, "examples/.argent/flows/shop.yaml no longer launches ../../shop"
        self.text = text.replace(LAUNCH_LINE, f"  - launch: {{ chromium: {url} }}\n")
        self.path = flows / "shop.yaml"
        self.path.write_text(self.text)
        self.flow = parse_flow(self.text)
        self.files = DiskFlowFiles()
        self.directives = DeviceDirectives(scratch_dir=str(project / "scratch"))
        self.provider = ChromiumDeviceProvider()
        self.device: Any = None

    async def start(self) -> None:
        self.device = await self.provider.boot()

    async def close(self) -> None:
        await self.provider.close_all()

    async def round(self, adopt: bool) -> tuple[dict[str, float], float]:
        launched: list[float] = []

        async def progress(line: StepReport) -> None:
            if line.kind == "launch":
                launched.append(time.perf_counter())

        ref = await self.files.locate(str(self.path))
        result = await run_flow(
            self.flow,
            ref,
            "shop",
            files=self.files,
            tools=_NoTools(),
            directives=self.directives,
            device=self.device,
            platform="chromium",
            update_baselines=adopt,
            on_progress=progress,
        )
        end = time.perf_counter()
        bad = [(s.kind, s.status, s.reason) for s in result.steps if s.status not in ("pass", "skip")]
        assert result.ok and not bad, bad
        kinds: dict[str, float] = defaultdict(float)
        for step in result.steps:
            if step.kind != "launch":
                kinds[step.kind if step.kind in KINDS else "other"] += step.duration_ms or 0.0
        return dict(kinds), (end - launched[0]) * 1000


# --------------------------------------------------------------------------------------------
# Playwright


def _mismatch_ok(current: bytes, baseline: bytes) -> bool:
    """The check a Playwright user writes: equal bytes pass; else decode and count the pixels
    that differ."""
    if current == baseline:
        return True
    a = np.asarray(Image.open(io.BytesIO(current)).convert("RGBA"))
    b = np.asarray(Image.open(io.BytesIO(baseline)).convert("RGBA"))
    if a.shape != b.shape:
        return False
    differing = int(np.count_nonzero((a != b).any(axis=2)))
    return bool(differing * 100 / (a.shape[0] * a.shape[1]) <= MAX_MISMATCH)


class Playwright:
    """The same steps as a Playwright for Python script."""

    def __init__(self, url: str, binary: str) -> None:
        self.url = url
        self.binary = binary
        self.baselines: dict[str, bytes] = {}
        self._stack = contextlib.AsyncExitStack()
        self.page: Any = None

    async def start(self) -> None:
        from playwright.async_api import async_playwright

        pw = await self._stack.enter_async_context(async_playwright())
        args = [f for f in BASE_FLAGS if not f.startswith(_PLAYWRIGHT_OWNS)]
        args.append(f"--window-size={WIDTH},{HEIGHT}")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.append("--no-sandbox")
        browser = await pw.chromium.launch(executable_path=self.binary, headless=True, args=args)
        self._stack.push_async_callback(browser.close)
        self.page = await browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)

    async def close(self) -> None:
        await self._stack.aclose()

    def _snapshot(self, name: str, png: bytes, adopt: bool) -> None:
        if adopt:
            self.baselines[name] = png
        else:
            assert _mismatch_ok(png, self.baselines[name]), f"snapshot {name} differs"

    async def round(self, adopt: bool) -> tuple[dict[str, float], float]:
        from playwright.async_api import expect

        page = self.page
        kinds: dict[str, float] = defaultdict(float)

        @contextlib.asynccontextmanager
        async def step(kind: str) -> AsyncIterator[None]:
            t0 = time.perf_counter()
            yield
            kinds[kind if kind in KINDS else "other"] += (time.perf_counter() - t0) * 1000

        await page.goto(self.url)
        start = time.perf_counter()
        async with step("when"):
            banner = await page.get_by_text("What's new").is_visible()
        if banner:
            async with step("tap"):
                await page.get_by_text("Dismiss").click()
        async with step("assert"):
            await expect(page.get_by_text("What's new")).to_be_hidden()
        async with step("snapshot"):
            self._snapshot("home", await page.locator("#title").screenshot(), adopt)
        async with step("tap"):
            await page.locator("#add-to-cart").click()
        async with step("tap"):
            await page.get_by_text("Add to cart").click(click_count=2)
        async with step("await"):
            await expect(page.locator("#cart-count")).to_have_text("3")
        async with step("snapshot"):
            self._snapshot("cart", await page.screenshot(), adopt)
        async with step("type"):
            email = page.locator("#email")
            await email.fill("demo@example.com")
            await email.press("Enter")
        async with step("await"):
            await expect(page.locator("#greeting")).to_contain_text("Welcome, demo@example.com", timeout=3000)
        product = page.get_by_text("Product 28")
        async with step("scroll-to"):
            await product.scroll_into_view_if_needed()
        async with step("long-press"):
            box = await product.bounding_box()
            assert box is not None
            await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            await page.mouse.down()
            await asyncio.sleep(0.2)
            await page.mouse.up()
        async with step("assert"):
            await expect(product).to_be_visible()
        async with step("echo"):
            pass
        return dict(kinds), (time.perf_counter() - start) * 1000


# --------------------------------------------------------------------------------------------
# The run


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def _version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    return out.strip().splitlines()[-1] if out.strip() else "?"


async def bench(rounds: int) -> dict[str, dict[str, Any]]:
    binary = find_chromium()
    assert binary is not None, "no Chromium binary (set ARGENT_CHROMIUM)"
    from importlib.metadata import version

    conditions = {
        "cores": os.cpu_count() or 0,
        "load_before": _loadavg(),
        "chromium": _version(binary),
        "playwright": version("playwright"),
        "python": platform.python_version(),
        "rounds": rounds,
    }
    samples: dict[str, dict[str, list[float]]] = {
        "argent": defaultdict(list),
        "playwright": defaultdict(list),
    }
    with serve(SHOP) as url, tempfile.TemporaryDirectory() as tmp:
        ours = Argent(url, Path(tmp) / "project")
        theirs = Playwright(url, binary)
        await ours.start()
        await theirs.start()
        try:
            sides: dict[str, Argent | Playwright] = {"argent": ours, "playwright": theirs}
            for side in sides.values():  # warm-up; adopts the baselines
                await side.round(adopt=True)
            for i in range(rounds):
                order = ["argent", "playwright"] if i % 2 == 0 else ["playwright", "argent"]
                for name in order:
                    kinds, whole = await sides[name].round(adopt=False)
                    for kind, ms in kinds.items():
                        samples[name][kind].append(ms)
                    samples[name]["whole flow"].append(whole)
        finally:
            await ours.close()
            await theirs.close()
    conditions["load_after"] = _loadavg()
    results: dict[str, dict[str, Any]] = {}
    for row in (*KINDS, "other", "whole flow"):
        a = statistics.median(samples["argent"][row])
        p = statistics.median(samples["playwright"][row])
        target = WHOLE_TARGET if row == "whole flow" else STEP_TARGET if row in KINDS else None
        results[row] = {
            "argent_ms": round(a, 1),
            "playwright_ms": round(p, 1),
            "ratio": round(a / p, 2),
            "target": f"<= {target}x" if target is not None else "-",
            "argent_all": [round(v, 1) for v in samples["argent"][row]],
            "playwright_all": [round(v, 1) for v in samples["playwright"][row]],
        }
    results["conditions"] = conditions
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results = asyncio.run(bench(args.rounds))
    conditions = results.pop("conditions")
    print(
        f"{conditions['rounds']} interleaved rounds after a warm-up; {conditions['cores']} cores, load "
        f"{conditions['load_before']} -> {conditions['load_after']}; {conditions['chromium']}; "
        f"playwright {conditions['playwright']}"
    )
    print(f"{'row':<11} {'argent':>9} {'playwright':>11} {'ratio':>7}  target")
    for row, fig in results.items():
        print(
            f"{row:<11} {fig['argent_ms']:>7.1f}ms {fig['playwright_ms']:>9.1f}ms {fig['ratio']:>6.2f}x  {fig['target']}"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "vs_playwright.json").write_text(
        json.dumps({**results, "conditions": conditions}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
