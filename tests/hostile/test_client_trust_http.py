"""The HTTP exchange with a hostile tool-server (or a broken proxy in front of it).

Each test runs the real CLI against a real aiohttp server on a loopback socket that answers what a
real tool-server never would: a redirect to another host, a body the client cannot use. The client
sends nothing past the URL the user linked and says what happened.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.e2e.conftest import Cli
from tests.hostile.hostile_server import (
    MAX_CLI_RSS,
    MIB,
    TOKEN,
    HostileToolServer,
    buffered_raw,
    hostile_tool_server,
    run_measured,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def main_flow() -> str:
    """The flow whose words the tests look for (``flows`` writes it as ``main.yaml``)."""
    return "steps:\n  - echo: the flow's own words\n"


@pytest.fixture
def elsewhere() -> Iterator[HostileToolServer]:
    """Another tool-server, on another port (another origin): where a redirect points."""
    with hostile_tool_server() as server:
        yield server


def redirect_to(target: HostileToolServer, status: int = 307) -> Any:
    async def answer(request: web.Request, _: Any) -> web.StreamResponse:
        return web.Response(status=status, headers={"Location": f"{target.url}{request.path}"})

    return answer


def test_a_call_is_never_sent_on_to_where_a_redirect_points(
    cli: Cli, flows: Path, elsewhere: HostileToolServer
) -> None:
    with hostile_tool_server() as linked:
        linked.on("flow-execute", redirect_to(elsewhere))
        done = cli.run("flow", "run", "main", **linked.env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert elsewhere.calls == []  # the flow's files went nowhere else
    assert done.stderr.splitlines() == [
        f"Error: The tool-server at {linked.url} answered 307 Temporary Redirect to flow-execute, a redirect to "
        f"{elsewhere.url}/tools/flow-execute. The client follows no redirect: a call carries your token and "
        "your files, and goes only to the URL you linked. If the tool-server moved, link to its new URL "
        "(argent link <url>, or set ARGENT_TOOLS_URL)."
    ]


def test_a_listing_is_never_read_from_where_a_redirect_points(cli: Cli, elsewhere: HostileToolServer) -> None:
    elsewhere.tools = [{"name": "planted", "description": "a listing the user never linked"}]
    with hostile_tool_server() as linked:
        linked.listing = redirect_to(elsewhere, 301)
        done = cli.run("tools", "list", **linked.env())
    assert done.returncode == 1
    assert "planted" not in done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"Error: The tool-server at {linked.url} answered 301 Moved Permanently to GET /tools, a redirect to "
        f"{elsewhere.url}/tools. The client follows no redirect: a call carries your token and your files, and "
        "goes only to the URL you linked. If the tool-server moved, link to its new URL (argent link <url>, or "
        "set ARGENT_TOOLS_URL)."
    ]


def test_an_upload_is_never_sent_on_to_where_a_redirect_points(
    cli: Cli, project: Path, elsewhere: HostileToolServer
) -> None:
    app = project / "app"
    app.mkdir()
    (app / "bundle.js").write_text("the user's app")
    tools = [
        {
            "name": "install",
            "inputSchema": {"type": "object", "properties": {"appPath": {"type": "string"}}},
            "fileInputs": [{"target": "appPath", "path": "${appPath}", "kind": "tar-upload"}],
        }
    ]
    with hostile_tool_server(tools) as linked:
        linked.on_upload = redirect_to(elsewhere, 308)
        done = cli.run("run", "install", "--appPath", str(app), **linked.env())
    assert done.returncode == 1
    assert len(linked.uploads) == 1 and elsewhere.uploads == [] and linked.calls == []
    assert (
        f"Error: The tool-server at {linked.url} answered 308 Permanent Redirect to the upload of {app}, a "
        f"redirect to {elsewhere.url}/upload. The client follows no redirect"
    ) in done.stderr


# --------------------------------------------------------------------------------------------
# `argent link` asks the tool-server for its listing first: that answer is bounded too


def gzip_bomb(expanded: int) -> bytes:
    """A gzip stream of ``expanded`` zero bytes, about a thousandth of that on the wire: each MiB is
    flushed in full, so its compressed bytes repeat and are made once (no trailer: nothing checks it
    before the memory is gone)."""
    squeezer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(MIB)
    head = squeezer.compress(block) + squeezer.flush(zlib.Z_FULL_FLUSH)
    again = squeezer.compress(block) + squeezer.flush(zlib.Z_FULL_FLUSH)
    return head + again * (expanded // MIB - 1)


def test_link_reads_a_gzip_bomb_listing_in_bounded_memory(cli: Cli) -> None:
    bomb = gzip_bomb(2048 * MIB)

    async def listing(request: web.Request, _: Any) -> web.StreamResponse:
        return web.Response(
            body=bomb, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"}
        )

    with hostile_tool_server() as linked:
        linked.listing = listing
        target = linked.url.replace("http://", f"argent://{TOKEN}@")
        done = run_measured(cli, "link", target)
    assert done.returncode == 1, done.stdout + done.stderr
    assert not (cli.home / ".argent" / "link.json").exists()
    assert done.peak_rss_bytes < MAX_CLI_RSS, f"peak RSS {done.peak_rss_bytes / MIB:.0f} MiB"
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"Error: {linked.url} answered GET /tools, but not with a tool list: is it an argent tool-server "
        "(behind a proxy, is the path right)? Nothing was written."
    ]


def test_link_reads_a_huge_listing_in_bounded_memory(cli: Cli) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"tools": ["'
        block = b"t" * MIB
        for _ in range(1024):
            yield block
        yield b'"]}'

    with hostile_tool_server() as linked:
        linked.listing = buffered_raw(chunks)
        target = linked.url.replace("http://", f"argent://{TOKEN}@")
        done = run_measured(cli, "link", target)
    assert done.returncode == 1, done.stdout + done.stderr
    assert not (cli.home / ".argent" / "link.json").exists()
    assert done.peak_rss_bytes < MAX_CLI_RSS, f"peak RSS {done.peak_rss_bytes / MIB:.0f} MiB"
    assert done.stderr.splitlines() == [
        f"Error: The tool-server at {linked.url} answered GET /tools: the answer is over the 64 MiB cap on a "
        "result; the client stopped reading. Nothing was written."
    ]


def test_link_follows_no_redirect(cli: Cli, elsewhere: HostileToolServer) -> None:
    with hostile_tool_server() as linked:
        linked.listing = redirect_to(elsewhere, 302)
        target = linked.url.replace("http://", f"argent://{TOKEN}@")
        done = cli.run("link", target)
    assert done.returncode == 1
    assert not (cli.home / ".argent" / "link.json").exists()
    assert done.stderr.splitlines() == [
        f"Error: The tool-server at {linked.url} answered GET /tools with 302 Found, a redirect to "
        f"{elsewhere.url}/tools; the client follows no redirect. If the tool-server is there, link to that "
        "URL. Nothing was written."
    ]


def test_a_compressed_answer_says_which_proxy_setting_to_turn_off(cli: Cli, flows: Path) -> None:
    line = json.dumps({"event": "result", "data": {"flow": "main", "ok": True, "steps": []}}).encode() + b"\n"

    async def compressed(request: web.Request, _: Any) -> web.StreamResponse:
        headers = {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"}
        return web.Response(body=gzip.compress(line), headers=headers)

    with hostile_tool_server() as linked:
        linked.on("flow-execute", compressed)
        done = cli.run("flow", "run", "main", **linked.env())
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"Error: The tool-server at {linked.url} answered flow-execute with a body in the gzip content encoding, "
        "though the client asks for none (Accept-Encoding: identity) and decodes none (it could expand past "
        "every cap). A proxy in front of the tool-server compresses its answers: turn that off for the "
        "tool-server (gzip off; in nginx). The tool may have run; check its effect before you run it again."
    ]


def test_a_compressed_error_page_is_told_by_its_status(cli: Cli, flows: Path) -> None:
    async def bad_gateway(request: web.Request, _: Any) -> web.StreamResponse:
        page = gzip.compress(b"<html><body><h1>502 Bad Gateway</h1></body></html>")
        return web.Response(
            status=502, body=page, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}
        )

    with hostile_tool_server() as linked:
        linked.on("flow-execute", bad_gateway)
        done = cli.run("flow", "run", "main", **linked.env())
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"Error: The tool-server at {linked.url} answered 502 Bad Gateway to flow-execute."
    ]
