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
from tests.hostile.test_shared_devices import ALICE, BOB, call_as, config_file, start_shared_server

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


# --------------------------------------------------------------------------------------------
# A recording this host keeps (a co-located project both tokens may use): one file, one recorder


def host_rec(
    probe: Probe, token: str, tool: str, root: Path, name: str = "rec", **args: Any
) -> tuple[int, Any]:
    return call_as(probe, token, tool, {"name": name, "project_root": str(root), **args})


def test_another_token_cannot_wipe_or_write_into_a_recording_on_this_host(
    shared_server: Probe, project: Path
) -> None:
    """issue 24: bob's flow-start-recording of the file alice records emptied it (`steps: []`), his
    flow-add-step landed in it and alice's finish reported bob's steps as hers."""
    path = project / ".argent" / "flows" / "rec.yaml"
    assert host_rec(shared_server, ALICE, "flow-start-recording", project)[0] == 200
    for message in ("alice one", "alice two"):
        assert host_rec(shared_server, ALICE, "flow-add-echo", project, message=message)[0] == 200
    before = path.read_text()

    status, body = host_rec(shared_server, BOB, "flow-start-recording", project)
    assert status == 409, body
    assert body["error_code"] == "FLOW_RECORDING_CONFLICT"
    assert body["error"] == (
        f'Flow "rec" in {project} is being recorded by another token; nothing was changed. Record under '
        "another name, or start again once that recording is finished."
    )
    status, body = host_rec(shared_server, BOB, "flow-add-echo", project, message="bob's")
    assert status != 200 and body["error_code"] == "FLOW_RECORDING_NOT_ACTIVE", body
    assert path.read_text() == before

    status, body = host_rec(shared_server, ALICE, "flow-finish-recording", project)
    assert status == 200, body
    assert body["data"]["summary"] == ["1. echo: alice one", "2. echo: alice two"]
    shared_server.assert_still_fine()


def test_a_saved_flow_is_restarted_only_by_the_token_that_recorded_it(
    shared_server: Probe, project: Path
) -> None:
    saved = project / ".argent" / "flows" / "smoke.yaml"
    saved.write_text("steps:\n  - echo: a flow the team runs\n")
    status, body = host_rec(shared_server, BOB, "flow-start-recording", project, name="smoke")
    assert status == 409 and body["error_code"] == "FLOW_RECORDING_CONFLICT", body
    assert body["error"].startswith(f'Flow "smoke" in {project} is a saved flow this token did not record;')
    assert "overwrite_flows: true" in body["error"]
    assert saved.read_text() == "steps:\n  - echo: a flow the team runs\n"

    # alice records a fresh one, finishes it, and may take it again; bob may not
    assert host_rec(shared_server, ALICE, "flow-start-recording", project, name="mine")[0] == 200
    assert host_rec(shared_server, ALICE, "flow-finish-recording", project, name="mine")[0] == 200
    assert host_rec(shared_server, ALICE, "flow-start-recording", project, name="mine")[0] == 200
    assert host_rec(shared_server, ALICE, "flow-finish-recording", project, name="mine")[0] == 200
    assert host_rec(shared_server, BOB, "flow-start-recording", project, name="mine")[0] == 409


def test_overwrite_flows_lets_any_token_restart_a_saved_flow(cli: Cli, project: Path, tmp_path: Path) -> None:
    config = config_file(tmp_path, "overwrite_flows: true\n")
    probe = start_probe(cli, project, tmp_path, "--config", str(config), TOKEN_ALICE=ALICE, TOKEN_BOB=BOB)
    probe.server.token = ALICE
    try:
        saved = project / ".argent" / "flows" / "smoke.yaml"
        saved.write_text("steps:\n  - echo: old\n")
        assert host_rec(probe, BOB, "flow-start-recording", project, name="smoke")[0] == 200
        assert saved.read_text() == "steps: []\n"
        # still never into a file another token is recording right now
        assert host_rec(probe, ALICE, "flow-start-recording", project, name="smoke")[0] == 409
    finally:
        probe.server.stop()
