"""`snapshot` `mask` on a real headless Chromium: a dashboard whose clock differs at every load.

Flows run through the engine with ``DeviceDirectives`` on one Chromium booted for the module;
their baselines are real files under the test's project.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio

from argent.devices.chromium import ChromiumDevice
from argent.flows.parse import parse_flow
from argent.runner import pixels as P
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from tests.e2e.conftest import chromium_marks, pages_app, serve

pytestmark = [*chromium_marks(), pytest.mark.asyncio(loop_scope="module")]

#: A clock (a time that differs at every load, in a box of fixed size) beside content that does not.
DASHBOARD = """<!doctype html><html><head><title>Dashboard</title>
<style>
  body { margin: 0; font: 20px sans-serif; background: #fff }
  #card { position: absolute; left: 40px; top: 100px; width: 400px; height: 200px; background: #def }
  #clock { position: absolute; left: 20px; top: 20px; width: 200px; height: 60px; font: 40px monospace;
           background: #000; color: #0f0 }
  #total { position: absolute; left: 20px; top: 120px }
</style></head><body>
<h1 style="margin: 20px 40px">Dashboard</h1>
<div id="card">
  <div id="clock"></div>
  <p id="total">Total: 42</p>
</div>
<script>
  document.getElementById('clock').textContent = String(performance.timeOrigin % 1e6).slice(0, 7);
</script>
</body></html>"""

MASK = (255, 0, 255)


class NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("no tools here")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[str]:
    async with serve(pages_app({"/dashboard.html": DASHBOARD})) as url:
        yield url


async def run(tmp_path: Path, device: ChromiumDevice, text: str, *, update: bool = False) -> FlowRunResult:
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    path = flows / "dash.yaml"
    path.write_text(text)
    files = DiskFlowFiles()
    return await asyncio.wait_for(
        run_flow(
            parse_flow(text),
            await files.locate(str(path)),
            "dash",
            files=files,
            tools=NoTools(),
            directives=DeviceDirectives(scratch_dir=str(tmp_path / "scratch")),
            device=device,
            platform="chromium",
            update_baselines=update,
        ),
        120,
    )


def flow(site: str, snapshot: str) -> str:
    return f"steps:\n  - launch: {{ chromium: {site}/dashboard.html }}\n  - snapshot: {snapshot}\n"


def snap(res: FlowRunResult) -> tuple[str, str | None]:
    assert [s.kind for s in res.steps] == ["launch", "snapshot"], res.steps
    assert res.steps[0].status == "pass", res.steps[0]
    return res.steps[1].status, res.steps[1].reason


def baselines(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / ".argent" / "flows" / "__baselines__" / "dash").glob("*.png"))


def colour_share(img: np.ndarray[Any, Any], colour: tuple[int, int, int]) -> float:
    return float((np.abs(img[..., :3].astype(int) - colour).sum(axis=2) == 0).mean())


async def test_a_mask_hides_the_clock_that_fails_the_compare_without_it(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    plain = flow(site, "{ name: board, maxMismatch: 0 }")
    masked = flow(site, "{ name: board, maxMismatch: 0, mask: [{ id: clock }] }")
    # The control: the clock differs at every load, so without the mask the compare fails.
    assert snap(await run(tmp_path, device, plain, update=True))[0] == "pass"
    [unmasked] = baselines(tmp_path)
    status, reason = snap(await run(tmp_path, device, plain))
    assert status == "fail" and (reason or "").startswith("diff "), reason
    # The mask keeps the key: a baseline adopted before the mask compares with the clock masked in both.
    status, reason = snap(await run(tmp_path, device, masked))
    assert (status, reason) == ("pass", f"diff 0.00% ≤ 0% ({unmasked.stem}.png)")
    # Adopted with the mask, the baseline shows what is ignored: the clock's box painted over.
    assert snap(await run(tmp_path, device, masked, update=True))[0] == "pass"
    assert baselines(tmp_path) == [unmasked]
    img = P.decode_png(unmasked.read_bytes())
    assert (img[120:180, 60:260, :3] == MASK).all()  # the clock: card (40, 100) + (20, 20), 200x60
    assert colour_share(img, MASK) == pytest.approx(200 * 60 / (img.shape[0] * img.shape[1]), rel=0.1)
    for _ in range(2):
        status, reason = snap(await run(tmp_path, device, masked))
        assert (status, reason) == ("pass", f"diff 0.00% ≤ 0% ({unmasked.stem}.png)")


async def test_a_mask_inside_a_crop_lands_where_the_element_is_in_the_crop(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    text = flow(site, "{ name: card, maxMismatch: 0, cropOn: { id: card }, mask: [{ id: clock }] }")
    assert snap(await run(tmp_path, device, text, update=True))[0] == "pass"
    [baseline] = baselines(tmp_path)
    img = P.decode_png(baseline.read_bytes())
    assert img.shape[:2] == (200, 400)
    assert (img[20:80, 20:220, :3] == MASK).all()  # the clock, at (20, 20) of the card
    assert colour_share(img, MASK) == pytest.approx(200 * 60 / (200 * 400), rel=0.1)
    assert (img[100:110, 300:400, :3] == (0xDD, 0xEE, 0xFF)).all()  # the card's own colour, untouched
    for _ in range(2):
        status, reason = snap(await run(tmp_path, device, text))
        assert status == "pass", reason


async def test_a_mask_selector_that_matches_nothing_fails_the_step(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    text = flow(site, "{ name: board, mask: [{ id: clock }, { id: clokc }] }")
    for update in (True, False):
        status, reason = snap(await run(tmp_path, device, text, update=update))
        assert (status, reason) == (
            "fail",
            'mask selector id="clokc" matched nothing on the screen — nothing was compared. A mask that matches '
            "nothing would leave what it should hide in the compare: fix the selector, or take it out of mask",
        )
        assert baselines(tmp_path) == []
