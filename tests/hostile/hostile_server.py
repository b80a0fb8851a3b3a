"""A hostile tool-server: a real aiohttp server on a loopback socket that answers what a test wants.

The client must treat every answer of a tool-server as untrusted input. This server lists the real
tools (or whatever a test sets) on ``GET /tools`` and answers ``POST /tools/<name>`` with an
``Answer``: buffered JSON, raw bytes, or an NDJSON stream of lines or of raw chunks (so a test can
send one line of hundreds of megabytes without holding it). It runs in a thread with its own event
loop, so the test drives the real CLI as a blocking subprocess meanwhile.

``run_measured`` runs the CLI and returns its peak resident memory (``ru_maxrss`` of that one
child, from ``wait4``): the proof that the client stays bounded whatever the server sends.

``post_upload`` and ``upload_member_call`` go the other way: they send a real server
(``hostile_server``'s ``Probe``) an upload and the flow-execute call that names it as a member.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from attrs import define, field

from tests.e2e.conftest import Cli

if TYPE_CHECKING:  # the conftest imports this module for its ``hostile`` fixture
    from tests.hostile.conftest import Probe

NDJSON = "application/x-ndjson"
TOKEN = "hostile-token"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIB = 1024 * 1024
#: Issue 11's bound on the CLI's memory, whatever the server sends.
MAX_CLI_RSS = 512 * MIB
#: Characters a terminal acts on; none may reach the CLI's output raw.
RAW_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: The project root of ``upload_member_call`` (nowhere on the server: the member is the upload).
MEMBER_ROOT = "/nowhere/proj"
MEMBER_PATH = f"{MEMBER_ROOT}/.argent/flows/a.yaml"

#: Answers one call: (the request, its JSON body) -> the response.
Answer = Callable[[web.Request, Any], Awaitable[web.StreamResponse]]


def real_listing() -> list[dict[str, Any]]:
    """The tool entries a real tool-server lists (the flow and recording tools)."""
    from argent.link.codec import to_wire
    from argent.tools.builtin import build_registry

    return [to_wire(entry) for entry in build_registry().entries()]


def buffered(body: Any, status: int = 200) -> Answer:
    """A plain JSON answer (``{"data": ...}`` is the caller's to wrap)."""

    async def answer(request: web.Request, _: Any) -> web.StreamResponse:
        return web.json_response(body, status=status)

    return answer


def buffered_raw(chunks: Callable[[], Iterable[bytes]], content_type: str = "application/json") -> Answer:
    """A non-stream answer written chunk by chunk (a body far larger than the server holds)."""

    async def answer(request: web.Request, _: Any) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": content_type})
        await response.prepare(request)
        with contextlib.suppress(ConnectionError):
            for chunk in chunks():
                await response.write(chunk)
            await response.write_eof()
        return response

    return answer


def streamed(*lines: Any) -> Answer:
    """An NDJSON stream: each dict is one JSON line; bytes are written as they are."""

    def chunks() -> Iterator[bytes]:
        for line in lines:
            yield line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n"

    return streamed_raw(chunks)


def streamed_raw(chunks: Callable[[], Iterable[bytes]]) -> Answer:
    """An NDJSON stream of raw chunks, produced as they are sent."""
    return buffered_raw(chunks, NDJSON)


def result_line(data: Any) -> dict[str, Any]:
    return {"event": "result", "data": data}


def progress_line(step: dict[str, Any]) -> dict[str, Any]:
    return {"event": "progress", "data": step}


def huge_progress_line(total: int, chunk: int = MIB) -> Callable[[], Iterator[bytes]]:
    """One progress line of about ``total`` bytes (a huge reason), then a result line."""

    def chunks() -> Iterator[bytes]:
        yield b'{"event":"progress","data":{"index":0,"kind":"echo","status":"pass","reason":"'
        block = b"a" * chunk
        for _ in range(total // chunk):
            yield block
        yield b'"}}\n'
        yield json.dumps(result_line(report())).encode() + b"\n"

    return chunks


def step(index: int = 0, **extra: Any) -> dict[str, Any]:
    return {"index": index, "kind": "echo", "status": "pass", "flow": "main", "durationMs": 1, **extra}


def report(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A flow-execute result that passed."""
    return {
        "flow": "main",
        "device": "chromium-cdp-1",
        "ok": True,
        "passed": len(steps),
        "failed": 0,
        "skipped": 0,
        "errored": 0,
        "steps": list(steps),
        **extra,
    }


def text_directive(path: str | Path, content: str = "steps:\n  - script: ./pwn.sh\n") -> dict[str, Any]:
    return {"__argentClientFile": True, "path": str(path), "content": content}


def baseline_directive(path: str | Path, data: bytes = PNG_SIGNATURE + b"new") -> dict[str, Any]:
    return {
        "__argentClientFile": True,
        "path": str(path),
        "content": base64.b64encode(data).decode(),
        "encoding": "base64",
    }


@define
class HostileToolServer:
    """The server: ``answers`` by tool name; a tool without one answers an empty report."""

    tools: list[Any] = field(factory=real_listing)
    answers: dict[str, Answer] = field(factory=dict)
    calls: list[tuple[str, Any]] = field(factory=list)
    #: Answers GET /tools instead of the JSON of ``tools`` (its body argument is None).
    listing: Answer | None = None
    #: The bodies POST /upload received, in order (each answered with a fresh uploadId, or ``on_upload``).
    uploads: list[bytes] = field(factory=list)
    on_upload: Answer | None = None
    url: str = ""
    _loop: asyncio.AbstractEventLoop = field(factory=asyncio.new_event_loop)
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None

    def on(self, name: str, answer: Answer) -> None:
        self.answers[name] = answer

    def env(self, **extra: str) -> dict[str, str]:
        """The environment that points the CLI at this server."""
        return {"ARGENT_TOOLS_URL": self.url, "ARGENT_AUTH_TOKEN": TOKEN, **extra}

    def _app(self) -> web.Application:
        async def tools(request: web.Request) -> web.StreamResponse:
            if self.listing is not None:
                return await self.listing(request, None)
            return web.json_response({"tools": self.tools})

        async def call(request: web.Request) -> web.StreamResponse:
            name = request.match_info["name"]
            body = json.loads(await request.read() or b"null")
            self.calls.append((name, body))
            answer = self.answers.get(name, buffered({"data": report()}))
            return await answer(request, body)

        async def upload(request: web.Request) -> web.StreamResponse:
            self.uploads.append(await request.read())
            if self.on_upload is not None:
                return await self.on_upload(request, None)
            return web.json_response({"uploadId": f"upload-{len(self.uploads)}"})

        app = web.Application()
        app.router.add_get("/tools", tools)
        app.router.add_post("/tools/{name}", call)
        app.router.add_post("/upload", upload)
        return app

    async def _start(self) -> None:
        self._runner = web.AppRunner(self._app())
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop.close()


@contextlib.contextmanager
def hostile_tool_server(tools: list[Any] | None = None) -> Iterator[HostileToolServer]:
    server = HostileToolServer() if tools is None else HostileToolServer(tools=tools)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@define
class Measured:
    """A finished CLI run and the peak resident memory of its process."""

    returncode: int
    stdout: str
    stderr: str
    peak_rss_bytes: int


#: Runs its arguments but the first as a child and writes the child's ``ru_maxrss`` (KiB) to the fd
#: the first names. A process keeps the peak of the memory it was forked with across ``exec``, so
#: the CLI is forked from this small launcher, not from the test process (which earlier tests may
#: have grown past any cap the tests set).
_LAUNCHER = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "os.write(int(sys.argv[1]), str(usage.ru_maxrss).encode())\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def run_measured(cli: Cli, *args: str, timeout: float = 120, **env: str) -> Measured:
    """Run the real CLI; its peak RSS is ``ru_maxrss`` of exactly that process (``os.wait4`` in a
    small launcher process)."""
    peak_r, peak_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(peak_w), sys.executable, "-m", "argent", *args],
        cwd=cli.cwd,
        env=cli.env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        pass_fds=(peak_w,),
        start_new_session=True,  # a timeout kills the launcher and the CLI together
    )
    os.close(peak_w)
    out: dict[str, bytes] = {}

    def drain(name: str, stream: Any) -> None:
        out[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=("stdout", proc.stdout)),
        threading.Thread(target=drain, args=("stderr", proc.stderr)),
    ]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(timeout)
    if any(reader.is_alive() for reader in readers):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with os.fdopen(peak_r, "rb") as peak:
        peak_kib = int(peak.read() or b"0")
    return Measured(
        returncode=proc.returncode,
        stdout=out.get("stdout", b"").decode("utf-8", "replace"),
        stderr=out.get("stderr", b"").decode("utf-8", "replace"),
        peak_rss_bytes=peak_kib * 1024,  # KiB on Linux
    )


def post_upload(probe: Probe, data: bytes) -> str:
    """``POST /upload`` of ``data`` to a real server: its upload id."""
    request = urllib.request.Request(
        f"{probe.url}/upload",
        data=data,
        headers={"Content-Type": "application/gzip", **probe.auth()},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as resp:
        return str(json.loads(resp.read())["uploadId"])


def upload_member_call(upload_id: str, content_hash: str) -> dict[str, Any]:
    """A flow-execute call (as the client sends it) whose one flow member, ``MEMBER_PATH``, is the
    upload, named with ``content_hash``."""
    flows = f"{MEMBER_ROOT}/.argent/flows"
    member = {
        "role": "flow",
        "key": f"{flows}\0a.yaml",
        "path": MEMBER_PATH,
        "canonical": MEMBER_PATH,
        "spelling": {"state": "listed"},
        "uploadId": upload_id,
        "contentHash": content_hash,
    }
    wire = {
        "__argentFileInput": True,
        "path": f"{flows}/main.yaml",
        "content": base64.b64encode(b"steps:\n  - run: a.yaml\n").decode(),
        "canonical": f"{flows}/main.yaml",
        "spelling": {"state": "listed"},
        "members": [member],
    }
    return {"project_root": MEMBER_ROOT, "name": "main", "flow_file": wire}
