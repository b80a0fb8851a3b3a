"""OS errors in Node's words (``CODE: text, syscall 'path'``), as the upstream client prints them.

Messages about a file that could not be read look the same whether the client, the tool-server's
disk files or a recording raised them; the seed quotes them (``ENOENT: no such file or directory,
open '<canonical>'``, ``EISDIR: illegal operation on a directory, read``).
"""

from __future__ import annotations

import errno

EISDIR_READ = "EISDIR: illegal operation on a directory, read"

#: libuv's wording of the common errors, so messages read as they do from the upstream client.
_UV_TEXT = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ELOOP: "too many symbolic links encountered",
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "not a directory",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENAMETOOLONG: "name too long",
    errno.EMFILE: "too many open files",
    errno.EIO: "i/o error",
}


def errno_code(exc: OSError) -> str:
    """The symbolic code of ``exc`` (``EACCES``); ``EIO`` when it has none."""
    return errno.errorcode.get(exc.errno or 0, "EIO")


def os_error_text(exc: OSError, path: str, syscall: str = "open") -> str:
    """An error of the operating system as ``CODE: text, syscall 'path'``."""
    number = exc.errno or 0
    text = _UV_TEXT.get(number)
    if text is None:
        raw = exc.strerror or str(exc) or errno_code(exc)
        text = raw[:1].lower() + raw[1:]
    return f"{errno_code(exc)}: {text}, {syscall} '{path}'"


def enoent_message(path: str) -> str:
    """What reading a missing ``path`` says."""
    return f"ENOENT: {_UV_TEXT[errno.ENOENT]}, open '{path}'"
