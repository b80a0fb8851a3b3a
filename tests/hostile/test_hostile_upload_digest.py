"""Against a real `argent server start`: an upload's digest is checked by the call that uses it.

``POST /upload`` stores the body without digesting it; a flow member names the upload with its
``contentHash`` and the server reads the member's tar, digesting it in that same read. A digest
other than the one named is the 422 it always was, whatever else is wrong with the archive (even a
bomb the reader stops early); an upload cut short, or still arriving at SIGTERM, leaves nothing.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import signal
import socket
import tarfile
import time
import urllib.parse
from collections.abc import Callable

from argent.link.archive import build_tar_gz_bytes
from tests.hostile.conftest import Probe
from tests.hostile.hostile_server import MEMBER_PATH, post_upload, upload_member_call
from tests.hostile.test_hostile_uploads import padding_bomb

MIB = 1024 * 1024
MISMATCH = (
    f'Upload content hash mismatch for "{MEMBER_PATH}" — the tarball may have been corrupted in transit. '
    "Re-run the tool to upload again."
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wait_until(done: Callable[[], bool], timeout: float = 10) -> None:
    """Poll with a deadline: nothing outside the server signals that its temp files are gone."""
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert done()


def open_upload(probe: Probe, declared: int, sent: int) -> socket.socket:
    """A POST /upload declaring ``declared`` bytes of which ``sent`` are sent; the socket is left open."""
    parsed = urllib.parse.urlsplit(probe.url)
    sock = socket.create_connection((parsed.hostname, parsed.port), timeout=10)
    head = (
        f"POST /upload HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {probe.token}\r\n"
        f"Content-Type: application/gzip\r\nContent-Length: {declared}\r\n\r\n"
    )
    sock.sendall(head.encode())
    for _ in range(sent // MIB):
        sock.sendall(bytes(MIB))
    return sock


def test_a_member_named_with_another_digest_is_refused_and_the_server_stays_fine(
    hostile_server: Probe,
) -> None:
    good = build_tar_gz_bytes("a.yaml", b"steps:\n  - echo: hi\n")
    other = build_tar_gz_bytes("a.yaml", b"steps:\n  - echo: bye\n")
    upload_id = post_upload(hostile_server, good)
    assert hostile_server.call("flow-execute", upload_member_call(upload_id, sha(other))) == (
        422,
        {"error": MISMATCH},
    )
    assert hostile_server.leftovers() == []
    # The right digest, on a fresh upload of the same bytes: the member is read and runs.
    status, body = hostile_server.call(
        "flow-execute", upload_member_call(post_upload(hostile_server, good), sha(good))
    )
    assert status == 200, body
    hostile_server.assert_still_fine()


def two_entries() -> bytes:
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb") as gz, tarfile.open(fileobj=gz, mode="w|") as tar:
        for name in ("a.yaml", "b.yaml"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    return raw.getvalue()


WRONG_AND_BROKEN: dict[str, Callable[[], bytes]] = {
    "damaged": lambda: build_tar_gz_bytes("a.yaml", b"steps: []\n")[:-12],
    "bomb-stopped-at-the-limit": padding_bomb,
    "two-entries": two_entries,
    "not-gzip": lambda: b"not gzip at all",
}


def test_a_wrong_digest_wins_over_what_else_is_wrong_with_a_member(hostile_server: Probe) -> None:
    for name, body in WRONG_AND_BROKEN.items():
        data = body()
        upload_id = post_upload(hostile_server, data)
        # The same archive named with its own digest fails for its own reason: the reader did stop early.
        status, out = hostile_server.call(
            "flow-execute", upload_member_call(post_upload(hostile_server, data), sha(data))
        )
        assert status == 422 and out["error"] != MISMATCH, (name, out)
        assert hostile_server.call("flow-execute", upload_member_call(upload_id, "cd" * 32)) == (
            422,
            {"error": MISMATCH},
        ), name
        assert hostile_server.leftovers() == [], name
    hostile_server.assert_healthy()


def test_an_upload_cut_short_leaves_nothing(hostile_server: Probe) -> None:
    sock = open_upload(hostile_server, 64 * MIB, 6 * MIB)
    wait_until(lambda: len(hostile_server.leftovers()) == 1)
    sock.close()
    wait_until(lambda: hostile_server.leftovers() == [])
    hostile_server.assert_healthy()


def test_sigterm_while_an_upload_arrives_leaves_nothing(hostile_server: Probe) -> None:
    sock = open_upload(hostile_server, 64 * MIB, 6 * MIB)
    try:
        wait_until(lambda: len(hostile_server.leftovers()) == 1)
        assert hostile_server.server.stop(signal.SIGTERM) == 0
    finally:
        sock.close()
    assert hostile_server.leftovers() == []
