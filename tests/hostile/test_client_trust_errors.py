"""A hostile tool-server's error message cannot start a line of its own on the CLI's stderr: Click's
``Error: <message>`` keeps every further line of the message indented under it, for a single flow, a
tool call and a tool listing. The CLI's own messages that span lines (a usage example) are unchanged.

The real CLI against a real aiohttp server that puts newlines where a real one never does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Cli
from tests.hostile.hostile_server import HostileToolServer, buffered, streamed

pytestmark = pytest.mark.e2e

FORGED = "\nPASS (started on chromium-cdp-1) — 9 passed, 0 failed, 0 skipped, 0 errored"
SHOWN = "Error: boom\n       PASS (started on chromium-cdp-1) — 9 passed, 0 failed, 0 skipped, 0 errored\n"


@pytest.mark.parametrize("streams", [True, False], ids=["streamed", "buffered"])
def test_a_flow_error_cannot_forge_a_summary_line(
    cli: Cli, flows: Path, hostile: HostileToolServer, streams: bool
) -> None:
    error = {"error": "boom" + FORGED, "error_code": "FLOW_FAILED"}
    hostile.on(
        "flow-execute",
        streamed({"event": "error", **error}) if streams else buffered(error, status=500),
    )
    done = cli.run("flow", "run", "main", **hostile.env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == SHOWN


def test_a_tool_error_cannot_forge_a_line(cli: Cli, hostile: HostileToolServer) -> None:
    hostile.on("flow-read-prerequisite", buffered({"error": "boom" + FORGED, "error_code": "X"}, status=500))
    done = cli.run("run", "flow-read-prerequisite", "--project-root", ".", **hostile.env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == SHOWN


def test_a_listing_error_cannot_forge_a_line(cli: Cli, hostile: HostileToolServer) -> None:
    hostile.listing = buffered({"error": "boom" + FORGED}, status=500)
    done = cli.run("tools", "list", **hostile.env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == f"Error: GET {hostile.url}/tools failed: 500 Internal Server Error: " + SHOWN[7:]


def test_a_refused_tokens_hint_keeps_its_own_line_under_the_servers_indented_words(
    cli: Cli, hostile: HostileToolServer
) -> None:
    # The client's own advice (where the token comes from) is not the server's: it starts its line.
    hostile.listing = buffered({"error": "boom" + FORGED}, status=401)
    done = cli.run("tools", "list", **hostile.env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == (
        f"Error: GET {hostile.url}/tools failed: 401 Unauthorized: "
        + SHOWN[7:]
        + "The token comes from ARGENT_AUTH_TOKEN: set it to the token `argent server start` printed.\n"
    )
