"""The only way the runner reaches files: the ``FlowFiles`` interface.

Co-located runs use ``DiskFlowFiles``; over a link the call's in-memory member store
implements the same interface, so the engine has one code path for both.

A ``FlowRef`` names a flow file the way the link protocol does: ``key`` is the real
directory of the file that names the target, a NUL, and the target as written;
``path`` is that directory, a slash and the target; ``canonical`` is the real path
(for a missing file: the real path of the nearest existing directory plus the rest).
"""

from __future__ import annotations

import asyncio
import os
from typing import Protocol

import aiofiles
from attrs import frozen

from argent.flows import names
from argent.flows.load import decode_flow
from argent.flows.names import FLOW_FILE_NAME_RE
from argent.limits import MAX_FILE_BYTES
from argent.link.models import LISTED as LISTED
from argent.link.models import Spelling as Spelling
from argent.utils.atomic import write_atomically
from argent.utils.oserrors import EISDIR_READ, enoent_message, os_error_text


@frozen
class FlowRef:
    key: str
    path: str
    canonical: str
    spelling: Spelling = LISTED


class FlowFileError(Exception):
    """A flow file that cannot be read; the message reads like the operating system's."""


class FlowFiles(Protocol):
    """Files of a run: flows, fragments, nested flows and snapshot baselines."""

    async def locate(self, path: str) -> FlowRef:
        """The root flow of a call at absolute ``path`` (as the caller spelled it)."""

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef:
        """The `run:` ``target`` named by the file ``naming``, resolved beside its real file."""

    async def named_flow(self, project_root: str, name: str) -> FlowRef:
        """The saved flow ``<project_root>/.argent/flows/<name>.yaml`` of a nested flow-execute."""

    async def read_text(self, ref: FlowRef) -> str:
        """The file's text; raises ``FlowFileError`` with an OS-style message, or ``FlowParseError``
        (FLOW_FILE_INVALID) for bytes that are not UTF-8 text."""

    def local_path(self, ref: FlowRef, relative: str) -> str | None:
        """A path on this machine beside ``ref``'s real file, or None when files are not local."""

    async def read_baseline(self, path: str) -> bytes | None:
        """The snapshot baseline at ``path`` (see ``baseline_dir``); None when there is none.

        Raises ``FlowFileError`` when a baseline is there but cannot be had (unreadable, refused)."""

    async def write_baseline(self, path: str, data: bytes) -> bool:
        """Store ``data`` as the baseline at ``path``; True when a baseline was there before.

        Later ``read_baseline`` calls of the same run see the new bytes."""


#: The mode of a baseline the tool-server writes.
BASELINE_FILE_MODE = 0o644


def baseline_dir(root: FlowRef, flow_name: str) -> str:
    """Where the run of ``root`` keeps its baselines: ``argent.flows.names.baseline_dir``, the rule the
    client applies too."""
    return names.baseline_dir(root.canonical, flow_name)


def canonical_path(path: str) -> str:
    """The real path with kernel semantics; for a missing file, the real path of the nearest
    directory that exists with the rest of the path; unresolvable links keep their spelling."""
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        head, tail = os.path.split(path)
        if not head or head == path:
            return path
        if not tail:
            return canonical_path(head)
        return os.path.join(canonical_path(head), tail)


def spelling_of(directory: str, basename: str) -> Spelling:
    """How ``directory`` lists ``basename``; an unreadable directory counts as listed."""
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return LISTED
    if basename in names:
        return LISTED
    folded = basename.casefold()
    for name in sorted(names):
        if name.casefold() == folded:
            return Spelling("case_folded", actual=name, addressable=bool(FLOW_FILE_NAME_RE.match(name)))
    return Spelling("absent")


class DiskFlowFiles:
    """Flow files read from this machine's disk (co-located runs)."""

    async def locate(self, path: str) -> FlowRef:
        return await asyncio.to_thread(self._ref, os.path.dirname(path), os.path.basename(path))

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef:
        return await asyncio.to_thread(self._ref, os.path.dirname(naming.canonical), target)

    async def named_flow(self, project_root: str, name: str) -> FlowRef:
        return await asyncio.to_thread(
            self._ref, os.path.join(project_root, ".argent", "flows"), f"{name}.yaml"
        )

    @staticmethod
    def _ref(directory: str, target: str) -> FlowRef:
        path = f"{directory}/{target}" if directory else target
        spelled_dir, base = os.path.split(path)
        return FlowRef(
            key=f"{directory}\0{target}",
            path=path,
            canonical=canonical_path(path),
            spelling=spelling_of(spelled_dir, base),
        )

    async def read_text(self, ref: FlowRef) -> str:
        path = ref.canonical
        try:
            data = await _read_capped(path, "flow file")
        except FileNotFoundError:
            raise FlowFileError(enoent_message(path)) from None
        return decode_flow(data, path)

    def local_path(self, ref: FlowRef, relative: str) -> str | None:
        return os.path.normpath(os.path.join(os.path.dirname(ref.canonical), relative))

    async def read_baseline(self, path: str) -> bytes | None:
        try:
            return await _read_capped(path, "baseline")
        except FileNotFoundError:
            return None

    async def write_baseline(self, path: str, data: bytes) -> bool:
        return await asyncio.to_thread(_write_baseline, path, data)


async def _read_capped(path: str, what: str) -> bytes:
    """The bytes of ``path`` up to the 32 MiB cap; any error but a missing file as ``FlowFileError``
    in the operating system's words (``FileNotFoundError`` is the caller's to word)."""
    try:
        async with aiofiles.open(path, "rb") as fh:
            data = await fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise FlowFileError(EISDIR_READ) from None
    except OSError as exc:
        raise FlowFileError(os_error_text(exc, path)) from None
    if len(data) > MAX_FILE_BYTES:
        raise FlowFileError(f"{path} is larger than the 32 MiB cap on a {what}")
    return data


def _write_baseline(path: str, data: bytes) -> bool:
    """Replace ``path`` in one rename (directories created as needed); True when it existed."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    existed = os.path.lexists(path)
    write_atomically(path, data, mode=BASELINE_FILE_MODE)
    return existed
