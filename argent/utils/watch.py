"""Whether a file, and every directory on its path, may have changed since a moment: known without
touching the disk, so the event loop may ask it (Linux inotify and the mount table's poll).

``FileWatches.watch`` (in a worker thread: it touches the disk) watches a plain absolute path —
each directory from ``/`` down, for the name of the next component, and the file itself — and
answers a ``Stamp``; ``FileWatches.unchanged`` (any thread; its only system calls are a
non-blocking read of the inotify queue and a zero-timeout poll) says whether nothing that could
change what that path reads as has happened since. Anything it cannot vouch for counts as
changed: a queue overflow, a changed mount table (a mount over a directory sends no inotify
event), a file system whose changes may come from elsewhere (only local ones are watched: a
network or FUSE file system changed by another host sends no event), a watch that could not be
added, a platform without inotify. (One change inotify never reports: bytes written through a
shared memory mapping of the file. Editors and tools write files with ``write`` or a rename.)

The watches are few and reused (one per directory or file inode, shared by every path through
it); past ``max_keys`` names they are asked about (``limits.FILE_WATCHES`` for the runner), the instance
starts afresh and every earlier stamp counts as changed.
"""

from __future__ import annotations

import errno
import os
import select
import struct
import sys
import threading

from attrs import frozen

__all__ = ["FileWatches", "Stamp", "plain_parts"]

_IN_MODIFY = 0x2
_IN_ATTRIB = 0x4
_IN_CLOSE_WRITE = 0x8
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_DONT_FOLLOW = 0x02000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC
#: Everything that changes what a path reads as: its names, their modes, the file's bytes.
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_DONT_FOLLOW
)
_EVENT = struct.Struct("iIII")
#: File systems whose every change goes through this kernel (so through inotify): ext2/3/4, xfs,
#: btrfs, tmpfs. Not overlay (its lower layers change unseen), NFS, SMB, FUSE and the like.
LOCAL_FILE_SYSTEMS = frozenset({0xEF53, 0x58465342, 0x9123683E, 0x01021994})
_MOUNTS = "/proc/self/mountinfo"


def plain_parts(path: str) -> list[str] | None:
    """The components of an absolute path with no ``.``, ``..`` or empty ones; None otherwise
    (such a path is not watched: its resolution depends on names it does not spell). A NUL makes
    it None too: the C calls would watch the path up to it, not the one spelled."""
    if not path.startswith("/") or path.startswith("//") or "\0" in path:
        return None
    parts = path[1:].split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    return parts


@frozen
class Stamp:
    """What a read depended on: the watches' instance, the events seen before it, and the
    (watch, name) pairs whose events would change it (name "": the watched inode itself)."""

    generation: int
    seen: int
    keys: tuple[tuple[int, str], ...]


class _Libc:
    """The libc calls Python lacks: inotify and statfs (None where the platform has none)."""

    def __init__(self) -> None:
        import ctypes  # here: most processes that import the runner never watch a file

        lib = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
        self.lib = lib if lib is not None and hasattr(lib, "inotify_init1") else None
        self.ctypes = ctypes

    def inotify_init(self) -> int:
        assert self.lib is not None
        fd = int(self.lib.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC))
        if fd < 0:
            raise OSError(self.ctypes.get_errno(), "inotify_init1")
        return fd

    def add_watch(self, fd: int, path: str) -> int:
        assert self.lib is not None
        wd = int(self.lib.inotify_add_watch(fd, os.fsencode(path), self.ctypes.c_uint32(_MASK)))
        if wd < 0:
            raise OSError(self.ctypes.get_errno(), "inotify_add_watch", path)
        return wd

    def fs_type(self, path: str) -> int:
        """``f_type`` of statfs(2): the first word of ``struct statfs`` on Linux."""
        assert self.lib is not None
        buf = self.ctypes.create_string_buffer(256)
        if self.lib.statfs(os.fsencode(path), buf) != 0:
            raise OSError(self.ctypes.get_errno(), "statfs", path)
        return int(self.ctypes.c_long.from_buffer(buf).value) & 0xFFFFFFFF


class FileWatches:
    """One inotify instance and the events it has delivered so far (see the module docstring)."""

    def __init__(self, max_keys: int) -> None:
        self._libc: _Libc | None = None
        self._max_keys = max_keys
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._mounts: int | None = None
        self._poll: select.poll | None = None
        self._generation = 0
        #: Events delivered so far; each wanted key's last one; keys stamps depend on.
        self._seen = 0
        self._last: dict[tuple[int, str], int] = {}
        self._wanted: set[tuple[int, str]] = set()
        #: Every stamp up to this event counts as changed (an overflow, a mount).
        self._floor = 0
        self._mounts_changed = True

    def watch(self, path: str) -> Stamp | None:
        """Watch ``path`` (a plain absolute path: see ``plain_parts``) before it is resolved and read;
        None when it cannot be vouched for. In a worker thread: it touches the disk, and never while
        it holds the lock ``unchanged`` takes (the loop must not wait behind a file system)."""
        parts = plain_parts(path)
        if parts is None:
            return None
        with self._lock:
            if self._libc is None:
                self._libc = _Libc()
            if self._libc.lib is None or not hasattr(select, "poll"):
                return None
            try:
                self._open()
            except OSError:
                return None
            self._drain()
            self._mounts_settled()
            libc, fd, generation = self._libc, self._fd, self._generation
        assert fd is not None
        try:
            keys = _add(libc, fd, parts)
        except OSError:
            return None
        if keys is None:
            return None
        with self._lock:
            if generation != self._generation:
                return None  # started afresh meanwhile: these watches were on the old instance
            self._drain()
            if not self._mounts_settled():
                return None  # a mount meanwhile may cover what was just watched
            self._wanted.update(keys)
            return Stamp(generation, self._seen, keys)

    def unchanged(self, stamp: Stamp) -> bool:
        """Nothing that changes what the stamped path reads as has happened since ``stamp``. No disk I/O."""
        with self._lock:
            if self._fd is None or stamp.generation != self._generation:
                return False
            self._drain()
            if self._mounts_changed or stamp.seen < self._floor:
                return False
            last = self._last
            return all(last.get(key, 0) <= stamp.seen for key in stamp.keys)

    def close(self) -> None:
        with self._lock:
            self._close()

    # -- under the lock ------------------------------------------------------------------------

    def _open(self) -> None:
        if self._fd is not None and len(self._wanted) < self._max_keys:
            return
        self._close()  # past the bound: start afresh (the old stamps' generation is gone)
        self._generation += 1
        assert self._libc is not None
        fd = self._libc.inotify_init()
        try:
            mounts = os.open(_MOUNTS, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            os.close(fd)
            raise
        self._poll = select.poll()  # one zero-timeout poll tells of both: the queue and the mounts
        self._poll.register(mounts, select.POLLPRI | select.POLLERR)
        self._poll.register(fd, select.POLLIN)
        self._fd, self._mounts = fd, mounts
        self._mounts_changed = True

    def _close(self) -> None:
        for fd in (self._fd, self._mounts):
            if fd is not None:
                os.close(fd)
        self._fd = self._mounts = self._poll = None
        self._last.clear()
        self._wanted.clear()
        self._seen = self._floor = 0

    def _mounts_settled(self) -> bool:
        """False when the mount table changed since the last call: every stamp so far then stays
        changed, and later ones count. (Its poll signals once per change: ``_drain`` took it.)"""
        if not self._mounts_changed:
            return True
        self._seen += 1  # the change counts as an event: every stamp so far is below the floor
        self._floor = self._seen
        self._mounts_changed = False
        return False

    def _drain(self) -> None:
        """Take every queued event (non-blocking) and note the mount table's signal."""
        assert self._fd is not None and self._poll is not None
        queued = False
        for fd, _ in self._poll.poll(0):
            if fd == self._mounts:
                self._mounts_changed = True
            else:
                queued = True
        while queued:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError as exc:  # pragma: no cover - the queue is gone: nothing can be vouched for
                if exc.errno != errno.EINTR:
                    self._floor = self._seen = self._seen + 1
                    return
                continue
            offset = 0
            while offset < len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, offset)
                start = offset + _EVENT.size
                name = data[start : start + size].rstrip(b"\0").decode("utf-8", "surrogateescape")
                offset = start + size
                self._seen += 1
                if mask & _IN_Q_OVERFLOW:
                    self._floor = self._seen
                    continue
                key = (wd, name)
                if not name or key in self._wanted:
                    self._last[key] = self._seen


def _add(libc: _Libc, fd: int, parts: list[str]) -> tuple[tuple[int, str], ...] | None:
    """Watch each directory on the path (for the next name, and itself) and the file; None when one
    is on a file system whose changes may bypass this kernel."""
    keys: list[tuple[int, str]] = []
    directory = "/"
    for part in parts:
        if libc.fs_type(directory) not in LOCAL_FILE_SYSTEMS:
            return None
        wd = libc.add_watch(fd, directory)
        keys += [(wd, ""), (wd, part)]
        directory = os.path.join(directory, part)
    if libc.fs_type(directory) not in LOCAL_FILE_SYSTEMS:
        return None
    keys.append((libc.add_watch(fd, directory), ""))
    return tuple(keys)
