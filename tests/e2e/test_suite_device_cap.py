"""A suite on a shared tool-server that caps the browsers of a token (`limits.devices_per_token`): a
`--workers` flow refused a browser (429 TOO_MANY_DEVICES) waits for the run's other flows to release
theirs and passes; when no flow of the run holds one, the server's refusal is the flow's error at once.

Real `argent server start --config` processes, real headless Chromium, the real CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from argent.devices.chromium.launcher import processes_naming
from tests.e2e.conftest import (
    SHOP_PAGE,
    Cli,
    ServerProcess,
    chromium_marks,
    pages_app,
    serve,
    start_server_process,
)
from tests.e2e.test_cli_suite import write

pytestmark = chromium_marks()

TOKEN = "c" * 32
CAP_MESSAGE = (
    "Cannot boot a chromium device: your token holds 1 Chromium device(s), the most it may hold at once "
    "(limits.devices_per_token: 1). Stop one with stop-device (list-devices lists them) or wait for a running "
    "flow to end, then boot again."
)
WAITING = "  … waiting for a browser another flow of this run holds: " + CAP_MESSAGE


def capped_server(cli: Cli, tmp_path: Path) -> tuple[ServerProcess, Path]:
    """A tool-server whose one named token may hold one browser; its TMPDIR (its browsers' homes)."""
    config = write(
        tmp_path / "server.yaml",
        "tokens:\n  - name: ci\n    token_env: TOKEN_CI\n    tools: ['*']\nlimits:\n  devices_per_token: 1\n",
    )
    server_tmp = tmp_path / "server-tmp"
    server_tmp.mkdir()
    return start_server_process(
        cli, "--config", str(config), TOKEN_CI=TOKEN, TMPDIR=str(server_tmp)
    ), server_tmp


def suite_of_three(project: Path, url: str) -> None:
    for i in range(3):
        write(
            project / "suite" / f"shop-{i}.yaml",
            f"steps:\n  - launch: {{ chromium: '{url}/shop' }}\n  - tap: Add to cart\n"
            "  - assert: { visible: In the cart }\n",
        )


async def run_suite_of_three(
    cli: Cli, project: Path, server: ServerProcess
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``flow run suite --workers 3 --json`` of three shop flows on ``server``: what it did, in seconds."""
    async with serve(pages_app({"/shop": SHOP_PAGE})) as url:
        suite_of_three(project, url)
        env = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": TOKEN}
        t0 = time.monotonic()
        done = await asyncio.to_thread(
            cli.run, "flow", "run", "suite", "--workers", "3", "--json", timeout=120, **env
        )
        return done, time.monotonic() - t0


def call(server: ServerProcess, tool: str, args: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{server.url}/tools/{tool}",
        data=json.dumps(args).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def warnings_of(stderr: str) -> list[str]:
    return [json.loads(line)["warning"] for line in stderr.splitlines() if line.startswith("{")]


async def test_three_workers_share_a_one_browser_token_and_all_pass(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    server, server_tmp = capped_server(cli, tmp_path)
    try:
        done, elapsed = await run_suite_of_three(cli, project, server)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr
        report = json.loads(done.stdout)
        assert (report["total"], report["passed"], report["failed"]) == (3, 3, 0)
        assert all(f["report"]["ok"] for f in report["flows"])
        # The server refused the flows that asked while another held the token's one browser: its answer,
        # told once per waiting flow (all three ask at once: one boots, two wait).
        waited = warnings_of(done.stderr)
        assert waited and set(waited) == {WAITING}, done.stderr
        assert len(waited) <= 2
        assert elapsed < 90
    finally:
        server.stop()
    assert processes_naming(str(server_tmp)) == []


async def test_a_refusal_no_flow_of_the_run_can_lift_fails_the_flow_at_once(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    server, server_tmp = capped_server(cli, tmp_path)
    try:
        # Another client of the same token holds its one browser for the whole run.
        status, body = await asyncio.to_thread(call, server, "boot-device", {"platform": "chromium"})
        assert status == 200, body
        done, elapsed = await run_suite_of_three(cli, project, server)
        assert done.returncode == 1, done.stdout[-3000:] + done.stderr
        report = json.loads(done.stdout)
        assert (report["total"], report["passed"]) == (3, 0)
        # a flow whose device was refused never ran a step: an error, as JUnit counts it
        errored = [f for f in report["flows"] if f["status"] == "error"]
        assert errored and all(f["error"] == CAP_MESSAGE for f in errored), report["flows"]
        assert all(f["status"] in ("error", "skip") for f in report["flows"])
        assert elapsed < 30  # no retry for the busy bound (600 s): nothing of the run could free a browser
        await asyncio.to_thread(call, server, "stop-device", {"udid": body["data"]["id"]})
    finally:
        server.stop()
    assert processes_naming(str(server_tmp)) == []
