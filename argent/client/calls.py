"""The client side of the file-input boundary: turning file arguments into wire wrappers.

A tool advertises its ``fileInputs`` in ``GET /tools``. Before a call the client replaces each
applicable argument with a ``FileInput`` (``{"__argentFileInput": true, "path": ..., ...}``) so that the
tool-server can tell whether it sees the same file (size and mtime) and, over a link, gets the
bytes: inline base64 for a ``file`` up to 32 MiB, an upload for a ``tar-upload``.

Specs are processed in declaration order; for each one:

1. ``skipWhenSet`` names an argument that is set (any value, ``""`` and null included): skip.
2. The target holds a non-string value: the caller sent something explicit, skip.
3. The ``path`` template (``${name}`` over non-empty string arguments) yields nothing: skip.
4. The target holds a string other than the derived path: an explicit override, keep it.
5. Build the wrapper for the spec's kind and put it in the target.

The listing is the tool-server's, so the client does not trust it with its files: the bytes of a
``file`` or ``tar-upload`` input go only when its path is its own argument or the flow file of a
saved flow (``argent.link.rules.sends_bytes``); any other such input goes as its path alone, and
``on_untrusted`` hears why.

Over a link, an input with ``collect`` gets its members after its wrapper is built: the
``collector`` (``argent.client.members``) adds ``canonical``, ``spelling`` and ``members``.
The arguments leave as JSON: each wrapper written by ``argent.link.codec``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import stat
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from attrs import evolve

from argent.limits import MAX_FILE_BYTES
from argent.link.codec import read_or_none, read_specs, to_wire
from argent.link.models import CONTENT_OMITTED_SIZE_LIMIT, FileInput, FileInputSpec
from argent.link.rules import sends_bytes

_TEMPLATE_REF = re.compile(r"\$\{([A-Za-z0-9_]+)\}")

#: Tars and uploads a path; returns ``(upload_id, sha256 hex of the tar.gz)``.
Uploader = Callable[[str], Awaitable[tuple[str, str]]]
#: The wrapper of a ``collect`` input with its members added: ``(spec, wrapper, args) -> wrapper``.
Collector = Callable[[FileInputSpec, FileInput, Mapping[str, Any]], Awaitable[FileInput]]
#: Hears the line that says why a file input of the listing went as its path alone.
UntrustedCallback = Callable[[str], None]

UNTRUSTED_INPUT = (
    "Not sending {path} to the tool-server: its listing declares {target} a {kind} input built as {template}, "
    "and the client sends the bytes of a file only when the argument itself names it (or the flow file of "
    "a saved flow), so it sent the path alone. Check the tool-server you are linked to."
)


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
    on_untrusted: UntrustedCallback | None = None,
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
        if linked and not sends_bytes(spec):
            if on_untrusted is not None:
                on_untrusted(
                    UNTRUSTED_INPUT.format(
                        path=json.dumps(path),
                        target=json.dumps(spec.target),
                        kind=spec.kind,
                        template=json.dumps(spec.path),
                    )
                )
            out[spec.target] = to_wire(FileInput(path))
            continue
        wrapper = await _build_wrapper(spec, path, linked=linked, uploader=uploader)
        if linked and collector is not None and spec.collect is not None:
            wrapper = await collector(spec, wrapper, args)
        out[spec.target] = to_wire(wrapper)
    return out


def has_members(args: Any) -> bool:
    """Whether any file-input object of ``args`` carries a ``members`` field (the call is a stream)."""
    if not isinstance(args, dict):
        return False
    return any(
        (wrapper := read_or_none(value, FileInput)) is not None and wrapper.members is not None
        for value in args.values()
    )


async def _build_wrapper(
    spec: FileInputSpec, path: str, *, linked: bool, uploader: Uploader | None
) -> FileInput:
    if spec.kind == "file":
        return await asyncio.to_thread(_file_wrapper, path, linked)
    if spec.kind == "tar-upload":
        return await _tar_upload_wrapper(path, linked=linked, uploader=uploader)
    # directory, probe (and kinds this client does not know): the path alone, no stat.
    return FileInput(path)


def _mtime_ms(st: os.stat_result) -> float:
    return st.st_mtime_ns / 1_000_000


def _file_wrapper(path: str, include_content: bool) -> FileInput:
    """Stat (and over a link read) a regular file; anything else is sent as the path alone."""
    try:
        st = os.stat(path)
    except OSError:
        return FileInput(path)
    if not stat.S_ISREG(st.st_mode):
        return FileInput(path)
    stated = FileInput(path, size=st.st_size, mtime_ms=_mtime_ms(st))
    if not include_content:
        return stated
    if st.st_size > MAX_FILE_BYTES:
        return evolve(stated, content_omitted=CONTENT_OMITTED_SIZE_LIMIT)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return FileInput(path)
    if len(data) > MAX_FILE_BYTES:
        return evolve(stated, content_omitted=CONTENT_OMITTED_SIZE_LIMIT)
    # The bytes sent are what the server checks `size` against: keep them consistent.
    return evolve(stated, size=len(data), content=base64.b64encode(data).decode("ascii"))


async def _tar_upload_wrapper(path: str, *, linked: bool, uploader: Uploader | None) -> FileInput:
    try:
        st = await asyncio.to_thread(os.stat, path)
    except OSError:
        return FileInput(path)
    stated = FileInput(path, size=st.st_size, mtime_ms=_mtime_ms(st))
    if linked and uploader is not None:
        upload_id, content_hash = await uploader(path)
        return evolve(stated, upload_id=upload_id, content_hash=content_hash)
    return stated
