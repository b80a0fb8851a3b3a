"""Device directives on a real headless Chromium: a small static shop page in a tmp dir.

Flows run through the engine with ``DeviceDirectives`` on a device the Chromium provider
boots (real timings), and once through ``argent flow run`` (an embedded tool-server).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from argent.devices.chromium.launcher import processes_naming
from argent.flows.parse import parse_flow
from argent.runner import pixels as P
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from tests.e2e.conftest import Cli, read_until

chromium = pytest.importorskip("argent.devices.chromium")
ChromiumDeviceProvider = chromium.ChromiumDeviceProvider
_UNAVAILABLE = chromium.chromium_unavailable_reason()

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(_UNAVAILABLE is not None, reason=str(_UNAVAILABLE))]

ITEMS = "\n".join(f"<li>Item {i}</li>" for i in range(1, 41))
SHOP = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>
<style>
  body {{ font-family: sans-serif; margin: 0; padding: 16px; background: #fff; }}
  #banner {{ background: #ffe9a8; padding: 8px; }}
  h1 {{ color: #123456; }}
  li {{ height: 60px; }}
</style></head>
<body>
<div id="banner"><span>What's new: faster checkout</span>
  <button id="close" onclick="document.getElementById('banner').remove()">Close</button></div>
<h1 id="title">Shop</h1>
<p>Items in cart: <span id="count">0</span></p>
<button id="add" onclick="var c = document.getElementById('count'); c.textContent = +c.textContent + 1">Add to cart</button>
<form id="signup" onsubmit="event.preventDefault(); document.getElementById('greeting').textContent = 'Hello ' + document.getElementById('email').value">
  <input id="email" placeholder="Email" autocomplete="off">
</form>
<p id="greeting"></p>
<ul id="list">
{ITEMS}
</ul>
</body></html>
"""


class NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("no tools here")


@pytest.fixture
def flows(project: Path) -> Path:
    site = project / ".argent" / "flows" / "site"
    site.mkdir(parents=True)
    (site / "index.html").write_text(SHOP)
    return project / ".argent" / "flows"


@pytest.fixture
async def provider() -> AsyncIterator[Any]:
    p = ChromiumDeviceProvider()
    try:
        yield p
    finally:
        await p.close_all()


async def run(
    flows: Path,
    name: str,
    text: str,
    provider: Any,
    *,
    update: bool = False,
    directives: DeviceDirectives | None = None,
) -> FlowRunResult:
    path = flows / f"{name}.yaml"
    path.write_text(text)
    files = DiskFlowFiles()
    ref = await files.locate(str(path))
    device = await provider.boot()
    return await asyncio.wait_for(
        run_flow(
            parse_flow(text),
            ref,
            name,
            files=files,
            tools=NoTools(),
            directives=directives or DeviceDirectives(scratch_dir=str(flows.parents[2])),
            device=device,
            platform="chromium",
            update_baselines=update,
        ),
        120,
    )


def statuses(res: FlowRunResult) -> list[tuple[str, str, str | None]]:
    return [(s.kind, s.status, s.reason) for s in res.steps]


#: The shop flow: taps, guards, typing, awaits, scrolling (every engine runs it: its ``chromium:``
#: launch key is the web target the others fall back to).
SHOP_FLOW = """
steps:
  - launch: { chromium: site }
  - when: { visible: "What's new" }
    steps:
      - tap: Close
  - assert: { hidden: "What's new" }
  - tap: { id: add }
  - tap: Add to cart
  - await: { text: { in: { id: count }, equals: "2" } }
  - type: { into: { id: email }, text: "bob" }
  - await: { text: { in: { id: greeting }, contains: "Hello bob" }, timeout: 3000 }
  - when: { visible: "What's new" }
    steps:
      - echo: never shown
  - scroll-to: Item 35
  - assert: { visible: Item 35 }
  - long-press: { on: Item 36, duration: 100 }
"""
SHOP_STATUSES = [
    ("launch", "pass"),
    ("when", "pass"),
    ("tap", "pass"),
    ("assert", "pass"),
    ("tap", "pass"),
    ("tap", "pass"),
    ("await", "pass"),
    ("type", "pass"),
    ("await", "pass"),
    ("when", "skip"),
    ("echo", "skip"),
    ("scroll-to", "pass"),
    ("assert", "pass"),
    ("long-press", "pass"),
]


async def test_taps_typing_guards_and_scrolling(flows: Path, provider: Any) -> None:
    res = await run(flows, "shop", SHOP_FLOW, provider)
    assert [(k, s) for k, s, _ in statuses(res)] == SHOP_STATUSES, statuses(res)
    assert res.steps[9].reason == 'condition not met (visible text="What\'s new") — block skipped (1 step)'
    assert res.ok


async def test_scroll_to_crosses_blank_space_taller_than_the_screen(flows: Path, provider: Any) -> None:
    (flows / "site" / "blank.html").write_text(
        '<!doctype html><body style="margin:0"><p>Top</p><div style="height:3000px"></div>'
        '<button id="far">Far away</button><div style="height:200px"></div></body>'
    )
    res = await run(
        flows,
        "blank",
        "steps:\n  - launch: { chromium: site/blank.html }\n  - scroll-to: Far away\n  - tap: { id: far }\n",
        provider,
    )
    assert [(k, s) for k, s, _ in statuses(res)] == [
        ("launch", "pass"),
        ("scroll-to", "pass"),
        ("tap", "pass"),
    ], statuses(res)


async def test_failure_reasons_on_a_real_page(flows: Path, provider: Any) -> None:
    res = await run(
        flows,
        "reasons",
        """
steps:
  - launch: { chromium: site }
  - assert: { text: { in: { id: count }, equals: "5" } }
""",
        provider,
    )
    assert statuses(res)[1] == (
        "assert",
        "fail",
        'element matched id="count" but its text was "0" (wanted to equal "5")',
    )
    res = await run(
        flows, "pinch", "steps:\n  - launch: { chromium: site }\n  - pinch: { scale: 2 }\n", provider
    )
    assert res.steps[1].status == "fail"
    assert (res.steps[1].reason or "").startswith("pinch is unsupported on chromium — ")
    res = await run(flows, "missing", "steps:\n  - launch: { chromium: site }\n  - tap: Pay now\n", provider)
    assert res.steps[1].reason == (
        'no visible element matched selector text="Pay now" — no text on the screen comes close to it'
    )


async def test_snapshot_update_compare_and_a_failing_diff(flows: Path, provider: Any, tmp_path: Path) -> None:
    flow = "steps:\n  - launch: { chromium: site }\n  - snapshot: home\n"
    baseline = flows / "__baselines__" / "home" / "home__chromium-1000x800.png"
    res = await run(flows, "home", flow, provider, update=True)
    assert statuses(res)[1] == ("snapshot", "pass", "baseline written (home__chromium-1000x800.png)")
    img = P.decode_png(baseline.read_bytes())
    assert img.shape == (800, 1000, 4)
    # the baseline shows the page: the banner's yellow and dark heading text are there
    assert (np.abs(img[..., :3].astype(int) - (0xFF, 0xE9, 0xA8)).sum(axis=2) < 10).sum() > 1000
    assert (img[..., :3].max(axis=2) < 100).sum() > 200

    res = await run(flows, "home", flow, provider)
    assert statuses(res)[1] == ("snapshot", "pass", "diff 0.00% ≤ 0.5% (home__chromium-1000x800.png)")

    site = flows / "site" / "index.html"
    site.write_text(
        SHOP.replace('<h1 id="title">Shop</h1>', '<h1 id="title" style="font-size:96px">Sale!</h1>')
    )
    res = await run(flows, "home", flow, provider)
    step = res.steps[1]
    assert step.status == "fail" and step.snapshot_key == "home__chromium-1000x800"
    assert (step.reason or "").startswith("diff ") and "% > 0.5% (home__chromium-1000x800.png)" in (
        step.reason or ""
    )
    assert step.artifacts is not None and set(step.artifacts) == {"baseline", "current", "diff"}
    diff = P.decode_png(Path(step.artifacts["diff"]).read_bytes())
    assert diff.shape == (240, 300, 4)
    greenish = (diff[..., 1] > 150) & (diff[..., 0] < 100) & (diff[..., 2] < 100)
    reddish = (diff[..., 0] > 200) & (diff[..., 1] < 80) & (diff[..., 2] < 80)
    assert (greenish | reddish).sum() > 50  # the change shows
    # the baseline itself is untouched by a failing compare
    assert P.decode_png(baseline.read_bytes()).shape == (800, 1000, 4)


async def test_a_chromium_that_dies_mid_flow_is_a_clean_error(flows: Path, provider: Any) -> None:
    path = flows / "dies.yaml"
    text = "steps:\n  - launch: { chromium: site }\n  - tap: Add to cart\n  - tap: Add to cart\n"
    path.write_text(text)
    files = DiskFlowFiles()
    device = await provider.boot()

    class Killer(DeviceDirectives):
        async def execute(self, step: Any, dev: Any, ctx: Any) -> Any:
            if ctx.run.steps and ctx.run.steps[-1].kind == "tap":
                await provider.stop(dev.id)
            return await super().execute(step, dev, ctx)

    res = await asyncio.wait_for(
        run_flow(
            parse_flow(text),
            await files.locate(str(path)),
            "dies",
            files=files,
            tools=NoTools(),
            directives=Killer(scratch_dir=str(flows.parents[2])),
            device=device,
            platform="chromium",
        ),
        60,
    )
    assert [(s.kind, s.status) for s in res.steps] == [("launch", "pass"), ("tap", "pass"), ("tap", "error")]
    assert res.steps[2].reason and "Traceback" not in res.steps[2].reason


def test_cli_run_adopts_then_compares_a_snapshot(cli: Cli, flows: Path) -> None:
    (flows / "cli-shop.yaml").write_text(
        "steps:\n  - launch: { chromium: site }\n  - tap: Close\n  - assert: { hidden: Close }\n  - snapshot: home\n"
    )
    first = cli.run("flow", "run", "cli-shop", "--update-baselines", timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "baseline written (home__chromium-1000x800.png)" in first.stdout
    assert (flows / "__baselines__" / "cli-shop" / "home__chromium-1000x800.png").is_file()
    second = cli.run("flow", "run", "cli-shop", timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "diff 0.00% ≤ 0.5%" in second.stdout


def test_cli_output_gets_the_images_of_a_failed_snapshot(cli: Cli, flows: Path, project: Path) -> None:
    (flows / "cli-out.yaml").write_text("steps:\n  - launch: { chromium: site }\n  - snapshot: home\n")
    first = cli.run("flow", "run", "cli-out", "--update-baselines", timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    (flows / "site" / "index.html").write_text(
        SHOP.replace('<h1 id="title">Shop</h1>', '<h1 id="title" style="font-size:96px">Sale!</h1>')
    )
    tmp = project.parent / "cli-tmp"
    tmp.mkdir()
    second = cli.run("flow", "run", "cli-out", "--output", "out", timeout=120, TMPDIR=str(tmp))
    assert second.returncode == 1, second.stdout + second.stderr
    # the embedded tool-server kept the images until --output copied them, then removed them
    assert os.listdir(tmp) == []
    key = "home__chromium-1000x800"
    copies = {role: f"out/cli-out/{key}-{role}.png" for role in ("baseline", "current", "diff")}
    lines = second.stdout.splitlines()
    # the failed step's lines name the copies --output holds (every printed path is alive)
    at = next(i for i, line in enumerate(lines) if line.startswith("  ✗  2 snapshot"))
    assert lines[at + 1 : at + 4] == [f"       {role}: {path}" for role, path in copies.items()]
    assert lines[-2].startswith("FAIL (started on chromium-cdp-")
    assert lines[-1] == "Images of failed steps: out"
    for path in copies.values():
        assert P.decode_png((project / path).read_bytes()).shape[2] == 4
    assert P.decode_png((project / copies["baseline"]).read_bytes()).shape == (800, 1000, 4)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_cli_run_leaves_no_chromium_behind(
    cli: Cli, flows: Path, tmp_path: Path, sig: int
) -> None:
    (flows / "slow.yaml").write_text("steps:\n  - launch: { chromium: site }\n  - wait: 30000\n")
    tmp = tmp_path / "cli-tmp"
    tmp.mkdir()
    run = cli.spawn("flow", "run", "slow", TMPDIR=str(tmp))
    assert run.stdout is not None
    read_until(run.stdout, lambda line: "launch" in line, timeout=60)
    assert [n for n in os.listdir(tmp) if n.startswith("argent-chromium-")]
    run.send_signal(sig)
    _, err = run.communicate(timeout=30)
    assert run.returncode == 1
    assert err.strip() == "Aborted!"
    assert [n for n in os.listdir(tmp) if n.startswith("argent-chromium-")] == []
    assert processes_naming(str(tmp)) == []
