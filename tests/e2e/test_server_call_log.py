"""`argent server start` logs one line per tool call on stderr (INTERFACE.md section 12): the time,
the token's name (`-` without named tokens), the tool, the HTTP status and the duration in ms; never a
token or an argument value, and a hostile path cannot forge a line."""

from __future__ import annotations

import http.client
import json
import re
import signal
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import Cli, ServerProcess, start_server_process

pytestmark = pytest.mark.e2e

LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (?P<who>\S+) (?P<tool>\S+) (?P<status>\d{3}) (?P<ms>\d+)ms$"
)
SECRET_ARG = "an-argument-value-" + "9" * 12
DEV = "dev-" + "d" * 40


def post(server: ServerProcess, path: str, body: object, token: str | None) -> int:
    url = urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    conn.request("POST", path, body=json.dumps(body), headers=headers)
    status = conn.getresponse().status
    conn.close()
    return status


def stderr_lines(server: ServerProcess) -> list[str]:
    server.stop(signal.SIGTERM)
    assert server.proc.stderr is not None
    return server.proc.stderr.read().splitlines()


def test_one_line_per_call_with_status_and_no_secret(cli: Cli) -> None:
    server = start_server_process(cli)
    calls = [
        ("/tools/list-devices", {}, server.token),
        ("/tools/flow-read-prerequisite", {"name": SECRET_ARG, "project_root": "/nowhere"}, server.token),
        ("/tools/no-such-tool", {}, server.token),
        ("/tools/list-devices", {}, "wrong-" + SECRET_ARG),
        ("/tools/evil%0A2020-01-01T00:00:00Z%20admin%20x%20200%201ms", {}, server.token),
    ]
    statuses = [post(server, path, body, token) for path, body, token in calls]
    assert statuses[0] == 200 and statuses[2] == 404 and statuses[3] == 401
    lines = stderr_lines(server)
    logged = [m.groupdict() for m in map(LINE.match, lines) if m]
    assert [(d["who"], d["tool"], int(d["status"])) for d in logged] == [
        ("-", "list-devices", 200),
        ("-", "flow-read-prerequisite", statuses[1]),
        ("-", "no-such-tool", 404),
        ("-", "list-devices", 401),
        ("-", "?", statuses[4]),
    ]
    text = "\n".join(lines)
    assert SECRET_ARG not in text and server.token not in text
    assert "admin" not in text  # the forged line of the hostile path is not printed


def test_the_named_tokens_name_is_logged(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text('tokens:\n  - name: dev\n    token_env: ARGENT_TOKEN_DEV\n    tools: ["*"]\n')
    server = start_server_process(cli, "--config", str(config), ARGENT_TOKEN_DEV=DEV)
    assert post(server, "/tools/list-devices", {}, DEV) == 200
    lines = stderr_lines(server)
    logged = [m.groupdict() for m in map(LINE.match, lines) if m]
    assert [(d["who"], d["tool"], d["status"]) for d in logged] == [("dev", "list-devices", "200")]
    assert DEV not in "\n".join(lines)


def test_an_embedded_tool_server_logs_nothing(cli: Cli, project: Path) -> None:
    (project / ".argent" / "flows" / "e.yaml").write_text("steps:\n  - echo: hi\n")
    done = cli.run("flow", "run", "e")
    assert done.returncode == 0 and done.stderr == ""


def test_a_stderr_nobody_reads_never_stops_the_server(cli: Cli) -> None:
    """The call lines fill a pipe nobody drains (64 KiB: about a thousand lines); the server goes on
    answering, dropping what stderr cannot take."""
    server = start_server_process(cli)
    try:
        for _ in range(2500):
            assert post(server, "/tools/list-devices", {}, server.token) == 200
    finally:
        server.stop(signal.SIGKILL)
