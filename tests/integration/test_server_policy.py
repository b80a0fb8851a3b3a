"""A shared tool-server's policy over real HTTP (INTERFACE section 9): web origins, JSON bodies, named
tokens and their guard, concurrent calls per token, unsafe workspaces and project roots, files a tool
reads on the server, local flows and scripts. Every refusal is proven to have run nothing."""

from __future__ import annotations

import asyncio
import base64
import gzip
import io
import json
import os
import pwd
import tarfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from argent.runner.budget import STEP_BUDGET_EXCEEDED
from argent.runner.engine import Run
from argent.runner.script import exec_script
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.keys import CONFIG
from argent.server.policy import ServerPolicy, TokenRule
from argent.tools.args import arg
from argent.tools.builtin import build_registry
from argent.tools.call_policy import CallPolicy
from argent.tools.invoker import RegistryInvoker
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec

Client = TestClient[Any, Any]
CI_TOKEN = "ci-token-0123456789abcdef"
DEV_TOKEN = "dev-token-0123456789abcdef"
REC_TOKEN = "rec-token-0123456789abcdef"
ONE_TOKEN = "one-token-0123456789abcdef"
LINKED = {"x-argent-linked": "1"}
STREAM = {"Accept": "application/x-ndjson"}
PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# --------------------------------------------------------------------------------------------
# The server: the built-in tools plus two that prove what ran


@attrs.frozen
class NoArgs:
    pass


@attrs.frozen
class HoldArgs:
    tag: str = arg("", doc="Which call this is.")


class Ran:
    """What the test tools did."""

    def __init__(self) -> None:
        self.notes = 0
        self.holding: list[str] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()


def registry_with(ran: Ran) -> ToolRegistry:
    from argent.devices.chromium.provider import ChromiumDeviceProvider

    registry = build_registry(devices=ChromiumDeviceProvider())

    async def note(args: NoArgs, ctx: ToolContext) -> Any:
        ran.notes += 1
        return {"noted": ran.notes}

    async def hold(args: HoldArgs, ctx: ToolContext) -> Any:
        ran.holding.append(args.tag)
        ran.started.set()
        await ran.release.wait()
        return {"held": args.tag}

    registry.register(ToolSpec(name="note", description="Counts.", args_type=NoArgs, execute=note))
    registry.register(ToolSpec(name="hold", description="Waits.", args_type=HoldArgs, execute=hold))
    return registry


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server user's $HOME for this test (its passwd entry stays the real one)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def ran() -> Ran:
    return Ran()


Make = Callable[..., Awaitable[Client]]


@pytest.fixture
def make(aiohttp_client: Any, tmp_path: Path, ran: Ran, home: Path) -> Make:
    async def build(*, token: str | None = None, **policy: Any) -> Client:
        srv = tmp_path / "server-tmp"
        srv.mkdir(exist_ok=True)
        config = ServerConfig(token=token, tmp_dir=str(srv), policy=ServerPolicy(**policy))
        return await aiohttp_client(create_app(config, registry_with(ran)))  # type: ignore[no-any-return]

    return build


TOKENS = (
    TokenRule("ci", CI_TOKEN, ("flow-execute", "flow-read-prerequisite")),
    TokenRule("dev", DEV_TOKEN, ("*",)),
    TokenRule("rec", REC_TOKEN, ("flow-*",)),
)


# --------------------------------------------------------------------------------------------
# A project on disk whose script, if it ever ran, leaves a file


@attrs.frozen
class Project:
    root: Path
    marker: Path

    @property
    def flows(self) -> Path:
        return self.root / ".argent" / "flows"

    def flow(self, name: str, *steps: str) -> Path:
        path = self.flows / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("steps:\n" + "".join(f"  - {step}\n" for step in steps))
        return path


def make_project(root: Path) -> Project:
    marker = root.parent / f"{root.name}-script-ran"
    project = Project(root, marker)
    project.flows.mkdir(parents=True, exist_ok=True)
    (project.flows / "mark.sh").write_text(f'#!/bin/sh\ntouch "{marker}"\n')
    project.flow("scripted", "echo: before", "script: mark.sh")
    project.flow("fragment", "echo: in the fragment", "script: mark.sh")
    project.flow("indirect", "echo: first", "run: fragment.yaml")
    project.flow("plain", "echo: hello")
    project.flow("noting", "tool: note")
    return project


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return make_project(tmp_path / "proj")


async def post(
    client: Client, tool: str, args: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    resp = await client.post(f"/tools/{tool}", json=args, headers=headers or {})
    return resp.status, await resp.json()


def crafted_link_call(root: str, main: str) -> dict[str, Any]:
    """flow-execute as a client over a link sends it: the flow and its (no) members."""
    path = f"{root.rstrip('/')}/.argent/flows/main.yaml"
    wire = {
        "__argentFileInput": True,
        "path": path,
        "content": base64.b64encode(main.encode()).decode(),
        "canonical": path,
        "spelling": {"state": "listed"},
        "members": [],
    }
    return {"project_root": root, "name": "main", "flow_file": wire}


# --------------------------------------------------------------------------------------------
# 2. Web origins and JSON bodies, in every mode

FOREIGN = (
    'Refusing a request from the web origin "{origin}": a page in a browser may not drive the tool-server. '
    "Call it from the argent CLI, an MCP adapter or a script (they send no Origin header)."
)


@pytest.mark.parametrize("mode", ["no-auth", "token", "named tokens"])
@pytest.mark.parametrize("origin", ["http://evil.example", "null", "https://evil.example:3001", "garbage"])
async def test_a_foreign_origin_is_refused_in_every_mode_and_runs_nothing(
    make: Make, proj: Project, mode: str, origin: str
) -> None:
    if mode == "no-auth":
        client, auth = await make(), {}
    elif mode == "token":
        client, auth = await make(token=ONE_TOKEN), bearer(ONE_TOKEN)
    else:
        client, auth = await make(tokens=TOKENS), bearer(DEV_TOKEN)
    headers = {**auth, "Origin": origin}
    args = {"name": "scripted", "project_root": str(proj.root)}
    for resp in (
        await client.post("/tools/flow-execute", json=args, headers=headers),
        await client.post(
            "/tools/flow-execute", data=json.dumps(args), headers={**headers, "Content-Type": "text/plain"}
        ),
        await client.get("/tools", headers=headers),
    ):
        assert resp.status == 403
        assert await resp.json() == {"error": FOREIGN.format(origin=origin), "error_code": "ORIGIN_REFUSED"}
    assert not proj.marker.exists()


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost", "http://[::1]:{port}"])
async def test_an_origin_whose_host_the_server_accepts_as_host_passes(make: Make, origin: str) -> None:
    client = await make()
    port = client.server.port
    assert (await client.get("/tools", headers={"Origin": origin.format(port=port)})).status == 200


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{other}", "http://localhost:{other}", "http://[::1]:9"])
async def test_a_page_on_another_port_of_this_machine_is_a_foreign_origin(make: Make, origin: str) -> None:
    client = await make()
    other = client.server.port + 1
    resp = await client.get("/tools", headers={"Origin": origin.format(other=other)})
    assert resp.status == 403
    assert (await resp.json())["error_code"] == "ORIGIN_REFUSED"


async def test_a_wildcard_bind_reads_an_ipv6_host_and_origin(
    aiohttp_client: Any, tmp_path: Path, ran: Ran
) -> None:
    config = ServerConfig(host="0.0.0.0", token=ONE_TOKEN, tmp_dir=str(tmp_path))
    client = await aiohttp_client(create_app(config, registry_with(ran)))
    same = {**bearer(ONE_TOKEN), "Host": "[fd00::1]:3001", "Origin": "http://[fd00::1]:3001"}
    assert (await client.get("/tools", headers=same)).status == 200
    other = {**same, "Origin": "http://[fd00::2]:3001"}
    assert (await client.get("/tools", headers=other)).status == 403


async def raw_request(client: Client, request: bytes) -> bytes:
    """The whole answer to ``request`` written as is on a socket of its own."""
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_a_token_of_bytes_that_are_not_utf8_is_refused_like_any_wrong_token(make: Make) -> None:
    """aiohttp reads such a header with surrogate escapes; the comparison must not fail on them."""
    client = await make(tokens=TOKENS)
    answer = await raw_request(
        client,
        b"GET /tools HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \xff\xfe-token\r\n"
        b"Connection: close\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]


async def test_two_origin_headers_are_refused(make: Make) -> None:
    client = await make()
    port = client.server.port
    headers = [("Origin", f"http://127.0.0.1:{port}"), ("Origin", "http://evil.example")]
    resp = await client.get("/tools", headers=headers)
    assert resp.status == 403


async def test_a_wildcard_bind_accepts_only_the_origin_of_the_host_the_request_names(
    aiohttp_client: Any, tmp_path: Path, ran: Ran
) -> None:
    config = ServerConfig(host="0.0.0.0", token=ONE_TOKEN, tmp_dir=str(tmp_path))
    client = await aiohttp_client(create_app(config, registry_with(ran)))
    same = {**bearer(ONE_TOKEN), "Host": "tools.example:3001", "Origin": "https://tools.example"}
    assert (await client.get("/tools", headers=same)).status == 200
    other = {**same, "Origin": "https://evil.example"}
    assert (await client.get("/tools", headers=other)).status == 403


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
async def test_a_cross_site_simple_post_without_auth_runs_nothing(
    make: Make, proj: Project, content_type: str | None
) -> None:
    client = await make()
    body = json.dumps({"name": "scripted", "project_root": str(proj.root)})
    headers = {"Content-Type": content_type} if content_type else {}
    resp = await client.post("/tools/flow-execute", data=body.encode(), headers=headers)
    assert resp.status == 415
    got = content_type or "application/octet-stream"
    assert await resp.json() == {
        "error": "POST /tools/flow-execute takes a JSON object of tool arguments: send it with Content-Type: "
        f'application/json (got "{got}").',
        "error_code": "BODY_NOT_JSON",
    }
    assert not proj.marker.exists()
    # The same flow with a JSON body runs its script: the refusal above is what stopped it.
    status, out = await post(client, "flow-execute", json.loads(body))
    assert status == 200 and out["data"]["ok"] is True
    assert proj.marker.exists()


async def test_json_with_a_charset_is_json(make: Make, proj: Project) -> None:
    client = await make()
    body = json.dumps({"name": "plain", "project_root": str(proj.root)})
    resp = await client.post(
        "/tools/flow-execute", data=body, headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert resp.status == 200


async def test_upload_keeps_its_gzip_body(make: Make) -> None:
    client = await make(token=ONE_TOKEN)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("a.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    resp = await client.post(
        "/upload",
        data=gzip.compress(buf.getvalue()),
        headers={**bearer(ONE_TOKEN), "Content-Type": "application/gzip"},
    )
    assert resp.status == 200
    assert "uploadId" in await resp.json()


# --------------------------------------------------------------------------------------------
# Named tokens and the guard of each


NOT_ALLOWED = 'tool "{tool}" is not allowed: guard "token:{name}" did not pass'


@pytest.mark.parametrize("headers", [{}, STREAM])
async def test_a_tool_outside_the_tokens_tools_is_refused_with_the_guard_sentence_and_runs_nothing(
    make: Make, proj: Project, headers: dict[str, str]
) -> None:
    client = await make(tokens=TOKENS)
    args = {"name": "rec", "project_root": str(proj.root)}
    status, body = await post(client, "flow-start-recording", args, {**bearer(CI_TOKEN), **headers})
    assert status == 403
    assert body == {
        "error": NOT_ALLOWED.format(tool="flow-start-recording", name="ci"),
        "error_code": "TOOL_NOT_ALLOWED",
    }
    assert not (proj.flows / "rec.yaml").exists()
    status, body = await post(client, "note", {}, bearer(CI_TOKEN))
    assert (status, body["error"]) == (403, NOT_ALLOWED.format(tool="note", name="ci"))
    # The tokens that may call them do.
    assert (await post(client, "note", {}, bearer(DEV_TOKEN)))[0] == 200
    assert (await post(client, "flow-start-recording", args, bearer(REC_TOKEN)))[0] == 200
    assert (proj.flows / "rec.yaml").exists()


async def test_a_refused_call_reads_no_body_and_takes_no_upload(make: Make) -> None:
    client = await make(tokens=TOKENS)
    resp = await client.post(
        "/tools/note",
        data=b"{not even json",
        headers={**bearer(CI_TOKEN), "Content-Type": "application/json"},
    )
    assert resp.status == 403
    assert (await resp.json())["error_code"] == "TOOL_NOT_ALLOWED"


async def test_an_unknown_tool_is_still_404_for_a_named_token(make: Make) -> None:
    client = await make(tokens=TOKENS)
    assert await post(client, "nope", {}, bearer(CI_TOKEN)) == (404, {"error": 'Tool "nope" not found'})


async def test_the_listing_keeps_a_refused_tool_disabled_with_what_it_needs(make: Make) -> None:
    client = await make(tokens=TOKENS)
    resp = await client.get("/tools", headers=bearer(CI_TOKEN))
    tools = {t["name"]: t for t in (await resp.json())["tools"]}
    assert "disabled" not in tools["flow-execute"] and "disabled" not in tools["flow-read-prerequisite"]
    assert tools["note"]["disabled"] == {
        "reason": 'needs a token whose tools include "note" (guard "token:ci" did not pass; this token may call: '
        "flow-execute, flow-read-prerequisite)"
    }
    assert "flow-start-recording" in tools and "disabled" in tools["flow-start-recording"]
    resp = await client.get("/tools", headers=bearer(DEV_TOKEN))
    dev = {t["name"]: t for t in (await resp.json())["tools"]}
    assert dev.keys() == tools.keys()
    assert "disabled" not in dev["note"]


@pytest.mark.parametrize("token", ["", "wrong", ONE_TOKEN, CI_TOKEN + "x", CI_TOKEN[:-1]])
async def test_only_a_named_token_authenticates(make: Make, token: str) -> None:
    client = await make(tokens=TOKENS, token=None)
    for method, path in (("GET", "/tools"), ("POST", "/tools/note"), ("POST", "/upload")):
        resp = await client.request(method, path, headers=bearer(token) if token else {})
        assert resp.status == 401
        assert "Authorization: Bearer <token>" in (await resp.json())["error"]
    assert (await client.get("/healthz")).status == 200


async def test_a_tool_step_of_a_run_obeys_the_callers_guard(make: Make, proj: Project, ran: Ran) -> None:
    client = await make(tokens=TOKENS)
    status, body = await post(
        client, "flow-execute", {"name": "noting", "project_root": str(proj.root)}, bearer(CI_TOKEN)
    )
    assert status == 200
    step = body["data"]["steps"][0]
    assert (step["status"], step["reason"]) == ("error", NOT_ALLOWED.format(tool="note", name="ci"))
    assert ran.notes == 0
    status, body = await post(
        client, "flow-execute", {"name": "noting", "project_root": str(proj.root)}, bearer(DEV_TOKEN)
    )
    assert body["data"]["ok"] is True and ran.notes == 1


async def test_a_tool_step_over_a_link_obeys_the_callers_guard(make: Make, ran: Ran) -> None:
    client = await make(tokens=TOKENS)
    body = crafted_link_call("/client/proj", "steps:\n  - tool: note\n")
    status, out = await post(client, "flow-execute", body, {**bearer(CI_TOKEN), **LINKED})
    assert status == 200
    assert out["data"]["steps"][0]["reason"] == NOT_ALLOWED.format(tool="note", name="ci")
    assert ran.notes == 0


async def test_flow_add_step_cannot_call_a_tool_the_token_may_not(
    make: Make, proj: Project, ran: Ran
) -> None:
    client = await make(tokens=TOKENS)
    root = str(proj.root)
    assert (
        await post(client, "flow-start-recording", {"name": "r", "project_root": root}, bearer(REC_TOKEN))
    )[0] == 200
    args = {"name": "r", "project_root": root, "command": "note", "args": "{}"}
    status, body = await post(client, "flow-add-step", args, bearer(REC_TOKEN))
    assert status == 403
    assert body == {"error": NOT_ALLOWED.format(tool="note", name="rec"), "error_code": "TOOL_NOT_ALLOWED"}
    assert ran.notes == 0
    assert "note" not in (proj.flows / "r.yaml").read_text()


async def test_a_recorded_flow_execute_step_spends_the_calls_step_budget(make: Make, proj: Project) -> None:
    client = await make(steps_per_call=10)
    root = str(proj.root)
    proj.flow("many", *["echo: again"] * 30)
    assert (await post(client, "flow-start-recording", {"name": "r", "project_root": root}))[0] == 200
    args = {"name": "many", "project_root": root}
    step = {"name": "r", "project_root": root, "command": "flow-execute", "args": json.dumps(args)}
    status, body = await post(client, "flow-add-step", step)
    assert status == 200, body
    text = json.dumps(body, ensure_ascii=False)
    assert text.count('"kind": "echo"') == 11
    assert STEP_BUDGET_EXCEEDED.format(limit=10) in text


# --------------------------------------------------------------------------------------------
# 6. Concurrent calls per token


async def _hold(client: Client, token: str, tag: str) -> tuple[int, Any]:
    return await post(client, "hold", {"tag": tag}, bearer(token))


async def test_a_token_over_its_concurrent_calls_gets_429_and_another_token_does_not(
    make: Make, ran: Ran
) -> None:
    client = await make(tokens=TOKENS, concurrent_calls_per_token=1)
    first = asyncio.create_task(_hold(client, DEV_TOKEN, "first"))
    await ran.started.wait()
    resp = await client.post("/tools/note", json={}, headers=bearer(DEV_TOKEN))
    assert resp.status == 429
    assert resp.headers["Retry-After"] == "1"
    assert await resp.json() == {
        "error": 'Token "dev" already runs 1 call at once, the most this tool-server allows '
        "(limits.concurrent_calls_per_token). Retry when one of them has finished.",
        "error_code": "TOO_MANY_CALLS",
    }
    assert ran.notes == 0
    # Another token is not affected.
    assert (
        await post(
            client, "flow-read-prerequisite", {"name": "x", "project_root": "/nowhere"}, bearer(CI_TOKEN)
        )
    )[0] != 429
    assert (await post(client, "note", {}, bearer(REC_TOKEN)))[0] == 403  # its guard, not the limit
    ran.release.set()
    assert await first == (200, {"data": {"held": "first"}})
    assert (await post(client, "note", {}, bearer(DEV_TOKEN)))[0] == 200


async def test_the_one_token_of_a_server_without_named_tokens_has_the_limit_too(make: Make, ran: Ran) -> None:
    client = await make(token=ONE_TOKEN, concurrent_calls_per_token=2)
    calls = [asyncio.create_task(_hold(client, ONE_TOKEN, str(i))) for i in range(2)]
    while len(ran.holding) < 2:
        await asyncio.sleep(0.01)  # no event says "both handlers entered"; poll the list they append to
    status, body = await post(client, "note", {}, bearer(ONE_TOKEN))
    assert status == 429
    assert body["error"].startswith("This token already runs 2 calls at once")
    ran.release.set()
    assert [(await c)[0] for c in calls] == [200, 200]


async def test_steps_per_call_bounds_every_line_of_a_call_fragments_included(make: Make) -> None:
    client = await make(steps_per_call=5)
    main = "steps:\n  - echo: one\n  - run: part.yaml\n  - echo: never\n"
    args = crafted_link_call("/client/proj", main)
    part = "steps:\n" + "  - echo: in the fragment\n" * 10
    path = "/client/proj/.argent/flows/part.yaml"
    args["flow_file"]["members"] = [
        {
            "role": "flow",
            "key": "/client/proj/.argent/flows\0part.yaml",
            "path": path,
            "canonical": path,
            "spelling": {"state": "listed"},
            "content": base64.b64encode(part.encode()).decode(),
        }
    ]
    status, body = await post(client, "flow-execute", args)
    assert status == 200, body
    steps = body["data"]["steps"]
    assert [(s["kind"], s["status"]) for s in steps] == [("echo", "pass"), ("run", "pass")] + [
        ("echo", "pass")
    ] * 3 + [("echo", "error")]
    assert steps[-1]["reason"] == STEP_BUDGET_EXCEEDED.format(limit=5)
    assert body["data"]["ok"] is False and body["data"]["errored"] == 1


# --------------------------------------------------------------------------------------------
# Unsafe workspaces, with or without --config

WORKSPACE = (
    'project_root "{root}" resolves to {why}, which the tool-server never works in. Pass the project\'s own '
    "directory (a subdirectory of the home directory is fine)."
)
HOME_WHY = "the home directory of the tool-server's user"


def _unsafe_roots(home: Path) -> list[tuple[str, str]]:
    roots = [("/", "the filesystem root"), (str(home), HOME_WHY), (pwd.getpwuid(os.getuid()).pw_dir, "")]
    roots += [
        (d, "a system directory")
        for d in ("/etc", "/usr", "/bin", "/lib", "/proc", "/sys", "/dev", "/var", "/boot")
    ]
    # The kernel's views are refused with everything under them.
    roots += [(d, "a system directory") for d in ("/proc/self", "/sys/kernel", "/dev/shm/project")]
    return roots


@pytest.mark.parametrize("headers", [{}, STREAM, LINKED])
async def test_an_unsafe_project_root_is_refused_403_with_or_without_config(
    make: Make, home: Path, headers: dict[str, str]
) -> None:
    for client in (await make(), await make(tokens=TOKENS)):
        auth = bearer(DEV_TOKEN) if client.app[CONFIG].policy.tokens else {}
        for root, why in _unsafe_roots(home):
            for tool in ("flow-execute", "flow-read-prerequisite"):
                status, body = await post(
                    client, tool, {"name": "x", "project_root": root}, {**auth, **headers}
                )
                assert status == 403, (root, body)
                assert body["error_code"] == "WORKSPACE_UNSAFE"
                if why:
                    assert body["error"] == WORKSPACE.format(root=root, why=why)


async def test_a_link_to_home_is_refused_and_a_project_inside_home_is_fine(
    make: Make, home: Path, tmp_path: Path
) -> None:
    client = await make()
    inside = make_project(home / "code" / "app")
    status, body = await post(client, "flow-execute", {"name": "plain", "project_root": str(inside.root)})
    assert status == 200 and body["data"]["ok"] is True
    link = tmp_path / "looks-like-a-project"
    link.symlink_to(home)
    status, body = await post(client, "flow-execute", {"name": "plain", "project_root": str(link)})
    assert status == 403
    assert body == {"error": WORKSPACE.format(root=link, why=HOME_WHY), "error_code": "WORKSPACE_UNSAFE"}


async def test_the_file_input_wrapper_of_an_unsafe_project_is_refused_before_it_is_looked_at(
    make: Make, home: Path
) -> None:
    client = await make()
    flows = home / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "here.yaml").write_text("steps:\n  - echo: hi\n")
    answers = []
    for name in ("here", "absent"):
        path = str(flows / f"{name}.yaml")
        wire = {"__argentFileInput": True, "path": path}
        answers.append(
            await post(client, "flow-execute", {"name": name, "project_root": str(home), "flow_file": wire})
        )
    assert [a[0] for a in answers] == [403, 403]
    assert answers[0][1]["error_code"] == answers[1][1]["error_code"] == "WORKSPACE_UNSAFE"


async def test_a_recording_in_an_unsafe_project_is_refused_and_writes_nothing(make: Make, home: Path) -> None:
    client = await make()
    status, body = await post(client, "flow-start-recording", {"name": "r", "project_root": str(home)})
    assert (status, body["error_code"]) == (403, "WORKSPACE_UNSAFE")
    assert not (home / ".argent").exists()
    # Over a link the recording is the client's: project_root is only a key.
    status, body = await post(
        client, "flow-start-recording", {"name": "r", "project_root": str(home)}, LINKED
    )
    assert status == 200
    assert not (home / ".argent").exists()


async def test_over_a_link_project_root_is_only_a_key(make: Make) -> None:
    client = await make(project_roots=("/srv/nowhere",))
    for root in ("/etc", "/root", os.environ["HOME"]):
        status, body = await post(
            client, "flow-execute", crafted_link_call(root, "steps:\n  - echo: hi\n"), LINKED
        )
        assert status == 200, body
        assert body["data"]["ok"] is True


# --------------------------------------------------------------------------------------------
# project_roots


OUTSIDE = (
    'project_root "{root}" is outside the project roots of this tool-server ({roots}). Use a project under '
    "one of them, or ask the tool-server's operator to add its directory to project_roots."
)


async def test_a_co_located_project_must_lie_under_the_project_roots_by_real_path(
    make: Make, tmp_path: Path
) -> None:
    allowed = tmp_path / "projects"
    inside = make_project(allowed / "app")
    outside = make_project(tmp_path / "elsewhere")
    client = await make(project_roots=(str(allowed),))
    status, body = await post(client, "flow-execute", {"name": "plain", "project_root": str(inside.root)})
    assert status == 200 and body["data"]["ok"] is True
    status, body = await post(client, "flow-execute", {"name": "scripted", "project_root": str(outside.root)})
    assert body == {
        "error": OUTSIDE.format(root=outside.root, roots=allowed),
        "error_code": "WORKSPACE_UNSAFE",
    }
    assert not outside.marker.exists()
    sneaky = allowed / "sneaky"
    sneaky.symlink_to(outside.root)
    status, body = await post(client, "flow-execute", {"name": "scripted", "project_root": str(sneaky)})
    assert (status, body["error_code"]) == (403, "WORKSPACE_UNSAFE")
    assert not outside.marker.exists()


async def test_a_fragment_outside_the_project_roots_is_not_read(make: Make, tmp_path: Path) -> None:
    allowed = tmp_path / "projects"
    inside = make_project(allowed / "app")
    outside = make_project(tmp_path / "elsewhere")
    (inside.flows / "escape.yaml").symlink_to(outside.flows / "scripted.yaml")
    inside.flow("jump", "echo: start", "run: escape.yaml")
    client = await make(project_roots=(str(allowed),))
    status, body = await post(client, "flow-execute", {"name": "jump", "project_root": str(inside.root)})
    assert status == 200, body
    run_step = body["data"]["steps"][1]
    assert run_step["status"] == "error" and "does not read" in run_step["reason"]
    assert not outside.marker.exists()


# --------------------------------------------------------------------------------------------
# 5. Files a tool reads on the server


@pytest.mark.parametrize("wrapped", [False, True])
async def test_screenshot_diff_answers_the_same_for_a_refused_path_whether_it_exists(
    make: Make, wrapped: bool
) -> None:
    client = await make()
    answers = []
    for path in ("/etc/passwd", "/etc/argent-no-such-file.png"):
        value: Any = {"__argentFileInput": True, "path": path} if wrapped else path
        status, body = await post(client, "screenshot-diff", {"baselinePath": value, "currentPath": value})
        answers.append((status, body["error"].replace(path, "<path>"), body.get("error_code")))
    assert answers[0] == answers[1]
    if not wrapped:
        assert answers[0][0] == 403 and answers[0][2] == "WORKSPACE_UNSAFE"


async def test_files_a_tool_reads_obey_the_project_roots(make: Make, tmp_path: Path) -> None:
    allowed = tmp_path / "projects"
    allowed.mkdir()
    (allowed / "a.png").write_bytes(PNG_1x1)
    (tmp_path / "secret.png").write_bytes(PNG_1x1)
    client = await make(project_roots=(str(allowed),))
    status, body = await post(
        client,
        "screenshot-diff",
        {"baselinePath": str(allowed / "a.png"), "currentPath": str(allowed / "a.png")},
    )
    assert status == 200 and body["data"]["mismatchPercentage"] == 0
    refused = []
    for name in ("secret.png", "missing.png"):
        path = str(tmp_path / name)
        status, body = await post(
            client, "screenshot-diff", {"baselinePath": path, "currentPath": str(allowed / "a.png")}
        )
        refused.append((status, body["error"].replace(path, "<path>")))
    assert refused[0] == refused[1]
    assert refused[0][0] == 403


# --------------------------------------------------------------------------------------------
# 1. local_flows: false and scripts: false


async def test_local_flows_false_reads_no_flow_from_the_servers_disk(make: Make, proj: Project) -> None:
    client = await make(local_flows=False)
    root = str(proj.root)
    for tool, headers in (("flow-execute", {}), ("flow-execute", LINKED), ("flow-read-prerequisite", {})):
        status, body = await post(client, tool, {"name": "scripted", "project_root": root}, headers)
        assert status == 403
        assert body["error_code"] == "LOCAL_FLOWS_DISABLED"
        assert body["error"].startswith(f"{tool} would read a flow from the tool-server's disk")
    status, body = await post(client, "flow-start-recording", {"name": "r", "project_root": root})
    assert (status, body["error_code"]) == (403, "LOCAL_FLOWS_DISABLED")
    assert not (proj.flows / "r.yaml").exists()
    assert not proj.marker.exists()
    # Over a link the flow comes with the call.
    status, body = await post(
        client, "flow-execute", crafted_link_call(root, "steps:\n  - echo: hi\n"), LINKED
    )
    assert status == 200 and body["data"]["ok"] is True


@pytest.mark.parametrize("flow", ["scripted", "indirect"])
@pytest.mark.parametrize("headers", [{}, LINKED, STREAM])
async def test_scripts_false_refuses_a_run_with_a_script_step_before_anything_runs(
    make: Make, proj: Project, flow: str, headers: dict[str, str]
) -> None:
    client = await make(scripts=False)
    status, body = await post(client, "flow-execute", {"name": flow, "project_root": str(proj.root)}, headers)
    assert status == 403
    assert body["error_code"] == "SCRIPTS_DISABLED"
    lines = body["error"].splitlines()
    assert (
        lines[0] == "This tool-server runs no script: step (scripts: false in its config), and this flow has:"
    )
    fragment = proj.flows / "fragment.yaml"
    scripted = proj.flows / "scripted.yaml"
    where = scripted if flow == "scripted" else fragment
    assert lines[1] == f"step 2 in {where}: script: {{ path: mark.sh }} — scripts are off on this tool-server"
    assert not proj.marker.exists()


async def test_scripts_false_refuses_a_script_in_a_nested_flow(make: Make, proj: Project) -> None:
    proj.flow(
        "nesting",
        "echo: outer",
        f"tool: flow-execute\n    args: {{ name: scripted, project_root: {proj.root} }}",
    )
    client = await make(scripts=False)
    status, body = await post(client, "flow-execute", {"name": "nesting", "project_root": str(proj.root)})
    assert (status, body["error_code"]) == (403, "SCRIPTS_DISABLED")
    assert not proj.marker.exists()


async def test_scripts_false_refuses_flow_add_script_and_lists_it_disabled(make: Make, proj: Project) -> None:
    client = await make(scripts=False)
    root = str(proj.root)
    assert (await post(client, "flow-start-recording", {"name": "r", "project_root": root}))[0] == 200
    status, body = await post(
        client, "flow-add-script", {"name": "r", "project_root": root, "path": "mark.sh"}
    )
    assert status == 403
    assert body == {
        "error": "flow-add-script is refused: this tool-server runs no script (scripts: false in its config). "
        "Record the other steps here, and add the script: step to the flow file by hand.",
        "error_code": "SCRIPTS_DISABLED",
    }
    assert not proj.marker.exists()
    assert "script" not in (proj.flows / "r.yaml").read_text()
    tools = {t["name"]: t for t in (await (await client.get("/tools")).json())["tools"]}
    assert tools["flow-add-script"]["disabled"] == {
        "reason": "needs scripts: true in the tool-server's config (this tool-server runs no scripts)"
    }


async def test_with_scripts_on_the_same_run_runs_its_script(make: Make, proj: Project) -> None:
    client = await make()
    status, body = await post(client, "flow-execute", {"name": "indirect", "project_root": str(proj.root)})
    assert status == 200 and body["data"]["ok"] is True
    assert proj.marker.exists()


async def test_a_script_step_that_escaped_the_scan_still_does_not_run(proj: Project, home: Path) -> None:
    """The run's files carry the switch: a script step reached at run time reports an error."""
    policy = CallPolicy(scripts=False)
    files = policy.disk_files()
    ref = await files.locate(str(proj.flows / "scripted.yaml"))
    from argent.flows.model import ScriptStep

    run = Run(
        files=files,
        tools=RegistryInvoker(ToolRegistry()),
        root=ref,
        name="scripted",
        project_root=str(proj.root),
    )
    status, reason = await exec_script(ScriptStep("mark.sh"), run, ref)
    assert (status, reason) == (
        "error",
        "this tool-server runs no script: step (scripts: false in its config)",
    )
    assert not proj.marker.exists()


@pytest.mark.parametrize("tool", ["open-url", "boot-device"])
async def test_a_page_the_browser_would_read_from_the_servers_disk_obeys_the_rules(
    make: Make, tool: str
) -> None:
    client = await make()
    answers = set()
    for target in (
        "file:///etc/passwd",
        "file:///etc/argent-none.html",
        "/etc/passwd",
        "/etc/argent-none.html",
    ):
        args = {"udid": "chromium-cdp-1", "url": target} if tool == "open-url" else {"url": target}
        status, body = await post(client, tool, args)
        assert (status, body["error_code"]) == (403, "WORKSPACE_UNSAFE")
        answers.add(body["error"].replace(target.removeprefix("file://"), "<path>"))
    assert len(answers) == 1


async def test_a_launch_over_a_link_does_not_open_a_page_of_the_servers_disk(make: Make) -> None:
    client = await make()
    main = "steps:\n  - launch: { chromium: 'file:///proc/self/environ' }\n  - echo: after\n"
    status, body = await post(client, "flow-execute", crafted_link_call("/client/proj", main), LINKED)
    assert status == 200
    launch = body["data"]["steps"][0]
    assert launch["status"] == "error"
    assert launch["reason"].startswith('The tool-server does not read "/proc/self/environ"')


async def test_a_link_only_server_without_project_roots_reads_no_file_of_its_own(
    make: Make, tmp_path: Path
) -> None:
    png = tmp_path / "a.png"
    png.write_bytes(PNG_1x1)
    client = await make(local_flows=False)
    status, body = await post(client, "screenshot-diff", {"baselinePath": str(png), "currentPath": str(png)})
    assert (status, body["error_code"]) == (403, "WORKSPACE_UNSAFE")
    assert "it reads no file of its own disk for a call" in body["error"]
    status, body = await post(client, "open-url", {"udid": "chromium-cdp-1", "url": png.as_uri()})
    assert (status, body["error_code"]) == (403, "WORKSPACE_UNSAFE")
    # The client's bytes, sent with the call, are compared.
    wire = {
        "__argentFileInput": True,
        "path": str(png),
        "content": base64.b64encode(PNG_1x1).decode(),
        "size": len(PNG_1x1),
    }
    status, body = await post(client, "screenshot-diff", {"baselinePath": wire, "currentPath": wire})
    assert status == 200 and body["data"]["mismatchPercentage"] == 0
