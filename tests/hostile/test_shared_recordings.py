"""Recordings on a shared tool-server, attacked by another named token.

A recording is addressed by name and project_root; over a link project_root is only a key, so another
token that knows (or guesses: `/builds/app`, `/home/ci/proj`) both could add steps to it, read it by
finishing it, restart it, or evict it by starting many. Each token's recordings are its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from argent.tools.recording_sessions import MAX_LIVE_RECORDINGS
from tests.e2e.conftest import Cli
from tests.hostile.conftest import Probe, start_probe
from tests.hostile.test_shared_devices import ALICE, BOB, call_as, start_shared_server

ROOT = "/nonexistent-on-the-server/shop"
NAME = "checkout"


@pytest.fixture
def shared_server(cli: Cli, project: Path, tmp_path: Path) -> Iterator[Probe]:
    probe = start_shared_server(cli, project, tmp_path)
    yield probe
    probe.server.stop()


def rec(probe: Probe, token: str, tool: str, **args: Any) -> tuple[int, Any]:
    return call_as(probe, token, tool, {"name": NAME, "project_root": ROOT, **args})


def test_another_token_neither_reads_nor_writes_nor_restarts_a_recording(shared_server: Probe) -> None:
    status, body = rec(shared_server, ALICE, "flow-start-recording")
    assert status == 200, body
    assert rec(shared_server, ALICE, "flow-add-echo", message="alice step")[0] == 200

    status, body = rec(shared_server, BOB, "flow-add-echo", message="injected by bob")
    assert status != 200 and body["error_code"] == "FLOW_RECORDING_NOT_ACTIVE", body
    assert "checkout" not in body["error"].split("Active recordings:")[1], body
    status, body = rec(shared_server, BOB, "flow-finish-recording")
    assert status != 200 and body["error_code"] == "FLOW_RECORDING_NOT_ACTIVE", body
    assert "alice step" not in str(body)

    # bob's own recording of the same name is his, and leaves alice's as it was
    assert rec(shared_server, BOB, "flow-start-recording")[0] == 200
    assert rec(shared_server, BOB, "flow-add-echo", message="bob's own")[0] == 200

    assert rec(shared_server, ALICE, "flow-add-echo", message="alice again")[0] == 200
    status, body = rec(shared_server, ALICE, "flow-finish-recording")
    assert status == 200, body
    text = str(body)
    assert "alice step" in text and "alice again" in text and "bob" not in text, body
    status, body = rec(shared_server, BOB, "flow-finish-recording")
    assert status == 200 and "bob's own" in str(body) and "alice" not in str(body), body
    shared_server.assert_still_fine()


def test_another_tokens_recordings_never_evict_one(shared_server: Probe) -> None:
    assert rec(shared_server, ALICE, "flow-start-recording")[0] == 200
    for i in range(MAX_LIVE_RECORDINGS + 1):
        status, body = call_as(
            shared_server, BOB, "flow-start-recording", {"name": f"r{i}", "project_root": ROOT}
        )
        assert status == 200, body
    status, body = rec(shared_server, ALICE, "flow-add-echo", message="still mine")
    assert status == 200, body


@pytest.mark.parametrize("linked", [".argent/flows", ".argent"])
def test_a_recording_never_writes_through_a_link_out_of_the_project_roots(
    cli: Cli, project: Path, tmp_path: Path, linked: str
) -> None:
    """A checkout under project_roots whose `.argent` (or `.argent/flows`) links elsewhere: the recorder
    would write `<name>.yaml` there, outside every project root (another project's flows, a dot-dir)."""
    roots, outside = tmp_path / "roots", tmp_path / "outside"
    checkout = roots / "checkout"
    outside.mkdir()
    link = checkout / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside / "flows" if linked == ".argent" else outside, target_is_directory=True)
    if linked == ".argent":
        (outside / "flows").mkdir()
    config = tmp_path / "server.yaml"
    config.write_text(
        f"tokens:\n  - name: alice\n    token_env: TOKEN_ALICE\n    tools: ['*']\nproject_roots: [{roots}]\n"
    )
    probe = start_probe(cli, project, tmp_path, "--config", str(config), TOKEN_ALICE=ALICE)
    probe.server.token = ALICE
    try:
        status, body = probe.call("flow-start-recording", {"name": "planted", "project_root": str(checkout)})
        assert status == 403 and body["error_code"] == "WORKSPACE_UNSAFE", body
        assert list(outside.rglob("*.yaml")) == []
        (roots / "fine" / ".argent" / "flows").mkdir(parents=True)
        status, body = probe.call("flow-start-recording", {"name": "ok", "project_root": str(roots / "fine")})
        assert status == 200, body
        assert (roots / "fine" / ".argent" / "flows" / "ok.yaml").is_file()
    finally:
        probe.server.stop()
