"""The client side of the file-input boundary: turning file arguments into wire wrappers.

A tool advertises its ``fileInputs`` in ``GET /tools``. Before a call the client replaces each
applicable argument with ``{"__argentFileInput": true, "path": ..., ...}`` so that the
tool-server can tell whether it sees the same file (size and mtime) and, over a link, gets the
bytes: inline base64 for a ``file`` up to 32 MiB, an upload for a ``tar-upload``.

Specs are processed in declaration order; for each one:

1. ``skipWhenSet`` names an argument that is set (any value, ``""`` and null included): skip.
2. The target holds a non-string value: the caller sent something explicit, skip.
3. The ``path`` template (``${name}`` over non-empty string arguments) yields nothing: skip.
4. The target holds a string other than the derived path: an explicit override, keep it.
5. Build the wrapper for the spec's kind and put it in the target.

Over a link, an input with ``collect`` gets its members after its wrapper is built: the
``collector`` (``argent.client.flow_members``) adds ``canonical``, ``spelling`` and ``members``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import stat
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from argent.limits import MAX_FILE_BYTES
from argent.link.codec import read_specs
from argent.link.models import FileInputSpec

FILE_INPUT_MARKER = "__argentFileInput"
CONTENT_OMITTED_SIZE_LIMIT = "size-limit"
_TEMPLATE_REF = re.compile(r"\$\{([A-Za-z0-9_]+)\}")

#: Tars and uploads a path; returns ``(upload_id, sha256 hex of the tar.gz)``.
Uploader = Callable[[str], Awaitable[tuple[str, str]]]
#: Adds the members of a ``collect`` input to its wrapper in place: ``(spec, wrapper, args)``.
Collector = Callable[[FileInputSpec, dict[str, Any], Mapping[str, Any]], Awaitable[None]]


def interpolate_path(template: str, args: Mapping[str, Any]) -> str | None:
    """``${name}`` replaced by the argument; None when one is missing or not a non-empty string."""
    missing = False

    def replace(match: re.Match[str]) -> str:
        nonlocal missing
        value = args.get(match.group(1))
        if not isinstance(value, str) or value == "":
            missing = True
            return ""
        return value

    out = _TEMPLATE_REF.sub(replace, template)
    return None if missing else out


async def prepare_file_inputs(
    specs: Sequence[FileInputSpec | Mapping[str, Any]] | None,
    args: Any,
    *,
    linked: bool,
    uploader: Uploader | None = None,
    collector: Collector | None = None,
) -> Any:
    """``args`` with the file inputs of ``specs`` wrapped for the wire.

    ``linked`` sends file contents (over a link the tool-server cannot read the client's disk);
    ``uploader`` delivers ``tar-upload`` inputs over a link. Without specs, or when ``args`` is
    not an object, ``args`` itself is returned; otherwise a shallow copy, never the original.
    Over a link, ``collector`` adds the members of each input that carries ``collect``.
    """
    if not specs or not isinstance(args, dict):
        return args
    out = dict(args)
    for spec in read_specs(specs):
        if spec.skip_when_set is not None and spec.skip_when_set in out:
            continue
        current = out.get(spec.target)
        if spec.target in out and not isinstance(current, str):
            continue
        path = interpolate_path(spec.path, out)
        if path is None:
            continue
        if isinstance(current, str) and current != path:
            continue
        wrapper = await _build_wrapper(spec, path, linked=linked, uploader=uploader)
        if linked and collector is not None and spec.collect is not None:
            await collector(spec, wrapper, args)
        out[spec.target] = wrapper
    return out


def has_members(args: Any) -> bool:
    """Whether any file-input object of ``args`` carries a ``members`` field (the call is a stream)."""
    if not isinstance(args, dict):
        return False
    return any(
        isinstance(value, dict) and value.get(FILE_INPUT_MARKER) is True and "members" in value
        for value in args.values()
    )


async def _build_wrapper(
    spec: FileInputSpec, path: str, *, linked: bool, uploader: Uploader | None
) -> dict[str, Any]:
    if spec.kind == "file":
        return await asyncio.to_thread(_file_wrapper, path, linked)
    if spec.kind == "tar-upload":
        return await _tar_upload_wrapper(path, linked=linked, uploader=uploader)
    # directory, probe (and kinds this client does not know): the path alone, no stat.
    return _path_only(path)


def _path_only(path: str) -> dict[str, Any]:
    return {FILE_INPUT_MARKER: True, "path": path}


def _mtime_ms(st: os.stat_result) -> float:
    return st.st_mtime_ns / 1_000_000


def _file_wrapper(path: str, include_content: bool) -> dict[str, Any]:
    """Stat (and over a link read) a regular file; anything else is sent as the path alone."""
    try:
        st = os.stat(path)
    except OSError:
        return _path_only(path)
    if not stat.S_ISREG(st.st_mode):
        return _path_only(path)
    wire: dict[str, Any] = {**_path_only(path), "size": st.st_size, "mtimeMs": _mtime_ms(st)}
    if not include_content:
        return wire
    if st.st_size > MAX_FILE_BYTES:
        wire["contentOmitted"] = CONTENT_OMITTED_SIZE_LIMIT
        return wire
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return _path_only(path)
    if len(data) > MAX_FILE_BYTES:
        wire["contentOmitted"] = CONTENT_OMITTED_SIZE_LIMIT
        return wire
    # The bytes sent are what the server checks `size` against: keep them consistent.
    wire["size"] = len(data)
    wire["content"] = base64.b64encode(data).decode("ascii")
    return wire


async def _tar_upload_wrapper(path: str, *, linked: bool, uploader: Uploader | None) -> dict[str, Any]:
    try:
        st = await asyncio.to_thread(os.stat, path)
    except OSError:
        return _path_only(path)
    wire: dict[str, Any] = {**_path_only(path), "size": st.st_size, "mtimeMs": _mtime_ms(st)}
    if linked and uploader is not None:
        upload_id, content_hash = await uploader(path)
        wire["uploadId"] = upload_id
        wire["contentHash"] = content_hash
    return wire
