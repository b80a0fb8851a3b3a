"""What the API fuzz (tests/e2e/test_api_fuzz.py) found, each with the exact request that broke it,
against a real tool-server on a socket (``start_server``, as `argent server start` runs it)."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from aiohttp.streams import EMPTY_PAYLOAD

from argent.server.body import body_reads
from argent.server.config import ServerConfig
from argent.server.serve import start_server

TOKEN = "fuzz-findings-token-0123456789"
ANSWER_SECONDS = 10.0


@attrs.define
class ServerThread:
    """A tool-server on its own event loop in a thread: a request that holds that loop for good
    shows here as an answer that never comes (the test's own loop keeps its timeouts)."""

    port: int
    loop: asyncio.AbstractEventLoop
    stop: asyncio.Event
    thread: threading.Thread


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    ready: queue.Queue[ServerThread] = queue.Queue()

    async def serve() -> None:
        running = await start_server(ServerConfig(port=0, token=TOKEN, tmp_dir=str(tmp_path)))
        stop = asyncio.Event()
        ready.put(ServerThread(running.port, asyncio.get_running_loop(), stop, threading.current_thread()))
        try:
            await stop.wait()
        finally:
            await running.stop()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    running = ready.get(timeout=ANSWER_SECONDS)
    yield running
    running.loop.call_soon_threadsafe(running.stop.set)
    thread.join(ANSWER_SECONDS)  # a held loop stays held: the thread is a daemon


async def exchange(port: int, request: str) -> bytes:
    """Send one raw request on a new connection; the whole answer (the server closes or we read its length)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request.encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), ANSWER_SECONDS)
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        return head + await asyncio.wait_for(reader.readexactly(length), ANSWER_SECONDS)
    finally:
        writer.close()


def upload_without_a_body(port: int, framing: str) -> str:
    # curl -X POST -H 'Authorization: Bearer ...' http://127.0.0.1:<port>/upload
    return (
        f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n{framing}\r\n"
    )


@pytest.mark.parametrize("framing", ["", "Content-Length: 0\r\n"])
async def test_a_second_upload_without_a_body_is_answered_and_the_server_stays_up(
    server: ServerThread, framing: str
) -> None:
    # Found by the fuzz: aiohttp hands every request without a body one shared reader, which from
    # its second read on answers (b"", True) at once, forever; the upload's read loop spun on it
    # and held the event loop: no request was answered again, not even /healthz, nor SIGTERM.
    for _ in range(3):
        answer = await exchange(server.port, upload_without_a_body(server.port, framing))
        assert answer.startswith(b"HTTP/1.1 200"), answer
        assert b'"uploadId"' in answer
    health = await exchange(server.port, f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n")
    assert health.startswith(b"HTTP/1.1 200"), health


def test_the_shared_reader_of_bodiless_requests_ends_every_read_of_it() -> None:
    ended: list[list[bytes]] = []

    async def read_it_three_times() -> None:
        for _ in range(3):
            ended.append([chunk async for chunk in body_reads(EMPTY_PAYLOAD, idle_seconds=1.0)])

    reader = threading.Thread(target=asyncio.run, args=(read_it_three_times(),), daemon=True)
    reader.start()
    reader.join(ANSWER_SECONDS)
    assert ended == [[], [], []], "a read of the shared empty reader did not end"


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("TRACE", "/healthz", "GET"), ("TRACE", "/tools/list-devices", "POST"), ("PUT", "/upload", "POST")],
)
async def test_a_method_a_path_does_not_take_answers_405_with_the_methods_it_does(
    server: ServerThread, method: str, path: str, allowed: str
) -> None:
    # Found by the fuzz: curl -X TRACE -H 'Authorization: Bearer ...' http://127.0.0.1:<port>/healthz
    # answered 405 without the `Allow` header RFC 9110 requires with it.
    answer = await exchange(
        server.port,
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Length: 0\r\n\r\n",
    )
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 405"), answer
    allow = next(line for line in head.split(b"\r\n") if line.lower().startswith(b"allow:"))
    assert allowed in allow.split(b":", 1)[1].decode().replace(" ", "").split(",")
    assert body == f'{{"error": "{method} is not allowed on {path}."}}'.encode()
