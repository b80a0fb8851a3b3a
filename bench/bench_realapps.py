"""argent against Playwright for Python on real open-source web apps, side by side in one run.

    ./scripts/install-realapps                 # the apps, once, into .cache/realapps/
    .venv/bin/pip install -e '.[bench]'        # Playwright's Python package; no browser download
    .venv/bin/python bench/bench_realapps.py [--runs 5] [--apps datasette,mkdocs]

Each app of tests/realapps (Datasette over a SQLite file, a MkDocs Material site with its client-side
search, a Streamlit dashboard, JupyterLab) is started on loopback from its own venv. Its argent flow
(tests/realapps/flows/<app>.yaml, the flow the tests run) goes through argent's engine with the real
directives, each run on a Chromium argent launches for it (as ``argent flow run`` does); the same
scenario written as a Playwright user writes it (``get_by_role``, ``get_by_label``, ``fill``,
``keyboard.press``, ``expect``) runs on a Chromium Playwright launches from the same binary
(``executable_path``) with argent's launch flags, headless, 1000x800, DPR 1, each run in a new
context. Each side runs once to warm up, then ``--runs`` interleaved runs (the side that goes first
alternates). JupyterLab keeps what a run saved, so it is started afresh for every run of
either side; the other apps serve every run from one start. The launch (argent's ``launch:`` step,
Playwright's ``goto``) is left out of the time: a run is timed from the end of the launch to the end
of the scenario.

Printed per app: each side's pass count, the median time of its passing runs, the ratio
ours / Playwright, and the first failure of each side; conditions (cores, load). Written to
bench/results/realapps.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from common import RESULTS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argent.devices.chromium import ChromiumDeviceProvider, find_chromium
from argent.devices.chromium.launcher import BASE_FLAGS
from argent.errors import ArgentError
from argent.flows.parse import parse_flow
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import StepReport
from tests.realapps import apps

WIDTH, HEIGHT = 1000, 800
#: Flags Playwright sets itself (the pipe instead of a port, its own profile and headless mode).
_PLAYWRIGHT_OWNS = ("--headless", "--remote-debugging-port", "--remote-debugging-address", "--user-data-dir")
#: The target of the whole scenario's time (ours / Playwright), with a pass rate no lower.
TARGET = 1.0
#: Apps started afresh for every run (they keep what a run saved).
FRESH_PER_RUN = frozenset({"jupyterlab"})
#: Where each app's scenario starts (the path ``goto`` opens; the flow's ``launch:`` names it too).
START_PATH = {"datasette": "/", "mkdocs": "/", "streamlit": "/", "jupyterlab": "/lab"}


class Failed(Exception):
    """A run that did not pass; the message says where."""


# --------------------------------------------------------------------------------------------
# argent


class _NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("the realapps flows call no tools")


class Argent:
    """An app's flow through argent's engine, each run on a Chromium argent launches for it (as
    ``argent flow run`` does; Playwright's side opens a new context per run): nothing a run left in
    the browser (a palette kept in localStorage) reaches the next."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.files = DiskFlowFiles()
        self.directives = DeviceDirectives(scratch_dir=str(project / "scratch"))

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def run(self, name: str, app: apps.RunningApp) -> float:
        text = app.rebase((apps.FLOWS / f"{name}.yaml").read_text())
        path = self.project / ".argent" / "flows" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        try:
            flow = parse_flow(text)
        except ArgentError as e:
            raise Failed(f"the flow does not parse: {e}") from e
        launched: list[float] = []

        async def progress(line: StepReport) -> None:
            if line.kind == "launch":
                launched.append(time.perf_counter())

        provider = ChromiumDeviceProvider()
        device = await provider.boot()
        try:
            result = await run_flow(
                flow,
                await self.files.locate(str(path)),
                name,
                files=self.files,
                tools=_NoTools(),
                directives=self.directives,
                device=device,
                platform="chromium",
                on_progress=progress,
            )
            end = time.perf_counter()
        finally:
            await provider.close_all()
        bad = [s for s in result.steps if s.status not in ("pass", "skip")]
        if not result.ok or bad:
            first = bad[0] if bad else None
            where = f"step {first.index} {first.kind} {first.target or ''}: {first.reason}" if first else "?"
            raise Failed(where)
        return (end - launched[0]) * 1000


# --------------------------------------------------------------------------------------------
# Playwright: the same scenarios, as a Playwright user writes them


# Each scenario is a list of steps, one per step of the app's argent flow after its launch (the
# probe, bench/probe_realapps.py, relies on that: it stands in for an argent step that fails).
Step = Callable[[Any, Any], Awaitable[None]]


async def _fill_and_enter(locator: Any, text: str) -> None:
    await locator.fill(text)
    await locator.press("Enter")


async def _replace_in_editor(page: Any, editor: Any, text: str) -> None:
    """What a person does in a code editor: click into it, select all, type."""
    await editor.click()
    await page.keyboard.press("Control+A")
    await page.keyboard.type(text)


async def _dismiss_news(page: Any, expect: Any) -> None:
    news = page.get_by_text("Would you like to get notified about official Jupyter news?")
    with contextlib.suppress(Exception):
        await news.wait_for(timeout=2000)
    if await news.is_visible():
        await page.get_by_role("alert").get_by_role("button", name="No", exact=True).click()


async def _type_in_focused(page: Any, field: Any, expect: Any, text: str) -> None:
    await expect(field).to_be_focused()
    await page.keyboard.type(text)


async def _type_into_cell(page: Any, text: str) -> None:
    await page.get_by_role("main").get_by_role("textbox").first.click()
    await page.keyboard.type(text)


DATASETTE: list[Step] = [
    lambda page, expect: page.get_by_role("link", name="catalog", exact=True).click(),
    lambda page, expect: page.get_by_role("link", name="languages", exact=True).click(),
    lambda page, expect: expect(page.get_by_role("heading", name="24 rows")).to_be_visible(),
    lambda page, expect: page.locator('select[name="_filter_column"]').select_option("paradigm"),
    lambda page, expect: _fill_and_enter(page.get_by_role("textbox"), "functional"),
    lambda page, expect: expect(
        page.get_by_role("heading", name='6 rows where paradigm = "functional"')
    ).to_be_visible(),
    lambda page, expect: page.get_by_role("table").get_by_role("link", name="year", exact=True).click(),
    lambda page, expect: expect(page.get_by_role("heading", name="sorted by year")).to_be_visible(),
    lambda page, expect: page.get_by_role("link", name="John McCarthy").first.click(),
    lambda page, expect: expect(page.get_by_role("heading", name="creators: 2")).to_be_visible(),
    lambda page, expect: page.get_by_role("link", name="2 rows").click(),
    lambda page, expect: expect(page.get_by_role("cell", name="Scheme")).to_be_visible(),
    lambda page, expect: page.get_by_role("link", name="View and edit SQL").click(),
    lambda page, expect: _replace_in_editor(
        page, page.locator(".CodeMirror"), "select name, year from languages where year < 1972"
    ),
    lambda page, expect: page.keyboard.press("Shift+Enter"),
    lambda page, expect: expect(
        page.get_by_role("heading", name="Custom SQL query returning 3 rows")
    ).to_be_visible(),
    lambda page, expect: expect(page.get_by_role("cell", name="Pascal")).to_be_visible(),
]

MKDOCS: list[Step] = [
    lambda page, expect: expect(page.get_by_role("heading", name="Welcome to Tidepool")).to_be_visible(),
    lambda page, expect: page.get_by_role("article").get_by_role("link", name="Installation").click(),
    lambda page, expect: expect(page.get_by_role("heading", name="Installation", level=1)).to_be_visible(),
    lambda page, expect: page.get_by_role("article").get_by_role("link", name="pipx", exact=True).click(),
    lambda page, expect: expect(page.get_by_text("pipx install tidepool")).to_be_visible(),
    lambda page, expect: page.keyboard.press("/"),  # Material's shortcut to the search
    lambda page, expect: _type_in_focused(page, page.get_by_role("textbox", name="Search"), expect, "lunar"),
    lambda page, expect: expect(page.get_by_text("1 matching document")).to_be_visible(),
    lambda page, expect: page.keyboard.press("ArrowDown"),  # to the first result
    lambda page, expect: page.keyboard.press("Enter"),
    lambda page, expect: expect(
        page.get_by_role("heading", name="Reading tide tables", level=1)
    ).to_be_visible(),
    lambda page, expect: page.get_by_text("Why two high tides a day?").click(),  # a collapsible note
    lambda page, expect: expect(page.get_by_text("24 hours and 50 minutes")).to_be_visible(),
    lambda page, expect: page.get_by_role("link", name="Next: Stations").click(),
    lambda page, expect: expect(page.get_by_role("heading", name="Stations", level=1)).to_be_visible(),
    lambda page, expect: page.get_by_title("Switch to dark mode").click(),  # the palette toggle
    lambda page, expect: expect(page.get_by_title("Switch to light mode")).to_be_visible(),
]

STREAMLIT: list[Step] = [
    lambda page, expect: expect(page.get_by_role("heading", name="Orders dashboard")).to_be_visible(),
    lambda page, expect: _fill_and_enter(page.get_by_label("Your name"), "Ada"),
    lambda page, expect: expect(page.get_by_text("Hello, Ada! Here are today's orders.")).to_be_visible(),
    lambda page, expect: page.get_by_role("combobox", name="City").click(),
    lambda page, expect: page.get_by_role("option", name="Oslo").click(),
    lambda page, expect: expect(page.get_by_text("Order 1003: Ingrid (Oslo)")).to_be_visible(),
    lambda page, expect: expect(page.get_by_text("Order 1001: Ana (Lisbon)")).to_be_hidden(),
    # the box is drawn over its input: a person clicks the label
    lambda page, expect: page.get_by_text("Include cancelled orders").click(),
    lambda page, expect: expect(page.get_by_text("Order 1005: Kari (Oslo), €220, cancelled")).to_be_visible(),
    lambda page, expect: page.get_by_role("button", name="Increment").click(),
    lambda page, expect: expect(page.get_by_label("Minimum amount (€)")).to_have_value("50"),
    lambda page, expect: page.get_by_role("button", name="Increment").click(),
    lambda page, expect: expect(page.get_by_label("Minimum amount (€)")).to_have_value("100"),
    lambda page, expect: expect(page.get_by_text("Order 1004: Lars")).to_be_hidden(),
    lambda page, expect: page.get_by_role("tab", name="Summary").click(),
    lambda page, expect: expect(page.get_by_text("Cancelled: 1")).to_be_visible(),
    lambda page, expect: page.get_by_role("button", name="Export orders").click(),
    lambda page, expect: expect(page.get_by_text("Exported 2 orders to orders.csv")).to_be_visible(),
]

JUPYTERLAB: list[Step] = [
    _dismiss_news,
    lambda page, expect: (
        page.get_by_role("tabpanel", name="Launcher")
        .get_by_role("button", name="Python 3 (ipykernel)")
        .first.click()
    ),
    lambda page, expect: expect(page.get_by_role("tab", name="Untitled.ipynb")).to_be_visible(),
    lambda page, expect: expect(page.get_by_text("Python 3 (ipykernel) | Idle")).to_be_visible(timeout=30000),
    lambda page, expect: _type_into_cell(page, "print(6 * 7)"),
    lambda page, expect: page.keyboard.press("Shift+Enter"),
    lambda page, expect: expect(page.get_by_text("42", exact=True)).to_be_visible(timeout=30000),
    lambda page, expect: page.get_by_role("menuitem", name="File").click(),
    lambda page, expect: page.get_by_role("menuitem", name="Rename Notebook…").click(),
    lambda page, expect: expect(page.get_by_role("dialog")).to_contain_text("Rename File"),
    # the dialog selected the name's stem: typing replaces it
    lambda page, expect: _type_in_focused(
        page, page.get_by_role("dialog").get_by_role("textbox"), expect, "answer"
    ),
    lambda page, expect: page.get_by_role("dialog").get_by_role("button", name="Rename").click(),
    lambda page, expect: expect(page.get_by_role("tab", name="answer.ipynb")).to_be_visible(),
    lambda page, expect: page.keyboard.press("Control+S"),
    lambda page, expect: expect(
        page.get_by_role("region", name="File Browser Section").get_by_text("answer.ipynb")
    ).to_be_visible(),
]

SCENARIOS: dict[str, list[Step]] = {
    "datasette": DATASETTE,
    "mkdocs": MKDOCS,
    "streamlit": STREAMLIT,
    "jupyterlab": JUPYTERLAB,
}


class Playwright:
    """The scenarios as Playwright for Python scripts; each run in a new browser context."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self._stack = contextlib.AsyncExitStack()
        self.browser: Any = None

    async def start(self) -> None:
        from playwright.async_api import async_playwright

        pw = await self._stack.enter_async_context(async_playwright())
        args = [f for f in BASE_FLAGS if not f.startswith(_PLAYWRIGHT_OWNS)]
        args.append(f"--window-size={WIDTH},{HEIGHT}")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.append("--no-sandbox")
        self.browser = await pw.chromium.launch(executable_path=self.binary, headless=True, args=args)
        self._stack.push_async_callback(self.browser.close)

    async def close(self) -> None:
        await self._stack.aclose()

    async def run(self, name: str, app: apps.RunningApp) -> float:
        from playwright.async_api import expect

        context = await self.browser.new_context(
            viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1
        )
        try:
            page = await context.new_page()
            await page.goto(app.url + START_PATH[name])
            start = time.perf_counter()
            try:
                for step in SCENARIOS[name]:
                    await step(page, expect)
            except Exception as e:
                said = [ln.strip() for ln in str(e).splitlines() if ln.strip() and ln.strip() != "Call log:"]
                raise Failed(" / ".join(said[:5]) or type(e).__name__) from e
            return (time.perf_counter() - start) * 1000
        finally:
            await context.close()


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


@contextlib.contextmanager
def _app_for(
    name: str, cache: Path, scratch: Path, shared: apps.RunningApp | None
) -> Iterator[apps.RunningApp]:
    if shared is not None:
        yield shared
        return
    with tempfile.TemporaryDirectory(dir=scratch) as fresh, apps.running(name, cache, Path(fresh)) as app:
        yield app


@contextlib.asynccontextmanager
async def _sides(binary: str, project: Path) -> AsyncIterator[dict[str, Argent | Playwright]]:
    ours = Argent(project)
    theirs = Playwright(binary)
    await ours.start()
    await theirs.start()
    try:
        yield {"argent": ours, "playwright": theirs}
    finally:
        await ours.close()
        await theirs.close()


async def bench(names: list[str], runs: int, sides_wanted: list[str]) -> dict[str, Any]:
    binary = find_chromium()
    assert binary is not None, "no Chromium binary (set ARGENT_CHROMIUM)"
    from importlib.metadata import version

    cache = apps.install(*names)
    conditions: dict[str, Any] = {
        "cores": os.cpu_count() or 0,
        "load_before": _loadavg(),
        "chromium": _version(binary),
        "playwright": version("playwright"),
        "python": platform.python_version(),
        "runs": runs,
    }
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        async with _sides(binary, scratch / "project") as sides:
            for name in names:
                times: dict[str, list[float]] = {s: [] for s in sides_wanted}
                failures: dict[str, list[str]] = {s: [] for s in sides_wanted}
                with contextlib.ExitStack() as stack:
                    shared = (
                        None
                        if name in FRESH_PER_RUN
                        else stack.enter_context(apps.running(name, cache, scratch / name))
                    )
                    for i in range(runs + 1):  # run 0 warms up
                        order = sides_wanted if i % 2 == 0 else sides_wanted[::-1]
                        for side in order:
                            with _app_for(name, cache, scratch, shared) as app:
                                try:
                                    ms = await sides[side].run(name, app)
                                except Failed as e:
                                    if i > 0:
                                        failures[side].append(str(e))
                                    print(f"  {name} {side} run {i}: FAIL {e}", file=sys.stderr)
                                    continue
                            print(f"  {name} {side} run {i}: {ms:.0f} ms", file=sys.stderr)
                            if i > 0:
                                times[side].append(ms)
                row: dict[str, Any] = {}
                for side in sides_wanted:
                    row[side] = {
                        "passed": len(times[side]),
                        "runs": runs,
                        "median_ms": round(statistics.median(times[side]), 1) if times[side] else None,
                        "all_ms": [round(t, 1) for t in times[side]],
                        "first_failure": failures[side][0] if failures[side] else None,
                    }
                a = row.get("argent", {}).get("median_ms")
                p = row.get("playwright", {}).get("median_ms")
                row["ratio"] = round(a / p, 2) if a and p else None
                results[name] = row
    conditions["load_after"] = _loadavg()
    results["conditions"] = conditions
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--apps", default=",".join(apps.APPS), help="comma-separated (default: all)")
    parser.add_argument("--sides", default="argent,playwright", help="comma-separated (default: both)")
    args = parser.parse_args()
    names = [n for n in args.apps.split(",") if n]
    unknown = [n for n in names if n not in apps.APPS]
    if unknown:
        parser.error(f"unknown app(s) {unknown}; apps: {', '.join(apps.APPS)}")
    sides_wanted = [s for s in args.sides.split(",") if s]
    results = asyncio.run(bench(names, args.runs, sides_wanted))
    conditions = results.pop("conditions")
    print(
        f"{conditions['runs']} interleaved runs per side after a warm-up; {conditions['cores']} cores, load "
        f"{conditions['load_before']} -> {conditions['load_after']}; {conditions['chromium']}; "
        f"playwright {conditions['playwright']}"
    )
    print(
        f"{'app':<11} {'argent':>16} {'playwright':>16} {'ratio':>7}  target <= {TARGET}x, pass rate no lower"
    )
    for name, row in results.items():
        cells = []
        for side in ("argent", "playwright"):
            fig = row.get(side)
            if fig is None:
                cells.append(f"{'-':>16}")
                continue
            ms = f"{fig['median_ms']:.0f}ms" if fig["median_ms"] is not None else "-"
            cells.append(f"{fig['passed']}/{fig['runs']} {ms:>9}")
        ratio = f"{row['ratio']:.2f}x" if row["ratio"] is not None else "-"
        print(f"{name:<11} {cells[0]:>16} {cells[1]:>16} {ratio:>7}")
        for side in ("argent", "playwright"):
            fig = row.get(side)
            if fig and fig["first_failure"]:
                print(f"    {side} first failure: {fig['first_failure'][:300]}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "realapps.json").write_text(json.dumps({**results, "conditions": conditions}, indent=2) + "\n")


if __name__ == "__main__":
    main()
