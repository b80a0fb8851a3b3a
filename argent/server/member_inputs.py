"""A flow file input that came over a link: its bytes and members become the run's files.

For an input with ``"collect": "flow"`` the tool-server builds ``MemberFlowFiles`` instead of a
path on its own disk when the wrapper carries ``members`` (a client that sends members — also
when the path exists on this host: the members win), or carries the flow's ``content`` for a
path this host does not have (an older client that sends only the flow file).

Every upload the members name is taken out of the upload store before any member is read, and
its tar is deleted whatever happens: an upload id is good for one call only, and a failed call
leaves nothing behind. A member's upload is never extracted: its one file is read from the gzip
stream into memory, where the member ends anyway, and refused at the first header or byte past a
limit (one regular file of at most 32 MiB).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from argent.errors import FileInputError
from argent.limits import MAX_FILE_BYTES
from argent.link.archive import FileTooLargeError, NotOneFileError
from argent.link.codec import Read, read_or_none
from argent.link.members import MemberStore
from argent.link.models import LISTED, FileInput, NamedUploads, WireMember
from argent.runner.member_files import MemberFlowFiles
from argent.server.inline import decode_content
from argent.server.members import (
    MEMBER_TOO_LARGE,
    members_error,
    read_members,
    upload_ids,
    valid_canonical,
)
from argent.server.uploads import Upload, UploadStore, read_member_upload, upload_not_found_message

MEMBERS_WITHOUT_CONTENT = (
    'The file input "{path}" carries members but not the flow file\'s content; the client sends members '
    "only with the flow file."
)
INVALID_ROOT_CANONICAL = 'The file input "{path}" carries an invalid canonical path.'
INVALID_ROOT_SPELLING = 'The file input "{path}" carries an invalid spelling.'
UPLOAD_NOT_A_FILE = (
    'The upload for member "{path}" does not hold one regular file of at most {limit} bytes (found {found}).'
)


def _remove_tar(upload: Upload) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(upload.tar_path)


def named_uploads(raw: Any) -> list[str]:
    """The uploads the members of a file-input object name (none for any other value)."""
    named = read_or_none(raw, NamedUploads)
    return upload_ids(named.members) if named is not None else []


def discard_uploads(upload_ids: list[str], uploads: UploadStore) -> None:
    """Delete the uploads a wrapper's members name (a wrapper the call does not use)."""
    for upload_id in upload_ids:
        upload = uploads.take(upload_id)
        if upload is not None:
            _remove_tar(upload)


class _TakenUploads:
    """The uploads a call names, taken from the store up front; each may be used once."""

    def __init__(self, ids: list[str], uploads: UploadStore) -> None:
        self.taken: dict[str, Upload | None] = {upload_id: uploads.take(upload_id) for upload_id in ids}

    async def fetch(self, upload_id: str, content_hash: str | None, member_path: str) -> bytes:
        upload = self.taken.pop(upload_id, None)
        if upload is None:
            raise FileInputError(upload_not_found_message(upload_id))
        try:
            return await read_member_upload(upload, content_hash, member_path, max_file_bytes=MAX_FILE_BYTES)
        except NotOneFileError as exc:
            raise FileInputError(
                UPLOAD_NOT_A_FILE.format(path=member_path, limit=MAX_FILE_BYTES, found=exc.found)
            ) from exc
        except FileTooLargeError as exc:
            raise FileInputError(
                MEMBER_TOO_LARGE.format(path=member_path, size=exc.size, limit=MAX_FILE_BYTES)
            ) from exc

    def discard_rest(self) -> None:
        for upload in self.taken.values():
            if upload is not None:
                _remove_tar(upload)
        self.taken.clear()


def has_members(wire: Read[FileInput]) -> bool:
    """Whether the wrapper carries ``members`` (also a value that is not a list of members)."""
    return wire.value.members is not None or "members" in wire.wrong


async def linked_flow_files(
    wire: Read[FileInput], present: bool, named: list[str], *, uploads: UploadStore
) -> MemberFlowFiles | None:
    """The run's files for a flow input over a link; None when the input resolves on this host.
    ``named`` are the uploads its members name."""
    value = wire.value
    path, content = value.path, value.content
    with_members = has_members(wire)
    if not with_members and (present or content is None or not valid_canonical(os.path.normpath(path))):
        return None
    taken = _TakenUploads(named, uploads)
    try:
        if content is None:
            raise FileInputError(MEMBERS_WITHOUT_CONTENT.format(path=path))
        data = decode_content(path, content, value.size)
        canonical = value.canonical if with_members else os.path.normpath(path)
        if not valid_canonical(canonical):
            raise FileInputError(INVALID_ROOT_CANONICAL.format(path=path))
        if "spelling" in wire.wrong:
            raise FileInputError(INVALID_ROOT_SPELLING.format(path=path))
        store: MemberStore | None = None
        if with_members:
            store = await read_members(_members_of(wire), owner=path, fetch_upload=taken.fetch)
    finally:
        taken.discard_rest()
    assert isinstance(canonical, str)
    return MemberFlowFiles.for_root(path, canonical, value.spelling or LISTED, data, store)


def _members_of(wire: Read[FileInput]) -> list[WireMember]:
    """The wrapper's members; 422 when its ``members`` did not read as a list of member objects."""
    wrong = wire.wrong.get("members")
    if wrong is not None:
        raise members_error(wrong, wire.value.path)
    return wire.value.members or []


async def linked_step_members(
    wire: Read[FileInput], named: list[str], *, uploads: UploadStore
) -> MemberStore:
    """The members of a recorded step (the ``project_root`` probe of flow-add-step over a link)."""
    taken = _TakenUploads(named, uploads)
    try:
        return await read_members(_members_of(wire), owner=wire.value.path, fetch_upload=taken.fetch)
    finally:
        taken.discard_rest()
