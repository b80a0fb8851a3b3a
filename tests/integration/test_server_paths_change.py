"""A call resolves its project and flow paths afresh: a link retargeted between two calls is seen
by the next call, by the policy's checks as by the run (the server keeps no resolution past a hop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.policy import ServerPolicy

Client = TestClient[Any, Any]


def _project(root: Path, message: str) -> Path:
    flows = root / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "plain.yaml").write_text(f"steps:\n  - echo: {message}\n")
    return root


async def _server(aiohttp_client: Any, tmp_path: Path, allowed: Path) -> Client:
    srv = tmp_path / "server-tmp"
    srv.mkdir()
    config = ServerConfig(tmp_dir=str(srv), policy=ServerPolicy(project_roots=(str(allowed),)))
    return await aiohttp_client(create_app(config))  # type: ignore[no-any-return]


async def _run(client: Client, root: Path) -> tuple[int, Any]:
    resp = await client.post("/tools/flow-execute", json={"name": "plain", "project_root": str(root)})
    return resp.status, await resp.json()


async def test_a_project_root_link_retargeted_between_calls_is_seen(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    allowed = tmp_path / "projects"
    _project(allowed / "a", "from a")
    _project(allowed / "b", "from b")
    outside = _project(tmp_path / "elsewhere", "from outside")
    current = allowed / "current"
    current.symlink_to(allowed / "a")
    client = await _server(aiohttp_client, tmp_path, allowed)

    status, body = await _run(client, current)
    assert status == 200 and [s["message"] for s in body["data"]["steps"]] == ["from a"]
    current.unlink()
    current.symlink_to(allowed / "b")
    status, body = await _run(client, current)
    assert status == 200 and [s["message"] for s in body["data"]["steps"]] == ["from b"]
    current.unlink()
    current.symlink_to(outside)
    status, body = await _run(client, current)
    assert (status, body["error_code"]) == (403, "WORKSPACE_UNSAFE")


async def test_a_flow_file_link_retargeted_between_calls_is_checked_again(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    allowed = tmp_path / "projects"
    project = _project(allowed / "app", "inside")
    _project(allowed / "other", "still inside")
    outside = _project(tmp_path / "elsewhere", "from outside")
    link = project / ".argent" / "flows" / "linked.yaml"
    link.symlink_to(allowed / "other" / ".argent" / "flows" / "plain.yaml")
    client = await _server(aiohttp_client, tmp_path, allowed)
    args = {"name": "linked", "project_root": str(project)}

    resp = await client.post("/tools/flow-execute", json=args)
    body = await resp.json()
    assert resp.status == 200 and [s["message"] for s in body["data"]["steps"]] == ["still inside"]
    link.unlink()
    link.symlink_to(outside / ".argent" / "flows" / "plain.yaml")
    resp = await client.post("/tools/flow-execute", json=args)
    text = await resp.text()
    assert "from outside" not in text and "does not read" in text, text
