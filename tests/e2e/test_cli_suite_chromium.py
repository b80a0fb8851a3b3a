"""Suites on real headless Chromium: `--workers` gives each launching flow its own browser and
leaves none behind; `--html` shows the flows, the failed snapshot's images and the failure
screenshot, opened in headless Chromium itself; the failure screenshot also travels over a link."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from argent.devices.chromium import ChromiumDeviceProvider
from argent.devices.chromium.launcher import processes_naming
from argent.runner import pixels as P
from tests.e2e.conftest import SHOP_PAGE, Cli, chromium_marks, start_server_process
from tests.e2e.test_cli_suite import BARRIER, junit, write

pytestmark = chromium_marks()


@pytest.fixture
def site(project: Path) -> Path:
    return write(project / "suite" / "site" / "index.html", SHOP_PAGE).parent


@pytest.fixture
def private_tmp(tmp_path: Path) -> Path:
    """TMPDIR of the command: every Chromium it launches has its home here, so the browsers of
    this test are counted apart from any other Chromium on the machine."""
    tmp = tmp_path / "cli-tmp"
    tmp.mkdir()
    return tmp


def browsers(tmp: Path) -> list[int]:
    return processes_naming(str(tmp))


def test_four_workers_run_eight_launching_flows_each_on_its_own_browser(
    cli: Cli, project: Path, site: Path, private_tmp: Path
) -> None:
    write(project / "barrier.py", BARRIER)
    arrived = project / "arrived"
    for i in range(8):
        write(
            project / "suite" / f"shop-{i}.yaml",
            "steps:\n  - launch: { chromium: site }\n"
            f'  - script: {{ path: ../barrier.py, args: [{arrived}, "4", "60"] }}\n'
            "  - tap: Add to cart\n  - assert: { visible: In the cart }\n",
        )
    assert browsers(private_tmp) == []
    done = cli.run(
        "flow",
        "run",
        "suite",
        "--workers",
        "4",
        "--json",
        "--junit-xml",
        "j.xml",
        timeout=300,
        TMPDIR=str(private_tmp),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    report = json.loads(done.stdout)
    assert (report["total"], report["passed"]) == (8, 8)
    assert [Path(f["path"]).name for f in report["flows"]] == [f"shop-{i}.yaml" for i in range(8)]
    # the first four met at the barrier at the same time, each with its own browser
    cdp_urls = [path.read_text() for path in arrived.iterdir()]
    assert len(cdp_urls) == 8 and all(url.startswith("ws://127.0.0.1:") for url in cdp_urls)
    assert len(set(cdp_urls)) == 8
    root = junit(project / "j.xml")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "0", "0")
    assert browsers(private_tmp) == []
    assert [n for n in os.listdir(private_tmp) if n.startswith("argent-chromium-")] == []


def dark_baseline(flows: Path, stem: str) -> None:
    """A baseline the white page differs from everywhere."""
    img = np.zeros((800, 1000, 4), dtype=np.uint8)
    img[..., 3] = 255
    write(flows / "__baselines__" / stem / "home__chromium-1000x800.png", "").write_bytes(P.encode_png(img))


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls.extend(v for k, v in attrs if k in ("src", "href") and v is not None)


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    provider = ChromiumDeviceProvider(viewport=(1200, 1500))
    try:
        yield await provider.boot()
    finally:
        await provider.close_all()


async def test_the_html_report_opens_offline_and_shows_flows_images_and_the_failure_screenshot(
    cli: Cli, project: Path, site: Path, private_tmp: Path, browser: Any, tmp_path: Path
) -> None:
    suite = project / "suite"
    write(suite / "a-cart.yaml", "steps:\n  - launch: { chromium: site }\n  - tap: Add to cart\n")
    write(suite / "b-snapshot.yaml", "steps:\n  - launch: { chromium: site }\n  - snapshot: home\n")
    dark_baseline(suite, "b-snapshot")
    write(
        suite / "c-missing.yaml",
        'steps:\n  - launch: { chromium: site }\n  - assert: { visible: "Checkout" }\n',
    )
    write(suite / "d-invalid.yaml", "steps:\n  - bogus: 1\n")
    done = cli.run(
        "flow", "run", "suite", "--workers", "2", "--html", "report", timeout=300, TMPDIR=str(private_tmp)
    )
    assert done.returncode == 1, done.stdout + done.stderr
    # the tool-server's copies are gone with it; the report kept its own
    assert os.listdir(private_tmp) == []
    out = project / "report"
    page_text = (out / "index.html").read_text(encoding="utf-8")
    parsed = Page()
    parsed.feed(page_text)
    assert all("://" not in url and not url.startswith(("/", "data:")) for url in parsed.urls), parsed.urls
    images = sorted({url for url in parsed.urls if url.endswith(".png")})
    assert images == [
        "images/2/2-baseline.png",
        "images/2/2-current.png",
        "images/2/2-diff.png",
        "images/3/2-screenshot.png",
    ]

    await browser.navigate((out / "index.html").as_uri())
    loaded = json.loads(
        await browser.session.evaluate(
            "JSON.stringify([...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth]))"
        )
    )
    assert sorted(src for src, width in loaded if width) == images  # every image there and decoded
    text = await browser.session.evaluate("document.body.innerText")
    for rel in ("suite/a-cart.yaml", "suite/b-snapshot.yaml", "suite/c-missing.yaml", "suite/d-invalid.yaml"):
        assert rel in text
    assert "FAIL" in text and "4 flows · 1 passed · 2 failed · 1 error · 0 skipped" in text
    assert 'no element matched selector text="Checkout"' in text
    shot = await browser.screenshot()
    (tmp_path / "report.png").write_bytes(shot)
    pixels = P.decode_png(shot)
    assert pixels.shape[:2] == (1500, 1200)
    top = pixels[5, 5, :3].astype(int)
    assert top[0] > 150 and top[1] < 80 and top[2] < 80  # the red FAIL banner, at a glance
    # the failure screenshot shows the page the assert failed on (the shop's heading colour)
    failure = P.decode_png((out / "images/3/2-screenshot.png").read_bytes())
    assert failure.shape[:2] == (800, 1000) and (failure[..., :3] == (0x12, 0x34, 0x56)).all(axis=-1).any()


def test_the_failure_screenshot_travels_over_a_link(cli: Cli, project: Path, tmp_path: Path) -> None:
    server = start_server_process(cli)
    try:
        write(
            project / "suite" / "linked.yaml",
            'steps:\n  - launch: { chromium: "data:text/html,<h1>Linked</h1><button>Go</button>" }\n'
            "  - tap: Go\n  - assert: { visible: Nowhere }\n",
        )
        env = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token}
        done = cli.run(
            "flow", "run", "suite/linked.yaml", "--json", "--html", "r", "--output", "out", timeout=300, **env
        )
        assert done.returncode == 1, done.stdout + done.stderr
        step = json.loads(done.stdout)["steps"][2]
        assert (step["kind"], step["status"]) == ("assert", "fail")
        assert step["artifacts"] == {
            "screenshot": "out/linked/step-3-screenshot.png"
        }  # --output, relative as given
        copied = (project / "out" / "linked" / "step-3-screenshot.png").read_bytes()
        assert P.png_size(copied) == (1000, 800)
        assert (project / "r" / "images" / "1" / "3-screenshot.png").read_bytes() == copied
        assert 'src="images/1/3-screenshot.png"' in (project / "r" / "index.html").read_text(encoding="utf-8")
    finally:
        server.stop(signal.SIGTERM)
