"""What the client believes of a hostile tool-server's NDJSON stream and result.

The real CLI runs against a real aiohttp server on a loopback socket that streams what a real
tool-server never would: progress lines that never stop or that together weigh far more than any
result, numbers JSON has no value for. The client stays within its bounds and prints only what
JSON and a terminal can hold.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.e2e.conftest import Cli
from tests.hostile.hostile_server import (
    MAX_CLI_RSS,
    MIB,
    HostileToolServer,
    progress_line,
    report,
    result_line,
    run_measured,
    step,
    streamed,
    streamed_raw,
)

pytestmark = pytest.mark.e2e


def heavy_progress(lines: int, reason_bytes: int) -> Iterator[bytes]:
    """``lines`` progress lines, each with a reason of ``reason_bytes`` (under the cap on one line)."""
    reason = b"r" * reason_bytes
    for index in range(lines):
        yield b'{"event":"progress","data":{"index":%d,"kind":"echo","status":"pass","reason":"' % index
        yield reason
        yield b'"}}\n'
    yield json.dumps(result_line(report(step()))).encode() + b"\n"


def test_progress_lines_that_outweigh_any_result_are_refused_in_bounded_memory(
    cli: Cli, flows: Path, hostile: HostileToolServer, tmp_path: Path
) -> None:
    """A report keeps the progress lines of a call that may be cut off: 120 lines of 4 MiB kept
    480 MiB; together they may weigh twice what a result may."""
    hostile.on("flow-execute", streamed_raw(lambda: heavy_progress(120, 4 * MIB)))
    junit = tmp_path / "junit.xml"
    done = run_measured(cli, "flow", "run", "main", "--json", "--junit-xml", str(junit), **hostile.env())
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.peak_rss_bytes < MAX_CLI_RSS, f"peak RSS {done.peak_rss_bytes / MIB:.0f} MiB"
    assert (
        "Error: The tool-server's answer to flow-execute has progress lines over the 128 MiB cap on the progress "
        "of one call (its progress lines are the steps of its result); the client stopped reading. The tool "
        "may have run; check its effect before you run it again, and check the tool-server you are linked to."
    ) in done.stderr.splitlines()
    assert "<error message=" in junit.read_text()


def strict_json(text: str) -> object:
    """``text`` read as JSON that has no NaN or Infinity (which a strict reader, jq among them, refuses)."""

    def refuse(constant: str) -> object:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


NON_FINITE_RESULT = (
    b'{"event":"result","data":{"flow":"main","device":"d","ok":true,"passed":NaN,"failed":-Infinity,'
    b'"skipped":0,"errored":0,"steps":[{"index":0,"kind":"echo","status":"pass","flow":"main",'
    b'"message":"hi","durationMs":1e999},{"index":1,"kind":"wait","status":"pass","flow":"main",'
    b'"durationMs":Infinity}]}}\n'
)


def test_numbers_json_has_no_value_for_read_as_null(
    cli: Cli, flows: Path, hostile: HostileToolServer, tmp_path: Path
) -> None:
    hostile.on("flow-execute", streamed_raw(lambda: [NON_FINITE_RESULT]))
    done = cli.run("flow", "run", "main", "--json", "--html", str(tmp_path / "html"), **hostile.env())
    assert done.returncode == 0, done.stderr
    printed = strict_json(done.stdout)
    assert isinstance(printed, dict)
    assert (printed["passed"], printed["failed"]) == (None, None)
    assert [s["durationMs"] for s in printed["steps"]] == [None, None]
    page = (tmp_path / "html" / "index.html").read_text()
    assert "inf" not in page and "nan" not in page.lower().replace("nanoseconds", "")
    human = cli.run("flow", "run", "main", **hostile.env())
    assert human.returncode == 0, human.stderr
    assert "nan" not in human.stdout.lower() and "inf" not in human.stdout


@pytest.mark.parametrize("ok", ["yes", 1, {"really": True}], ids=["text", "number", "object"])
def test_an_ok_that_is_not_true_fails_the_flow_however_many_run_at_once(
    cli: Cli, flows: Path, hostile: HostileToolServer, ok: object
) -> None:
    """``ok`` is the JSON true or the flow failed: --workers read a truthy value as a pass."""
    (flows / "other.yaml").write_text("steps:\n  - echo: hello\n")
    failed = step(kind="tap", status="fail", reason="not found")
    hostile.on("flow-execute", streamed(result_line(report(failed, ok=ok, passed=0, failed=1))))
    one = cli.run("flow", "run", str(flows), **hostile.env())
    many = cli.run("flow", "run", str(flows), "--workers", "2", **hostile.env())
    assert (one.returncode, many.returncode) == (1, 1), many.stdout
    assert "FAIL — 2 flows: 0 passed, 2 failed, 0 errored, 0 skipped" in many.stdout.splitlines()
    assert [line for line in many.stdout.splitlines() if line.startswith("  ✗ ") and "(failed)" in line] == [
        line for line in one.stdout.splitlines() if line.startswith("  ✗ ") and "(failed)" in line
    ]


# --------------------------------------------------------------------------------------------
# A stream that goes silent: no read timeout (a step may run for minutes), TCP keep-alive instead


def socket_on_port(port: int) -> socket.socket | None:
    """A duplicate of this process's TCP socket whose local port is ``port`` (from /proc/self/fd)."""
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        try:
            inet = sock.family in (socket.AF_INET, socket.AF_INET6)
            if inet and sock.type == socket.SOCK_STREAM and sock.getsockname()[1] == port:
                return sock
        except OSError:
            pass
        sock.close()
    return None


@pytest.mark.skipif(not hasattr(socket, "TCP_KEEPIDLE"), reason="Linux keep-alive timing")
async def test_a_silent_stream_is_watched_by_tcp_keepalive(aiohttp_server: Any) -> None:
    """While a call's stream is silent, its connection probes the tool-server's machine: one that is
    gone ends the call as closed (the seed's message) instead of a wait without end."""
    from argent.client.session import ToolServerClient
    from argent.limits import (
        CLIENT_TCP_KEEPALIVE_IDLE_SECONDS,
        CLIENT_TCP_KEEPALIVE_INTERVAL_SECONDS,
        CLIENT_TCP_KEEPALIVE_PROBES,
    )

    silent = asyncio.Event()
    release = asyncio.Event()
    peers: list[int] = []

    async def tools(request: web.Request) -> web.StreamResponse:
        return web.json_response({"tools": []})

    async def call(request: web.Request) -> web.StreamResponse:
        peers.append(request.transport.get_extra_info("peername")[1])  # type: ignore[union-attr]
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        await response.write(json.dumps(progress_line(step())).encode() + b"\n")
        silent.set()
        await release.wait()  # a step that runs long, or a machine that is gone: no byte either way
        await response.write(json.dumps(result_line(report(step()))).encode() + b"\n")
        return response

    app = web.Application()
    app.router.add_get("/tools", tools)
    app.router.add_post("/tools/{name}", call)
    server = await aiohttp_server(app)
    async with ToolServerClient(str(server.make_url("")), None, linked=True) as client:
        running = asyncio.create_task(client.call("flow-execute", {}, on_progress=lambda _: None))
        await silent.wait()
        sock = socket_on_port(peers[0])
        assert sock is not None
        with sock:
            options = (
                sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
                sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
            )
        release.set()
        assert (await running)["ok"] is True  # a silent step that ends is no error
    assert options == (
        1,
        CLIENT_TCP_KEEPALIVE_IDLE_SECONDS,
        CLIENT_TCP_KEEPALIVE_INTERVAL_SECONDS,
        CLIENT_TCP_KEEPALIVE_PROBES,
    )
