"""One tool-server's files in a temp dir that other servers share, and what a killed one left there.

Every file and directory a server creates at the top of its temp dir carries the server's id:
``argent-upload-<id>-<uuid>.tar.gz``, ``argent-tar-upload-parent-<id>-*``, ``argent-file-input-<id>-*``
and ``argent-artifacts-<id>``. While it runs, a server holds an exclusive ``flock`` on its own
``.argent-server-<id>.lock``; the kernel drops that lock when the process dies, however it dies.

A server that starts removes the files of each id whose lock it can take: that server no longer
runs. It never touches an id whose lock is held, a name without a lock file, a name that does not
have exactly one of the shapes above, a symlink, or a file another user owns.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import stat
import tempfile
import uuid

from attrs import define, field, frozen

#: Kinds of directory a server makes with ``mkdtemp``; uploads and artifacts have names of their own.
TEMP_DIR_KINDS = ("tar-upload-parent", "file-input")
UPLOAD_PREFIX = "argent-upload-"
UPLOAD_SUFFIX = ".tar.gz"
LOCK_PREFIX = ".argent-server-"
LOCK_SUFFIX = ".lock"
_ID = re.compile(r"[0-9a-f]{12}")
_LOCK_NAME = re.compile(rf"{re.escape(LOCK_PREFIX)}(?P<id>[0-9a-f]{{12}}){re.escape(LOCK_SUFFIX)}")
#: What ``tempfile.mkdtemp`` appends to a prefix.
_TEMP_SUFFIX = r"[a-z0-9_]{8}"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def new_server_id() -> str:
    return uuid.uuid4().hex[:12]


@frozen
class ServerFiles:
    """The names of one server's files in ``tmp_dir``; each carries ``server_id``."""

    tmp_dir: str
    server_id: str = field(factory=new_server_id)

    def __attrs_post_init__(self) -> None:
        if not _ID.fullmatch(self.server_id):
            raise ValueError(f"a server id is 12 lowercase hex digits, not {self.server_id!r}")

    def upload_path(self, upload_id: str) -> str:
        return os.path.join(self.tmp_dir, f"{UPLOAD_PREFIX}{self.server_id}-{upload_id}{UPLOAD_SUFFIX}")

    def mkdtemp(self, kind: str) -> str:
        """A new private directory ``argent-<kind>-<id>-XXXXXXXX`` (blocking)."""
        if kind not in TEMP_DIR_KINDS:
            raise ValueError(f"unknown temp dir kind {kind!r}")
        return tempfile.mkdtemp(prefix=f"argent-{kind}-{self.server_id}-", dir=self.tmp_dir)

    @property
    def artifacts_dir(self) -> str:
        return os.path.join(self.tmp_dir, f"argent-artifacts-{self.server_id}")

    @property
    def lock_path(self) -> str:
        return os.path.join(self.tmp_dir, f"{LOCK_PREFIX}{self.server_id}{LOCK_SUFFIX}")


def _files_of(server_id: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(regular files, directories) a server with ``server_id`` creates at the top of its temp dir."""
    files = re.compile(rf"{re.escape(UPLOAD_PREFIX)}{server_id}-{_UUID}{re.escape(UPLOAD_SUFFIX)}")
    kinds = "|".join(re.escape(kind) for kind in TEMP_DIR_KINDS)
    dirs = re.compile(rf"argent-(?:{kinds})-{server_id}-{_TEMP_SUFFIX}|argent-artifacts-{server_id}")
    return files, dirs


@define
class TmpClaim:
    """The lock that tells other servers on the same temp dir that ``files.server_id`` runs."""

    files: ServerFiles
    _fd: int | None = None

    def hold(self) -> None:
        """Create and lock the lock file (blocking). Under a temporary name until it is locked, so no
        other server ever sees it unlocked."""
        if self._fd is not None:
            return
        pending = f"{self.files.lock_path}.{os.getpid()}.new"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(pending, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, f"{os.getpid()}\n".encode())
            os.rename(pending, self.files.lock_path)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(pending)
            raise
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file, then let go of the lock (blocking). Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.files.lock_path)
        os.close(fd)


def _remove_entry(path: str, *, directory: bool) -> bool:
    """Remove one file (or directory tree) of a stopped server: ours, and of the expected type only."""
    try:
        st = os.lstat(path)
        if st.st_uid != os.getuid():
            return False
        if directory and stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        elif not directory and stat.S_ISREG(st.st_mode):
            os.unlink(path)
        else:
            return False
    except OSError:
        return False
    return True


def _reclaim_one(tmp_dir: str, names: list[str], lock_name: str, server_id: str) -> list[str] | None:
    """The files of ``server_id`` removed once its lock is taken; None while its server runs."""
    lock_path = os.path.join(tmp_dir, lock_name)
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # held: its server runs
        files, dirs = _files_of(server_id)
        removed = [
            name
            for name in names
            if (files.fullmatch(name) and _remove_entry(os.path.join(tmp_dir, name), directory=False))
            or (dirs.fullmatch(name) and _remove_entry(os.path.join(tmp_dir, name), directory=True))
        ]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock_path)
        return removed
    finally:
        os.close(fd)


def reclaim_stopped_servers(tmp_dir: str, own_id: str) -> dict[str, list[str]]:
    """Remove what servers that no longer run left in ``tmp_dir`` (blocking).

    Returns the names removed, by the id of the server that left them.
    """
    try:
        names = os.listdir(tmp_dir)
    except OSError:
        return {}
    out: dict[str, list[str]] = {}
    for name in names:
        match = _LOCK_NAME.fullmatch(name)
        if match is None or match["id"] == own_id:
            continue
        removed = _reclaim_one(tmp_dir, names, name, match["id"])
        if removed is not None:
            out[match["id"]] = removed
    return out
