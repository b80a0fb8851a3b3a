"""The client policy: which of its files a client sends to a tool-server, and how it refuses.

A client sends a member only when the real path of the member is under one of the roots
of the call, each by its real location:

- ``project_root`` and its ``.argent/flows`` directory;
- the directory of the flow file and the directory of its real file;
- the project ``<P>`` of a flow file under ``<P>/.argent/flows/``, by its path or its real path.

The directory check comes first, so a missing file outside the roots is refused, not
missing. Then the file itself: a name that links to a file of another type, a directory,
a file over 32 MiB and any error of the operating system are refused with a reason.
Everything here blocks; async callers run it in a thread.
"""

from __future__ import annotations

import os
import stat
from typing import Literal

from attrs import frozen

from argent.limits import MAX_FILE_BYTES
from argent.link.paths import canonical_path
from argent.utils.oserrors import EISDIR_READ, os_error_text

OUTSIDE_ROOTS = "{target} is outside every root this client serves ({directories})"
NOT_YAML = "{target} links to a file that is not a YAML file"
NOT_PNG = "{target} links to a file that is not a PNG file"
NOT_TOOL_FILE = "{target} links to a file that is not one of .png, .yaml"
TOO_LARGE = "{canonical} is larger than the 32 MiB cap on a file sent to the tool-server"
NOT_REGULAR = "{canonical} is not a regular file"

#: The kind of file a member must be: its real name must end in one of these (any case); a file to
#: upload into a page may be of any type.
FileKind = Literal["yaml", "png", "tool", "upload"]
_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "yaml": (".yaml", ".yml"),
    "png": (".png",),
    "tool": (".png", ".yaml"),
    "upload": (),
}
_WRONG_TYPE: dict[str, str] = {"yaml": NOT_YAML, "png": NOT_PNG, "tool": NOT_TOOL_FILE}


def _under(path: str, root: str) -> bool:
    if path == root:
        return True
    prefix = root if root.endswith("/") else root + "/"
    return path.startswith(prefix)


def _project_of(flow_file: str) -> str | None:
    """``<P>`` of a flow file at ``<P>/.argent/flows/<file>``."""
    directory = os.path.dirname(flow_file)
    if os.path.basename(directory) != "flows":
        return None
    argent_dir = os.path.dirname(directory)
    if os.path.basename(argent_dir) != ".argent":
        return None
    return os.path.dirname(argent_dir)


@frozen
class ClientPolicy:
    """The real roots of one call, in order, each once."""

    roots: tuple[str, ...]

    @classmethod
    def for_call(
        cls, project_root: str | None, flow_file: str, flow_canonical: str | None = None
    ) -> ClientPolicy:
        """The roots for a call with ``project_root`` on the flow file ``flow_file``."""
        canonical = flow_canonical if flow_canonical is not None else canonical_path(flow_file)
        candidates: list[str] = []
        if isinstance(project_root, str) and os.path.isabs(project_root):
            candidates += [project_root, os.path.join(project_root, ".argent", "flows")]
        candidates += [os.path.dirname(flow_file), os.path.dirname(canonical)]
        for spelled in (flow_file, canonical):
            project = _project_of(spelled)
            if project:
                candidates.append(project)
        roots: list[str] = []
        for candidate in candidates:
            if not candidate or not os.path.isabs(candidate):
                continue
            real = os.path.realpath(candidate)
            if real not in roots:
                roots.append(real)
        return cls(tuple(roots))

    def allows(self, real_path: str) -> bool:
        return any(_under(real_path, root) for root in self.roots)

    def outside_message(self, target: str) -> str:
        return OUTSIDE_ROOTS.format(target=target, directories=", ".join(self.roots))


@frozen
class ClientFile:
    """What the client found for one member: its bytes, or why it sends none.

    ``state`` is ``None`` when ``data`` holds the bytes; ``dangling`` marks a link to nothing.
    """

    state: Literal["missing", "refused"] | None
    data: bytes | None = None
    size: int | None = None
    mtime_ms: float | None = None
    error: str | None = None
    dangling: bool = False


def _mtime_ms(st: os.stat_result) -> float:
    return st.st_mtime_ns / 1_000_000


def _refused(error: str) -> ClientFile:
    return ClientFile(state="refused", error=error)


def read_client_file(
    policy: ClientPolicy,
    canonical: str,
    *,
    target: str,
    kind: FileKind,
    read: bool = True,
    known: os.stat_result | None = None,
) -> ClientFile:
    """Apply the policy to the file at ``canonical`` (named ``target`` in messages) and read it.

    ``read=False`` checks everything but reads no bytes (a baseline sent by name only);
    ``known`` is an ``lstat`` of ``canonical`` already made, used when it is not a link.
    """
    if not policy.allows(canonical):
        return _refused(policy.outside_message(target))
    try:
        st = known if known is not None and not stat.S_ISLNK(known.st_mode) else os.stat(canonical)
    except (FileNotFoundError, NotADirectoryError):
        dangling = os.path.lexists(canonical)
        return ClientFile(state="missing", dangling=dangling)
    except OSError as exc:
        return _refused(os_error_text(exc, canonical))
    extensions = _EXTENSIONS[kind]
    if extensions and not canonical.lower().endswith(extensions):
        return _refused(_WRONG_TYPE[kind].format(target=target))
    if stat.S_ISDIR(st.st_mode):
        return _refused(EISDIR_READ)
    if not stat.S_ISREG(st.st_mode):
        return _refused(NOT_REGULAR.format(canonical=canonical))
    if st.st_size > MAX_FILE_BYTES:
        return _refused(TOO_LARGE.format(canonical=canonical))
    if not read:
        return ClientFile(state=None, size=st.st_size, mtime_ms=_mtime_ms(st))
    try:
        fd = os.open(canonical, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return _refused(os_error_text(exc, canonical))
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return _refused(NOT_REGULAR.format(canonical=canonical))
        chunks: list[bytes] = []
        total = 0
        want = min(opened.st_size, MAX_FILE_BYTES) + 1  # one read for a file that keeps its size
        while True:
            chunk = os.read(fd, want)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                return _refused(TOO_LARGE.format(canonical=canonical))
            chunks.append(chunk)
            if len(chunk) < want:
                break  # a short read of a regular file is its end
            want = 1024 * 1024
    except OSError as exc:
        return _refused(os_error_text(exc, canonical, "read"))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return ClientFile(state=None, data=data, size=len(data), mtime_ms=_mtime_ms(opened))
