"""Hostile HTTP: slow, stalled, idle, too many and malformed connections (issue 10, items 4 and 5).

The defaults are proved against a real `argent server start`; the exact semantics of each timeout
and of the connection cap against an in-process server on a real socket with short values
(``ServerConfig``), so those tests take about a second each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from attrs import frozen

from argent.limits import (
    BODY_IDLE_TIMEOUT_SECONDS,
    HEADER_READ_TIMEOUT_SECONDS,
    KEEPALIVE_TIMEOUT_SECONDS,
    MAX_OPEN_CONNECTIONS,
)
from argent.server.config import ServerConfig
from argent.server.serve import RunningServer, start_server
from tests.e2e.conftest import Cli
from tests.hostile.conftest import Probe, start_probe

pytestmark = pytest.mark.e2e

#: "each closes within 30 s by default" (issue 10, item 4).
CLOSES_WITHIN_SECONDS = 30.0
TOKEN = "hostile-http-token"
#: The short values of the in-process servers.
SHORT = 0.5


# ----------------------------------------------------------------------------------------------
# Raw HTTP over asyncio streams


@frozen
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        assert self.headers.get("content-type", "").startswith("application/json"), self
        return json.loads(self.body)


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


async def connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(*address(url))


def request(
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    raw_headers: bytes = b"",
    body: bytes = b"",
    length: int | None = None,
    close: bool = True,
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body or length is not None:
        lines.append(f"Content-Length: {len(body) if length is None else length}")
    if close:
        lines.append("Connection: close")
    return "\r\n".join(lines).encode() + b"\r\n" + raw_headers + b"\r\n" + body


async def read_answer(reader: asyncio.StreamReader) -> Answer:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Answer(status, headers, body)


async def exchange(url: str, raw: bytes) -> Answer:
    reader, writer = await connect(url)
    try:
        writer.write(raw)
        await writer.drain()
        return await asyncio.wait_for(read_answer(reader), 10)
    finally:
        writer.close()


async def seconds_until_closed(reader: asyncio.StreamReader, limit: float) -> tuple[float, bytes]:
    """How long until the server closed the connection (EOF or reset), and what it sent meanwhile."""
    t0 = time.monotonic()
    received = b""
    try:
        async with asyncio.timeout(limit):
            while chunk := await reader.read(65536):
                received += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    except TimeoutError:
        raise AssertionError(
            f"the server held the connection for {limit:g}s; it sent {received[:200]!r}"
        ) from None
    return time.monotonic() - t0, received


def answer_in(received: bytes) -> Answer:
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(
        (n.strip().lower(), v.strip()) for n, v in (line.split(":", 1) for line in lines[1:] if line)
    )
    return Answer(int(lines[0].split()[1]), headers, body)


async def trickle(
    writer: asyncio.StreamWriter, first: bytes, every: float, trickling: asyncio.Event | None = None
) -> None:
    """Send the start of a request, then one header byte every ``every`` seconds, forever.

    ``trickling`` is set once the first trickled byte is sent."""
    writer.write(first)
    while True:
        await writer.drain()
        await asyncio.sleep(every)
        writer.write(b"a")
        if trickling is not None:
            trickling.set()


@contextlib.asynccontextmanager
async def in_process(tmp_path: Path, **overrides: Any) -> AsyncIterator[RunningServer]:
    """A real tool-server (built-in tools) on a loopback socket, with short limits."""
    values: dict[str, Any] = {
        "header_timeout_seconds": SHORT,
        "body_idle_timeout_seconds": SHORT,
        "keepalive_timeout_seconds": SHORT,
        **overrides,
    }
    tmp_dir = tmp_path / "server-tmp"
    tmp_dir.mkdir(exist_ok=True)
    running = await start_server(ServerConfig(port=0, token=TOKEN, tmp_dir=str(tmp_dir), **values))
    try:
        yield running
    finally:
        await running.stop()


def ours(tmp_dir: Path) -> list[str]:
    return sorted(p.name for p in tmp_dir.iterdir() if p.name.startswith("argent-"))


async def wait_for_file(directory: Path, prefix: str, timeout: float = 10) -> None:
    """Poll (no event exists across processes) until a file named ``prefix*`` exists."""
    deadline = time.monotonic() + timeout
    while not any(p.name.startswith(prefix) for p in directory.iterdir()):
        assert time.monotonic() < deadline, f"no {prefix}* file in {directory}"
        await asyncio.sleep(0.02)


AUTH = {"Authorization": f"Bearer {TOKEN}"}


# ----------------------------------------------------------------------------------------------
# Item 4: the defaults, against a real `argent server start`


def test_default_timeouts_are_named_and_each_closes_within_30s() -> None:
    for value in (HEADER_READ_TIMEOUT_SECONDS, BODY_IDLE_TIMEOUT_SECONDS, KEEPALIVE_TIMEOUT_SECONDS):
        assert 0 < value < CLOSES_WITHIN_SECONDS
    assert MAX_OPEN_CONNECTIONS > 1000
    config = ServerConfig()
    assert config.header_timeout_seconds == HEADER_READ_TIMEOUT_SECONDS
    assert config.body_idle_timeout_seconds == BODY_IDLE_TIMEOUT_SECONDS
    assert config.keepalive_timeout_seconds == KEEPALIVE_TIMEOUT_SECONDS
    assert config.max_connections == MAX_OPEN_CONNECTIONS


async def test_trickled_headers_a_stalled_upload_and_an_idle_connection_close_within_30s(
    hostile_server: Probe,
) -> None:
    probe = hostile_server
    auth = {"Authorization": f"Bearer {probe.token}"}

    async def trickling() -> float:
        reader, writer = await connect(probe.url)
        sender = asyncio.create_task(
            trickle(writer, b"GET /tools HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 0.5)
        )
        try:
            took, _ = await seconds_until_closed(reader, CLOSES_WITHIN_SECONDS + 5)
        finally:
            sender.cancel()
            writer.close()
        return took

    async def stalled_upload() -> float:
        reader, writer = await connect(probe.url)
        writer.write(request("POST", "/upload", headers=auth, length=10_000_000, close=False) + b"x" * 65536)
        await writer.drain()
        await wait_for_file(probe.tmp_dir, "argent-upload-")
        took, received = await seconds_until_closed(reader, CLOSES_WITHIN_SECONDS + 5)
        writer.close()
        answer = answer_in(received)
        assert answer.status == 408
        assert "stalled" in answer.json()["error"]
        return took

    async def idle() -> float:
        reader, writer = await connect(probe.url)
        writer.write(request("GET", "/healthz", close=False))
        assert (await read_answer(reader)).status == 200
        took, _ = await seconds_until_closed(reader, CLOSES_WITHIN_SECONDS + 5)
        writer.close()
        return took

    held = await asyncio.gather(
        trickling(), stalled_upload(), idle(), asyncio.to_thread(probe.assert_healthy)
    )
    limits = (HEADER_READ_TIMEOUT_SECONDS, BODY_IDLE_TIMEOUT_SECONDS, KEEPALIVE_TIMEOUT_SECONDS)
    for took, limit in zip(held[:3], limits, strict=True):
        assert took < min(limit + 2, CLOSES_WITHIN_SECONDS)
    await asyncio.to_thread(probe.assert_still_fine)


async def test_200_trickling_connections_delay_no_one(hostile_server: Probe) -> None:
    probe = hostile_server
    opened = await asyncio.gather(*(connect(probe.url) for _ in range(200)))
    trickling = [asyncio.Event() for _ in opened]
    senders = [
        asyncio.create_task(
            trickle(writer, b"GET /tools HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 0.2, started)
        )
        for (_, writer), started in zip(opened, trickling, strict=True)
    ]
    try:
        # Every trickler is mid-header; they keep going during the checks below.
        await asyncio.wait_for(asyncio.gather(*(started.wait() for started in trickling)), 10)
        for _ in range(5):
            await asyncio.to_thread(probe.assert_healthy)
        await asyncio.to_thread(probe.assert_serves_a_normal_flow)
        assert not any(reader.at_eof() for reader, _ in opened), "a trickler was dropped before its deadline"
    finally:
        for task in senders:
            task.cancel()
        for _, writer in opened:
            writer.close()
    await asyncio.to_thread(probe.assert_still_fine)


async def test_over_a_thousand_open_connections_fit_under_the_default_cap(hostile_server: Probe) -> None:
    probe = hostile_server
    opened = await asyncio.gather(*(connect(probe.url) for _ in range(1100)))
    try:
        # The last of them is served: it is under the cap, as is everyone else's.
        reader, writer = opened[-1]
        writer.write(request("GET", "/healthz"))
        assert (await asyncio.wait_for(read_answer(reader), 5)).status == 200
        await asyncio.to_thread(probe.assert_healthy)
    finally:
        for _, writer in opened:
            writer.close()
    await asyncio.to_thread(probe.assert_still_fine)


async def test_sigterm_with_a_stalled_upload_exits_0_within_5s_and_leaves_no_upload(
    hostile_server: Probe,
) -> None:
    probe = hostile_server
    _reader, writer = await connect(probe.url)
    writer.write(
        request("POST", "/upload", headers={"Authorization": f"Bearer {probe.token}"}, length=10_000_000)
        + b"x" * 65536
    )
    await writer.drain()
    await wait_for_file(probe.tmp_dir, "argent-upload-")
    t0 = time.monotonic()
    probe.server.proc.send_signal(signal.SIGTERM)
    code = await asyncio.to_thread(probe.server.proc.wait, 30)
    took = time.monotonic() - t0
    writer.close()
    assert code == 0
    assert took < 5, f"SIGTERM took {took:.1f}s with a stalled upload"
    assert probe.leftovers() == []


# ----------------------------------------------------------------------------------------------
# Item 5: crashes where a clear error belongs, against a real `argent server start`


async def test_a_non_utf8_authorization_header_is_401_json(hostile_server: Probe) -> None:
    probe = hostile_server
    for value in (b"Bearer \xff\xfe", b"\xff\xfe", b"Bearer " + probe.token.encode() + b"\xe9"):
        answer = await exchange(
            probe.url, request("GET", "/tools", raw_headers=b"Authorization: " + value + b"\r\n")
        )
        assert answer.status == 401, (value, answer)
        assert "Authorization" in answer.json()["error"]
    # Undecodable bytes in other headers are quoted escaped, never sent back raw.
    answer = await exchange(probe.url, b"GET /healthz HTTP/1.1\r\nHost: \xff\r\nConnection: close\r\n\r\n")
    assert answer.status == 403
    assert 'Host "\\xff"' in answer.json()["error"]
    await asyncio.to_thread(probe.assert_still_fine)


async def test_a_non_utf8_authorization_header_is_401_json_with_named_tokens_too(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    token = "n" * 40
    config = tmp_path / "server.yaml"
    config.write_text("tokens:\n  - name: ci\n    token_env: ARGENT_TOKEN_CI\n    tools: ['*']\n")
    probe = start_probe(cli, project, tmp_path, "--config", str(config), ARGENT_TOKEN_CI=token)
    try:
        for value in (b"Bearer \xff\xfe\xc3", b"Bearer " + token.encode() + b"\xff", "Bearer café".encode()):
            answer = await exchange(
                probe.url, request("GET", "/tools", raw_headers=b"Authorization: " + value + b"\r\n")
            )
            assert answer.status == 401, (value, answer)
            assert "Authorization" in answer.json()["error"]
        answer = await exchange(
            probe.url, request("GET", "/tools", raw_headers=f"Authorization: Bearer {token}\r\n".encode())
        )
        assert answer.status == 200
        await asyncio.to_thread(probe.assert_healthy)
    finally:
        probe.server.stop(signal.SIGKILL)


async def test_a_100k_deep_json_body_is_400_json(hostile_server: Probe) -> None:
    probe = hostile_server
    auth = {"Authorization": f"Bearer {probe.token}", "Content-Type": "application/json"}
    for body in (b"[" * 100_000, b'{"a":' * 100_000):
        answer = await exchange(probe.url, request("POST", "/tools/flow-execute", headers=auth, body=body))
        assert answer.status == 400, answer
        assert "nest" in answer.json()["error"]
    await asyncio.to_thread(probe.assert_still_fine)


MALFORMED = [
    # (what, raw request, status)
    ("HTTP/1.1 without Host", b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", 400),
    ("a malformed request line", b"GARBAGE\r\n\r\n", 400),
    ("a bad HTTP version", b"GET /healthz HTTP/9.Z\r\nHost: 127.0.0.1\r\n\r\n", 400),
    ("a request target too long", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
    (
        "a header too long",
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + b"a" * 9000 + b"\r\n\r\n",
        431,
    ),
    (
        "too many headers",
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + b"".join(b"X-%d: 1\r\n" % i for i in range(200))
        + b"\r\n",
        431,
    ),
    ("an invalid header", b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: 1\r\n\r\n", 400),
    ("TLS on the HTTP port", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + b"\x00" * 40, 400),
    (
        "a bad chunked body",
        b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        400,
    ),
]


async def test_parser_errors_answer_json_with_their_status(hostile_server: Probe) -> None:
    probe = hostile_server
    for what, raw, status in MALFORMED:
        answer = await exchange(probe.url, raw)
        assert answer.status == status, (what, answer)
        error = answer.json()["error"]
        assert isinstance(error, str) and error, what
        assert "Traceback" not in error, what
    assert probe.server.proc.stderr is not None
    await asyncio.to_thread(probe.assert_still_fine)
    probe.server.stop(signal.SIGTERM)
    log = probe.server.proc.stderr.read()
    assert "Traceback" not in log, log


# ----------------------------------------------------------------------------------------------
# Item 4: each timeout's exact semantics and the cap, with short values on a real socket


async def test_the_header_deadline_closes_a_connection_that_keeps_trickling(tmp_path: Path) -> None:
    async with in_process(tmp_path, keepalive_timeout_seconds=60) as running:
        reader, writer = await connect(running.url)
        sender = asyncio.create_task(
            trickle(writer, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 0.05)
        )
        try:
            took, received = await seconds_until_closed(reader, 5)
        finally:
            sender.cancel()
            writer.close()
        assert SHORT * 0.8 < took < SHORT + 1.5
        answer = answer_in(received)
        assert answer.status == 408
        assert "headers" in answer.json()["error"]


async def test_the_header_deadline_starts_at_the_first_byte_of_a_later_request(tmp_path: Path) -> None:
    async with in_process(tmp_path, keepalive_timeout_seconds=60) as running:
        reader, writer = await connect(running.url)
        try:
            writer.write(request("GET", "/healthz", close=False))
            assert (await read_answer(reader)).status == 200
            await asyncio.sleep(SHORT * 3)  # idle, kept alive: not a slow header
            writer.write(request("GET", "/healthz", close=False))
            assert (await asyncio.wait_for(read_answer(reader), 5)).status == 200
            sender = asyncio.create_task(trickle(writer, b"GET /healthz HTTP/1.1\r\nX-Slow: ", 0.05))
            try:
                took, _ = await seconds_until_closed(reader, 5)
            finally:
                sender.cancel()
            assert took < SHORT + 1.5
        finally:
            writer.close()


async def test_an_idle_kept_alive_connection_closes_after_the_keepalive_timeout(tmp_path: Path) -> None:
    async with in_process(tmp_path, header_timeout_seconds=60) as running:
        reader, writer = await connect(running.url)
        writer.write(request("GET", "/healthz", close=False))
        assert (await read_answer(reader)).status == 200
        took, received = await seconds_until_closed(reader, 5)
        writer.close()
        assert took < SHORT + 1.5
        assert received == b""


async def test_a_stalled_json_body_answers_408_json_and_closes(tmp_path: Path) -> None:
    async with in_process(tmp_path) as running:
        reader, writer = await connect(running.url)
        headers = {**AUTH, "Content-Type": "application/json"}
        writer.write(
            request("POST", "/tools/flow-execute", headers=headers, length=1000, close=False) + b'{"na'
        )
        took, received = await seconds_until_closed(reader, 5)
        writer.close()
        assert took < SHORT + 1.5
        answer = answer_in(received)
        assert answer.status == 408
        assert answer.headers.get("connection", "").lower() == "close"
        assert answer.json()["error"] == (
            f"The request body stalled: no bytes arrived for {SHORT:g}s. Send the body without pauses."
        )


async def test_a_stalled_upload_answers_408_and_leaves_no_file(tmp_path: Path) -> None:
    async with in_process(tmp_path) as running:
        tmp_dir = Path(running.config.tmp_dir)
        reader, writer = await connect(running.url)
        writer.write(request("POST", "/upload", headers=AUTH, length=1_000_000, close=False) + b"x" * 4096)
        took, received = await seconds_until_closed(reader, 5)
        writer.close()
        assert took < SHORT + 1.5
        assert answer_in(received).status == 408
        assert ours(tmp_dir) == []


async def test_a_slow_but_steady_body_is_not_a_stall(tmp_path: Path) -> None:
    async with in_process(tmp_path) as running:
        reader, writer = await connect(running.url)
        chunks = 8
        writer.write(request("POST", "/upload", headers=AUTH, length=chunks * 100))
        for _ in range(chunks):  # 8 x 0.2 s: three times the idle timeout in all, never idle that long
            writer.write(b"y" * 100)
            await writer.drain()
            await asyncio.sleep(SHORT * 0.4)
        answer = await asyncio.wait_for(read_answer(reader), 5)
        writer.close()
        assert answer.status == 200, answer
        assert "uploadId" in answer.json()


async def test_over_the_connection_cap_a_new_connection_is_refused_and_under_it_served(
    tmp_path: Path,
) -> None:
    cap = 8
    async with in_process(
        tmp_path, header_timeout_seconds=60, keepalive_timeout_seconds=60, max_connections=cap
    ) as running:
        held = []
        for _ in range(cap):
            reader, writer = await connect(running.url)
            writer.write(request("GET", "/healthz", close=False))
            assert (await read_answer(reader)).status == 200  # served, and now idle but open
            held.append((reader, writer))
        reader, writer = await connect(running.url)
        writer.write(request("GET", "/healthz"))
        _, received = await seconds_until_closed(reader, 5)
        writer.close()
        if received:  # the refusal may be lost to a reset; it is never a served request
            answer = answer_in(received)
            assert answer.status == 503
            assert "connections" in answer.json()["error"]
        # One held connection goes away: the next newcomer is served.
        held.pop()[1].close()
        deadline = time.monotonic() + 5
        while True:
            reader, writer = await connect(running.url)
            writer.write(request("GET", "/healthz"))
            try:
                served = (await asyncio.wait_for(read_answer(reader), 5)).status == 200
            except (asyncio.IncompleteReadError, ConnectionResetError):
                served = False  # refused: the server has not yet seen the held connection go
            writer.close()
            if served:
                break
            assert time.monotonic() < deadline, "a connection under the cap was not served"
            await asyncio.sleep(0.02)
        for _, writer in held:
            writer.close()


async def test_stopping_the_server_ends_a_stalled_upload_at_once(tmp_path: Path) -> None:
    async with in_process(tmp_path, body_idle_timeout_seconds=60) as running:
        tmp_dir = Path(running.config.tmp_dir)
        reader, writer = await connect(running.url)
        writer.write(request("POST", "/upload", headers=AUTH, length=1_000_000, close=False) + b"x" * 4096)
        await writer.drain()
        await wait_for_file(tmp_dir, "argent-upload-")
        t0 = time.monotonic()
        await running.stop()
        assert time.monotonic() - t0 < 2
        _, received = await seconds_until_closed(reader, 5)
        writer.close()
        assert answer_in(received).status == 503
        assert ours(tmp_dir) == []
