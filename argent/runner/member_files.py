"""``FlowFiles`` over a call's member store: the runner's files when the flow came over a link.

The root flow is the flow file-input of the call (its bytes, ``canonical`` and ``spelling`` as
the client sent them). Every other flow is found by key — ``<real dir of the naming file>\\0
<target>`` for a `run:` target, ``<project_root>/.argent/flows\\0<name>.yaml`` for a nested flow —
exactly as the client collected it. Nothing is ever opened: ``canonical`` is a key and a name in
messages, never a path on this host, and ``local_path`` is always None.

A missing member reads as ``ENOENT`` on its canonical path; a refused one fails with the client's
reason; a key no member has fails with ``NO_MEMBER``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

from argent.flows.load import decode_flow
from argent.link.codec import to_wire
from argent.link.members import Member, MemberStore
from argent.link.models import ClientFileDirective
from argent.runner.files import LISTED, FlowFileError, FlowRef, Spelling
from argent.utils.oserrors import enoent_message, write_failure_text

NO_MEMBER = "the client sent no file for {path} with the call"
#: What to do once this host's temp dir refused the copy of a file to upload.
UPLOAD_RUN_AGAIN = "free space in the tool-server's temp dir and run again"


def _system_upload_dir() -> str:
    """An upload directory in the system temp dir (a run outside a tool-server)."""
    return tempfile.mkdtemp("", "argent-upload-")


def _ref(directory: str, target: str) -> FlowRef:
    path = f"{directory}/{target}"
    return FlowRef(
        key=f"{directory}\0{target}", path=path, canonical=posixpath.normpath(path), spelling=LISTED
    )


class MemberFlowFiles:
    """The files of one call over a link; ``store`` is None for a client that sent no members."""

    def __init__(self, root: FlowRef, root_data: bytes, store: MemberStore | None) -> None:
        self.root = root
        self.root_data = root_data
        self.store = store if store is not None else MemberStore()
        self.sent_members = store is not None
        #: Baselines the steps of this call wrote, by client path (the last bytes win).
        self.written: dict[str, bytes] = {}
        #: Makes the private directory that holds the files `upload:` steps set (blocking); the
        #: tool-server's makes one named for it, so a server that starts after a crash removes it.
        self.upload_dirs: Callable[[], str] = _system_upload_dir
        self._upload_dir: str | None = None
        self._uploads: dict[str, str] = {}

    @classmethod
    def for_root(
        cls, path: str, canonical: str, spelling: Spelling, data: bytes, store: MemberStore | None
    ) -> MemberFlowFiles:
        """Files whose root is the flow file ``path`` (``canonical`` and ``spelling`` from the client)."""
        directory, base = posixpath.split(path)
        return cls(FlowRef(f"{directory}\0{base}", path, canonical, spelling), data, store)

    # ------------------------------------------------------------------------------------------
    # FlowFiles

    def _by_key(self, directory: str, target: str) -> FlowRef:
        key = f"{directory}\0{target}"
        if key == self.root.key:
            return self.root
        member = self.store.flow(key)
        if member is None:
            return _ref(directory, target)
        return FlowRef(
            key=key,
            path=member.path,
            canonical=member.canonical or member.path,
            spelling=member.spelled,
        )

    async def locate(self, path: str) -> FlowRef:
        directory, base = posixpath.split(path)
        return self._by_key(directory, base)

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef:
        return self._by_key(posixpath.dirname(naming.canonical), target)

    async def named_flow(self, project_root: str, name: str) -> FlowRef:
        return self._by_key(f"{project_root}/.argent/flows", f"{name}.yaml")

    async def read_text(self, ref: FlowRef) -> str:
        data = self.root_data if ref.key == self.root.key else self._member_bytes(ref)
        return decode_flow(data, ref.canonical)

    def local_path(self, ref: FlowRef, relative: str) -> str | None:
        return None

    async def local_file(self, naming: FlowRef, path: str) -> str:
        """The bytes of the upload member beside ``naming`` as a file on this host, written once per
        call into a private directory (``close`` removes it); its name is the client's."""
        key = f"{posixpath.dirname(naming.canonical)}\0{path}"
        kept = self._uploads.get(key)
        if kept is not None:
            return kept
        member = self.store.upload(key)
        if member is None:
            raise FlowFileError(NO_MEMBER.format(path=f"{posixpath.dirname(naming.canonical)}/{path}"))
        if member.data is None:
            if member.state == "refused":
                raise FlowFileError(member.error or NO_MEMBER.format(path=member.path))
            raise FlowFileError(enoent_message(member.canonical or member.path))
        try:
            written = await asyncio.to_thread(self._write_upload, posixpath.basename(path), member.data)
        except OSError as exc:  # a full or read-only temp dir on this host
            raise FlowFileError(write_failure_text(exc, member.path, then=UPLOAD_RUN_AGAIN)) from None
        self._uploads[key] = written
        return written

    def _write_upload(self, name: str, data: bytes) -> str:
        if self._upload_dir is None:
            self._upload_dir = self.upload_dirs()
        directory = tempfile.mkdtemp("", "upload-", self._upload_dir)
        target = os.path.join(directory, name)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return target

    async def close(self) -> None:
        """Remove the files `upload:` steps of this call set (the run is over)."""
        directory, self._upload_dir = self._upload_dir, None
        self._uploads.clear()
        if directory is not None:
            await asyncio.to_thread(shutil.rmtree, directory, True)

    async def read_baseline(self, path: str) -> bytes | None:
        """A baseline an earlier step of the call wrote, else the member's bytes; None when no
        member has the path (a missing baseline); a refused member fails with the client's reason."""
        data, refusal = self.client_file(path)
        if refusal is not None:
            raise FlowFileError(refusal)
        return data

    async def write_baseline(self, path: str, data: bytes) -> bool:
        """Keep ``data`` for the result's ``baselineWrites``; True when a member or an earlier step
        of the call has the path (the step then says ``updates``)."""
        member = self.store.file(path)
        if member is not None and member.state == "refused":
            raise FlowFileError(member.error or "refused by the client")
        existed = path in self.written or (member is not None and member.state != "missing")
        self.written[path] = data
        return existed

    def baseline_writes(self) -> list[dict[str, Any]]:
        """One client-file directive per baseline path the call wrote, with the last bytes."""
        return [
            to_wire(ClientFileDirective(path, base64.b64encode(data).decode("ascii"), encoding="base64"))
            for path, data in self.written.items()
        ]

    # ------------------------------------------------------------------------------------------
    # Members

    def member(self, ref: FlowRef) -> Member | None:
        return None if ref.key == self.root.key else self.store.flow(ref.key)

    def refusal(self, ref: FlowRef) -> str | None:
        """The client's reason when the flow member of ``ref`` is refused, else None."""
        member = self.member(ref)
        if member is not None and member.state == "refused":
            return member.error or "refused by the client"
        return None

    def client_file(self, path: str) -> tuple[bytes | None, str | None]:
        """A baseline or tool file by client path: ``(bytes, None)``; ``(None, reason)`` when the
        client refused it; ``(None, None)`` when the client has no file there. A baseline an
        earlier step of the call wrote comes first."""
        written = self.written.get(path)
        if written is not None:
            return written, None
        member = self.store.file(path)
        if member is None:
            return None, None
        if member.data is not None:
            return member.data, None
        if member.state == "refused":
            return None, member.error or "refused by the client"
        return None, None

    def _member_bytes(self, ref: FlowRef) -> bytes:
        member = self.store.flow(ref.key)
        if member is None:
            raise FlowFileError(NO_MEMBER.format(path=ref.path))
        if member.data is not None:
            return member.data
        if member.state == "refused":
            raise FlowFileError(member.error or NO_MEMBER.format(path=ref.path))
        raise FlowFileError(enoent_message(member.canonical or ref.canonical))
