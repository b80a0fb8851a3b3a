"""docs/python-api.md's example, as written there: a test of a user's own aiohttp app (pytest-aiohttp's
``aiohttp_server``) that runs a flow against it with ``FlowDriver``, on an embedded tool-server and the
real Chromium. Also: a suite of two flows, in order, with their steps as they arrive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp import web

from argent.client.routing import Route
from argent.driver import FlowDriver
from tests.e2e.conftest import chromium_marks

pytestmark = chromium_marks()

EMBEDDED = Route(url=None, token=None, source="embedded")
SHOP = """<!doctype html><html><body>
<button onclick="document.getElementById('done').textContent = 'Thank you'">Buy</button>
<p id="done"></p>
</body></html>"""


async def shop(request: web.Request) -> web.Response:
    return web.Response(text=SHOP, content_type="text/html")


async def test_a_flow_against_the_app_under_test(aiohttp_server: Any, tmp_path: Path) -> None:
    # -- the example of docs/python-api.md --
    app = web.Application()
    app.router.add_get("/", shop)
    server = await aiohttp_server(app)
    flow = tmp_path / "buy.yaml"
    flow.write_text(
        "steps:\n"
        f"  - launch: {{ chromium: '{server.make_url('/')}' }}\n"
        "  - tap: Buy\n"
        "  - assert: { visible: Thank you }\n"
    )
    async with FlowDriver(tmp_path, route=EMBEDDED) as driver:
        run = await driver.run(flow)
    assert run.ok, run.problem
    # -- end of the example --
    assert run.report is not None
    assert [step.kind for step in run.report.steps] == ["launch", "tap", "assert"]


async def test_a_suite_runs_in_order_and_reports_each_step(aiohttp_server: Any, tmp_path: Path) -> None:
    app = web.Application()
    app.router.add_get("/", shop)
    server = await aiohttp_server(app)
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "buy.yaml").write_text(
        f"steps:\n  - launch: {{ chromium: '{server.make_url('/')}' }}\n  - tap: Buy\n"
        "  - assert: { visible: Thank you }\n"
    )
    (flows / "wrong.yaml").write_text(
        f"steps:\n  - launch: {{ chromium: '{server.make_url('/')}' }}\n"
        "  - assert: { visible: Thank you }\n"
    )
    seen: list[tuple[str, str]] = []
    async with FlowDriver(tmp_path, route=EMBEDDED) as driver:
        entries = await driver.run_suite(
            ["buy", "wrong"], on_step=lambda position, target, step: seen.append((target.stem, step["kind"]))
        )
    assert [(entry.target.stem, entry.ok) for entry in entries] == [("buy", True), ("wrong", False)]
    failed = entries[1].run
    assert failed is not None and failed.problem is not None and failed.problem.lstrip().startswith("✗")
    assert seen == [
        ("buy", "launch"),
        ("buy", "tap"),
        ("buy", "assert"),
        ("wrong", "launch"),
        ("wrong", "assert"),
    ]
