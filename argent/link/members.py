"""A member: one file a call over a link brings with its flow, on either side of the link.

The client builds a ``Member`` for each file it collects (its bytes, or why it sends none) and puts
it on the wire as a ``WireMember`` (``Member.wire``: inline ``content`` or an upload); the tool-server
reads each ``WireMember`` back into a ``Member`` and keeps them in a ``MemberStore``, where the runner
finds them by key (``argent.runner.member_files``). One model for both ends, so a field means the
same on each.

Keys (INTERFACE.md, "Members"): a flow member is ``<real dir of the naming file>\\0<target as
written>``; a baseline or a tool file is its absolute client path; a file an `upload:` step sets into
a page is keyed as a flow member is, by the real directory of the flow file that names it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from attrs import define, field, frozen

from argent.link.codec import to_wire
from argent.link.models import LISTED, MemberRole, MemberState, Spelling, WireMember

__all__ = ["Member", "MemberRole", "MemberState", "MemberStore"]

#: The wire fields of a member that follow its bytes.
_TAIL = ("state", "error")


@frozen
class Member:
    """One member: its identity, and its bytes or its state (with the client's reason).

    ``canonical`` and ``spelling`` are a flow member's; ``size`` and ``mtime_ms`` those of a member
    the client read."""

    role: MemberRole
    key: str
    path: str
    canonical: str | None = None
    spelling: Spelling | None = None
    data: bytes | None = field(default=None, repr=False)
    size: int | None = None
    mtime_ms: float | None = None
    state: MemberState | None = None
    error: str | None = None

    @property
    def spelled(self) -> Spelling:
        """The spelling of a flow member (``listed`` when none was given)."""
        return self.spelling or LISTED

    @property
    def label(self) -> str:
        """What the flow-files log calls the member: a flow or an upload by its canonical path, others
        by key."""
        if self.role in ("flow", "upload") and self.canonical is not None:
            return self.canonical
        return self.key

    def wire(self, *, content: str | None = None, upload: tuple[str, str] | None = None) -> WireMember:
        """The member on the wire, with its bytes inline (``content``) or as an upload (id, hash);
        a member with a state carries no size or mtime."""
        stated = self.state is None
        return WireMember(
            role=self.role,
            key=self.key,
            path=self.path,
            canonical=self.canonical,
            spelling=self.spelling,
            size=self.size if stated else None,
            mtime_ms=self.mtime_ms if stated else None,
            content=content,
            upload_id=upload[0] if upload is not None else None,
            content_hash=upload[1] if upload is not None else None,
            state=self.state,
            error=self.error,
        )

    def wire_head(self) -> dict[str, Any]:
        """The JSON fields before the bytes (``content`` / ``uploadId`` are the transfer's)."""
        return {key: value for key, value in to_wire(self.wire()).items() if key not in _TAIL}

    def wire_tail(self) -> dict[str, Any]:
        """The JSON fields after the bytes: the state and the client's reason."""
        return {key: value for key, value in to_wire(self.wire()).items() if key in _TAIL}


@define
class MemberStore:
    """Members by key: flow members under ``<dir>\\0<target>``, baselines and tool files by path."""

    members: dict[str, Member] = field(factory=dict)

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[Member]:
        return iter(self.members.values())

    def flow(self, key: str) -> Member | None:
        member = self.members.get(key)
        return member if member is not None and member.role == "flow" else None

    def file(self, path: str) -> Member | None:
        """A baseline or tool-file member by its client path."""
        member = self.members.get(path)
        return member if member is not None and member.role in ("baseline", "tool") else None

    def upload(self, key: str) -> Member | None:
        """The member of a file an `upload:` step sets, by its key (``<real dir>\\0<path>``); a flow
        member of the same key is the same file (a flow file set into a page), sent once."""
        member = self.members.get(key)
        return member if member is not None and member.role in ("upload", "flow") else None

    def add(self, member: Member) -> bool:
        """Keep ``member`` unless its key is taken; True when it was kept."""
        if member.key in self.members:
            return False
        self.members[member.key] = member
        return True
