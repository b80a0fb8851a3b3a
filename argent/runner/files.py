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
import stat
from collections.abc import Callable, Hashable
from typing import Protocol, TypeAlias

from attrs import frozen

from argent.flows import names
from argent.flows.load import decode_flow
from argent.limits import FILE_WATCHES, MAX_FILE_BYTES
from argent.link.models import LISTED as LISTED
from argent.link.models import Spelling as Spelling
from argent.link.paths import canonical_path, one_resolution, spelling_of
from argent.runner.read_cache import ReadCache
from argent.utils.atomic import write_atomically
from argent.utils.oserrors import EISDIR_READ, enoent_message, os_error_text
from argent.utils.watch import FileWatches


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

    async def local_file(self, naming: FlowRef, path: str) -> str:
        """The file ``path`` (relative to ``naming``'s real file, as an `upload:` step names it) as a
        path on this machine a device can read: the file itself when files are local, else a copy of
        the bytes the call brought (kept until the run's files are closed). Raises ``FlowFileError``
        in the operating system's words (ENOENT naming the file), or with the refusal of the call's
        policy or of the client; a file over the 32 MiB cap is refused as a flow file is."""

    async def read_baseline(self, path: str) -> bytes | None:
        """The snapshot baseline at ``path`` (see ``baseline_dir``); None when there is none.

        Raises ``FlowFileError`` when a baseline is there but cannot be had (unreadable, refused)."""

    async def write_baseline(self, path: str, data: bytes) -> bool:
        """Store ``data`` as the baseline at ``path``; True when a baseline was there before.

        Later ``read_baseline`` calls of the same run see the new bytes."""


#: The mode of a baseline the tool-server writes.
BASELINE_FILE_MODE = 0o644
NOT_A_REGULAR_FILE = "{path} is not a regular file"
UPLOAD_TOO_LARGE = "{path} is larger than the 32 MiB cap on a file to upload"


def baseline_dir(root: FlowRef, flow_name: str) -> str:
    """Where the run of ``root`` keeps its baselines: ``argent.flows.names.baseline_dir``, the rule the
    client applies too."""
    return names.baseline_dir(root.canonical, flow_name)


#: A resolution and the text read ahead with it: (the ref, (its real path, its text or read error)).
_Resolved: TypeAlias = "tuple[FlowRef, tuple[str, str | Exception]]"
#: What resolutions of plain paths read, kept while inotify vouches for it (``argent.runner.read_cache``).
_READS: ReadCache[tuple[FlowRef, tuple[str, str | Exception]]] = ReadCache(FileWatches(FILE_WATCHES))
#: The one inotify instance of this process's read caches: flows here, file-input checks in the server.
WATCHES = _READS.watches


class DiskFlowFiles:
    """Flow files read from this machine's disk (co-located runs).

    Each operation is one hop to a worker thread that does all of its file-system work (a policy
    check, the resolution, the read and the UTF-8 decoding): a thread hop costs about as much as
    reading a small flow, and a call makes several. Subclasses refine the ``_sync`` halves.

    Resolving a flow reads ahead: the thread that resolves a root flow, a `run:` target or a
    nested flow also reads the file, and the ``read_text`` of that ref that follows takes it from
    there instead of hopping again. One file is held ahead at a time, and only until the next
    resolution. A resolution is answered without a hop, on the loop, when an earlier one of the
    same plain path under the same rules is kept and inotify vouches that nothing it depended on
    has changed since (``argent.runner.read_cache``); otherwise it reads afresh, so a file that
    changes during a call is seen as it is at each resolution."""

    _ahead: tuple[str, str | Exception] | None = None
    #: A saved flow resolved and read before the run asks for it (see ``prefetch_named_flow``).
    _prefetched: tuple[tuple[str, str], FlowRef, tuple[str, str | Exception]] | None = None

    async def locate(self, path: str) -> FlowRef:
        return await self._resolve(path, self._locate_sync, path)

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef:
        directory = os.path.dirname(naming.canonical)
        return await self._resolve(_joined(directory, target), self._ref, directory, target)

    async def named_flow(self, project_root: str, name: str) -> FlowRef:
        prefetched, self._prefetched = self._prefetched, None
        if prefetched is not None and prefetched[0] == (project_root, name):
            self._ahead = prefetched[2]
            return prefetched[1]
        return await self._resolve(_named_path(project_root, name), self._named_flow_sync, project_root, name)

    async def prefetch_named_flow(self, project_root: str, name: str) -> None:
        """Resolve and read a saved flow now (its checks raise here), for the ``named_flow`` call that
        follows: a call's precheck and its run then share one worker-thread hop, or none."""
        self._prefetched = None
        ref, ahead = await self._resolved(
            _named_path(project_root, name), self._named_flow_sync, project_root, name
        )
        self._prefetched = ((project_root, name), ref, ahead)

    async def _resolve(self, spelled: str, resolve: Callable[..., FlowRef], *args: str) -> FlowRef:
        self._ahead = None
        ref, self._ahead = await self._resolved(spelled, resolve, *args)
        return ref

    def _read_rules(self) -> Hashable:
        """What this object's checks of a file depend on besides the file system (a policy's rules)."""
        return None

    async def _resolved(self, spelled: str, resolve: Callable[..., FlowRef], *args: str) -> _Resolved:
        """``resolve(*args)`` (whose path is ``spelled``) and the text read ahead: kept from an earlier
        resolution when nothing it depended on changed (``argent.runner.read_cache``), else one hop."""
        key = (type(self), self._read_rules(), resolve.__name__, *args)
        kept = _READS.get(key)
        if kept is not None:
            return kept
        return await asyncio.to_thread(self._resolve_and_read, resolve, *args, spelled=spelled, key=key)

    def _resolve_and_read(
        self, resolve: Callable[..., FlowRef], *args: str, spelled: str | None = None, key: Hashable = None
    ) -> _Resolved:
        # Watched before it is resolved: a change from here on is seen by the next lookup.
        stamp = _READS.watch(key, spelled) if spelled is not None and key is not None else None
        with one_resolution():
            ref = resolve(*args)
            text: str | Exception
            try:
                text = self._read_text_sync(ref.canonical)
            except Exception as exc:  # raised by the read_text that takes it
                text = exc
        resolved = ref, (ref.canonical, text)
        if key is not None:
            # Kept: a plain path that resolved as spelled (no link) to a file listed under its name.
            plain = isinstance(text, str) and ref.spelling == LISTED and ref.path == spelled == ref.canonical
            _READS.settle(key, stamp, resolved, len(text) if plain and isinstance(text, str) else None)
        return resolved

    def _locate_sync(self, path: str) -> FlowRef:
        return self._ref(os.path.dirname(path), os.path.basename(path))

    def _named_flow_sync(self, project_root: str, name: str) -> FlowRef:
        return self._ref(os.path.join(project_root, ".argent", "flows"), f"{name}.yaml")

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

    def _readable_sync(self, path: str) -> None:
        """Raise ``FlowFileError`` when this run may not touch ``path`` (every path may here)."""

    async def read_text(self, ref: FlowRef) -> str:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == ref.canonical:
            if isinstance(ahead[1], str):
                return ahead[1]
            raise ahead[1].with_traceback(None)
        return await asyncio.to_thread(self._read_text_sync, ref.canonical)

    def _read_text_sync(self, path: str) -> str:
        self._readable_sync(path)
        try:
            data = _read_capped(path, "flow file")
        except FileNotFoundError:
            raise FlowFileError(enoent_message(path)) from None
        return decode_flow(data, path)

    def local_path(self, ref: FlowRef, relative: str) -> str | None:
        return os.path.normpath(os.path.join(os.path.dirname(ref.canonical), relative))

    async def local_file(self, naming: FlowRef, path: str) -> str:
        return await asyncio.to_thread(
            self._local_file_sync, _joined(os.path.dirname(naming.canonical), path)
        )

    def _local_file_sync(self, joined: str) -> str:
        """The real path of ``joined`` (the kernel's resolution, as the client's), checked like a file
        this run reads, when it is a regular file within the cap."""
        real = canonical_path(joined)
        self._readable_sync(real)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise FlowFileError(enoent_message(real)) from None
        except OSError as exc:
            raise FlowFileError(os_error_text(exc, real)) from None
        if stat.S_ISDIR(st.st_mode):
            raise FlowFileError(EISDIR_READ)
        if not stat.S_ISREG(st.st_mode):
            raise FlowFileError(NOT_A_REGULAR_FILE.format(path=real))
        if st.st_size > MAX_FILE_BYTES:
            raise FlowFileError(UPLOAD_TOO_LARGE.format(path=real))
        return real

    async def read_baseline(self, path: str) -> bytes | None:
        return await asyncio.to_thread(self._read_baseline_sync, path)

    def _read_baseline_sync(self, path: str) -> bytes | None:
        self._readable_sync(path)
        try:
            return _read_capped(path, "baseline")
        except FileNotFoundError:
            return None

    async def write_baseline(self, path: str, data: bytes) -> bool:
        return await asyncio.to_thread(self._write_baseline_sync, path, data)

    def _write_baseline_sync(self, path: str, data: bytes) -> bool:
        self._readable_sync(path)
        return _write_baseline(path, data)


def _joined(directory: str, target: str) -> str:
    """The path ``DiskFlowFiles._ref`` spells for ``target`` named in ``directory``."""
    return f"{directory}/{target}" if directory else target


def _named_path(project_root: str, name: str) -> str:
    """The path of a saved flow, spelled as ``DiskFlowFiles._named_flow_sync`` resolves it."""
    return _joined(os.path.join(project_root, ".argent", "flows"), f"{name}.yaml")


def _read_capped(path: str, what: str) -> bytes:
    """The bytes of ``path`` up to the 32 MiB cap; any error but a missing file as ``FlowFileError``
    in the operating system's words (``FileNotFoundError`` is the caller's to word)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
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
