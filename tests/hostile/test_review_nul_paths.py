"""A path holding a NUL character (a JSON string may: ``"\\u0000"``) names nothing on any host: a
token holder who sends one as a project root, a flow file's wrapper or a plain flow path gets a
refusal with its code, never the server's 500 with a traceback in its log."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.conftest import Probe

FLOW = b"steps:\n  - echo: hi\n"


def flow_project(probe: Probe) -> Path:
    flows = probe.project / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / "a.yaml").write_bytes(FLOW)
    return probe.project


def wrapper(path: str, *, content: bool) -> dict[str, Any]:
    wire: dict[str, Any] = {"__argentFileInput": True, "path": path}
    if content:
        wire["content"] = base64.b64encode(FLOW).decode()
    return wire


@pytest.mark.parametrize(
    "where",
    ["project_root", "wrapper", "wrapper_with_content", "plain_flow_file"],
)
def test_a_path_with_a_nul_is_answered_not_a_server_error(hostile_server: Probe, where: str) -> None:
    root = str(flow_project(hostile_server))
    flow = f"{root}/.argent/flows/a.yaml"
    args: dict[str, Any] = {"name": "a", "project_root": root}
    if where == "project_root":
        args["project_root"] = root + "\0"
    elif where == "plain_flow_file":
        args["flow_file"] = flow + "\0"
    else:
        args["flow_file"] = wrapper(flow + "\0x", content=where == "wrapper_with_content")
    status, body = hostile_server.call("flow-execute", args)
    # A refusal with its code (a flow_file that is not the named flow's path is FLOW_FILE_INVALID,
    # HTTP 500 like upstream, by design), never the answer of an unexpected exception.
    assert "Internal error" not in body["error"], (status, body)
    assert status != 500 or body.get("error_code") == "FLOW_FILE_INVALID", (status, body)
    hostile_server.assert_healthy()
    hostile_server.server.proc.kill()
    _out, err = hostile_server.server.proc.communicate(timeout=10)
    assert "Traceback" not in err, err[-2000:]
