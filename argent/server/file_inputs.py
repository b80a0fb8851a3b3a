"""Server side of the file-input boundary: `__argentFileInput` wrappers become paths on this host.

Each declared input either resolves in place (the client's path exists here with the
same size and mtime), is materialised from inline content into a temp file, or is
extracted from an upload. Everything created for a call is removed by ``cleanup()``,
which the route runs when the response closes; a failure midway removes it at once.

Whether a wrapper's path is present (with the policy's checks) costs a worker-thread hop; a call
that repeats an earlier check of a plain path is answered on the loop while inotify vouches that
nothing it depended on changed (``PRESENCE``, on the watches of the runner's flow reads).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import stat
from collections.abc import Hashable
from typing import Any, TypeAlias

from attrs import define, field
from cattrs.errors import ClassValidationError

from argent.errors import FileInputError, ServerStorageError
from argent.link.codec import NotAnObject, Read, read
from argent.link.members import MemberStore
from argent.link.models import CONTENT_OMITTED_SIZE_LIMIT, FileInput, FileInputSpec
from argent.link.paths import canonical_path
from argent.runner.files import WATCHES
from argent.runner.member_files import MemberFlowFiles
from argent.runner.read_cache import ReadCache
from argent.server.inline import decode_content
from argent.server.member_inputs import (
    discard_uploads,
    has_members,
    linked_flow_files,
    linked_step_members,
    named_uploads,
)
from argent.server.tmp_files import ServerFiles
from argent.server.uploads import UploadStore, extract_upload, upload_not_found_message
from argent.tools.call_policy import CallPolicy
from argent.tools.registry import ResolvedFileInput, ToolSpec
from argent.utils.watch import plain_parts

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


@define
class ResolvedInputs:
    args: dict[str, Any]
    metadata: dict[str, ResolvedFileInput] = field(factory=dict)
    temp_dirs: list[str] = field(factory=list)
    #: Flow inputs that came over a link, run from the members of the call.
    flow_files: dict[str, MemberFlowFiles] = field(factory=dict)
    #: The members of a recorded step (a ``collect: "step"`` probe over a link), by target.
    step_members: dict[str, MemberStore] = field(factory=dict)

    async def cleanup(self) -> None:
        dirs, self.temp_dirs = self.temp_dirs, []
        if dirs:
            await asyncio.to_thread(_remove_all, dirs)


def _remove_all(dirs: list[str]) -> None:
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)


def read_wrapper(value: Any) -> Read[FileInput] | None:
    """The file-input object of an argument (``__argentFileInput`` and a string ``path``), read
    with the codec; None for any other value."""
    try:
        return read(value, FileInput)
    except (NotAnObject, ClassValidationError):
        return None


async def resolve_file_inputs(
    spec: ToolSpec[Any],
    body: dict[str, Any],
    *,
    uploads: UploadStore,
    policy: CallPolicy | None = None,
    linked: bool = False,
) -> ResolvedInputs:
    """Replace each declared wrapper in ``body`` by a path on this host (raises FileInputError, 422).

    With a ``policy`` a wrapper is used in place only where the call may work and read: a project
    this host must not work in is refused (403) before anything is looked at, and a file the call
    may not read counts as absent, unlooked at, so the answer is the same whether it exists."""
    out = ResolvedInputs(args=dict(body))
    try:
        for input_spec in spec.file_inputs:
            await _resolve_one(input_spec, out, uploads=uploads, policy=policy, linked=linked)
    except BaseException:
        await out.cleanup()
        # A failed call still uses up every upload its members name, also those of the
        # wrappers after the one that failed.
        for value in body.values():
            discard_uploads(named_uploads(value), uploads)
        raise
    return out


#: A wrapper's path as a check in a worker thread last saw it on this host: (mode, size, mtime in ns).
_Seen: TypeAlias = "tuple[int, int, int]"
#: Checks of wrappers' paths, kept while inotify vouches for them (``argent.runner.read_cache``),
#: on the watches the runner's flow reads use.
PRESENCE: ReadCache[_Seen] = ReadCache(WATCHES)


async def _look(
    spec: FileInputSpec, wire: Read[FileInput], args: dict[str, Any], policy: CallPolicy | None, linked: bool
) -> tuple[bool, bool]:
    """(present on this host, size and mtime both sent and matching): answered on the loop when an
    earlier check of the same path under the same rules is kept and nothing it depended on has
    changed since, else checked in one worker thread (``_look_in_place``)."""
    key = _look_key(spec, wire, args, policy, linked)
    seen = PRESENCE.get(key)
    if seen is None:
        seen = await asyncio.to_thread(_look_in_place, spec, wire, args, policy, linked, key)
    return _judge(spec.kind, wire.value, seen)


def _look_key(
    spec: FileInputSpec, wire: Read[FileInput], args: dict[str, Any], policy: CallPolicy | None, linked: bool
) -> Hashable:
    """Everything ``_look_in_place`` depends on besides the file system."""
    root = args.get("project_root")
    rules = policy.read_rules if policy is not None else None
    members = has_members(wire)
    return (
        "in-place",
        rules,
        spec.kind,
        spec.path,
        linked,
        members,
        root if isinstance(root, str) else None,
        wire.value.path,
    )


def _look_in_place(
    spec: FileInputSpec,
    wire: Read[FileInput],
    args: dict[str, Any],
    policy: CallPolicy | None,
    linked: bool,
    key: Hashable,
) -> _Seen | None:
    """The probe of the wrapper's path on this host, in one worker thread with the policy's checks:
    a path the call may not read is absent, unlooked at; an unsafe project raises (nothing kept).

    Kept (``PRESENCE``) only when the watches cover all it depended on: a plain path with no
    symbolic link on it (its real path is its spelling), present, and a checked project root
    that is the path or a directory on it. A refusal, an absent path and a directory whose mtime
    is compared are checked afresh each time."""
    path = wire.value.path
    stamp = PRESENCE.watch(key, path)  # before the checks: a change from here on is seen by the next
    if policy is not None and not _in_place_allowed(spec, wire, args, policy, linked):
        PRESENCE.settle(key, stamp, None, None)  # not kept
        return None
    seen = _stat(path)
    keep = seen is not None and _keepable(spec, path, args, seen, policy)
    PRESENCE.settle(key, stamp, seen, 0 if keep else None)
    return seen


def _keepable(
    spec: FileInputSpec, path: str, args: dict[str, Any], seen: _Seen, policy: CallPolicy | None
) -> bool:
    """Whether the watches of ``path`` vouch for this check (see ``_look_in_place``)."""
    mode = seen[0]
    # A directory's mtime moves with its entries, whose events the watches do not follow.
    if not (stat.S_ISREG(mode) or (stat.S_ISDIR(mode) and spec.kind != "tar-upload")):
        return False
    if canonical_path(path) != path:
        return False
    root = args.get("project_root")
    if policy is None or spec.kind == "probe" or not isinstance(root, str):
        return True
    # The workspace check of the project root depends on the root's real path: a directory on the path.
    return plain_parts(root) is not None and (path == root or path.startswith(root + "/"))


def _stat(path: str) -> _Seen | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path, which names no file
        return None
    return st.st_mode, st.st_size, st.st_mtime_ns


def _in_place_allowed(
    spec: FileInputSpec, wire: Read[FileInput], args: dict[str, Any], policy: CallPolicy, linked: bool
) -> bool:
    """Whether this host may look at the wrapper's path; raises for an unsafe project."""
    if has_members(wire):
        return True  # over a link: the members win and project_root is only a key
    if spec.kind == "probe":
        if not linked:
            policy.check_workspace_sync(wire.value.path)
        return True
    root = args.get("project_root")
    if spec.path.startswith("${project_root}") and isinstance(root, str):
        policy.check_workspace_sync(root)
    return policy.may_read_sync(wire.value.path)


async def _resolve_one(
    spec: FileInputSpec,
    out: ResolvedInputs,
    *,
    uploads: UploadStore,
    policy: CallPolicy | None = None,
    linked: bool = False,
) -> None:
    raw = out.args.get(spec.target)
    read = read_wrapper(raw)
    if read is None:
        return
    wire = read.value
    named = named_uploads(raw)
    if spec.unwrap_when_set and spec.unwrap_when_set in out.args:
        discard_uploads(named, uploads)
        out.args[spec.target] = wire.path
        return
    if spec.skip_when_set and spec.skip_when_set in out.args:
        discard_uploads(named, uploads)
        del out.args[spec.target]
        return
    path = wire.path
    present, verified = await _look(spec, read, out.args, policy, linked)
    if spec.collect == "flow" and spec.kind == "file":
        files = await linked_flow_files(read, present, named, uploads=uploads)
        if files is not None:
            # Over a link the run reads the members, never this host's copy of the client's path.
            out.args[spec.target] = path
            out.metadata[spec.target] = ResolvedFileInput(path, present, via_upload=True)
            out.flow_files[spec.target] = files
            return
    if spec.kind == "probe":
        if spec.collect == "step" and has_members(read):
            out.step_members[spec.target] = await linked_step_members(read, named, uploads=uploads)
        out.args[spec.target] = path
        out.metadata[spec.target] = ResolvedFileInput(path, present)
        return
    if spec.kind == "tar-upload":
        upload_id = wire.upload_id
        if upload_id is not None:
            upload = uploads.take(upload_id)
            if upload is None:
                raise FileInputError(upload_not_found_message(upload_id))
            dest = await asyncio.to_thread(uploads.files.mkdtemp, "tar-upload-parent")
            out.temp_dirs.append(dest)
            extracted = await extract_upload(upload, wire.content_hash, path, dest)
            out.args[spec.target] = extracted
            out.metadata[spec.target] = ResolvedFileInput(path, present, via_upload=True)
            return
        if not present:
            raise FileInputError(
                f'Path "{path}" does not exist on the tool-server host and no upload was provided. '
                "Update argent to a version that supports uploads for remote sessions."
            )
    elif not present:
        if spec.kind == "directory":
            raise FileInputError(
                f'Directory "{path}" does not exist on the tool-server host. This tool reads a directory tree '
                "from the tool-server's filesystem, which cannot be uploaded with the call — when the tool-server "
                "runs on a different machine, pass a path that exists on that machine (e.g. the server-side "
                "checkout of the project)."
            )
        out.args[spec.target] = await _materialize(wire, out, uploads.files)
        out.metadata[spec.target] = ResolvedFileInput(path, False, via_upload=True)
        return
    out.args[spec.target] = path
    out.metadata[spec.target] = ResolvedFileInput(
        path,
        True,
        stat_verified=True if verified and spec.kind in ("file", "tar-upload") else None,
        # ``_in_place_allowed`` asked the policy's ``may_read`` of the path (over a link it does not).
        read_checked=policy is not None and not has_members(read),
    )


def _judge(kind: str, wire: FileInput, seen: _Seen | None) -> tuple[bool, bool]:
    """(present on this host, size and mtime both sent and matching) of what a check saw."""
    if seen is None:
        return False, False
    mode, st_size, st_mtime_ns = seen
    if kind == "probe":
        return True, False
    if kind == "directory":
        return stat.S_ISDIR(mode), False
    size, mtime = wire.size, wire.mtime_ms
    mtime_ok = mtime is None or round(st_mtime_ns / 1e6) == round(mtime)
    if kind == "tar-upload" and stat.S_ISDIR(mode):
        return mtime_ok, False
    if not stat.S_ISREG(mode):
        return False, False
    size_ok = size is None or st_size == size
    verified = size is not None and mtime is not None
    return size_ok and mtime_ok, verified and size_ok and mtime_ok


async def _materialize(wire: FileInput, out: ResolvedInputs, files: ServerFiles) -> str:
    path = wire.path
    content = wire.content
    if content is None:
        if wire.content_omitted == CONTENT_OMITTED_SIZE_LIMIT:
            size = wire.size
            shown = f"{size / (1024 * 1024):.0f} MB" if size is not None else "unknown size"
            raise FileInputError(
                f'File "{path}" is {shown} — larger than the 32 MB file-input transfer limit, so the client did '
                "not upload it, and it was not found on the tool-server host. Copy the file to the tool-server "
                "machine and pass that path, or use a smaller file."
            )
        raise FileInputError(
            f'File "{path}" was not found on the tool-server host and the client did not upload its content. '
            "Either the file does not exist, or it changed since it was referenced — re-create it (or re-run "
            "the producing tool) and try again."
        )
    data = decode_content(path, content, wire.size)
    name = _UNSAFE_NAME.sub("_", os.path.basename(path))
    if name in ("", ".", ".."):
        name = "upload"
    try:
        directory = await asyncio.to_thread(files.mkdtemp, "file-input")
        out.temp_dirs.append(directory)
        target = os.path.join(directory, name)
        await asyncio.to_thread(_write_new, target, data)
    except OSError as exc:
        # The call's cleanup removes the directory, with the part of the file the disk took.
        raise ServerStorageError.refused(
            exc, f'write the file input "{path}"', "the call did not run"
        ) from None
    return target


def _write_new(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
