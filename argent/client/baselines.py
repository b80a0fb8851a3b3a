"""Baselines in the result: the client writes ``baselineWrites`` back into its project.

A run over a link that updated baselines returns one client-file directive per baseline path
(``"encoding": "base64"``). The client writes one only when its path ends in ``.png``, has no
``..`` segment and sits directly in the baseline directory of a run of this call that updates
baselines (``Collection.update_dirs``), inside the roots of the client policy, and only when its
bytes are a PNG image (``argent.link.png``). A path with control characters (a NUL byte among
them), an existing link to nothing, a link out of the directory, a ``.png`` name that links to a
file that is not a PNG file and anything that is not a regular file are refused. The file is
replaced in one rename.

Each directive is replaced by the path written, or by ``{"path": ..., "error": ...}``.
Everything here blocks; async callers run it in a thread.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import stat
from typing import Any

from attrs import define, field, frozen

from argent.client.client_files import read_directive
from argent.client.client_policy import ClientPolicy
from argent.client.collect import Collection
from argent.link.codec import to_wire
from argent.link.models import BaselineNotWritten
from argent.link.png import is_png
from argent.utils.atomic import write_atomically
from argent.utils.oserrors import BASELINE_RUN_AGAIN, os_error_text, write_failure_text

NOT_ALLOWED = "{path} is not a .png file directly in the baseline directory of a run of this call that updates baselines"
OUTSIDE = "{path} is outside every root this client serves"
BAD_CONTENT = "the content for {path} is not valid base64"
LINK_TO_NOTHING = "{path} is a link to nothing"
LINK_OUT = "{path} links out of its baseline directory"
NOT_PNG = "{path} links to a file that is not a PNG file"
NOT_REGULAR = "{path} is not a regular file"
CONTROL_CHARACTERS = (
    "the name of {path} holds control characters, which no baseline name has. Check the tool-server you "
    "are linked to."
)
NOT_PNG_CONTENT = "the content for {path} is not a PNG image (it lacks the PNG signature)"

_SEGMENTS = re.compile(r"[/\\]")
#: C0 and C1 controls, DEL and lone surrogates: never in a baseline path, and NUL breaks every syscall.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_DEFAULT_MODE = 0o644


@define
class BaselineWriteScope:
    """Where the baselines of one call may go: the update directories of its collections."""

    dirs: dict[str, ClientPolicy] = field(factory=dict)

    def add(self, collection: Collection | None) -> None:
        if collection is None or collection.policy is None:
            return
        for directory in collection.update_dirs:
            self.dirs.setdefault(directory, collection.policy)


@frozen
class BaselineWrites:
    """The result with its ``baselineWrites`` applied, the paths written and the failures."""

    result: Any
    written: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()


def apply_baseline_writes(result: Any, scope: BaselineWriteScope) -> BaselineWrites:
    """Write the ``baselineWrites`` of ``result``; the input is not modified."""
    if not isinstance(result, dict) or not isinstance(result.get("baselineWrites"), list):
        return BaselineWrites(result)
    written: list[str] = []
    failed: list[tuple[str, str]] = []
    out: list[Any] = []
    for raw in result["baselineWrites"]:
        directive = read_directive(raw)
        if directive is None or directive.value.encoding != "base64":
            out.append(raw)
            continue
        path = directive.value.path
        error = write_baseline(path, directive.value.content, scope)
        if error is None:
            written.append(path)
            out.append(path)
        else:
            failed.append((path, error))
            out.append(to_wire(BaselineNotWritten(path, error)))
    return BaselineWrites({**result, "baselineWrites": out}, tuple(written), tuple(failed))


def write_baseline(path: str, content: Any, scope: BaselineWriteScope) -> str | None:
    """Write one baseline; None when written, else the reason it was not."""
    if _CONTROL.search(path):
        return CONTROL_CHARACTERS.format(path=path)
    directory = os.path.dirname(path)
    policy = scope.dirs.get(directory)
    if (
        policy is None
        or not os.path.isabs(path)
        or not path.endswith(".png")
        or ".." in _SEGMENTS.split(path)
        or os.path.basename(path) in ("", ".png")
    ):
        return NOT_ALLOWED.format(path=path)
    if not isinstance(content, str):
        return BAD_CONTENT.format(path=path)
    try:
        data = base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        return BAD_CONTENT.format(path=path)
    if not is_png(data):
        return NOT_PNG_CONTENT.format(path=path)
    try:
        real_dir = os.path.realpath(directory)
        if not policy.allows(real_dir):
            return OUTSIDE.format(path=path)
        os.makedirs(directory, exist_ok=True)
        real_dir = os.path.realpath(directory)
        if not policy.allows(real_dir):
            return OUTSIDE.format(path=path)
        target, mode = _target(path, real_dir)
    except _Refused as refused:
        return refused.reason
    except OSError as exc:
        return write_failure_text(exc, path, "open", then=BASELINE_RUN_AGAIN)
    except ValueError as exc:  # what the checks above let through still never crashes the client
        return f"{path}: {exc}"
    try:
        _replace(target, data, mode)
    except OSError as exc:
        return write_failure_text(exc, target, then=BASELINE_RUN_AGAIN)
    return None


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _target(path: str, real_dir: str) -> tuple[str, int | None]:
    """The real file to replace and its mode (None for a new file)."""
    plain = os.path.join(real_dir, os.path.basename(path))
    try:
        st = os.lstat(plain)
    except FileNotFoundError:
        return plain, None
    if stat.S_ISLNK(st.st_mode):
        try:
            resolved = os.path.realpath(plain, strict=True)
        except FileNotFoundError:
            raise _Refused(LINK_TO_NOTHING.format(path=path)) from None
        except OSError as exc:
            raise _Refused(os_error_text(exc, path)) from None
        if os.path.dirname(resolved) != real_dir:
            raise _Refused(LINK_OUT.format(path=path))
        if not resolved.endswith(".png"):
            raise _Refused(NOT_PNG.format(path=path))
        st = os.stat(resolved)
        plain = resolved
    if not stat.S_ISREG(st.st_mode):
        raise _Refused(NOT_REGULAR.format(path=path))
    return plain, stat.S_IMODE(st.st_mode)


def _replace(target: str, data: bytes, mode: int | None) -> None:
    """``target`` is in the real directory the policy allowed: its temp file goes beside it."""
    write_atomically(target, data, mode=_DEFAULT_MODE if mode is None else mode)
