"""The tool-server's member store: the files a call brought, held in memory for one run.

``read_members`` turns the ``members`` of a flow file-input object (``WireMember`` models, read
with ``argent.link.codec``) into a ``MemberStore`` before the arguments are validated:

- a member with an unknown role, or with a key the store already has, is ignored; a ``flow`` or
  ``upload`` member (a file an `upload:` step sets) is keyed ``<absolute dir>\\0<target>``;
- a member with bytes (inline ``content`` or an upload) keeps them; the bytes must pass the
  checks of a file input (32 MiB per file, ``size`` equal to the bytes) and the flow members of
  the call must stay within 32 MiB in total, else the call fails with 422 — as it does for an
  upload the tool-server does not have;
- a member without bytes keeps its ``state`` (``missing``, ``refused``, ``listed``); with no bytes
  and no state it becomes ``refused``, and so does a flow member whose ``canonical`` or
  ``spelling`` is not valid.

Uploads are fetched through a callable the server passes in, so this module knows no HTTP.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from cattrs.errors import IterableValidationError

from argent.errors import FileInputError
from argent.limits import MAX_FILE_BYTES, MAX_FLOW_MEMBERS_BYTES
from argent.link.codec import read_items, structure
from argent.link.members import Member, MemberRole, MemberStore
from argent.link.models import LISTED, Spelling, UploadRef, WireMember

ROLES: frozenset[str] = frozenset({"flow", "baseline", "tool", "upload"})
STATES: frozenset[str] = frozenset({"missing", "refused", "listed"})

MEMBERS_NOT_A_LIST = 'The members of "{path}" must be a list of member objects.'
MEMBER_NOT_AN_OBJECT = 'Member {index} of "{path}" is not an object with a string role and key.'
MEMBER_BAD_CONTENT = 'Member content for "{path}" is not valid base64.'
MEMBER_TOO_LARGE = 'Member "{path}" is {size} bytes — exceeds the {limit}-byte limit on one file.'
MEMBER_SIZE_MISMATCH = (
    'Member content for "{path}" is {size} bytes but the client recorded {recorded} — refusing a truncated '
    "or corrupted upload."
)
MEMBER_BOTH = 'Member "{path}" carries both content and an uploadId; send one of them.'
FLOW_MEMBERS_TOO_LARGE = (
    "The flow members of this call add up to at least {size} bytes — over the {limit}-byte limit on the "
    "flow files of one call."
)
NO_BYTES_NO_STATE = "the client sent neither the bytes nor a state for {path}"
INVALID_CANONICAL = "the client sent an invalid canonical path for {path}"
INVALID_SPELLING = "the client sent an invalid spelling for {path}"
REFUSED_WITHOUT_REASON = "the client did not send {path}"

#: Fetches an upload for a member: ``(upload_id, content_hash, member_path) -> bytes`` (raises 422).
UploadFetcher = Callable[[str, str | None, str], Awaitable[bytes]]


def valid_canonical(value: Any) -> bool:
    """An absolute, normalized client path: no ``..``, ``.`` or empty segment, no NUL."""
    if not isinstance(value, str) or not value.startswith("/") or "\0" in value:
        return False
    return posixpath.normpath(value) == value or value == "//"


def split_flow_key(key: str) -> tuple[str, str] | None:
    """``(directory, target)`` of a flow key ``<absolute dir>\\0<target>``; None when malformed."""
    directory, nul, target = key.partition("\0")
    if not nul or not target or "\0" in target or not directory.startswith("/"):
        return None
    return directory, target


def valid_file_key(key: str) -> bool:
    """A baseline or tool-file key: an absolute client path without NUL."""
    return key.startswith("/") and "\0" not in key


def upload_ids(refs: Iterable[UploadRef]) -> list[str]:
    """The upload ids of ``refs``, each once, in order."""
    return list(dict.fromkeys(ref.upload_id for ref in refs if ref.upload_id is not None))


def named_upload_ids(raw: Any) -> list[str]:
    """Every upload id the members name (each once), whatever else is wrong with them."""
    return upload_ids(read_items(raw, UploadRef))


def members_error(exc: BaseException, owner: str) -> FileInputError:
    """The 422 for a ``members`` value that does not read as a list of member objects."""
    if isinstance(exc, IterableValidationError):
        with_notes, _ = exc.group_exceptions()
        if with_notes:
            return FileInputError(MEMBER_NOT_AN_OBJECT.format(index=with_notes[0][1].index, path=owner))
    return FileInputError(MEMBERS_NOT_A_LIST.format(path=owner))


def wire_members(raw: Any, owner: str) -> list[WireMember]:
    """The members of a flow file input as models (422 for a value of another shape)."""
    try:
        return structure(raw, list[WireMember])
    except (ValueError, IterableValidationError) as exc:
        raise members_error(exc, owner) from None


def _decode(content: str, path: str) -> bytes:
    if len(content) > (MAX_FILE_BYTES * 4) // 3 + 4:
        size = f"over {MAX_FILE_BYTES}"
        raise FileInputError(MEMBER_TOO_LARGE.format(path=path, size=size, limit=MAX_FILE_BYTES))
    try:
        return base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        raise FileInputError(MEMBER_BAD_CONTENT.format(path=path)) from None


def _check_bytes(data: bytes, recorded: int | None, path: str) -> None:
    if len(data) > MAX_FILE_BYTES:
        raise FileInputError(MEMBER_TOO_LARGE.format(path=path, size=len(data), limit=MAX_FILE_BYTES))
    if recorded is not None and recorded != len(data):
        raise FileInputError(MEMBER_SIZE_MISMATCH.format(path=path, size=len(data), recorded=recorded))


async def read_members(raw: Any, *, owner: str, fetch_upload: UploadFetcher) -> MemberStore:
    """The store of a flow file-input's ``members`` (``owner`` is its path, for messages); the
    members as JSON or as models."""
    store = MemberStore()
    flow_bytes = 0
    for entry in wire_members(raw, owner):
        role, key = entry.role, entry.key
        if role not in ROLES or key in store.members:
            continue  # unknown roles and repeated keys are ignored
        if role in ("flow", "upload"):
            parts = split_flow_key(key)
            if parts is None:
                continue  # a key no lookup can produce
            path = f"{parts[0]}/{parts[1]}"
        else:
            if not valid_file_key(key):
                continue
            path = key
        data = await _member_bytes(entry, path, fetch_upload)
        if role == "flow" and data is not None:
            flow_bytes += len(data)
            if flow_bytes > MAX_FLOW_MEMBERS_BYTES:
                raise FileInputError(
                    FLOW_MEMBERS_TOO_LARGE.format(size=flow_bytes, limit=MAX_FLOW_MEMBERS_BYTES)
                )
        store.add(_member(role, key, path, entry, data))  # type: ignore[arg-type]
    return store


async def _member_bytes(entry: WireMember, path: str, fetch_upload: UploadFetcher) -> bytes | None:
    if entry.content is not None and entry.upload_id is not None:
        raise FileInputError(MEMBER_BOTH.format(path=path))
    data: bytes | None = None
    if entry.content is not None:
        data = _decode(entry.content, path)
    elif entry.upload_id is not None:
        data = await fetch_upload(entry.upload_id, entry.content_hash, path)
    if data is not None:
        _check_bytes(data, entry.size, path)
    return data


def _member(role: MemberRole, key: str, path: str, entry: WireMember, data: bytes | None) -> Member:
    state = entry.state
    reason = entry.error or None
    canonical: str | None = None
    spelling: Spelling = LISTED
    invalid: str | None = None
    if role == "upload" and valid_canonical(entry.canonical):
        canonical = entry.canonical  # named in messages only (a missing file)
    if role == "flow":
        if not valid_canonical(entry.canonical):
            invalid = INVALID_CANONICAL.format(path=path)
        elif entry.spelling is None:
            invalid = INVALID_SPELLING.format(path=path)
        else:
            canonical, spelling = entry.canonical, entry.spelling
        if canonical is None:
            canonical = posixpath.normpath(path)

    def member(**fields: Any) -> Member:
        return Member(role=role, key=key, path=path, canonical=canonical, spelling=spelling, **fields)

    if invalid is not None:
        return member(state="refused", error=invalid)
    if data is not None:
        return member(data=data)
    if state not in STATES or (state == "listed" and role != "baseline"):
        return member(state="refused", error=NO_BYTES_NO_STATE.format(path=path))
    if state == "refused":
        return member(state="refused", error=reason or REFUSED_WITHOUT_REASON.format(path=path))
    return member(state=state)
