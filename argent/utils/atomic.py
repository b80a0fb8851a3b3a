"""The one atomic file write: a temp file beside the target, renamed over it.

A reader sees the old file or the new one, never a part. The temp file is created exclusively
(``O_EXCL``, never following a link), written in full, given its mode, synced, then renamed; on
any failure it is removed and the error propagates, so callers word it as they must.
"""

from __future__ import annotations

import contextlib
import os
import secrets

#: The mode a new file is created with before the umask (as ``open()`` does); ``mode=`` overrides it.
NEW_FILE_MODE = 0o666
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def write_atomically(
    path: str,
    data: bytes,
    *,
    mode: int | None = None,
    dir_fd: int | None = None,
    temp_name: str | None = None,
) -> None:
    """Replace ``path`` with ``data`` in one rename.

    ``mode`` is set exactly (umask aside); None leaves a new file as the umask makes it.
    With ``dir_fd``, ``path`` is a name in that open directory (the caller pinned the directory
    against links); ``temp_name`` names the temp file (default ``.<name>.<random>.tmp``).
    """
    directory, name = os.path.split(path)
    temp = temp_name or f".{name}.{secrets.token_hex(8)}.tmp"
    if dir_fd is None:
        temp = os.path.join(directory, temp)
    fd = os.open(temp, _FLAGS, NEW_FILE_MODE, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if dir_fd is None:
            os.replace(temp, path)
        else:
            os.replace(temp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
