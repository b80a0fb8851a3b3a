"""The web tools from the real CLI: listed by `argent tools list`, and called over HTTP on a real
`argent server start` process with a real Chromium."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from argent.devices.chromium import find_chromium
from tests.e2e.conftest import Cli, start_server_process
from tests.e2e.test_web_tools import APP, FIXTURE, WEB_TOOLS

pytestmark = pytest.mark.e2e
needs_chromium = pytest.mark.skipif(
    find_chromium() is None, reason="no Chromium binary (set ARGENT_CHROMIUM)"
)


class AppHandler(BaseHTTPRequestHandler):
    """The app page of test_web_tools and its /api/data."""

    def do_GET(self) -> None:
        body, kind = (APP, "text/html") if self.path == "/app.html" else ('{"ok": true}', "application/json")
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), AppHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_tools_list_shows_the_web_tools(cli: Cli) -> None:
    listed = cli.run("tools", "list")
    assert listed.returncode == 0, listed.stderr
    names = [
        line.split("  ", 1)[0] for line in listed.stdout.splitlines() if line and not line.startswith(" ")
    ]
    assert all(name in names for name in WEB_TOOLS), names
    shown = cli.run("tools", "show", "view-network-logs")
    assert shown.returncode == 0 and "--page-index" in shown.stdout and "--device-id" in shown.stdout


@needs_chromium
def test_web_tools_over_a_real_tool_server(cli: Cli) -> None:
    server = start_server_process(cli)
    env = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token}

    def run(tool: str, *args: str) -> Any:
        done = cli.run("run", tool, *args, "--json", timeout=60, **env)
        assert done.returncode == 0, f"{tool}: {done.stdout} {done.stderr}"
        return json.loads(done.stdout)

    try:
        udid = run("boot-device", "--url", "data:text/html,<title>T</title><button>Go</button>")["id"]
        try:
            assert run("launch-app", "--udid", udid, "--bundle-id", "com.example")["launched"] is True
            assert run("debugger-evaluate", "--device-id", udid, "--expression", "6 * 7")["result"] == 42
            steps = json.dumps({"udid": udid, "steps": [{"tool": "keyboard", "args": {"key": "tab"}}]})
            assert run("run-sequence", "--args", steps)["completed"] == 1
            assert [t["title"] for t in run("chromium-tabs", "--udid", udid, "--action", "list")["tabs"]] == [
                "T"
            ]
        finally:
            run("stop-device", "--udid", udid)
    finally:
        assert server.stop() == 0


@needs_chromium
def test_the_upstream_fixture_replays_over_a_link(cli: Cli, project: Path, site: str) -> None:
    """`argent flow run` over a link, on a device of a real tool-server process, of the flow written with
    upstream's tool names and arguments (its start-state note left out: the CLI would ask for it)."""
    flow = "\n".join(
        line for line in FIXTURE.read_text().splitlines() if not line.startswith("executionPrerequisite")
    )
    (project / ".argent" / "flows" / "upstream-web.yaml").write_text(flow + "\n")
    server = start_server_process(cli)
    env = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token}
    try:
        booted = cli.run("run", "boot-device", "--url", f"{site}/app.html", "--json", timeout=60, **env)
        assert booted.returncode == 0, booted.stderr
        udid = json.loads(booted.stdout)["id"]
        try:
            done = cli.run("flow", "run", "upstream-web", "--device", udid, "--json", timeout=120, **env)
            assert done.returncode == 0, done.stdout + done.stderr
            steps = json.loads(done.stdout)["steps"]
            assert [s["status"] for s in steps] == ["pass"] * 17, steps
        finally:
            cli.run("run", "stop-device", "--udid", udid, **env)
    finally:
        assert server.stop() == 0
