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
from tests.hostile.test_shared_devices import ALICE, BOB, call_as, config_file

ROOT = "/nonexistent-on-the-server/shop"
NAME = "checkout"


@pytest.fixture
def shared_server(cli: Cli, project: Path, tmp_path: Path) -> Iterator[Probe]:
    probe = start_probe(
        cli, project, tmp_path, "--config", str(config_file(tmp_path)), TOKEN_ALICE=ALICE, TOKEN_BOB=BOB
    )
    probe.server.token = ALICE
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
