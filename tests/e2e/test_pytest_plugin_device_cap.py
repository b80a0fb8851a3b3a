"""The pytest plugin under pytest-xdist over one link whose token may hold one browser: a flow item the
tool-server refused a browser (429 TOO_MANY_DEVICES) waits for it, since another worker of the run (a
process this one never sees) may hold it, and passes once it is free; without the link's siblings the
refusal stays the item's error at once.

A real `argent server start --config` process, real headless Chromium, a real `pytest -n 2` run."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from argent.devices.chromium.launcher import processes_naming
from tests.e2e.conftest import SHOP_PAGE, Cli, chromium_marks, pages_app, serve
from tests.e2e.test_suite_device_cap import TOKEN, call, capped_server

pytest.importorskip("xdist")
pytestmark = chromium_marks()

#: The run's own conftest notes each wait of a refused flow in a file named after its worker, so the test
#: knows when a refusal happened without reading a worker's output (xdist prints it at the end).
OBSERVER = """
import os
from pathlib import Path

from argent.driver import BrowserRoom

_wait = BrowserRoom.wait


async def wait(self, seen):
    Path(os.environ["WAITED_DIR"], os.environ.get("PYTEST_XDIST_WORKER", "main")).touch()
    await _wait(self, seen)


BrowserRoom.wait = wait
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def plugin_project(root: Path, url: str) -> None:
    write(root / "pyproject.toml", "[tool.pytest.ini_options]\nargent_flows = ['.argent/flows']\n")
    write(root / "conftest.py", OBSERVER)
    for i in range(2):
        write(
            root / ".argent" / "flows" / f"shop-{i}.yaml",
            f"steps:\n  - launch: {{ chromium: '{url}/shop' }}\n  - tap: Add to cart\n"
            "  - assert: { visible: In the cart }\n",
        )


def wait_for(predicate: object, proc: subprocess.Popen[str], timeout: float) -> None:
    """Until ``predicate()`` holds; fails with the run's output when it ends first."""
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if proc.poll() is not None:
            out, _ = proc.communicate()
            raise AssertionError(f"the pytest run ended before any flow waited:\n{out[-4000:]}")
        assert time.monotonic() < deadline, "no flow item waited for a browser"
        time.sleep(0.05)


async def test_xdist_workers_over_one_link_wait_for_the_tokens_browser(cli: Cli, tmp_path: Path) -> None:
    server, server_tmp = capped_server(cli, tmp_path)
    project = tmp_path / "plugin-project"
    waited = tmp_path / "waited"
    waited.mkdir()
    try:
        # Another client of the token holds its one browser while the run starts: every item is refused.
        status, body = await asyncio.to_thread(call, server, "boot-device", {"platform": "chromium"})
        assert status == 200, body
        async with serve(pages_app({"/shop": SHOP_PAGE})) as url:
            plugin_project(project, url)
            env = {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_")}
            env.update(
                HOME=str(cli.home),
                ARGENT_TOOLS_URL=server.url,
                ARGENT_AUTH_TOKEN=TOKEN,
                WAITED_DIR=str(waited),
                COLUMNS="300",
            )
            proc = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "-rA"],
                cwd=project,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            try:
                await asyncio.to_thread(wait_for, lambda: any(waited.iterdir()), proc, 120)
                # A refused item is waiting; the browser it waits for is freed.
                status, _ = await asyncio.to_thread(call, server, "stop-device", {"udid": body["data"]["id"]})
                assert status == 200
                out, _ = await asyncio.to_thread(proc.communicate, timeout=150)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
        assert proc.returncode == 0, out[-4000:]
        assert "2 passed" in out, out[-4000:]
    finally:
        server.stop()
    assert processes_naming(str(server_tmp)) == []
