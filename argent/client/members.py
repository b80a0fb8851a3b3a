"""Members over a link: the files a call carries with its flow (or its recorded step), sent and told.

For a file input with ``"collect": "flow"`` whose flow file the client could read, the client
adds ``canonical``, ``spelling`` and ``members`` to the file-input object (``argent.client.collect``
says which files). The ``project_root`` probe of ``flow-add-step`` (``"collect": "step"``) gets
``members`` alone: the files the one recorded step makes the tool-server read, and an empty list for
a step that reads none, so the call is always a stream. The members travel
inline (base64 ``content``) until they are 256 KiB in total; every other member with bytes goes
to ``POST /upload`` as one gzipped tar of its own (``uploadId`` + ``contentHash``). A member
that does not fit the budget does not stop smaller ones after it from riding inline.

When a proxy answers an upload with 413 the call is not sent, and the error names the body
size the proxy must accept on ``POST /upload``. With ``ARGENT_FLOW_FILES_LOG=1`` one line per
member goes to the log before the call (never the content).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import os
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Literal

from attrs import evolve

from argent.client.base import ToolCallError
from argent.client.collect import Collection, Listing, collect_flow_members, collect_step_members
from argent.client.transport import UploadRefusedByProxy
from argent.limits import INLINE_MEMBERS_BUDGET
from argent.link.archive import build_tar_gz_bytes
from argent.link.members import Member
from argent.link.models import FileInput, FileInputSpec, WireMember

FLOW_FILES_LOG_ENV = "ARGENT_FLOW_FILES_LOG"
LOG_PREFIX = "[flow-files]"
MEMBER_UPLOAD_REFUSED = (
    "Upload to {url}/upload failed: 413 {reason} — a proxy in front of the tool-server refused the "
    "{size}-byte archive of {path}. The proxy must accept request bodies of at least {needed} bytes on "
    "POST /upload (for example client_max_body_size in nginx) to send the files of this flow. "
    "The call was not sent."
)

Transfer = Literal["inline", "upload"]
#: Posts one archive to ``POST /upload`` for the member at ``path``; returns the upload id.
ArchivePoster = Callable[[bytes, str], Awaitable[str]]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def flow_files_log_enabled(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(FLOW_FILES_LOG_ENV) == "1"


def archive_name(path: str) -> str:
    """The single entry of a member's archive: its basename, in safe characters."""
    name = _UNSAFE_NAME.sub("_", path.rsplit("/", 1)[-1])
    return "member" if name in ("", ".", "..") else name


def plan_transfer(members: Iterable[Member]) -> list[tuple[Member, Transfer | None]]:
    """Inline while the inline bytes stay within 256 KiB in total, else upload; None: no bytes."""
    used = 0
    plan: list[tuple[Member, Transfer | None]] = []
    for member in members:
        if member.data is None:
            plan.append((member, None))
            continue
        size = len(member.data)
        if used + size <= INLINE_MEMBERS_BUDGET:
            used += size
            plan.append((member, "inline"))
        else:
            plan.append((member, "upload"))
    return plan


def log_line(member: Member, how: Transfer | None) -> str:
    """``[flow-files] <role> <canonical or key>: inline <n> | upload <n> | missing | refused (...) | listed``."""
    head = f"{LOG_PREFIX} {member.role} {member.label}"
    if how is not None and member.data is not None:
        return f"{head}: {how} {len(member.data)}"
    if member.state == "refused":
        return f"{head}: refused ({member.error or 'no reason given'})"
    return f"{head}: {member.state or 'missing'}"


def written_line(path: str) -> str:
    return f"{LOG_PREFIX} baseline {path}: written"


def member_wire(member: Member, how: Transfer | None, upload: tuple[str, str] | None) -> WireMember:
    if how == "inline" and member.data is not None:
        return member.wire(content=base64.b64encode(member.data).decode("ascii"))
    return member.wire(upload=upload if how == "upload" else None)


def _archives(plan: list[tuple[Member, Transfer | None]]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for index, (member, how) in enumerate(plan):
        if how == "upload" and member.data is not None:
            mtime = None if member.mtime_ms is None else member.mtime_ms / 1000
            out[index] = build_tar_gz_bytes(archive_name(member.path), member.data, mtime=mtime)
    return out


async def send_members(
    collection: Collection,
    *,
    post: ArchivePoster,
    log: Callable[[str], None] | None,
) -> list[WireMember]:
    """Upload what does not ride inline, log each member, and return the wire members."""
    plan = plan_transfer(collection.members)
    if log is not None:
        for member, how in plan:
            log(log_line(member, how))
    archives = await asyncio.to_thread(_archives, plan) if any(how == "upload" for _, how in plan) else {}
    needed = max((len(archive) for archive in archives.values()), default=0)
    uploads: dict[int, tuple[str, str]] = {}
    for index, archive in archives.items():
        member = plan[index][0]
        try:
            upload_id = await post(archive, member.path)
        except UploadRefusedByProxy as exc:
            raise ToolCallError(
                MEMBER_UPLOAD_REFUSED.format(
                    url=exc.url, reason=exc.reason, size=exc.size, path=exc.path, needed=needed
                ),
                status=413,
            ) from exc
        uploads[index] = (upload_id, hashlib.sha256(archive).hexdigest())
    return [member_wire(member, how, uploads.get(index)) for index, (member, how) in enumerate(plan)]


async def attach_members(
    wire: FileInput,
    args: Mapping[str, Any],
    listing: Listing,
    *,
    post: ArchivePoster,
    log: Callable[[str], None] | None,
) -> tuple[FileInput, Collection | None]:
    """The flow file input with its ``canonical``, ``spelling`` and ``members``, and the collection.

    Nothing is added when the client could not read the flow file (no ``content``).
    """
    if wire.content is None:
        return wire, None
    try:
        data = base64.b64decode(wire.content, validate=True)
    except (binascii.Error, ValueError):
        return wire, None
    collection = await asyncio.to_thread(collect_flow_members, wire.path, data, args, list(listing))
    members = await send_members(collection, post=post, log=log)
    return evolve(
        wire, canonical=collection.canonical, spelling=collection.spelling, members=members
    ), collection


async def attach_step_members(
    wire: FileInput,
    args: Mapping[str, Any],
    listing: Listing,
    *,
    post: ArchivePoster,
    log: Callable[[str], None] | None,
) -> tuple[FileInput, Collection]:
    """The probe with its ``members``, and the collection (for the baselines it may write)."""
    collection = await asyncio.to_thread(collect_step_members, args, list(listing))
    return evolve(wire, members=await send_members(collection, post=post, log=log)), collection


async def attach_collected(
    spec: FileInputSpec,
    wrapper: FileInput,
    args: Mapping[str, Any],
    listing: Listing,
    *,
    post: ArchivePoster,
    log: Callable[[str], None] | None,
) -> tuple[FileInput, Collection | None]:
    """The wrapper of an input with ``collect`` and its members (``flow`` or ``step``), and the
    collection (for the baselines it may write); an input of another ``collect`` as it is."""
    if spec.collect == "step":
        return await attach_step_members(wrapper, args, listing, post=post, log=log)
    if spec.collect != "flow":
        return wrapper, None
    return await attach_members(wrapper, args, listing, post=post, log=log)
