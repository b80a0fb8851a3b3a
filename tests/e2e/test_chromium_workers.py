"""A page's dedicated web worker runs under argent's Chromium: the device auto-attaches frames with
``waitForDebuggerOnStart``, and a worker held at its start that way never ran (MkDocs Material's
search stayed at "Initializing search" in tests/realapps)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from argent.devices.base import UiNode
from argent.devices.chromium import ChromiumDevice
from tests.e2e.conftest import Cli, chromium_marks, pages_app, serve
from tests.e2e.test_cli_flow import write

pytestmark = chromium_marks()

WORKER_PAGE = """<!doctype html><html><body><p id="out">waiting for the worker</p>
<script>
const code = "postMessage('the worker ran')";
const worker = new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
worker.onmessage = (e) => { document.getElementById("out").textContent = e.data; };
</script></body></html>
"""


def test_a_pages_dedicated_worker_runs(cli: Cli, project: Path) -> None:
    write(project / "site" / "index.html", WORKER_PAGE)
    write(
        project / ".argent" / "flows" / "worker.yaml",
        "steps:\n  - launch: { chromium: ../../site }\n  - await: { visible: the worker ran, timeout: 5000 }\n",
    )
    done = cli.run("flow", "run", "worker", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout.splitlines()[-1]


#: A page whose dedicated worker comes from a URL and fetches what the server holds until released.
HELD_WORKER_PAGE = """<!doctype html><html><body><p id="out">waiting for the worker</p>
<script>
const worker = new Worker("/worker.js");
worker.onmessage = (e) => { document.getElementById("out").textContent = e.data; };
</script></body></html>
"""
HELD_WORKER = """postMessage("the worker started");
fetch("/held").then((r) => r.text()).then((t) => postMessage("the worker got " + t));
"""


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def held_site() -> AsyncIterator[tuple[str, asyncio.Event]]:
    release = asyncio.Event()

    async def held(request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text="the index")

    async def worker(request: web.Request) -> web.Response:
        return web.Response(text=HELD_WORKER, content_type="text/javascript")

    app = pages_app(
        {"/held-worker.html": HELD_WORKER_PAGE}, web.get("/held", held), web.get("/worker.js", worker)
    )
    async with serve(app) as url:
        yield url, release


@pytest.mark.asyncio(loop_scope="module")
async def test_a_workers_requests_are_counted_where_they_end(
    device: ChromiumDevice, held_site: tuple[str, asyncio.Event]
) -> None:
    """The worker's script request is announced in the page's session and ends in the worker's; the
    worker's own fetch is seen only in the worker's. Both count for the page's quiet, and each ends:
    none is left to hold every step after a page load for ``QUIET_REQUEST_MAX_AGE_MS``."""
    url, release = held_site
    signals = device.signals
    await device.navigate(f"{url}/held-worker.html")
    await until(device, "the worker started")
    # The worker's session reports its script's end on its own: a few reads of the page give it time.
    for _ in range(50):
        if signals.in_flight <= 1:
            break
        await device.ui_tree()
    assert signals.in_flight == 1  # the held fetch (the script's request ended in the worker's session)
    release.set()
    await until(device, "the worker got the index")
    assert await device.wait_quiet(10) is not None
    assert signals.in_flight == 0


async def until(device: ChromiumDevice, text: str) -> None:
    """Wait (on the page's changes) until its paragraph reads ``text``."""
    mark = None
    for _ in range(100):
        tree = await device.ui_tree()
        if any(n.value == text for n in nodes(tree.root)):
            return
        mark = await device.wait_quiet(5, after=tree.mark if tree.mark >= 0 else mark)
    raise AssertionError(f"the page never read {text!r}")


def nodes(node: UiNode) -> Iterator[UiNode]:
    yield node
    for child in node.children:
        yield from nodes(child)
