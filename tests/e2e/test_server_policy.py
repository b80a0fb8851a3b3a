"""A real `argent server start --config` (INTERFACE section 9) and its flags: named tokens from the
environment, the guard as the CLI shows it, concurrent calls per token, an open server, a token on
the command line, cross-site posts, scripts and local flows off. Each refusal proves nothing ran: the
flows' script would leave a file."""

from __future__ import annotations

import http.client
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import Cli, ServerProcess, start_server_process

pytestmark = pytest.mark.e2e

CI = "ci-" + "c" * 40
DEV = "dev-" + "d" * 40
TOKENS_ENV = {"ARGENT_TOKEN_CI": CI, "ARGENT_TOKEN_DEV": DEV}
TOKENS = """tokens:
  - name: ci
    token_env: ARGENT_TOKEN_CI
    tools: [flow-execute, flow-read-prerequisite]
  - name: dev
    token_env: ARGENT_TOKEN_DEV
    tools: ["*"]
"""
NOT_ALLOWED = 'tool "flow-start-recording" is not allowed: guard "token:ci" did not pass'


@pytest.fixture
def marker(tmp_path: Path, project: Path) -> Path:
    """The file the project's script leaves when it runs; the flows that reach it."""
    path = tmp_path / "script-ran"
    flows = project / ".argent" / "flows"
    (flows / "mark.sh").write_text(f'#!/bin/sh\ntouch "{path}"\n')
    (flows / "scripted.yaml").write_text("steps:\n  - echo: before\n  - script: mark.sh\n")
    (flows / "plain.yaml").write_text("steps:\n  - echo: hello\n")
    (flows / "slow.yaml").write_text("steps:\n  - echo: started\n  - wait: 20000\n")
    return path


def config_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "argent-server.yaml"
    path.write_text(text)
    return str(path)


@pytest.fixture
def team(cli: Cli, tmp_path: Path) -> Iterator[ServerProcess]:
    srv = start_server_process(cli, "--config", config_file(tmp_path, TOKENS), **TOKENS_ENV)
    yield srv
    srv.stop(signal.SIGKILL)


def request(
    server: ServerProcess,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], Any]:
    url = urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, json.loads(data) if data else None
    finally:
        conn.close()


def call(
    server: ServerProcess, tool: str, args: dict[str, Any], token: str | None, **headers: str
) -> tuple[int, Any]:
    sent = {"Content-Type": "application/json", **headers}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    status, _, body = request(server, "POST", f"/tools/{tool}", json.dumps(args).encode(), sent)
    return status, body


def test_named_tokens_come_from_the_environment_and_the_banner_shows_none(
    team: ServerProcess,
) -> None:
    port = team.url.rsplit(":", 1)[1]
    assert team.banner == [
        f"Tools server listening on http://127.0.0.1:{port}",
        f"argent link argent://<token>@127.0.0.1:{port}",
    ]
    for token in (CI, DEV):
        assert request(team, "GET", "/tools", headers={"Authorization": f"Bearer {token}"})[0] == 200
    assert request(team, "GET", "/tools", headers={"Authorization": "Bearer <token>"})[0] == 401


def test_the_guard_refuses_lists_and_the_cli_shows_it(cli: Cli, project: Path, team: ServerProcess) -> None:
    env = {"ARGENT_TOOLS_URL": team.url, "ARGENT_AUTH_TOKEN": CI}
    listed = cli.run("tools", "list", **env)
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("flow-start-recording "))
    assert line.endswith(
        '[disabled: needs a token whose tools include "flow-start-recording" (guard "token:ci" did not pass; '
        "this token may call: flow-execute, flow-read-prerequisite)]"
    )
    assert not any("[disabled" in x for x in listed.stdout.splitlines() if x.startswith("flow-execute "))
    refused = cli.run("run", "flow-start-recording", "--name", "rec", "--project-root", str(project), **env)
    assert refused.returncode == 1
    assert f"Error: {NOT_ALLOWED}" in refused.stderr.splitlines()
    assert not (project / ".argent" / "flows" / "rec.yaml").exists()
    status, body = call(team, "flow-start-recording", {"name": "rec", "project_root": str(project)}, CI)
    assert (status, body) == (403, {"error": NOT_ALLOWED, "error_code": "TOOL_NOT_ALLOWED"})
    allowed = cli.run(
        "run",
        "flow-start-recording",
        "--name",
        "rec",
        "--project-root",
        str(project),
        **{**env, "ARGENT_AUTH_TOKEN": DEV},
    )
    assert allowed.returncode == 0, allowed.stderr


def test_a_token_over_its_calls_gets_429_and_another_token_does_not(
    cli: Cli, project: Path, marker: Path, tmp_path: Path
) -> None:
    limit = "limits:\n  concurrent_calls_per_token: 1\n"
    srv = start_server_process(cli, "--config", config_file(tmp_path, TOKENS + limit), **TOKENS_ENV)
    url = urlsplit(srv.url)
    slow = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        args = json.dumps({"name": "slow", "project_root": str(project)}).encode()
        slow.request(
            "POST",
            "/tools/flow-execute",
            body=args,
            headers={
                "Content-Type": "application/json",
                "Authorization": f"Bearer {DEV}",
                "Accept": "application/x-ndjson",
            },
        )
        running = slow.getresponse()
        first = json.loads(running.readline())
        assert first["event"] == "progress" and first["data"]["message"] == "started"
        status, headers, body = request(
            srv,
            "POST",
            "/tools/flow-execute",
            json.dumps({"name": "plain", "project_root": str(project)}).encode(),
            {"Content-Type": "application/json", "Authorization": f"Bearer {DEV}"},
        )
        assert status == 429 and headers["retry-after"] == "1"
        assert body["error_code"] == "TOO_MANY_CALLS"
        assert body["error"].startswith('Token "dev" already runs 1 call at once')
        other, out = call(srv, "flow-execute", {"name": "plain", "project_root": str(project)}, CI)
        assert other == 200 and out["data"]["ok"] is True
    finally:
        slow.close()
        srv.stop(signal.SIGKILL)


def test_no_auth_on_a_non_loopback_address_needs_allow_open_server(cli: Cli) -> None:
    refused = cli.run("server", "start", "--port", "0", "--host", "0.0.0.0", "--no-auth")
    assert refused.returncode == 2
    assert "--allow-open-server" in refused.stderr
    assert refused.stdout == ""
    srv = start_server_process(cli, "--host", "0.0.0.0", "--no-auth", "--allow-open-server")
    try:
        assert len(srv.banner) == 1
        port = srv.url.rsplit(":", 1)[1]
        status, _, _ = request(
            ServerProcess(srv.proc, f"http://127.0.0.1:{port}", "", srv.banner), "GET", "/tools"
        )
        assert status == 200
    finally:
        assert srv.stop() == 0
    assert srv.proc.stderr is not None
    assert (
        "warning: authentication is off on 0.0.0.0, a non-loopback address (--allow-open-server)"
        in srv.proc.stderr.read()
    )


def test_token_on_the_command_line_warns_and_the_banner_stays_exact(cli: Cli) -> None:
    token = "t" * 32
    srv = start_server_process(cli, "--token", token)
    try:
        port = srv.url.rsplit(":", 1)[1]
        assert srv.banner == [
            f"Tools server listening on http://127.0.0.1:{port}",
            f"argent link argent://{token}@127.0.0.1:{port}",
        ]
    finally:
        assert srv.stop() == 0
    assert srv.proc.stderr is not None
    err = srv.proc.stderr.read()
    assert "warning: --token puts the token on the command line" in err and "ARGENT_AUTH_TOKEN" in err


def test_named_tokens_are_the_one_source_of_tokens(cli: Cli, tmp_path: Path) -> None:
    cfg = config_file(tmp_path, TOKENS)
    for extra, env, other in (
        (("--token", "x" * 20), {}, "--token"),
        ((), {"ARGENT_AUTH_TOKEN": "y" * 20}, "ARGENT_AUTH_TOKEN"),
        (("--no-auth",), {}, "--no-auth"),
    ):
        done = cli.run("server", "start", "--port", "0", "--config", cfg, *extra, **TOKENS_ENV, **env)
        assert done.returncode == 2, done.stderr
        assert f"{cfg} names its tokens (tokens:), so {other} cannot be used as well" in done.stderr


def test_a_bad_config_file_is_a_usage_error_naming_file_key_and_allowed(cli: Cli, tmp_path: Path) -> None:
    cfg = config_file(tmp_path, "scripts: false\nlocal_flow: false\n")
    done = cli.run("server", "start", "--port", "0", "--config", cfg)
    assert done.returncode == 2
    assert (
        f"{cfg}: unknown key local_flow — did you mean local_flows? (allowed: tokens, project_roots, local_flows, scripts, overwrite_flows, limits)"
        in done.stderr
    )
    missing = cli.run("server", "start", "--port", "0", "--config", cfg.replace(".yaml", "-nope.yaml"))
    assert missing.returncode == 2 and "cannot read the config file" in missing.stderr
    unset = cli.run("server", "start", "--port", "0", "--config", config_file(tmp_path, TOKENS))
    assert unset.returncode == 2
    assert "tokens[0].token_env: the environment variable ARGENT_TOKEN_CI is not set" in unset.stderr


def test_a_cross_site_simple_post_runs_nothing(cli: Cli, project: Path, marker: Path) -> None:
    srv = start_server_process(cli, "--no-auth")
    try:
        args = json.dumps({"name": "scripted", "project_root": str(project)}).encode()
        status, _, body = request(
            srv,
            "POST",
            "/tools/flow-execute",
            args,
            {"Origin": "http://evil.example", "Content-Type": "text/plain;charset=UTF-8"},
        )
        assert (status, body["error_code"]) == (403, "ORIGIN_REFUSED")
        status, _, body = request(srv, "POST", "/tools/flow-execute", args, {"Content-Type": "text/plain"})
        assert (status, body["error_code"]) == (415, "BODY_NOT_JSON")
        status, _, body = request(
            srv,
            "POST",
            "/tools/flow-execute",
            args,
            {"Origin": "http://evil.example", "Content-Type": "application/json"},
        )
        assert status == 403
        assert not marker.exists()
        # The same call from a CLI-like client runs the script: the refusals are what stopped it.
        status, _, body = request(
            srv, "POST", "/tools/flow-execute", args, {"Content-Type": "application/json"}
        )
        assert status == 200 and body["data"]["ok"] is True
        assert marker.exists()
    finally:
        srv.stop(signal.SIGKILL)


def test_scripts_false_runs_no_script_also_for_a_caller_that_says_it_is_linked(
    cli: Cli, project: Path, marker: Path, tmp_path: Path
) -> None:
    srv = start_server_process(cli, "--config", config_file(tmp_path, "scripts: false\n"))
    try:
        args = {"name": "scripted", "project_root": str(project)}
        for headers in ({}, {"x-argent-linked": "1"}):
            status, body = call(srv, "flow-execute", args, srv.token, **headers)
            assert (status, body["error_code"]) == (403, "SCRIPTS_DISABLED")
            assert body["error"].startswith(
                "This tool-server runs no script: step (scripts: false in its config)"
            )
        root = str(project)
        assert call(srv, "flow-start-recording", {"name": "r", "project_root": root}, srv.token)[0] == 200
        status, body = call(
            srv, "flow-add-script", {"name": "r", "project_root": root, "path": "mark.sh"}, srv.token
        )
        assert (status, body["error_code"]) == (403, "SCRIPTS_DISABLED")
        assert not marker.exists()
        plain = call(srv, "flow-execute", {"name": "plain", "project_root": root}, srv.token)
        assert plain[0] == 200 and plain[1]["data"]["ok"] is True
    finally:
        srv.stop(signal.SIGKILL)


def test_local_flows_false_reads_nothing_from_the_servers_disk(
    cli: Cli, project: Path, marker: Path, tmp_path: Path
) -> None:
    srv = start_server_process(cli, "--config", config_file(tmp_path, "local_flows: false\n"))
    try:
        for headers in ({}, {"x-argent-linked": "1"}):
            status, body = call(
                srv, "flow-execute", {"name": "scripted", "project_root": str(project)}, srv.token, **headers
            )
            assert (status, body["error_code"]) == (403, "LOCAL_FLOWS_DISABLED")
        assert not marker.exists()
        # Linked, the client sends the flow with the call, and it runs.
        done = cli.run("flow", "run", "plain", ARGENT_TOOLS_URL=srv.url, ARGENT_AUTH_TOKEN=srv.token)
        assert done.returncode == 0, done.stderr
        assert "› hello" in done.stdout and done.stdout.splitlines()[-1].startswith("PASS — ")
    finally:
        srv.stop(signal.SIGKILL)
