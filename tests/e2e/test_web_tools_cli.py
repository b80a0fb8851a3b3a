"""The web tools from the real CLI: listed by `argent tools list`, and called over HTTP on a real
`argent server start` process with a real Chromium."""

from __future__ import annotations

import json
from typing import Any

import pytest

from argent.devices.chromium import find_chromium
from tests.e2e.conftest import Cli, start_server_process
from tests.e2e.test_web_tools import WEB_TOOLS

pytestmark = pytest.mark.e2e


def test_tools_list_shows_the_web_tools(cli: Cli) -> None:
    listed = cli.run("tools", "list")
    assert listed.returncode == 0, listed.stderr
    names = [
        line.split("  ", 1)[0] for line in listed.stdout.splitlines() if line and not line.startswith(" ")
    ]
    assert all(name in names for name in WEB_TOOLS), names
    shown = cli.run("tools", "show", "view-network-logs")
    assert shown.returncode == 0 and "--page-index" in shown.stdout and "--device-id" in shown.stdout


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium binary (set ARGENT_CHROMIUM)")
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
