"""Client-write directives: files a tool-server asks the client to write on its own disk.

A directive is an object ``{"__argentClientFile": true, "path": "<absolute client path>",
"content": "<text>"}`` anywhere in a result. A recording keeps its flow file on the client
this way. The client writes the text only to ``<dir>/.argent/flows/<name>.yaml``: the path must be
absolute, have no ``..`` segment (split on ``/`` and ``\\``), end in a flow file name
(``^[A-Za-z0-9_-]+\\.yaml$``) right below ``.argent/flows``. The write is atomic (a temp file
beside the target, then a rename; an existing file keeps its mode). The directive is replaced by
the path written, or by None when the path is refused or the write fails.

Directives with ``"encoding": "base64"`` are baselines (``baselineWrites`` of a run over a link).
They follow other rules (client policy, ``.png``) and are written by a later part of the client;
this module leaves them in the result untouched.

Everything here blocks; async callers run it in a thread.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from typing import Any

from attrs import frozen

CLIENT_FILE_MARKER = "__argentClientFile"
FLOW_FILE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+\.yaml$")
_SEGMENT_SPLIT = re.compile(r"[/\\]")
_DEFAULT_FILE_MODE = 0o666


@frozen
class AppliedClientFiles:
    """The result with text directives replaced, and the paths written, in order."""

    result: Any
    written: tuple[str, ...]


def is_client_file_directive(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get(CLIENT_FILE_MARKER) is True
        and isinstance(value.get("path"), str)
    )


def is_text_directive(value: Any) -> bool:
    """A directive whose content is text (no ``encoding``): the ones applied here."""
    return is_client_file_directive(value) and value.get("encoding") is None


def text_directive_path_allowed(path: str) -> bool:
    """The path rules of a text directive: an absolute ``.../.argent/flows/<name>.yaml``."""
    if not os.path.isabs(path):
        return False
    segments = _SEGMENT_SPLIT.split(path)
    if ".." in segments or len(segments) < 3:
        return False
    return bool(FLOW_FILE_NAME_RE.match(segments[-1])) and segments[-3:-1] == [".argent", "flows"]


def apply_client_file_directives(result: Any) -> AppliedClientFiles:
    """Write every text directive found in ``result`` (at any depth); the input is not modified."""
    written: list[str] = []
    return AppliedClientFiles(result=_walk(result, written), written=tuple(written))


def _walk(value: Any, written: list[str]) -> Any:
    if is_client_file_directive(value):
        if not is_text_directive(value):
            return value
        return _apply_one(value, written)
    if isinstance(value, dict):
        return {key: _walk(item, written) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, written) for item in value]
    return value


def _apply_one(directive: dict[str, Any], written: list[str]) -> str | None:
    path = directive["path"]
    content = directive.get("content")
    if not isinstance(content, str) or not text_directive_path_allowed(path):
        return None
    try:
        write_text_atomic(path, content)
    except (OSError, UnicodeError):
        return None
    written.append(path)
    return str(path)


def write_text_atomic(path: str, content: str) -> None:
    """Write ``content`` as UTF-8 through a temp file in the same directory and a rename.

    An existing file keeps its permission bits; a new one gets the usual ``0666 & ~umask``.
    """
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else _DEFAULT_FILE_MODE & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _read_umask() -> int:
    # Setting the umask to read it back races with threads creating files; do it once, at import.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
