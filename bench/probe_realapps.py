"""Which steps of each real-app flow argent passes today, every step tried on its own.

    .venv/bin/python bench/probe_realapps.py [--apps datasette,jupyterlab]

A flow stops at its first failure, so a run says nothing of the steps after it. The probe runs each
step of tests/realapps/flows/<app>.yaml as a one-step flow through argent's engine on one Chromium,
in order; when a step does not parse or does not pass, the same step of the Playwright scenario
(bench/bench_realapps.py, connected to that Chromium over CDP) stands in for it, so the app reaches
the state the next step expects. Printed: each step's line of the flow, ``pass``, ``fail`` or
``unparsed``, and argent's reason. A diagnostic for the lanes that build what the flows need; the
tests and the bench run the flows whole.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_realapps import SCENARIOS
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argent.devices.chromium import ChromiumDeviceProvider
from argent.errors import ArgentError
from argent.flows.parse import parse_flow
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from tests.realapps import apps


class _NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("the realapps flows call no tools")


def _one_step_flows(text: str) -> list[tuple[str, str]]:
    """Each top-level step of a flow as (its first line in the flow, a flow of that step alone)."""
    yaml = YAML(typ="rt")
    yaml.width = 4096
    data = yaml.load(text)
    lines = text.splitlines()
    out = []
    for step in data["steps"]:
        buf = io.StringIO()
        yaml.dump({"steps": [step]}, buf)
        out.append((lines[step.lc.line].strip(), buf.getvalue()))
    return out


async def _argent_step(
    flow_text: str, path: Path, device: Any, directives: DeviceDirectives, files: DiskFlowFiles
) -> tuple[str, str]:
    try:
        flow = parse_flow(flow_text)
    except ArgentError as e:
        return "unparsed", str(e)
    path.write_text(flow_text)
    result = await run_flow(
        flow,
        await files.locate(str(path)),
        path.stem,
        files=files,
        tools=_NoTools(),
        directives=directives,
        device=device,
        platform="chromium",
    )
    bad = [s for s in result.steps if s.status not in ("pass", "skip")]
    if result.ok and not bad:
        return "pass", ""
    return (bad[0].status if bad else "fail"), (bad[0].reason or "") if bad else "?"


async def probe(name: str, cache: Path, scratch: Path) -> list[tuple[str, str, str]]:
    from playwright.async_api import async_playwright, expect

    rows: list[tuple[str, str, str]] = []
    provider = ChromiumDeviceProvider()
    project = scratch / "project" / ".argent" / "flows"
    project.mkdir(parents=True, exist_ok=True)
    files = DiskFlowFiles()
    directives = DeviceDirectives(scratch_dir=str(scratch / "directives"))
    try:
        device = await provider.boot()
        with apps.running(name, cache, scratch / name) as app:
            steps = _one_step_flows(app.rebase((apps.FLOWS / f"{name}.yaml").read_text()))
            stand_ins = SCENARIOS[name]
            assert len(steps) == len(stand_ins) + 1, (
                f"{name}: the flow and the Playwright scenario differ in length"
            )
            async with async_playwright() as pw:
                page: Any = None
                for i, (line, one) in enumerate(steps):
                    status, reason = await _argent_step(
                        one, project / f"step{i}.yaml", device, directives, files
                    )
                    if i == 0:
                        if status != "pass":
                            rows.append((line, status, reason))
                            break
                        browser = await pw.chromium.connect_over_cdp(f"http://127.0.0.1:{device.port}")
                        page = next(p for c in browser.contexts for p in c.pages if p.url.startswith(app.url))
                    elif status != "pass":
                        try:
                            await stand_ins[i - 1](page, expect)
                        except Exception as e:
                            reason += f" [the Playwright stand-in failed too: {str(e).splitlines()[0]}]"
                    rows.append((line, status, reason))
                    print(f"  {name} {i:2} {status:8} {line}  {reason[:400]}", file=sys.stderr)
    finally:
        await provider.close_all()
    return rows


async def main_async(names: list[str]) -> None:
    cache = apps.install(*names)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            rows = await probe(name, cache, Path(tmp) / name)
            passed = sum(1 for _, status, _ in rows if status == "pass")
            print(f"\n{name}: {passed} of {len(rows)} steps pass on their own")
            for i, (line, status, reason) in enumerate(rows):
                print(f"{i:3} {status:8} {line}")
                if reason:
                    print(f"             {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--apps", default=",".join(apps.APPS), help="comma-separated (default: all)")
    args = parser.parse_args()
    asyncio.run(main_async([n for n in args.apps.split(",") if n]))


if __name__ == "__main__":
    main()
