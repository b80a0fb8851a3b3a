"""A real `argent server start` process driven by the real CLI over a link."""

from __future__ import annotations

import json
import os
import re
import signal
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, ServerProcess, read_until, start_server_process

pytestmark = pytest.mark.e2e


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def linked(server: ServerProcess, token: str | None = None) -> dict[str, str]:
    return {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token if token is None else token}


def test_banner_is_exact_and_the_port_is_real(server: ServerProcess) -> None:
    assert re.fullmatch(r"Tools server listening on http://127\.0\.0\.1:\d+", server.banner[0])
    port = server.url.rsplit(":", 1)[1]
    assert port != "0"
    assert server.banner[1] == f"argent link argent://{server.token}@127.0.0.1:{port}"
    assert len(server.token) == 64
    with urllib.request.urlopen(f"{server.url}/healthz", timeout=5) as resp:
        assert json.loads(resp.read())["ok"] is True


def test_token_from_the_environment_and_no_auth(cli: Cli) -> None:
    proc = start_server_process(cli, ARGENT_AUTH_TOKEN="from-env")
    try:
        assert proc.token == "from-env"
    finally:
        proc.stop()
    open_server = start_server_process(cli, "--no-auth")
    try:
        assert len(open_server.banner) == 1
        with urllib.request.urlopen(f"{open_server.url}/tools", timeout=5) as resp:
            assert resp.status == 200
    finally:
        assert open_server.stop() == 0


def test_a_wildcard_bind_prints_a_link_line_a_client_can_use(cli: Cli, project: Path) -> None:
    srv = start_server_process(cli, "--host", "0.0.0.0")
    try:
        port = srv.url.rsplit(":", 1)[1]
        assert srv.banner[0] == f"Tools server listening on http://0.0.0.0:{port}"
        command, _, target = srv.banner[1].partition(" ")
        host = target.split("@", 1)[1].rsplit(":", 1)[0]
        assert (command, target) == ("argent", f"link argent://{srv.token}@{host}:{port}")
        assert host not in ("0.0.0.0", "") and not host.startswith("[")
        linked_now = cli.run(*target.split(" "))
        assert linked_now.returncode == 0, linked_now.stderr
        write(project / ".argent" / "flows" / "hi.yaml", "steps:\n  - echo: hi\n  - wait: 1\n")
        done = cli.run("flow", "run", "hi")
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "PASS — 1 passed, 0 failed, 0 skipped, 0 errored"
    finally:
        assert srv.stop() == 0


def test_flow_run_over_a_link_streams_and_passes(cli: Cli, project: Path, server: ServerProcess) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "linked.yaml", "steps:\n  - echo: over the link\n  - wait: 5\n")
    done = cli.run("flow", "run", "linked", **linked(server))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "PASS — 1 passed, 0 failed, 0 skipped, 0 errored"


def test_wrong_token_fails_with_the_servers_message(cli: Cli, project: Path, server: ServerProcess) -> None:
    write(project / ".argent" / "flows" / "x.yaml", "steps: []\n")
    done = cli.run("flow", "run", "x", **linked(server, token="nope"))
    assert done.returncode == 1
    assert "Authorization: Bearer <token>" in done.stderr
    assert "Traceback" not in done.stderr


def test_unreachable_server_is_a_clear_error(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "x.yaml", "steps: []\n")
    done = cli.run("flow", "run", "x", ARGENT_TOOLS_URL="http://127.0.0.1:9", ARGENT_AUTH_TOKEN="t")
    assert done.returncode == 1
    assert "http://127.0.0.1:9" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("tools", "list"),
        ("tools", "show", "flow-execute"),
        ("tools", "search", "flow"),
        ("run", "list-devices"),
    ],
)
def test_discovery_and_run_without_a_reachable_server_are_one_error_line(
    cli: Cli, server: ServerProcess, command: tuple[str, ...]
) -> None:
    refused = cli.run(*command, **linked(server, token="nope"))
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert refused.stderr == (
        f"Error: GET {server.url}/tools failed: 401 Unauthorized: Missing or invalid Authorization header. "
        "Tool-server requires `Authorization: Bearer <token>` where <token> is the token `argent server start` "
        "printed (argent link argent://<token>@<host>:<port>).\n"
        "The token comes from ARGENT_AUTH_TOKEN: set it to the token `argent server start` printed.\n"
    )
    down = cli.run(*command, ARGENT_TOOLS_URL="http://127.0.0.1:9", ARGENT_AUTH_TOKEN="t")
    assert down.returncode == 1
    assert down.stderr == (
        "Error: Could not reach the tool-server at http://127.0.0.1:9 (connection refused). ARGENT_TOOLS_URL "
        "routes calls there. Start the tool-server on that machine (argent server start), correct "
        "ARGENT_TOOLS_URL, or unset it (or pass --local) to run on an embedded tool-server.\n"
    )


def test_server_killed_mid_stream(cli: Cli, project: Path, server: ServerProcess) -> None:
    write(
        project / ".argent" / "flows" / "slow.yaml",
        "steps:\n  - echo: started\n  - wait: 20000\n  - echo: never\n",
    )
    run = cli.spawn("flow", "run", "slow", **linked(server))
    assert run.stdout is not None and run.stderr is not None
    read_until(run.stdout, lambda line: "started" in line)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=10)
    code = run.wait(timeout=30)
    err = run.stderr.read()
    assert code == 1
    assert "The connection to the tool-server closed before flow-execute finished (" in err
    assert err.rstrip().endswith("The tool may have run; check its effect before you run it again.")


def test_sigterm_aborts_running_flows_and_exits_0(cli: Cli, project: Path, server: ServerProcess) -> None:
    write(
        project / ".argent" / "flows" / "slow.yaml",
        "steps:\n  - echo: started\n  - wait: 20000\n  - echo: after\n  - wait: 5\n",
    )
    run = cli.spawn("flow", "run", "slow", **linked(server))
    assert run.stdout is not None
    # The first step's progress line: the call runs on the server (no sleeping until it might).
    assert read_until(run.stdout, lambda line: "started" in line) == ['Flow "slow"', "  › started"]
    t0 = time.monotonic()
    assert server.stop(signal.SIGTERM) == 0
    assert time.monotonic() - t0 < 15
    out, err = run.communicate(timeout=30)
    assert out.splitlines() == [
        "  ·  2 wait — run aborted during wait",
        "  · › after — run aborted",
        "  ·  4 wait — run aborted",
        "",
        "FAIL — 0 passed, 0 failed, 2 skipped, 0 errored",
    ], err
    assert run.returncode == 1


def test_no_uploads_left_after_shutdown(cli: Cli, tmp_path: Path) -> None:
    tmp = tmp_path / "srv-tmp"
    tmp.mkdir()
    srv = start_server_process(cli, TMPDIR=str(tmp))
    try:
        req = urllib.request.Request(
            f"{srv.url}/upload",
            data=b"\x1f\x8b" + b"x" * 1000,
            headers={"Authorization": f"Bearer {srv.token}", "Content-Type": "application/gzip"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert "uploadId" in json.loads(resp.read())
        assert any(name.startswith("argent-upload-") for name in os.listdir(tmp))
    finally:
        assert srv.stop(signal.SIGTERM) == 0
    assert os.listdir(tmp) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_sent_as_soon_as_the_banner_is_read_stops_gracefully(cli: Cli, sig: int) -> None:
    for _ in range(5):
        srv = start_server_process(cli)
        srv.proc.send_signal(sig)
        assert srv.proc.wait(timeout=30) == 0
        assert srv.proc.stderr is not None and "Aborted" not in srv.proc.stderr.read()
