"""The recorder over HTTP: where the file lives (the x-argent-linked header, the project_root probe),
client-kept directives applied by the real client, concurrent steps, a read-only flow file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from argent.client.base import ToolCallError
from argent.client.session import ToolServerClient
from argent.flows.parse import parse_flow
from argent.link.codec import to_wire
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.tools.builtin import build_registry
from tests.unit.test_directives import FakeDevice, OneDevice
from tests.unit.test_recording import Env, make_env

Client = TestClient[Any, Any]
EMPTY_FLOW = "steps: []\n"


@pytest.fixture
def env(tmp_path: Path) -> Env:
    root = tmp_path / "proj"
    root.mkdir()
    return make_env(root)


@pytest.fixture
async def http(aiohttp_client: Any, env: Env, tmp_path: Path) -> Client:
    srv = tmp_path / "srv"
    srv.mkdir()
    return await aiohttp_client(create_app(ServerConfig(tmp_dir=str(srv)), env.registry))  # type: ignore[no-any-return]


def probe(path: Path | str) -> dict[str, Any]:
    return {"__argentFileInput": True, "path": str(path)}


async def post(http: Client, tool: str, args: dict[str, Any], *, linked: bool = False) -> tuple[int, Any]:
    headers = {"x-argent-linked": "1"} if linked else {}
    resp = await http.post(f"/tools/{tool}", json=args, headers=headers)
    return resp.status, await resp.json()


def client_for(http: Client, *, linked: bool) -> ToolServerClient:
    return ToolServerClient(str(http.server.make_url("")), None, linked=linked)


async def test_the_listing_declares_the_project_root_probes() -> None:
    entries = {entry.name: to_wire(entry) for entry in build_registry().entries()}
    probe_spec = {"target": "project_root", "path": "${project_root}", "kind": "probe"}
    assert entries["flow-start-recording"]["fileInputs"] == [probe_spec]
    assert entries["flow-add-step"]["fileInputs"] == [{**probe_spec, "collect": "step"}]
    for name in ("flow-add-echo", "flow-add-script", "flow-finish-recording"):
        assert name in entries


async def test_without_the_header_a_root_on_this_host_is_written_here(http: Client, env: Env) -> None:
    status, body = await post(
        http, "flow-start-recording", {"name": "checkout", "project_root": probe(env.root)}
    )
    assert status == 200, body
    path = env.flow("checkout")
    assert body["data"]["savedTo"] == str(path)
    assert path.read_text() == "steps: []\n"


async def test_with_the_header_the_server_writes_nothing(http: Client, env: Env) -> None:
    args = {"name": "checkout", "project_root": probe(env.root)}
    status, body = await post(http, "flow-start-recording", args, linked=True)
    assert status == 200, body
    path = env.flow("checkout")
    assert body["data"]["savedTo"] == {
        "__argentClientFile": True,
        "path": str(path),
        "content": "steps: []\n",
    }
    assert not (env.root / ".argent").exists()
    status, body = await post(
        http, "flow-add-step", {**args, "command": "poke", "args": '{"x":0.5,"y":0.3}'}, linked=True
    )
    assert status == 200, body
    assert (
        body["data"]["savedTo"]["content"]
        == "steps:\n  - tool: poke\n    args:\n      x: 0.5\n      y: 0.3\n"
    )
    assert not (env.root / ".argent").exists()


async def test_without_the_header_a_root_absent_here_is_client_kept(
    http: Client, env: Env, tmp_path: Path
) -> None:
    remote = tmp_path / "on-the-client"
    status, body = await post(
        http, "flow-start-recording", {"name": "checkout", "project_root": probe(remote)}
    )
    assert status == 200, body
    assert body["data"]["savedTo"]["__argentClientFile"] is True
    assert not remote.exists()


async def test_the_real_client_applies_the_directives(http: Client, env: Env) -> None:
    path = env.flow("checkout")
    root = str(env.root)
    async with client_for(http, linked=True) as client:
        out = await client.call("flow-start-recording", {"name": "checkout", "project_root": root})
        assert out["savedTo"] == str(path)
        assert path.read_text() == "steps: []\n"
        path.write_text("# the server never sees this\nsteps: []\n")
        out = await client.call("flow-add-echo", {"name": "checkout", "project_root": root, "message": "hi"})
        assert out["savedTo"] == str(path)
        assert path.read_text() == "steps:\n  - echo: hi\n"
        out = await client.call(
            "flow-add-step",
            {"name": "checkout", "project_root": root, "command": "poke", "args": '{"x":0.1,"y":0.2}'},
        )
        assert out["recorded"] == '2. tool: poke {"x":0.1,"y":0.2}'
        done = await client.call("flow-finish-recording", {"name": "checkout", "project_root": root})
        assert done["savedTo"] == str(path)
        assert done["summary"] == ["1. echo: hi", '2. tool: poke {"x":0.1,"y":0.2}']
    assert len(parse_flow(path.read_text()).steps) == 2


async def test_a_client_without_a_link_records_on_the_host(http: Client, env: Env) -> None:
    async with client_for(http, linked=False) as client:
        out = await client.call("flow-start-recording", {"name": "checkout", "project_root": str(env.root)})
        assert out["savedTo"] == str(env.flow("checkout"))
        out = await client.call(
            "flow-add-echo", {"name": "checkout", "project_root": str(env.root), "message": "hi"}
        )
        assert out["savedTo"] == str(env.flow("checkout"))


async def test_tool_errors_reach_the_client_verbatim(http: Client, env: Env) -> None:
    async with client_for(http, linked=False) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call(
                "flow-add-step",
                {"name": "checkout", "project_root": str(env.root), "command": "poke", "args": "{}"},
            )
    assert info.value.message.startswith(f'No active recording for flow "checkout" in {env.root}. ')
    assert env.tools.calls == []


@pytest.mark.parametrize("linked", [False, True], ids=["host", "client-kept"])
async def test_concurrent_steps_on_one_recording_lose_nothing(http: Client, env: Env, linked: bool) -> None:
    root = str(env.root)
    await post(http, "flow-start-recording", {"name": "checkout", "project_root": root}, linked=linked)
    count = 24

    async def add(i: int) -> Any:
        if i % 3 == 0:
            args: dict[str, Any] = {"name": "checkout", "project_root": root, "message": f"echo {i}"}
            status, body = await post(http, "flow-add-echo", args, linked=linked)
        else:
            step_args = json.dumps({"x": round(i / 100, 2), "y": 0.5})
            args = {"name": "checkout", "project_root": root, "command": "poke", "args": step_args}
            status, body = await post(http, "flow-add-step", args, linked=linked)
        assert status == 200, body
        return i, body["data"]["stepCount"]

    results = await asyncio.gather(*(add(i) for i in range(count)))
    assert sorted(n for _, n in results) == list(range(1, count + 1))
    status, done = await post(
        http, "flow-finish-recording", {"name": "checkout", "project_root": root}, linked=linked
    )
    assert status == 200, done
    if linked:
        assert not (env.root / ".argent").exists()
        text = done["data"]["savedTo"]["content"]
    else:
        text = env.flow("checkout").read_text()
    steps = parse_flow(text).steps
    assert len(steps) == count
    for i, n in results:  # each call's step sits where its stepCount says, whole
        step = steps[n - 1]
        if i % 3 == 0:
            assert step.message == f"echo {i}"  # type: ignore[union-attr]
        else:
            assert step.args == {"x": round(i / 100, 2), "y": 0.5}  # type: ignore[union-attr]
    assert len([name for name, _ in env.tools.calls if name == "poke"]) == count - count // 3


async def test_a_read_only_flow_file_is_refused_over_http(http: Client, env: Env) -> None:
    root = str(env.root)
    await post(http, "flow-start-recording", {"name": "checkout", "project_root": root})
    path = env.flow("checkout")
    path.chmod(0o444)
    status, body = await post(
        http, "flow-add-echo", {"name": "checkout", "project_root": root, "message": "x"}
    )
    assert status == 500
    assert body["error"] == (
        f"Failed to write flow file {path} (EACCES) — {path} is not writable (mode 444). Make it writable "
        f"(chmod u+w {path}) or record under another name."
    )
    assert body["error_code"] == "FLOW_RECORDING_WRITE_FAILED"
    assert path.read_text() == "steps: []\n"


async def test_a_linked_client_sends_the_members_of_a_recorded_step(
    http: Client, env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARGENT_FLOW_FILES_LOG", "1")
    flows = env.root / ".argent" / "flows"
    flows.mkdir(parents=True)
    login = "steps:\n  - echo: signed in\n"
    (flows / "login.yaml").write_text(login)
    root = str(env.root)
    lines: list[str] = []
    async with ToolServerClient(
        str(http.server.make_url("")), None, linked=True, notice=lines.append
    ) as client:
        await client.call("flow-start-recording", {"name": "checkout", "project_root": root})
        args = json.dumps({"name": "login", "project_root": root})
        out = await client.call(
            "flow-add-step",
            {"name": "checkout", "project_root": root, "command": "flow-execute", "args": args},
        )
    assert out["recorded"] == "1. run: login.yaml"
    assert out["toolResult"]["ok"] is True
    assert out["savedTo"] == str(env.flow("checkout"))
    assert env.flow("checkout").read_text() == "steps:\n  - run: login.yaml\n"
    assert lines == [
        f"[flow-files] flow {flows / 'login.yaml'}: inline {len(login)}",
        f"[flow-files] flow {flows / 'checkout.yaml'}: inline {len(EMPTY_FLOW)}",
    ]


async def test_a_script_over_the_link_is_refused_over_http(http: Client, env: Env) -> None:
    args = {"name": "checkout", "project_root": str(env.root)}
    await post(http, "flow-start-recording", args, linked=True)
    status, body = await post(http, "flow-add-script", {**args, "path": "seed.py"}, linked=True)
    assert status == 500
    assert body["error_code"] == "FLOW_RECORDING_REFUSED"
    assert body["error"].startswith("flow-add-script records nothing over a link")


# --------------------------------------------------------------------------------------------
# Seed "Members of a recorded step", on the wire


@pytest.fixture
async def seen_http(
    aiohttp_client: Any, tmp_path: Path
) -> tuple[Client, Env, list[tuple[dict[str, Any], Any]]]:
    """A tool-server with a device for flow runs, noting each POST /tools call's headers and body."""
    root = tmp_path / "proj"
    (root / ".argent" / "flows").mkdir(parents=True)
    env = make_env(root, flow_devices=OneDevice(FakeDevice()))
    srv = tmp_path / "srv"
    srv.mkdir()
    app = create_app(ServerConfig(tmp_dir=str(srv)), env.registry)
    seen: list[tuple[dict[str, Any], Any]] = []

    @web.middleware
    async def note(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.method == "POST" and request.path.startswith("/tools/"):
            seen.append((dict(request.headers), await request.json()))
        return await handler(request)

    app.middlewares.insert(0, note)
    return await aiohttp_client(app), env, seen  # type: ignore[no-any-return]


async def test_the_probe_of_a_recorded_step_carries_members_only_and_the_call_streams(
    seen_http: tuple[Client, Env, list[tuple[dict[str, Any], Any]]],
) -> None:
    """No content, canonical or spelling on the probe; an empty list for a step that reads no
    file; a stream either way; x-argent-linked: 1 on every POST /tools call over the link."""
    http, env, seen = seen_http
    root = str(env.root)
    (env.root / ".argent" / "flows" / "login.yaml").write_text("steps:\n  - echo: in\n")
    async with client_for(http, linked=True) as client:
        await client.call("flow-start-recording", {"name": "checkout", "project_root": root})
        tap = {"name": "checkout", "project_root": root, "command": "poke", "args": '{"x":0.5,"y":0.3}'}
        assert (await client.call("flow-add-step", tap))["recorded"] == '1. tool: poke {"x":0.5,"y":0.3}'
        nested = json.dumps({"name": "login", "project_root": root})
        run = {"name": "checkout", "project_root": root, "command": "flow-execute", "args": nested}
        assert (await client.call("flow-add-step", run))["recorded"] == "2. run: login.yaml"
        await client.call("flow-finish-recording", {"name": "checkout", "project_root": root})
    assert all(headers["x-argent-linked"] == "1" for headers, _ in seen)
    (_, start), (tap_headers, tap_body), (run_headers, run_body), _ = seen
    assert "members" not in start["project_root"]
    assert tap_body["project_root"] == {"__argentFileInput": True, "path": root, "members": []}
    assert set(run_body["project_root"]) == {"__argentFileInput", "path", "members"}
    assert {m["key"].split("\0")[1] for m in run_body["project_root"]["members"]} == {
        "login.yaml",
        "checkout.yaml",
    }
    for headers in (tap_headers, run_headers):
        assert headers["Accept"] == "application/x-ndjson"
        assert headers["Accept-Encoding"] == "identity"


async def test_the_client_writes_the_baselines_a_recorded_step_updated(
    seen_http: tuple[Client, Env, list[tuple[dict[str, Any], Any]]],
) -> None:
    """A recorded flow-execute step with updateBaselines: true: flow-add-step's result carries
    baselineWrites, and the client writes them as for a run; without it, nothing is written."""
    http, env, _ = seen_http
    root = str(env.root)
    flows = env.root / ".argent" / "flows"
    (flows / "login.yaml").write_text("steps:\n  - snapshot: home\n")
    shot = flows / "__baselines__" / "login" / "home__chromium-100x80.png"
    step_args = {"name": "login", "project_root": root, "device": "chromium-cdp-9222"}
    call = {"name": "checkout", "project_root": root, "command": "flow-execute"}
    async with client_for(http, linked=True) as client:
        await client.call("flow-start-recording", {"name": "checkout", "project_root": root})
        updated = await client.call(
            "flow-add-step", {**call, "args": json.dumps({**step_args, "updateBaselines": True})}
        )
        assert updated["baselineWrites"] == [str(shot)]
        written = shot.read_bytes()
        assert written.startswith(b"\x89PNG")
        compared = await client.call("flow-add-step", {**call, "args": json.dumps(step_args)})
    assert "baselineWrites" not in compared
    assert compared["toolResult"]["ok"] is True
    assert shot.read_bytes() == written
    assert [updated["recorded"], compared["recorded"]] == ["1. run: login.yaml", "2. run: login.yaml"]
