"""`argent flow run` over a link, as real processes: the flow-files log and baselines in the result."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.e2e.conftest import ENGINES, Cli, ServerProcess, on_engines
from tests.flow_files import write

pytestmark = pytest.mark.e2e


def linked(server: ServerProcess, **extra: str) -> dict[str, str]:
    return {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token, **extra}


def test_the_flow_files_log_is_printed_byte_for_byte(cli: Cli, project: Path, server: ServerProcess) -> None:
    flows = project / ".argent" / "flows"
    write(
        flows / "main.yaml", "run: frag.yaml", "when: { platform: ios }\n    steps:\n      - run: gone.yaml"
    )
    frag = write(flows / "frag.yaml", "echo: from the fragment")
    done = cli.run(
        "flow", "run", "main", "--platform", "android", **linked(server, ARGENT_FLOW_FILES_LOG="1")
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"[flow-files] flow {flows}/frag.yaml: inline {frag.stat().st_size}",
        f"[flow-files] flow {flows}/gone.yaml: missing",
    ]
    assert "from the fragment" in done.stdout


def test_with_json_each_line_is_a_warning_object_on_stderr(
    cli: Cli, project: Path, server: ServerProcess
) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "main.yaml", "run: frag.yaml")
    frag = write(flows / "frag.yaml", "echo: f")
    done = cli.run("flow", "run", "main", "--json", **linked(server, ARGENT_FLOW_FILES_LOG="1"))
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stderr.splitlines()] == [
        {"warning": f"[flow-files] flow {flows}/frag.yaml: inline {frag.stat().st_size}"}
    ]
    assert json.loads(done.stdout)["ok"] is True


def test_no_log_without_the_variable(cli: Cli, project: Path, server: ServerProcess) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "main.yaml", "run: frag.yaml")
    write(flows / "frag.yaml", "echo: f")
    done = cli.run("flow", "run", "main", **linked(server))
    assert done.returncode == 0 and done.stderr == ""


def test_a_script_step_over_a_link_is_refused_before_the_first_step(
    cli: Cli, project: Path, server: ServerProcess
) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "main.yaml", "echo: never printed", "script: ../../scripts/hello.mjs")
    done = cli.run("flow", "run", "main", **linked(server))
    assert done.returncode == 1
    assert "never printed" not in done.stdout
    assert (
        f"step 2 in {flows}/main.yaml: script: {{ path: ../../scripts/hello.mjs }} — a replay over a link runs no "
        "script: step"
    ) in done.stderr


# --------------------------------------------------------------------------------------------
# Baselines in the result, from a tool-server that answers with canned results


class CannedServer:
    """A tiny tool-server in a thread: its listing, and one canned flow-execute result."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.port = 0

    def app(self) -> web.Application:
        async def tools(request: web.Request) -> web.Response:
            spec = {
                "target": "flow_file",
                "path": "${project_root}/.argent/flows/${name}.yaml",
                "kind": "file",
            }
            return web.json_response(
                {"tools": [{"name": "flow-execute", "fileInputs": [{**spec, "collect": "flow"}]}]}
            )

        async def call(request: web.Request) -> web.StreamResponse:
            await request.read()
            response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
            await response.prepare(request)
            await response.write(json.dumps({"event": "result", "data": self.result}).encode() + b"\n")
            await response.write_eof()
            return response

        app = web.Application()
        app.router.add_get("/tools", tools)
        app.router.add_post("/tools/{name}", call)
        return app

    async def _start(self) -> None:
        self.runner = web.AppRunner(self.app())
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def __enter__(self) -> CannedServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def shots(project: Path) -> Iterator[Path]:
    flows = project / ".argent" / "flows"
    write(flows / "main.yaml", "snapshot: home")
    yield flows / "__baselines__" / "main"


def canned(path: Path) -> dict[str, Any]:
    directive = {
        "__argentClientFile": True,
        "path": str(path),
        "content": base64.b64encode(b"\x89PNG\r\n\x1a\n new").decode(),
        "encoding": "base64",
    }
    return {
        "flow": "main",
        "device": "chromium-cdp-1",
        "ok": True,
        "passed": 1,
        "failed": 0,
        "skipped": 0,
        "errored": 0,
        "steps": [{"index": 0, "kind": "snapshot", "status": "pass", "flow": "main", "durationMs": 1}],
        "baselineWrites": [directive],
    }


def test_the_client_writes_the_baselines_of_an_updating_run(cli: Cli, project: Path, shots: Path) -> None:
    target = shots / "home__chromium-1x1.png"
    with CannedServer(canned(target)) as fake:
        done = cli.run(
            "flow",
            "run",
            "main",
            "--update-baselines",
            "--json",
            ARGENT_TOOLS_URL=f"http://127.0.0.1:{fake.port}",
            ARGENT_FLOW_FILES_LOG="1",
        )
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == b"\x89PNG\r\n\x1a\n new"
    assert json.loads(done.stdout)["baselineWrites"] == [str(target)]
    assert [json.loads(line) for line in done.stderr.splitlines()] == [
        {"warning": f"[flow-files] baseline {target}: written"}
    ]


def test_a_baseline_the_client_does_not_write_is_reported_and_exits_1(
    cli: Cli, project: Path, shots: Path
) -> None:
    target = shots / "home__chromium-1x1.png"
    with CannedServer(canned(target)) as fake:
        done = cli.run("flow", "run", "main", ARGENT_TOOLS_URL=f"http://127.0.0.1:{fake.port}")
    assert done.returncode == 1
    assert not target.exists()
    assert (
        f"✗ baseline not written: {target}: {target} is not a .png file directly in the baseline directory of a "
        "run of this call that updates baselines"
    ) in done.stderr.splitlines()


def test_a_baseline_aimed_outside_its_directory_writes_nothing(
    cli: Cli, project: Path, shots: Path, tmp_path: Path
) -> None:
    escape = project / "escape.png"
    with CannedServer(canned(escape)) as fake:
        done = cli.run(
            "flow", "run", "main", "--update-baselines", ARGENT_TOOLS_URL=f"http://127.0.0.1:{fake.port}"
        )
    assert done.returncode == 1
    assert not escape.exists()
    assert sorted(p.name for p in project.rglob("*")) == [".argent", "flows", "main.yaml"]


# --------------------------------------------------------------------------------------------
# Real Chromium on the tool-server, baselines on the client


PAGE = "data:text/html,<title>t</title><h1 style='margin:80px'>Hello over a link</h1><button>Go</button>"


@pytest.mark.parametrize("platform", on_engines(*ENGINES))
def test_snapshots_over_a_link_update_then_compare_with_the_clients_baselines(
    cli: Cli, project: Path, server: ServerProcess, platform: str
) -> None:
    flows = project / ".argent" / "flows"
    write(
        flows / "main.yaml",
        f'launch: {{ chromium: "{PAGE}" }}',
        "run: parts/check.yaml",
        f"tool: flow-execute\n    args: {{ name: inner, project_root: {project}, updateBaselines: true }}",
    )
    write(flows / "parts" / "check.yaml", 'assert: { visible: "Hello over a link" }', "snapshot: home")
    write(flows / "inner.yaml", "snapshot: inner-home")
    env = linked(server, ARGENT_FLOW_FILES_LOG="1")
    on = ("--platform", platform)
    first = cli.run("flow", "run", "main", *on, "--update-baselines", "--json", timeout=120, **env)
    assert first.returncode == 0, first.stdout + first.stderr
    report = json.loads(first.stdout)
    main_dir = flows / "__baselines__" / "main"
    inner_dir = flows / "__baselines__" / "inner"
    (home,) = main_dir.glob(f"home__{platform}-1000x800.png")
    (inner_home,) = inner_dir.glob(f"inner-home__{platform}-1000x800.png")
    assert home.read_bytes().startswith(b"\x89PNG")
    assert report["baselineWrites"] == [str(home), str(inner_home)]
    snapshot = next(s for s in report["steps"] if s["kind"] == "snapshot")
    assert snapshot["reason"] == f"baseline captured; the client writes it when the run ends ({home})"
    warnings = [json.loads(line)["warning"] for line in first.stderr.splitlines()]
    assert f"[flow-files] baseline {home}: written" in warnings
    assert f"[flow-files] baseline {inner_home}: written" in warnings

    # The compare run reads the baselines the client sends; the nested run still updates its own.
    second = cli.run("flow", "run", "main", *on, timeout=120, **env)
    assert second.returncode == 0, second.stdout + second.stderr
    lines = second.stderr.splitlines()
    assert f"[flow-files] baseline {home}: inline {home.stat().st_size}" in lines
    assert f"[flow-files] baseline {inner_home}: listed" in lines
    assert "diff 0.00%" in second.stdout
