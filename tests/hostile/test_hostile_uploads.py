"""Hostile uploads against a real `argent server start` (issue 10, items 3 and 6).

A member upload is read while it streams: a gzip bomb or an archive of 99,001 entries sent as a
member is refused with 422 at once, and the server's temp dir never holds more than the upload
itself. A server killed with SIGKILL leaves its uploads behind; the next server started on the
same temp dir removes them, and nothing else.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import os
import queue
import signal
import socket
import struct
import tarfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from argent.limits import MAX_FILE_BYTES, MEMBER_ARCHIVE_OVERHEAD_BYTES
from tests.e2e.conftest import Cli
from tests.hostile.conftest import Probe, start_probe
from tests.hostile.hostile_server import MEMBER_PATH, post_upload, upload_member_call

MIB = 1024 * 1024
GIB = 1024 * MIB
#: The per-file cap of the link, and what a member's archive may expand to.
FILE_LIMIT = MAX_FILE_BYTES
EXPANSION_LIMIT = MAX_FILE_BYTES + MEMBER_ARCHIVE_OVERHEAD_BYTES
#: How far the temp dir may grow past the upload while a hostile member is read (nothing is written).
TMP_GROWTH_BOUND = MIB
#: How fast a hostile member call must be refused.
REFUSED_WITHIN_SECONDS = 5.0
#: Issue 10, item 6: a restarted server removes a killed server's uploads within 10 s of its banner.
RECLAIMED_WITHIN_SECONDS = 10.0


# --------------------------------------------------------------------------------------------
# Hostile archives, built in a blink


def zeros_gzip(prefix: bytes, zero_mib: int, suffix: bytes = b"") -> bytes:
    """A valid gzip of ``prefix + zero_mib MiB of NUL + suffix``: one compressed MiB, repeated.

    After a full flush deflate no longer refers back, so the block for a MiB of zeros is reused.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(MIB)
    head = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.compress(suffix) + compressor.flush(zlib.Z_FINISH)
    crc = zlib.crc32(prefix)
    for _ in range(zero_mib):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(suffix, crc)
    size = (len(prefix) + zero_mib * MIB + len(suffix)) & 0xFFFFFFFF
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
        + head
        + block * zero_mib
        + tail
        + struct.pack("<II", crc, size)
    )


def header(name: str, size: int = 0) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = 0
    return info.tobuf(tarfile.USTAR_FORMAT)


def declared_bomb() -> bytes:
    """One member file declared (and sent) as 1 GiB of zeros: about 1 MB on the wire."""
    return zeros_gzip(header("a.yaml", GIB), 1024, bytes(1024))


def padding_bomb() -> bytes:
    """A small, valid member file followed by 1 GiB of zero 'padding'."""
    data = b"steps: []\n"
    return zeros_gzip(header("a.yaml", len(data)) + data.ljust(512, b"\0"), 1024)


def many_entries(count: int = 99_001) -> bytes:
    """A gzipped tar of ``count`` empty files named f000000, f000001, ... (headers patched in place)."""
    block = bytearray(header("f000000"))
    block[148:156] = b" " * 8
    base = sum(block)
    out = bytearray()
    for index in range(count):
        digits = b"%06d" % index
        block[1:7] = digits
        block[148:156] = b"%06o\0 " % (base + sum(digits) - 6 * ord("0"))
        out += block
        block[148:156] = b" " * 8
    return gzip.compress(bytes(out) + bytes(1024))


# --------------------------------------------------------------------------------------------
# Talking to the server


def member_call(upload_id: str, data: bytes) -> dict[str, Any]:
    """A flow-execute call whose one flow member is the upload of ``data``, named with its digest."""
    return upload_member_call(upload_id, hashlib.sha256(data).hexdigest())


def tmp_bytes(directory: Path) -> int:
    """Bytes of every file under ``directory`` (files that vanish while we look count as 0)."""
    total = 0
    for top, _dirs, files in os.walk(directory):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(top, name)).st_size
    return total


@contextlib.contextmanager
def sampled(directory: Path) -> Iterator[list[int]]:
    """Sample the bytes in ``directory`` every few ms while the block runs; yields the samples."""
    samples: list[int] = [tmp_bytes(directory)]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append(tmp_bytes(directory))
            done.wait(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        done.set()
        thread.join()
        samples.append(tmp_bytes(directory))


def while_healthy(probe: Probe, work: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``work`` in a thread; `/healthz` must answer within 1 s all along. Returns (result, seconds)."""
    result: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # handed to the test below
            errors.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    probe.assert_healthy()
    while thread.is_alive():
        probe.assert_healthy()
        thread.join(0.05)
    took = time.monotonic() - started
    if errors:
        raise errors[0]
    return result[0], took


# --------------------------------------------------------------------------------------------
# Item 3: a member upload is checked while it streams


def refused_member(probe: Probe, data: bytes) -> tuple[int, Any, float, int]:
    """Upload ``data``, call with it as a member; (status, body, seconds, temp dir growth past the upload)."""
    upload_id = post_upload(probe, data)
    with sampled(probe.tmp_dir) as samples:
        (status, body), took = while_healthy(
            probe, lambda: probe.call("flow-execute", member_call(upload_id, data))
        )
    return status, body, took, max(samples) - samples[0]


def test_a_gzip_bomb_member_is_refused_at_its_header_and_nothing_is_written(hostile_server: Probe) -> None:
    data = declared_bomb()
    assert len(data) < 2 * MIB
    status, body, took, growth = refused_member(hostile_server, data)
    assert (status, body["error"]) == (
        422,
        f'Member "{MEMBER_PATH}" is {GIB} bytes — exceeds the {FILE_LIMIT}-byte limit on one file.',
    )
    assert took < REFUSED_WITHIN_SECONDS
    assert growth <= TMP_GROWTH_BOUND, f"the temp dir grew by {growth} bytes"
    hostile_server.assert_still_fine()


def test_a_gzip_bomb_after_a_small_member_file_stops_at_the_expansion_limit(hostile_server: Probe) -> None:
    data = padding_bomb()
    status, body, took, growth = refused_member(hostile_server, data)
    assert (status, body["error"]) == (
        422,
        f'Could not extract the uploaded archive for "{MEMBER_PATH}": '
        f"Archive expands beyond the {EXPANSION_LIMIT}-byte limit — refusing extraction.",
    )
    assert took < REFUSED_WITHIN_SECONDS
    assert growth <= TMP_GROWTH_BOUND, f"the temp dir grew by {growth} bytes"
    hostile_server.assert_still_fine()


def test_a_member_archive_of_99001_entries_is_refused_at_its_second(hostile_server: Probe) -> None:
    data = many_entries()
    status, body, took, growth = refused_member(hostile_server, data)
    assert (status, body["error"]) == (
        422,
        f'The upload for member "{MEMBER_PATH}" does not hold one regular file of at most {FILE_LIMIT} bytes '
        "(found more than one entry).",
    )
    assert took < REFUSED_WITHIN_SECONDS
    assert growth <= TMP_GROWTH_BOUND, f"the temp dir grew by {growth} bytes"
    hostile_server.assert_still_fine()


# --------------------------------------------------------------------------------------------
# Item 6: what a killed server leaves, the next one removes


def our_files(directory: Path) -> set[str]:
    return {name for name in os.listdir(directory) if name.startswith("argent-")}


def wait_for_new_file(directory: Path, before: set[str], timeout: float = 10) -> str:
    """The file a server just created for an arriving upload (no event exists: poll with a deadline)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        new = our_files(directory) - before
        if new:
            assert len(new) == 1, new
            return new.pop()
        time.sleep(0.01)
    raise AssertionError("no upload file appeared")


def stderr_lines(probe: Probe) -> queue.Queue[str]:
    """Every line the server writes on stderr, as it comes."""
    lines: queue.Queue[str] = queue.Queue()
    stream = probe.server.proc.stderr
    assert stream is not None

    def pump() -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return lines


def start_partial_upload(probe: Probe) -> socket.socket:
    """An upload still arriving: 64 KiB of a declared MiB, the connection held open."""
    parsed = urllib.parse.urlsplit(probe.url)
    sock = socket.create_connection((parsed.hostname, parsed.port), timeout=10)
    head = (
        f"POST /upload HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {probe.token}\r\n"
        f"Content-Type: application/gzip\r\nContent-Length: {MIB}\r\n\r\n"
    )
    sock.sendall(head.encode() + bytes(64 * 1024))
    return sock


def test_a_restarted_server_removes_a_killed_servers_uploads_and_nothing_else(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    killed = start_probe(cli, project, tmp_path)
    running = start_probe(cli, project, tmp_path)
    tmp = killed.tmp_dir
    assert running.tmp_dir == tmp
    restarted: Probe | None = None
    held: list[Any] = []
    live = "b" * 12
    live_lock = tmp / f".argent-server-{live}.lock"
    lookalikes: list[str] = []
    try:
        # The killed server: one pending upload, one still arriving.
        before = our_files(tmp)
        post_upload(killed, b"\x1f\x8b pending upload of the server we kill")
        killed_pending = wait_for_new_file(tmp, before)
        before = our_files(tmp)
        held.append(start_partial_upload(killed))
        killed_partial = wait_for_new_file(tmp, before)
        # The server that keeps running: one pending upload.
        before = our_files(tmp)
        post_upload(running, b"\x1f\x8b pending upload of a running server")
        running_pending = wait_for_new_file(tmp, before)
        # Files that are not uploads of a stopped server: old-style and lock-less names, a live lock's files.
        # (a lock held by this test stands for a server that runs).
        lock = live_lock.open("w")
        held.append(lock)
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        lookalikes += [
            f"argent-upload-{uuid.uuid4()}.tar.gz",
            f"argent-upload-{'a' * 12}-{uuid.uuid4()}.tar.gz",
            f"argent-upload-{live}-{uuid.uuid4()}.tar.gz",
            f"argent-file-input-{live}-x1y2z3",
        ]
        for name in lookalikes:
            (tmp / name).write_bytes(b"not an upload of a stopped server")

        assert killed.server.stop(signal.SIGKILL) == -signal.SIGKILL
        assert {killed_pending, killed_partial} <= our_files(tmp)

        restarted = start_probe(cli, project, tmp_path)
        banner = time.monotonic()
        lines = stderr_lines(restarted)
        deadline = banner + RECLAIMED_WITHIN_SECONDS
        seen: list[str] = []
        while not any("left by stopped tool-servers" in line for line in seen):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no removal reported within {RECLAIMED_WITHIN_SECONDS}s: {seen}"
            with contextlib.suppress(queue.Empty):
                seen.append(lines.get(timeout=remaining))
        assert time.monotonic() - banner < RECLAIMED_WITHIN_SECONDS
        left = our_files(tmp)
        assert killed_pending not in left and killed_partial not in left
        assert running_pending in left
        assert set(lookalikes) <= left

        restarted.assert_healthy()
        running.assert_healthy()
    finally:
        for item in held:
            item.close()
        for name in lookalikes:
            (tmp / name).unlink(missing_ok=True)
        live_lock.unlink(missing_ok=True)
        killed.server.stop(signal.SIGKILL)
        assert running.server.stop(signal.SIGTERM) == 0
    assert restarted is not None
    restarted.assert_still_fine()
    restarted.server.stop(signal.SIGTERM)
    assert os.listdir(tmp) == []
