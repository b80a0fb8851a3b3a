"""The flow recorder's state: live recordings, their locks, and the recording files on this host.

A recording is addressed by ``name`` + ``project_root`` (``<project_root>/.argent/flows/<name>.yaml``)
and keyed by the real path of that file, so a symlinked spelling of the same file finds the same
recording. Recordings belong to their caller: on a shared tool-server (named tokens) each token
has its own, so another token that names the same file neither sees, extends, finishes nor restarts
it (``argent.devices.caller``: the caller of the current tool call). At most ``MAX_LIVE_RECORDINGS``
are live per caller; starting one more evicts that caller's least recently used. Each file has one ``asyncio.Lock`` that every mutation of it takes; each recording also
orders its own steps (``RecordingSession.order``) so concurrent calls land in arrival order.

A *host* recording lives in its file: every append re-reads it (hand edits survive) and writes
it back atomically. A *client-kept* recording lives in ``RecordingSession.text``; the tool-server
writes nothing and the client writes what each result's directive carries. Either way the session
keeps the recording as a ``FlowDocument``, so an append parses only the new step (a hand edit
makes the next append parse the file once).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import stat
import weakref
from collections import OrderedDict
from typing import Any

from attrs import define, field

from argent.devices.caller import current_caller
from argent.errors import (
    FLOW_RECORDING_FAILED,
    FLOW_RECORDING_NOT_ACTIVE,
    FLOW_RECORDING_WRITE_FAILED,
    ArgentError,
    ConflictError,
)
from argent.flows.names import js_json_string
from argent.flows.write import FlowDocument
from argent.limits import MAX_FILE_BYTES, MAX_LIVE_RECORDINGS
from argent.link.codec import to_wire
from argent.link.models import ClientFileDirective
from argent.utils.atomic import write_atomically
from argent.utils.oserrors import errno_code

NO_ACTIVE_RECORDING = (
    'No active recording for flow "{name}" in {root}. If you have not started it yet, call '
    "flow-start-recording — but note it truncates, so if {path} already holds a take you want (finished, "
    "or interrupted by a restart), copy it aside or record under a fresh name instead. "
    "Active recordings: {active}."
)
OTHER_SPELLING = (
    'Recording of "{name}" in {root} is not registered under that spelling — it was started as {started}, '
    "which is the same file. Use that name and project_root for every call of this recording."
)
NO_LONGER_ACTIVE = (
    'Recording of "{name}" in {root} is no longer active — it was finished, restarted or evicted while this '
    "call waited or ran, so nothing was recorded{ran}. Call flow-start-recording to begin a new take."
)
BEING_RECORDED = (
    'Flow "{name}" in {root} is being recorded by another token; nothing was changed. Record under another '
    "name, or start again once that recording is finished."
)
NOT_YOURS = (
    'Flow "{name}" in {root} is a saved flow this token did not record; flow-start-recording would truncate '
    "{path}, so nothing was changed. Record under a fresh name, or have its owner (or the tool-server's "
    "operator) remove it first; a policy with overwrite_flows: true lets any token restart a saved flow."
)
WRITE_FAILED = "Failed to write flow file {path} ({code}) — {hint}"
NOT_WRITABLE_HINT = (
    "{target} is not writable (mode {mode}). Make it writable (chmod u+w {target}) or record under "
    "another name."
)
READ_FAILED = (
    "Could not read the recording {path} ({detail}) — it was removed or made unreadable since the "
    "recording started. Restore it, or call flow-start-recording to begin a new take."
)
MKDIR_FAILED = "Failed to create the flows directory {dir} ({code}) — {hint}"
MKDIR_HINTS = {
    "ENOTDIR": (
        "a component of {dir} exists and is not a directory — check that project_root names a directory "
        "rather than a file."
    ),
    "EACCES": "the tool-server may not create {dir} — check the permissions of project_root.",
    "EROFS": (
        "{dir} is on a read-only file system. Remount it read-write, or record in a project on a writable disk."
    ),
}
#: What a careless host's refusal of a recording write says, by code (``{dir}``: the flows directory).
WRITE_HINTS = {
    "EROFS": MKDIR_HINTS["EROFS"],
    "ENOSPC": (
        "the disk of {dir} is full. Free some space there and call the tool again; the file as it was is kept."
    ),
    "EDQUOT": (
        "the disk quota of {dir} is used up. Free some space there and call the tool again; the file as it was "
        "is kept."
    ),
    "EACCES": "the directory {dir} is not writable.",
}


class RecordingError(ArgentError):
    """A recorder call that cannot go on; nothing was recorded."""

    default_code = FLOW_RECORDING_FAILED
    default_kind = "validation"


def flows_dir(project_root: str) -> str:
    return os.path.join(project_root, ".argent", "flows")


def recording_path(project_root: str, name: str) -> str:
    """The recording file as the caller addresses it (a client path for a client-kept recording)."""
    return os.path.join(flows_dir(project_root), f"{name}.yaml")


@define(eq=False)
class RecordingSession:
    """One live recording. Identity matters: a restart replaces the object, and a call that began
    with the old one finds it gone (``RecordingSessions.is_current``)."""

    key: str
    name: str
    project_root: str
    flow_file: str
    client_kept: bool
    #: The caller that started it (a named token's guard; None: the server's one user).
    owner: str | None = field(factory=lambda: current_caller().owner)
    #: The flow text of a client-kept recording (unused for a host recording).
    text: str = ""
    #: The recording kept in memory: appending parses only the new step. A host recording's file is
    #: still read for every change and parsed again only when someone edited it.
    document: FlowDocument = field(factory=lambda: FlowDocument.parse(""))
    #: Held from a step's arrival to its append: steps are recorded in the order they came.
    order: asyncio.Lock = field(factory=asyncio.Lock)
    #: The device the recording last acted on: a directive step runs there unless told otherwise.
    device: str | None = None


class RecordingSessions:
    """The live recordings of one tool-server, least recently used first, by caller and file."""

    def __init__(self, limit: int = MAX_LIVE_RECORDINGS) -> None:
        self.limit = limit
        self._sessions: OrderedDict[tuple[str | None, str], RecordingSession] = OrderedDict()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        #: Who last started a recording of each file this host keeps, since the server started.
        self._recorded_by: dict[str, str | None] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def lock(self, key: str) -> asyncio.Lock:
        """The lock of one recording file; alive while someone holds or awaits it."""
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock

    def get(self, key: str) -> RecordingSession | None:
        """The current caller's live recording of ``key``."""
        slot = (current_caller().owner, key)
        session = self._sessions.get(slot)
        if session is not None:
            self._sessions.move_to_end(slot)
        return session

    def put(self, session: RecordingSession) -> RecordingSession | None:
        """Make ``session`` the live recording of its file for its caller; the one it replaces, if any.

        Beyond the limit that caller's least recently used other recording is dropped."""
        previous = self._sessions.pop((session.owner, session.key), None)
        self._sessions[(session.owner, session.key)] = session
        mine = [slot for slot in self._sessions if slot[0] == session.owner]
        for slot in mine[: max(0, len(mine) - self.limit)]:
            del self._sessions[slot]
        return previous

    def host_holder(self, key: str) -> RecordingSession | None:
        """Another caller's live recording of the host file ``key`` (a client-kept one names a file on
        its own client, which no other client shares)."""
        owner = current_caller().owner
        for (other, at), session in self._sessions.items():
            if at == key and other != owner and not session.client_kept:
                return session
        return None

    def recorded_here(self, key: str) -> bool:
        """The current caller started the last recording of the host file ``key`` in this server's life."""
        return key in self._recorded_by and self._recorded_by[key] == current_caller().owner

    def note_recorder(self, key: str) -> None:
        self._recorded_by[key] = current_caller().owner

    def is_current(self, session: RecordingSession) -> bool:
        return self._sessions.get((session.owner, session.key)) is session

    def end(self, session: RecordingSession) -> None:
        if self.is_current(session):
            del self._sessions[(session.owner, session.key)]

    def active_listing(self, key: str) -> str:
        """The current caller's recordings beside ``key``'s file by name, and how many are elsewhere."""
        directory = os.path.dirname(key)
        owner = current_caller().owner
        own = [s for s in self._sessions.values() if s.owner == owner]
        here = sorted(s.name for s in own if os.path.dirname(s.key) == directory)
        others = len(own) - len(here)
        text = ", ".join(js_json_string(name) for name in here) if here else "none in this project"
        if others:
            text += f" (plus {others} in other projects)"
        return text

    def missing(self, name: str, project_root: str, key: str) -> RecordingError:
        return RecordingError(
            NO_ACTIVE_RECORDING.format(
                name=name,
                root=project_root,
                path=recording_path(project_root, name),
                active=self.active_listing(key),
            ),
            error_code=FLOW_RECORDING_NOT_ACTIVE,
        )


def being_recorded(name: str, project_root: str) -> ConflictError:
    return ConflictError(BEING_RECORDED.format(name=name, root=project_root))


def not_yours(name: str, project_root: str, path: str) -> ConflictError:
    return ConflictError(NOT_YOURS.format(name=name, root=project_root, path=path))


def no_longer_active(session: RecordingSession, *, tool_ran: bool) -> RecordingError:
    return RecordingError(
        NO_LONGER_ACTIVE.format(
            name=session.name, root=session.project_root, ran=" (the tool did run)" if tool_ran else ""
        ),
        error_code=FLOW_RECORDING_NOT_ACTIVE,
    )


def other_spelling(name: str, project_root: str, session: RecordingSession) -> RecordingError:
    return RecordingError(
        OTHER_SPELLING.format(name=name, root=project_root, started=session.flow_file),
        error_code=FLOW_RECORDING_NOT_ACTIVE,
    )


# --------------------------------------------------------------------------------------------
# Host files. Everything below blocks; callers run it in a thread.

_TEMP_COUNTER = itertools.count(1)


def recording_key(flow_file: str) -> str:
    """The real path of a recording file (a missing file: under the real path of its directory)."""
    return os.path.realpath(flow_file)


def make_flows_dir(project_root: str) -> None:
    directory = flows_dir(project_root)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        code = errno_code(exc)
        hint = MKDIR_HINTS.get(code, exc.strerror or str(exc)).format(dir=directory)
        raise RecordingError(
            MKDIR_FAILED.format(dir=directory, code=code, hint=hint), error_code=FLOW_RECORDING_WRITE_FAILED
        ) from None


def read_recording(flow_file: str) -> str:
    """The text of a host recording, read again for every change so hand edits are kept."""
    try:
        with open(recording_key(flow_file), "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        detail = f"{errno_code(exc)}: {exc.strerror or exc}"
        raise RecordingError(READ_FAILED.format(path=flow_file, detail=detail)) from None
    if len(data) > MAX_FILE_BYTES:
        raise RecordingError(
            READ_FAILED.format(path=flow_file, detail="larger than the 32 MiB cap on a flow file")
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordingError(
            READ_FAILED.format(path=flow_file, detail=f"not UTF-8 text, byte {exc.start}")
        ) from None


def _write_failed(flow_file: str, code: str, hint: str) -> RecordingError:
    return RecordingError(
        WRITE_FAILED.format(path=flow_file, code=code, hint=hint), error_code=FLOW_RECORDING_WRITE_FAILED
    )


def write_recording(flow_file: str, text: str) -> None:
    """Replace the recording file in one rename: a temp file ``.argent-flow-<pid>-<n>.tmp`` beside the
    real file, given the old file's mode, renamed over it.

    An existing file its owner may not write is refused (``EACCES``) — also when the tool-server runs
    as root, where the rename alone would succeed and silently replace a file the user protected.
    """
    target = recording_key(flow_file)
    directory = os.path.dirname(target)
    mode: int | None
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _write_failed(flow_file, errno_code(exc), exc.strerror or str(exc)) from None
    if _read_only(directory):
        raise _write_failed(flow_file, "EROFS", WRITE_HINTS["EROFS"].format(dir=directory))
    if mode is not None and (not mode & stat.S_IWUSR or not os.access(target, os.W_OK)):
        hint = NOT_WRITABLE_HINT.format(target=target, mode=f"{mode:o}".rjust(3, "0"))
        raise _write_failed(flow_file, "EACCES", hint)
    temp = f".argent-flow-{os.getpid()}-{next(_TEMP_COUNTER)}.tmp"
    try:
        write_atomically(target, text.encode("utf-8"), mode=mode, temp_name=temp)
    except OSError as exc:
        code = errno_code(exc)
        hint = WRITE_HINTS.get(code, exc.strerror or str(exc)).format(dir=directory)
        raise _write_failed(flow_file, code, hint) from None


def _read_only(directory: str) -> bool:
    """Whether ``directory`` is on a read-only file system (``os.access`` then refuses every write as
    if the file's mode did, which it does not)."""
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def client_file(flow_file: str, text: str) -> dict[str, Any]:
    """The directive that has the client write a client-kept recording (upstream-http.md §7), as
    JSON: the recording tools answer JSON objects."""
    return to_wire(ClientFileDirective(flow_file, text))  # type: ignore[no-any-return]
