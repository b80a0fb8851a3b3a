"""flow-execute and flow-read-prerequisite over HTTP: flow_path must come through the file-input boundary.

The tool-server is the pytest plugin's ``argent_server`` (the real app on a loopback socket, with a
token), asked with a plain aiohttp session as any HTTP client would.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession

from argent.testing.fixtures import ArgentServer

BOUNDARY = "explicit flow paths must be supplied through the flow_path file-input boundary"


@pytest.fixture
async def client(argent_server: ArgentServer) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {argent_server.token}"}
    async with ClientSession(base_url=argent_server.url, headers=headers) as session:
        yield session


@pytest.fixture
def flow_file(tmp_path: Path) -> Path:
    f = tmp_path / "elsewhere" / "out-of-project.yaml"
    f.parent.mkdir()
    f.write_text("executionPrerequisite: logged in\nsteps:\n  - echo: hi\n  - wait: 1\n")
    return f


def wrapper(path: Path | str, **extra: Any) -> dict[str, Any]:
    return {"__argentFileInput": True, "path": str(path), **extra}


def full_stat(path: Path) -> dict[str, Any]:
    st = path.stat()
    return {"size": st.st_size, "mtimeMs": st.st_mtime_ns / 1e6}


async def post(client: ClientSession, tool: str, args: dict[str, Any]) -> tuple[int, Any]:
    resp = await client.post(f"/tools/{tool}", json=args)
    return resp.status, await resp.json()


@pytest.mark.parametrize("which", ["none", "size", "mtime"])
async def test_statless_or_partial_wrappers_hit_the_boundary(
    client: ClientSession, flow_file: Path, tmp_path: Path, which: str
) -> None:
    stat = full_stat(flow_file)
    extra = {"none": {}, "size": {"size": stat["size"]}, "mtime": {"mtimeMs": stat["mtimeMs"]}}[which]
    status, body = await post(
        client, "flow-execute", {"flow_path": wrapper(flow_file, **extra), "project_root": str(tmp_path)}
    )
    assert status == 500
    assert BOUNDARY in body["error"]
    assert body["error_code"] == "FLOW_FILE_INVALID"


async def test_a_plain_string_flow_path_hits_the_boundary(
    client: ClientSession, flow_file: Path, tmp_path: Path
) -> None:
    status, body = await post(
        client, "flow-execute", {"flow_path": str(flow_file), "project_root": str(tmp_path)}
    )
    assert status == 500
    assert BOUNDARY in body["error"]


async def test_verified_wrapper_runs_the_flow(client: ClientSession, flow_file: Path, tmp_path: Path) -> None:
    args = {
        "flow_path": wrapper(flow_file, **full_stat(flow_file)),
        "project_root": str(tmp_path),
        "prerequisiteAcknowledged": True,
    }
    status, body = await post(client, "flow-execute", args)
    assert status == 200, body
    data = body["data"]
    assert data["flow"] == "out-of-project"
    assert data["ok"] is True
    assert [s["status"] for s in data["steps"]] == ["pass", "pass"]


async def test_relative_flow_path_with_full_stat_says_absolute(
    client: ClientSession, flow_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(flow_file.parent)
    rel = Path("out-of-project.yaml")
    status, body = await post(
        client,
        "flow-execute",
        {"flow_path": wrapper(rel, **full_stat(flow_file)), "project_root": str(tmp_path)},
    )
    assert status == 500
    assert "must be absolute" in body["error"]
    assert BOUNDARY not in body["error"]


@pytest.mark.parametrize("root", ["relative/root", "/abs/../root"])
async def test_bad_project_root_on_the_flow_path_branch(
    client: ClientSession, flow_file: Path, root: str
) -> None:
    status, body = await post(
        client,
        "flow-execute",
        {"flow_path": wrapper(flow_file, **full_stat(flow_file)), "project_root": root},
    )
    assert status == 500
    assert body["error_code"] == "FLOW_PROJECT_ROOT_INVALID"


@pytest.mark.parametrize("ghost", [True, False])
async def test_name_and_flow_path_is_400_exactly_one(
    client: ClientSession, flow_file: Path, tmp_path: Path, ghost: bool
) -> None:
    path = tmp_path / "ghost.yaml" if ghost else flow_file
    args = {"name": "x", "flow_path": wrapper(path), "project_root": str(tmp_path)}
    status, body = await post(client, "flow-execute", args)
    assert status == 400
    assert body["error"] == "Pass exactly one flow source: name or flow_path."


async def test_neither_source_is_400(client: ClientSession, tmp_path: Path) -> None:
    status, body = await post(client, "flow-execute", {"project_root": str(tmp_path)})
    assert status == 400
    assert body["error"] == "Pass exactly one flow source: name or flow_path."


async def test_lone_flow_path_that_does_not_resolve_is_422(client: ClientSession, tmp_path: Path) -> None:
    status, body = await post(
        client, "flow-execute", {"flow_path": wrapper(tmp_path / "nope.yaml"), "project_root": str(tmp_path)}
    )
    assert status == 422
    assert "was not found on the tool-server host" in body["error"]


async def test_read_prerequisite_answers_for_the_verified_file(
    client: ClientSession, flow_file: Path, tmp_path: Path
) -> None:
    saved = tmp_path / ".argent" / "flows"
    saved.mkdir(parents=True)
    (saved / "out-of-project.yaml").write_text("executionPrerequisite: the saved one\nsteps: []\n")
    status, body = await post(
        client,
        "flow-read-prerequisite",
        {"flow_path": wrapper(flow_file, **full_stat(flow_file)), "project_root": str(tmp_path)},
    )
    assert status == 200
    assert body["data"] == {"flow": "out-of-project", "executionPrerequisite": "logged in"}
    status, body = await post(
        client, "flow-read-prerequisite", {"flow_path": wrapper(flow_file), "project_root": str(tmp_path)}
    )
    assert status == 500 and BOUNDARY in body["error"]
    status, body = await post(
        client, "flow-read-prerequisite", {"name": "out-of-project", "project_root": str(tmp_path)}
    )
    assert status == 200
    assert body["data"]["executionPrerequisite"] == "the saved one"


async def test_unacknowledged_prerequisite_returns_the_notice(client: ClientSession, tmp_path: Path) -> None:
    saved = tmp_path / ".argent" / "flows"
    saved.mkdir(parents=True)
    (saved / "pre.yaml").write_text("executionPrerequisite: the cart is empty\nsteps:\n  - echo: x\n")
    status, body = await post(client, "flow-execute", {"name": "pre", "project_root": str(tmp_path)})
    assert status == 200
    assert json.dumps(body["data"]).count("prerequisite") >= 1
    assert body["data"]["executionPrerequisite"] == "the cart is empty"
    assert "steps" not in body["data"]
