"""A server's files in a shared temp dir, and the removal of what stopped servers left (argent.server.tmp_files)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from argent import limits
from argent.server.config import ServerConfig
from argent.server.tmp_files import ServerFiles, TmpClaim, reclaim_stopped_servers

HOLDER = """
import sys, time
from argent.server.tmp_files import ServerFiles, TmpClaim
TmpClaim(ServerFiles(sys.argv[1], sys.argv[2])).hold()
print("held", flush=True)
time.sleep(60)
"""


def killed_server(tmp: Path) -> ServerFiles:
    """The files of a server process that held its lock and was killed with SIGKILL."""
    files = ServerFiles(str(tmp))
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp), files.server_id], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    return files


def make_files(files: ServerFiles) -> set[str]:
    """One of each thing a server leaves at the top of its temp dir; returns their names."""
    upload = Path(files.upload_path(str(uuid.uuid4())))
    upload.write_bytes(b"\x1f\x8b pending upload")
    parent = Path(files.mkdtemp("tar-upload-parent"))
    (parent / "argent-tar-upload-0123456789abcdef-x" / "App.app").mkdir(parents=True)
    (parent / "argent-tar-upload-0123456789abcdef-x" / "App.app" / "bin").write_bytes(b"x" * 1000)
    file_input = Path(files.mkdtemp("file-input"))
    (file_input / "a.png").write_bytes(b"png")
    artifacts = Path(files.artifacts_dir)
    artifacts.mkdir()
    (artifacts / "home.actual.png").write_bytes(b"png")
    return {upload.name, parent.name, file_input.name, artifacts.name}


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    directory = tmp_path / "tmp"
    directory.mkdir()
    return directory


@pytest.fixture
def live(tmp: Path) -> Iterator[ServerFiles]:
    """A server that runs: it holds its lock (in this process)."""
    files = ServerFiles(str(tmp))
    claim = TmpClaim(files)
    claim.hold()
    yield files
    claim.release()


def test_a_killed_servers_files_are_removed_and_a_running_servers_are_kept(
    tmp: Path, live: ServerFiles
) -> None:
    dead = killed_server(tmp)
    dead_names = make_files(dead)
    live_names = make_files(live)
    assert Path(dead.lock_path).exists()

    removed = reclaim_stopped_servers(str(tmp), ServerFiles(str(tmp)).server_id)

    assert {dead.server_id: sorted(dead_names)} == {k: sorted(v) for k, v in removed.items()}
    left = set(os.listdir(tmp))
    assert not left & dead_names
    assert not Path(dead.lock_path).exists()
    assert live_names | {Path(live.lock_path).name} == left


def test_names_that_only_look_like_a_stopped_servers_files_are_kept(tmp: Path) -> None:
    dead = killed_server(tmp)
    outside = tmp.parent / "outside.tar.gz"
    outside.write_bytes(b"someone else's")
    nobody = "c" * 12  # an id without a lock file
    kept = {
        f"argent-upload-{uuid.uuid4()}.tar.gz": "file",  # no server id
        f"argent-upload-{nobody}-{uuid.uuid4()}.tar.gz": "file",  # no lock: no server to judge
        f"argent-file-input-{nobody}-abcdefgh": "dir",
        f"argent-upload-{dead.server_id}-not-a-uuid.tar.gz": "file",
        f"argent-upload-{dead.server_id}-{uuid.uuid4()}.tar.gz.bak": "file",
        f"argent-upload-{dead.server_id}-{uuid.uuid4()}.tar.gz": "symlink",  # not a file it wrote
        f"argent-artifacts-{dead.server_id}-extra": "dir",
        f"argent-file-input-{dead.server_id}-abc": "dir",  # not what mkdtemp makes
        f"argent-tar-upload-parent-{dead.server_id}-abcdefgh": "file",  # a file where it makes a dir
        f"argent-other-{dead.server_id}-abcdefgh": "dir",
        f"my-argent-upload-{dead.server_id}-{uuid.uuid4()}.tar.gz": "file",
    }
    for name, kind in kept.items():
        if kind == "file":
            (tmp / name).write_bytes(b"keep")
        elif kind == "dir":
            (tmp / name).mkdir()
        else:
            (tmp / name).symlink_to(outside)

    assert reclaim_stopped_servers(str(tmp), ServerFiles(str(tmp)).server_id) == {dead.server_id: []}
    assert set(os.listdir(tmp)) == set(kept)
    assert outside.read_bytes() == b"someone else's"


def test_a_lock_file_that_is_a_symlink_or_not_a_file_is_ignored(tmp: Path) -> None:
    files = ServerFiles(str(tmp))
    target = tmp.parent / "target.lock"
    target.write_bytes(b"")
    Path(files.lock_path).symlink_to(target)
    other = ServerFiles(str(tmp))
    Path(other.lock_path).mkdir()
    names = make_files(files) | make_files(other)
    assert reclaim_stopped_servers(str(tmp), ServerFiles(str(tmp)).server_id) == {}
    assert names <= set(os.listdir(tmp))


def test_a_server_never_removes_its_own_files(tmp: Path, live: ServerFiles) -> None:
    names = make_files(live)
    assert reclaim_stopped_servers(str(tmp), live.server_id) == {}
    assert names <= set(os.listdir(tmp))


def test_the_lock_is_held_from_the_moment_its_name_appears_until_release(tmp: Path) -> None:
    files = ServerFiles(str(tmp))
    claim = TmpClaim(files)
    claim.hold()
    # Created under another name and renamed once locked: no server ever sees it unlocked.
    assert os.listdir(tmp) == [Path(files.lock_path).name]
    fd = os.open(files.lock_path, os.O_RDONLY)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        claim.release()
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    assert os.listdir(tmp) == []
    claim.release()  # idempotent


@pytest.mark.parametrize("server_id", ["", "ABCDEF123456", "abc", "../../etc/x1", "0123456789abc"])
def test_a_server_id_is_twelve_lowercase_hex_digits(tmp: Path, server_id: str) -> None:
    with pytest.raises(ValueError, match="12 lowercase hex digits"):
        ServerFiles(str(tmp), server_id)


def test_server_config_limits_default_to_their_one_home_in_limits() -> None:
    config = ServerConfig()
    assert config.max_body_bytes == limits.MAX_BODY_BYTES
    assert config.max_upload_bytes == limits.MAX_UPLOAD_BYTES
    assert config.max_pending_upload_bytes == limits.MAX_PENDING_UPLOAD_BYTES == 8 * limits.GIB
    assert config.upload_expiry_seconds == limits.UPLOAD_EXPIRY_SECONDS
    assert config.sweep_interval_seconds == limits.UPLOAD_SWEEP_INTERVAL_SECONDS
