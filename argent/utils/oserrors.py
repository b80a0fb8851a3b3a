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


#: The errors of a careless host: the disk is full or read-only (another path on it fares no better).
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})

#: What a person does about a write a careless host refused, by errno (a full or read-only disk, a
#: directory they may not write); other errors have no advice of their own.
_REMEDIES = {
    errno.ENOSPC: "Free some space there",
    errno.EDQUOT: "Free some space there (the disk quota is used up)",
    errno.EROFS: "Remount that file system read-write",
    errno.EACCES: "Make that directory writable",
    errno.EPERM: "Make that directory writable",
}


def remedy(exc: OSError) -> str | None:
    """The start of a sentence saying what to do about a write that failed with ``exc`` ("Free some
    space there"), for the caller to end (" and run again."); None for an error without advice."""
    return _REMEDIES.get(exc.errno or 0)


def write_failure_text(exc: OSError, path: str, syscall: str = "write", *, then: str = "run again") -> str:
    """``os_error_text`` of a failed write, followed by what to do (then ``then``) when a full or
    read-only disk or a permission refused it."""
    text = os_error_text(exc, path, syscall)
    advice = remedy(exc)
    return text if advice is None else f"{text}. {advice} and {then}."


#: What to do once a full or read-only disk refused a baseline (the older one, if any, is unchanged):
#: the advice of either side of a link that writes baselines (the runner, the client).
BASELINE_RUN_AGAIN = "run with --update-baselines again; an older baseline there is unchanged"
