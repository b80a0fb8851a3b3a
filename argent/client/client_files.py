"""Client-write directives: the one file a recording tool may have the client write.

A directive is ``{"__argentClientFile": true, "path": "<absolute client path>", "content": "<text>"}``
(``argent.link.models.ClientFileDirective``, read with the codec).
A recording kept on the client travels this way: the ``savedTo`` of a recording tool's result is
the flow file to write. The client trusts no tool-server, so it writes a text directive only when
all of these hold, and refuses it with a reason otherwise:

- the call is a recording tool (``RECORDING_TOOLS``: flow-start-recording, flow-add-step,
  flow-add-echo, flow-add-script, flow-finish-recording) and the directive is the ``savedTo`` of
  its result — not anywhere else in it (a recorded step's result, a nested report);
- its path is ``<project_root>/.argent/flows/<name>.yaml`` of this call's own arguments (an absolute
  ``project_root`` without ``..``, a valid flow name): the only file the call may write;
- it lands under the roots of the client policy, and ``.argent`` and ``.argent/flows`` are real
  directories: each is opened with ``O_NOFOLLOW`` from its parent's descriptor, so no symbolic link,
  planted before or during the write, redirects it; an existing flow file that is a link or not a
  regular file is refused too (the project root itself is the caller's own path, taken by its real
  path);
- its content is text.

The write is one rename: a temp file beside the target, written and synced, renamed over it (an
existing file keeps its mode; a new one gets ``0666 & ~umask``).

Each text directive is replaced by the path written, or by None (the wire's shape for a refusal);
``AppliedClientFiles.refused`` says why, for the client to print. Directives with
``"encoding": "base64"`` are baselines (``argent.client.baselines``); they are left in place here.

Everything here blocks; async callers run it in a thread.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Mapping
from typing import Any

from attrs import field, frozen
from cattrs.errors import ClassValidationError

from argent.client.client_policy import ClientPolicy
from argent.flows.names import is_safe_flow_name
from argent.link.codec import NotAnObject, Read, read
from argent.link.models import CLIENT_FILE_MARKER, ClientFileDirective
from argent.link.rules import RECORDING_TOOLS
from argent.utils.atomic import write_atomically
from argent.utils.oserrors import DISK_ERRNOS, write_failure_text

SAVED_TO = "savedTo"
FLOW_FILE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+\.yaml\Z")
_SEGMENT_SPLIT = re.compile(r"[/\\]")
_NEW_FILE_MODE = 0o666
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC

#: The line the client prints for each text directive it did not write.
NOT_WRITTEN_LINE = "✗ client file not written: {path}: {reason}"
CHECK_SERVER = "Check the tool-server you are linked to."
NOT_A_RECORDING = (
    "{tool} is not a recording tool; the client writes a file only from the savedTo of a recording tool "
    "({tools}). " + CHECK_SERVER
)
NOT_SAVED_TO = (
    "only the savedTo of a recording tool's result is written, and this file was asked for elsewhere in "
    "the result of {tool}. " + CHECK_SERVER
)
NOT_THIS_CALL = (
    "it is not the recording file of this call ({expected}), the only file a recording tool may write. "
    + CHECK_SERVER
)
NO_RECORDING_FILE = (
    "this call of {tool} names no recording file: that needs an absolute project_root without '..' and a "
    "flow name of letters, digits, '_' and '-'."
)
NOT_TEXT = "its content is not text. " + CHECK_SERVER
LINKED_DIRECTORY = (
    "{directory} is a symbolic link, and the client writes a recording only into a real directory. Replace "
    "the link with a directory, or record in another project."
)
NOT_A_DIRECTORY = "{directory} is not a directory. Move it away, or record in another project."
LINKED_FILE = (
    "{path} is a symbolic link, and the client does not write a recording through a link. Remove the link, "
    "or record under another name."
)
NOT_REGULAR = "{path} is not a regular file. Move it away, or record under another name."


@frozen
class ClientFileCall:
    """The call whose result is applied: its tool and its arguments as the caller gave them."""

    tool: str
    args: Mapping[str, Any] = field(factory=dict)

    def recording_file(self) -> tuple[str, str] | None:
        """``(project_root, name)`` when the arguments name a recording file."""
        root, name = self.args.get("project_root"), self.args.get("name")
        if not isinstance(root, str) or not os.path.isabs(root) or "\0" in root:
            return None
        if ".." in _SEGMENT_SPLIT.split(root) or not isinstance(name, str) or not is_safe_flow_name(name):
            return None
        return root, name


@frozen
class RefusedClientFile:
    """A directive the client did not write, and why."""

    path: str
    reason: str

    def line(self) -> str:
        return NOT_WRITTEN_LINE.format(path=self.path, reason=self.reason)


@frozen
class AppliedClientFiles:
    """The result with text directives replaced, the paths written and the directives refused."""

    result: Any
    written: tuple[str, ...] = ()
    refused: tuple[RefusedClientFile, ...] = ()


def read_directive(value: Any) -> Read[ClientFileDirective] | None:
    """The client-file directive ``value`` is (a marked object with a string ``path``), or None."""
    if not isinstance(value, dict) or value.get(CLIENT_FILE_MARKER) is not True:
        return None  # the common case, decided without reading
    try:
        return read(value, ClientFileDirective)
    except (NotAnObject, ClassValidationError):
        return None


def is_client_file_directive(value: Any) -> bool:
    return read_directive(value) is not None


def _is_text(directive: Read[ClientFileDirective]) -> bool:
    return directive.value.encoding is None and "encoding" not in directive.wrong


def text_directive_path_allowed(path: str) -> bool:
    """The shape of a text directive's path: an absolute ``.../.argent/flows/<name>.yaml``."""
    if not os.path.isabs(path):
        return False
    segments = _SEGMENT_SPLIT.split(path)
    if ".." in segments or len(segments) < 3:
        return False
    return bool(FLOW_FILE_NAME_RE.match(segments[-1])) and segments[-3:-1] == [".argent", "flows"]


def recording_file_path(project_root: str, name: str) -> str:
    """Where a recording of ``name`` under ``project_root`` lives (the tool-server's spelling)."""
    return os.path.normpath(os.path.join(project_root, ".argent", "flows", f"{name}.yaml"))


def apply_client_file_directives(result: Any, call: ClientFileCall) -> AppliedClientFiles:
    """Apply every text directive of ``result`` (at any depth) under the rules above.

    The input is not modified. Directives are never followed more than once: the walk is over the
    parsed answer, whose nesting the client already bounded.
    """
    walk = _Walk(call)
    if isinstance(result, dict) and not is_client_file_directive(result):
        out: Any = {key: walk.value(item, saved_to=key == SAVED_TO) for key, item in result.items()}
    else:
        out = walk.value(result)
    return AppliedClientFiles(out, tuple(walk.written), tuple(walk.refused))


class _Walk:
    def __init__(self, call: ClientFileCall) -> None:
        self.call = call
        self.written: list[str] = []
        self.refused: list[RefusedClientFile] = []

    def value(self, value: Any, *, saved_to: bool = False) -> Any:
        directive = read_directive(value)
        if directive is not None:
            if not _is_text(directive):
                return value
            path = directive.value.path
            reason = self._apply(directive.value, path, saved_to)
            if reason is not None:
                self.refused.append(RefusedClientFile(path, reason))
                return None
            self.written.append(path)
            return path
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value

    def _apply(self, directive: ClientFileDirective, path: str, saved_to: bool) -> str | None:
        tool = self.call.tool
        if tool not in RECORDING_TOOLS:
            return NOT_A_RECORDING.format(tool=tool, tools=", ".join(sorted(RECORDING_TOOLS)))
        if not saved_to:
            return NOT_SAVED_TO.format(tool=tool)
        recording = self.call.recording_file()
        if recording is None:
            return NO_RECORDING_FILE.format(tool=tool)
        root, name = recording
        expected = recording_file_path(root, name)
        if not text_directive_path_allowed(path) or os.path.normpath(path) != expected:
            return NOT_THIS_CALL.format(expected=expected)
        content = directive.content
        if content is None:
            return NOT_TEXT
        return write_recording(root, name, content)


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def write_recording(project_root: str, name: str, content: str) -> str | None:
    """Write ``content`` as ``<project_root>/.argent/flows/<name>.yaml`` in one rename.

    None when written, else the reason it was not. ``.argent`` and ``flows`` are created when
    missing and never followed when they are links.
    """
    target = recording_file_path(project_root, name)
    flows = os.path.dirname(target)
    argent = os.path.dirname(flows)
    try:
        data = content.encode("utf-8")
    except UnicodeError:
        return NOT_TEXT
    policy = ClientPolicy.for_call(project_root, target)
    fds: list[int] = []
    try:
        os.makedirs(project_root, exist_ok=True)
        real_root = os.path.realpath(project_root)
        if not policy.allows(real_root):
            return policy.outside_message(target)
        fds.append(os.open(real_root, _DIR_FLAGS))
        fds.append(_open_subdir(fds[-1], ".argent", argent))
        fds.append(_open_subdir(fds[-1], "flows", flows))
        _replace_in(fds[-1], os.path.basename(target), target, data)
    except _Refused as refused:
        return refused.reason
    except OSError as exc:
        shown = exc.filename if isinstance(exc.filename, str) and os.path.isabs(exc.filename) else target
        syscall = "write" if exc.errno in DISK_ERRNOS else "open"
        return write_failure_text(exc, shown, syscall, then="record again; an older file there is unchanged")
    finally:
        for fd in reversed(fds):
            os.close(fd)
    return None


def _open_subdir(parent: int, name: str, shown: str) -> int:
    """Open (creating it when missing) the directory ``name`` of ``parent``, never through a link."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, dir_fd=parent)
    try:
        return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise OSError(exc.errno, exc.strerror, shown) from None
    st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        raise _Refused(LINKED_DIRECTORY.format(directory=shown))
    raise _Refused(NOT_A_DIRECTORY.format(directory=shown))


def _replace_in(directory: int, name: str, shown: str, data: bytes) -> None:
    """Write ``data`` to a temp file in ``directory`` and rename it over ``name``."""
    try:
        st = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        mode: int | None = None
    else:
        if stat.S_ISLNK(st.st_mode):
            raise _Refused(LINKED_FILE.format(path=shown))
        if not stat.S_ISREG(st.st_mode):
            raise _Refused(NOT_REGULAR.format(path=shown))
        mode = stat.S_IMODE(st.st_mode)
    write_atomically(name, data, mode=mode, dir_fd=directory)
