"""Gzipped tar archives of the link: build one member, extract one upload safely.

A tar-upload input and every member sent through ``POST /upload`` travel as one gzipped tar
holding exactly one top-level entry, the basename of the source. The client builds it with
``build_tar_gz`` (a path) or ``build_tar_gz_bytes`` (bytes in memory); the tool-server unpacks it
with ``safe_extract_tar_gz``.

Extraction trusts nothing in the archive. It reads the whole archive once, counting decompressed
bytes, and checks every member (names, types, symlink targets, the shape of the tree) before it
writes anything; a second read writes the files. Files are created exclusively and never through
a symlink, without setuid/setgid/sticky bits, and any failure removes what was written.

A member of a flow (``read_single_file_tar_gz``) is never extracted: its one file is read from the
gzip stream straight into memory, and every check refuses at the header or byte that breaks it.

Every read refuses, at the first byte past it, a stream that expands beyond its limit, and at their
header the things tarfile would otherwise hold or repeat without bound: a large pax or GNU long
name header, a long run of extended headers, many global headers, and sparse files.

A reader given the SHA-256 the archive must have digests the file's bytes in the same read that
checks them, and refuses a file of another digest in place of any other result.

Everything here blocks; async callers run it with ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import posixpath
import re
import shutil
import stat
import tarfile
import time
import zlib
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, BinaryIO, Self

from attrs import frozen

from argent.limits import MAX_TAR_EXTENDED_HEADER_BYTES, MAX_TAR_EXTENDED_HEADERS

if TYPE_CHECKING:
    from _typeshed import StrOrBytesPath, SupportsRead

#: Messages of extraction; ``<line>`` of a symlink is rendered like a ``tar -tv`` listing line.
READ_FAILED = "Could not read archive: {msg}"
EMPTY = "Archive is empty."
UNSAFE_PATH = 'Archive contains an unsafe path "{member}" — refusing extraction.'
UNSAFE_SYMLINK = 'Archive contains a symlink whose target could not be confirmed safe: "{line}".'
UNSUPPORTED_TYPE = (
    'Archive contains an unsupported member type "{type}" (hardlink/device/…) — refusing extraction.'
)
UNIDENTIFIED = 'Could not identify the extracted member (expected "{name}", found {count} entries).'
TOO_LARGE = "Archive expands beyond the {limit}-byte limit — refusing extraction."
TOO_MANY = "Archive has more than {limit} members — refusing extraction."
HEADER_TOO_LARGE = (
    "Archive has an extended header of {size} bytes — over the {limit}-byte limit; refusing extraction."
)
HEADERS_IN_A_ROW = "Archive has more than {limit} extended headers in a row — refusing extraction."
GLOBAL_HEADERS = "Archive has more than {limit} global headers — refusing extraction."
NOT_ONE_FILE = "Archive holds {found} — a member is one regular file."
FILE_TOO_LARGE = 'Archive member "{name}" is {size} bytes — over the {limit}-byte limit on one file.'
TRAILING_DATA = "invalid or truncated tar header at offset {offset}"
CHANGED = "the archive changed while it was being extracted"
DIGEST_MISMATCH = "Archive's SHA-256 digest is not the one named."
NOT_A_DIRECTORY = 'Could not extract "{member}": {path} exists and is not a directory.'
WRITE_FAILED = 'Could not extract "{member}": {msg}'

#: Messages of building.
UNSAFE_SOURCE_SYMLINK = (
    'Cannot archive "{path}": a symlink is sent only when its target is relative, stays inside '
    '"{root}" and has no ".." segment (found "{target}").'
)
UNSUPPORTED_SOURCE = 'Cannot archive "{path}": it is not a regular file, a directory or a symlink.'
INVALID_MEMBER_NAME = 'Cannot archive "{name}": a member name is one file name, without "/".'
SOURCE_CHANGED = 'Cannot archive "{path}": it changed while it was being archived; try again.'

_CHUNK = 1 << 20
_BLOCK = tarfile.BLOCKSIZE
_COMPRESS_LEVEL = 6
_DRIVE = re.compile(r"^[A-Za-z]:")
_REGULAR_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)
#: The type letter ``tar -tv`` shows for the member types we refuse.
_TYPE_LETTERS = {
    tarfile.LNKTYPE: "h",
    tarfile.CHRTYPE: "c",
    tarfile.BLKTYPE: "b",
    tarfile.FIFOTYPE: "p",
    tarfile.GNUTYPE_SPARSE: "S",
}
#: What a member's archive holds instead of its one file, by type.
_KIND_NAMES = {
    tarfile.DIRTYPE: "directory",
    tarfile.SYMTYPE: "symlink",
    tarfile.LNKTYPE: "hardlink",
    tarfile.CHRTYPE: "device",
    tarfile.BLKTYPE: "device",
    tarfile.FIFOTYPE: "fifo",
}
#: Headers whose payload tarfile reads into memory and which describe the entry after them.
_EXTENDED_TYPES = (
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
)
_SAFE_FILE_BITS = 0o755
_SAFE_DIR_BITS = 0o755


class ArchiveError(Exception):
    """An archive we refuse to build or extract; ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotOneFileError(ArchiveError):
    """A member's archive that holds something other than one regular file; ``found`` says what."""

    def __init__(self, found: str) -> None:
        super().__init__(NOT_ONE_FILE.format(found=found))
        self.found = found


class DigestMismatchError(ArchiveError):
    """An archive whose bytes do not have the SHA-256 digest its reader was told to expect."""

    def __init__(self) -> None:
        super().__init__(DIGEST_MISMATCH)


class FileTooLargeError(ArchiveError):
    """A member's archive whose file is declared larger than the limit (refused before its data)."""

    def __init__(self, name: str, size: int, limit: int) -> None:
        super().__init__(FILE_TOO_LARGE.format(name=name, size=size, limit=limit))
        self.size = size
        self.limit = limit


# --------------------------------------------------------------------------------------------------
# Shared rules


def normalize_member_name(name: str) -> str | None:
    """The member's path relative to the destination, or None when it is unsafe.

    A leading ``./`` is stripped and ``\\`` reads as ``/``. The name must not be empty or ``.``,
    must not be absolute (``/x``, ``C:\\x``), must have no ``..`` segment, and must stay inside.
    """
    text = name.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    if not text or text == "." or text.startswith("/") or _DRIVE.match(text):
        return None
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    rel = "/".join(parts)
    if posixpath.normpath(posixpath.join("/dest", rel)).startswith("/dest/"):
        return rel
    return None


def symlink_target_is_safe(rel: str, target: str) -> bool:
    """Whether a symlink at ``rel`` (a normalized member path) to ``target`` stays inside.

    The target must be relative, have no ``..`` segment, and resolve, beside the link, inside the
    destination.
    """
    text = target.replace("\\", "/")
    if not text or text.startswith("/") or _DRIVE.match(text):
        return False
    if ".." in text.split("/"):
        return False
    resolved = posixpath.normpath(posixpath.join("/dest", posixpath.dirname(rel), text))
    return resolved == "/dest" or resolved.startswith("/dest/")


# --------------------------------------------------------------------------------------------------
# Building


class _HashingWriter:
    """A write-only file object that hashes what it passes on."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self.digest = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return self._raw.write(data)

    def flush(self) -> None:
        self._raw.flush()


class _SourceTar(tarfile.TarFile):
    """``tarfile.add`` with what the link asks of a source tree beyond ``filter``: an entry tarfile
    would skip silently (a socket) is refused, a file's second name is stored as its own copy (the
    tool-server takes no hard links), and the file whose bytes are stored is the one examined (a
    file swapped, say for a symlink, between the two is refused)."""

    #: TarFile's own record of the regular files it examined: (inode, device) -> member name.
    inodes: dict[tuple[int, int], str]

    def gettarinfo(
        self, name: StrOrBytesPath | None = None, arcname: str | None = None, fileobj: IO[bytes] | None = None
    ) -> tarfile.TarInfo:
        self.inodes.clear()  # tarfile stores a file seen before as a hard link to it
        info: tarfile.TarInfo | None = super().gettarinfo(name, arcname, fileobj)
        if info is None:
            raise ArchiveError(UNSUPPORTED_SOURCE.format(path=os.fsdecode(name or "")))
        return info

    def addfile(self, tarinfo: tarfile.TarInfo, fileobj: SupportsRead[bytes] | None = None) -> None:
        if isinstance(fileobj, io.BufferedReader):
            st = os.fstat(fileobj.fileno())
            # gettarinfo recorded the examined file's inode under its member name.
            if not stat.S_ISREG(st.st_mode) or self.inodes.get((st.st_ino, st.st_dev)) != tarinfo.name:
                raise ArchiveError(SOURCE_CHANGED.format(path=fileobj.name))
        super().addfile(tarinfo, fileobj)


def _source_rules(src: str, name: str) -> Callable[[tarfile.TarInfo], tarfile.TarInfo]:
    """The ``tarfile.add`` filter of a source: files, directories and symlinks that stay inside,
    without owners, setuid/setgid/sticky bits or sub-second times."""

    def rules(info: tarfile.TarInfo) -> tarfile.TarInfo:
        path = os.path.join(src, info.name[len(name) + 1 :]) if info.name != name else src
        if info.issym():
            if not symlink_target_is_safe(info.name, info.linkname):
                raise ArchiveError(UNSAFE_SOURCE_SYMLINK.format(path=path, root=src, target=info.linkname))
        elif not (info.isreg() or info.isdir()):
            raise ArchiveError(UNSUPPORTED_SOURCE.format(path=path))
        info.mode &= 0o777
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = int(info.mtime)
        return info

    return rules


def build_tar_gz(src: str, dest: str) -> str:
    """Write ``src`` (a file or a directory tree) to ``dest`` as a gzipped tar; return its SHA-256.

    The archive holds exactly one top-level member, the basename of ``src`` (a symlink given as
    ``src`` is followed). Inside a directory, a symlink is stored as a symlink when its target is
    relative, has no ``..`` segment and stays inside the tree; any other symlink, and any entry that
    is not a file, directory or symlink, fails the build with ``ArchiveError``. Setuid, setgid and
    sticky bits are not stored; owners are not stored. A failed build removes the partial archive.
    """
    name = os.path.basename(os.path.normpath(src))
    if name in ("", ".", ".."):
        raise ArchiveError(UNSUPPORTED_SOURCE.format(path=src))
    src_stat = os.stat(src)
    if not (stat.S_ISDIR(src_stat.st_mode) or stat.S_ISREG(src_stat.st_mode)):
        raise ArchiveError(UNSUPPORTED_SOURCE.format(path=src))
    try:
        with open(dest, "wb") as raw:
            writer = _HashingWriter(raw)
            with (
                gzip.GzipFile(filename="", mode="wb", compresslevel=_COMPRESS_LEVEL, fileobj=writer) as gz,
                # Named after dest, tarfile skips the archive itself when it lies inside src.
                _SourceTar.open(
                    os.path.realpath(dest), fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT
                ) as tar,
            ):
                tar.add(os.path.realpath(src), arcname=name, filter=_source_rules(src, name))
            return writer.digest.hexdigest()
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(dest)
        raise


def build_tar_gz_bytes(name: str, data: bytes, *, mode: int = 0o644, mtime: float | None = None) -> bytes:
    """A gzipped tar of one regular file ``name`` (a plain file name) holding ``data``."""
    if "/" in name or "\\" in name or normalize_member_name(name) != name:
        raise ArchiveError(INVALID_MEMBER_NAME.format(name=name))
    info = tarfile.TarInfo(name)
    info.type = tarfile.REGTYPE
    info.size = len(data)
    info.mode = mode & 0o777
    info.mtime = int(time.time() if mtime is None else mtime)
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", compresslevel=_COMPRESS_LEVEL, fileobj=buffer) as gz,
        tarfile.open(fileobj=gz, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# --------------------------------------------------------------------------------------------------
# Reading


class _Expansion:
    """The decompressed stream of a gzip file, counted against a limit as it is read.

    Gzip-level failures (not gzip, truncated, corrupt, bad CRC) surface as ``ArchiveError`` with
    the ``Could not read archive`` message. ``nonzero_end`` is the position just past the last
    non-NUL byte read so far, so callers can tell that nothing but padding followed the last member.
    """

    def __init__(self, gz: gzip.GzipFile, limit: int) -> None:
        self._gz = gz
        self._limit = limit
        self.total = 0
        self.nonzero_end = 0

    def read(self, size: int = -1, /) -> bytes:
        # Never more than one byte past the limit: that byte is where the stream is refused.
        want = min(_CHUNK if size < 0 else size, self._limit - self.total + 1)
        try:
            data = self._gz.read(want)
        except (OSError, EOFError, zlib.error) as exc:
            raise ArchiveError(READ_FAILED.format(msg=exc)) from exc
        if data:
            stripped = len(data.rstrip(b"\0"))
            if stripped:
                self.nonzero_end = self.total + stripped
            self.total += len(data)
            if self.total > self._limit:
                raise ArchiveError(TOO_LARGE.format(limit=self._limit))
        return data

    def drain(self) -> None:
        """Read to the end, so the gzip trailer (CRC and length) is verified."""
        while self.read(_CHUNK):
            pass

    def write(self, data: bytes, /) -> int:
        raise io.UnsupportedOperation("write")

    def tell(self) -> int:
        return self.total

    def seek(self, pos: int, /) -> int:
        raise io.UnsupportedOperation("seek")

    def close(self) -> None:
        pass


def _sparse_refused() -> ArchiveError:
    return ArchiveError(UNSUPPORTED_TYPE.format(type=_TYPE_LETTERS[tarfile.GNUTYPE_SPARSE]))


def _checked_tarinfo() -> type[tarfile.TarInfo]:
    """A TarInfo class for one read that refuses, at its header, what tarfile would not bound.

    tarfile reads the payload of an extended header into memory, recurses once per extended
    header in a row, copies every global header into each later entry, and reads a sparse map
    until it is complete (a GNU sparse header, or the ``GNU.sparse`` records of a pax header).
    A class per read keeps its counts apart from reads in other threads.
    """
    in_a_row = 0
    global_headers = 0

    class Checked(tarfile.TarInfo):
        @classmethod
        def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
            nonlocal in_a_row, global_headers
            info = super().frombuf(buf, encoding, errors)
            if info.type == tarfile.GNUTYPE_SPARSE:
                raise _sparse_refused()
            if info.type not in _EXTENDED_TYPES:
                in_a_row = 0
                return info
            if info.size > MAX_TAR_EXTENDED_HEADER_BYTES:
                raise ArchiveError(
                    HEADER_TOO_LARGE.format(size=info.size, limit=MAX_TAR_EXTENDED_HEADER_BYTES)
                )
            in_a_row += 1
            if in_a_row > MAX_TAR_EXTENDED_HEADERS:
                raise ArchiveError(HEADERS_IN_A_ROW.format(limit=MAX_TAR_EXTENDED_HEADERS))
            if info.type == tarfile.XGLTYPE:
                global_headers += 1
                if global_headers > MAX_TAR_EXTENDED_HEADERS:
                    raise ArchiveError(GLOBAL_HEADERS.format(limit=MAX_TAR_EXTENDED_HEADERS))
            return info

        # tarfile's handlers of the three pax sparse formats (not in the typed API): refused.
        def _proc_gnusparse_00(self, *args: object) -> None:
            raise _sparse_refused()

        def _proc_gnusparse_01(self, *args: object) -> None:
            raise _sparse_refused()

        def _proc_gnusparse_10(self, *args: object) -> None:
            raise _sparse_refused()

    return Checked


def _open_stream(stream: _Expansion) -> tarfile.TarFile:
    return tarfile.open(fileobj=stream, mode="r|", tarinfo=_checked_tarinfo())


@frozen
class _Member:
    name: str
    rel: str
    type: bytes
    size: int
    mode: int
    mtime: float
    linkname: str


def _member_from(info: tarfile.TarInfo, rel: str) -> _Member:
    return _Member(info.name, rel, info.type, info.size, info.mode, info.mtime, info.linkname)


def _listing_line(info: tarfile.TarInfo) -> str:
    """A ``tar -tv`` style line for a symlink (times in UTC)."""
    mode = stat.filemode(stat.S_IFLNK | (info.mode & 0o7777))
    owner = info.uname or str(info.uid)
    group = info.gname or str(info.gid)
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(info.mtime))
    return f"{mode} {owner}/{group} {info.size} {when} {info.name} -> {info.linkname}"


class _Digesting:
    """A file read through as it is, each byte read fed to a SHA-256 digest on the way."""

    def __init__(self, raw: BinaryIO, sha256: str) -> None:
        self._raw = raw
        self._expected = sha256.lower()
        self._digest = hashlib.sha256()

    def read(self, size: int = -1, /) -> bytes:
        data = self._raw.read(size)
        self._digest.update(data)
        return data

    def seek(self, pos: int, /) -> int:
        raise io.UnsupportedOperation("seek")  # a forward-only read: each byte is digested once

    def matches(self) -> bool | None:
        """Whether the whole file has the expected digest, once what the reader left is read too
        (gzip stops at an error or a limit); None when the rest cannot be read, so that the caller
        keeps the error it has."""
        try:
            while data := self._raw.read(_CHUNK):
                self._digest.update(data)
        except OSError:
            return None
        return self._digest.hexdigest() == self._expected


@contextlib.contextmanager
def _expanded(tar_path: str, limit: int, sha256: str | None = None) -> Iterator[_Expansion]:
    """The gunzipped stream of ``tar_path``, capped at ``limit`` bytes; a damaged file, a bad gzip
    stream or a tar error inside the block is an ``ArchiveError`` that says so.

    With ``sha256``, every byte of the file goes through a digest in this one read, and a file whose
    digest differs raises ``DigestMismatchError`` in place of whatever the block returned or raised."""
    try:
        with open(tar_path, "rb") as raw:
            digesting = _Digesting(raw, sha256) if sha256 is not None else None
            try:
                with gzip.GzipFile(fileobj=digesting or raw, mode="rb") as gz:
                    yield _Expansion(gz, limit)
            except Exception as exc:
                if digesting is not None and digesting.matches() is False:
                    raise DigestMismatchError from exc
                raise
            if digesting is not None and not digesting.matches():
                raise DigestMismatchError
    except ArchiveError:
        raise
    except (OSError, EOFError, zlib.error, tarfile.TarError) as exc:
        raise ArchiveError(READ_FAILED.format(msg=exc)) from exc


def _refuse_trailing_data(stream: _Expansion, end: int) -> None:
    """Read the stream to its end (verifying the gzip trailer); data after the tar's end is refused."""
    stream.drain()
    if stream.nonzero_end > end:
        raise ArchiveError(READ_FAILED.format(msg=TRAILING_DATA.format(offset=end)))


def _read_members(
    tar_path: str, max_total_bytes: int, max_members: int, sha256: str | None
) -> list[tarfile.TarInfo]:
    """Every member of the archive, read to the end of the gzip stream; refuses bombs and damage
    (and, with ``sha256``, a file of another digest, before anything else)."""
    members: list[tarfile.TarInfo] = []
    declared = 0
    with _expanded(tar_path, max_total_bytes, sha256) as stream:
        end = 0
        try:
            with _open_stream(stream) as tar:
                for info in tar:
                    members.append(info)
                    if len(members) > max_members:
                        raise ArchiveError(TOO_MANY.format(limit=max_members))
                    if info.type in _REGULAR_TYPES:
                        declared += info.size
                        if declared > max_total_bytes:
                            raise ArchiveError(TOO_LARGE.format(limit=max_total_bytes))
                end = tar.offset
        except tarfile.ReadError as exc:
            if members:
                raise
            # Nothing readable at the start: an empty archive when only padding follows.
            stream.drain()
            if stream.nonzero_end == 0:
                raise ArchiveError(EMPTY) from exc
            raise
        _refuse_trailing_data(stream, end)
    if not members:
        raise ArchiveError(EMPTY)
    return members


def _plan(members: list[tarfile.TarInfo]) -> list[_Member]:
    """Check every member in the order of the rules: names, then types and links, then the tree."""
    rels: list[str] = []
    for info in members:
        rel = normalize_member_name(info.name)
        if rel is None:
            raise ArchiveError(UNSAFE_PATH.format(member=info.name))
        rels.append(rel)
    for info, rel in zip(members, rels, strict=True):
        if info.type == tarfile.SYMTYPE:
            if not symlink_target_is_safe(rel, info.linkname):
                raise ArchiveError(UNSAFE_SYMLINK.format(line=_listing_line(info)))
        elif info.type not in _REGULAR_TYPES and info.type != tarfile.DIRTYPE:
            letter = _TYPE_LETTERS.get(info.type) or info.type.decode("latin-1") or "?"
            raise ArchiveError(UNSUPPORTED_TYPE.format(type=letter))
    # The tree: nothing is written beneath a file or a symlink, and only directories repeat.
    kinds: dict[str, str] = {}
    for info, rel in zip(members, rels, strict=True):
        kind = "dir" if info.type == tarfile.DIRTYPE else "link" if info.type == tarfile.SYMTYPE else "file"
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            seen = kinds.setdefault(prefix, "dir")
            if seen != "dir":
                raise ArchiveError(UNSAFE_PATH.format(member=info.name))
        seen_kind = kinds.get(rel)
        if seen_kind is not None and not (seen_kind == "dir" and kind == "dir"):
            raise ArchiveError(UNSAFE_PATH.format(member=info.name))
        kinds[rel] = kind
    return [_member_from(info, rel) for info, rel in zip(members, rels, strict=True)]


# --------------------------------------------------------------------------------------------------
# Writing


class _Writer:
    """Creates the planned entries under ``root`` and remembers them for removal on failure."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.created: list[str] = []
        self.dirs: dict[str, _Member] = {}

    def ensure_dir(self, rel: str, member: _Member) -> str:
        current = self.root
        for part in rel.split("/"):
            current = os.path.join(current, part)
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                os.mkdir(current, 0o700)
                os.chmod(current, 0o700 | _SAFE_DIR_BITS)
                self.created.append(current)
                continue
            if not stat.S_ISDIR(st.st_mode):
                raise ArchiveError(NOT_A_DIRECTORY.format(member=member.name, path=current))
        return current

    def parent(self, member: _Member) -> str:
        head = posixpath.dirname(member.rel)
        return self.ensure_dir(head, member) if head else self.root

    def directory(self, member: _Member) -> None:
        self.ensure_dir(member.rel, member)
        self.dirs[member.rel] = member

    def file(self, member: _Member, source: IO[bytes]) -> None:
        path = os.path.join(self.parent(member), posixpath.basename(member.rel))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags, 0o600)
        self.created.append(path)
        try:
            written = 0
            while chunk := source.read(_CHUNK):
                view = memoryview(chunk)
                while view:
                    count = os.write(fd, view)
                    view = view[count:]
                written += len(chunk)
            if written != member.size:
                raise ArchiveError(READ_FAILED.format(msg="unexpected end of data"))
            os.fchmod(fd, (member.mode & _SAFE_FILE_BITS) | 0o600)
            os.utime(fd, (member.mtime, member.mtime))
        finally:
            os.close(fd)

    def symlink(self, member: _Member) -> None:
        path = os.path.join(self.parent(member), posixpath.basename(member.rel))
        os.symlink(member.linkname, path)
        self.created.append(path)

    def finish_dirs(self) -> None:
        for rel in sorted(self.dirs, key=lambda r: r.count("/"), reverse=True):
            member = self.dirs[rel]
            path = os.path.join(self.root, *rel.split("/"))
            os.chmod(path, (member.mode & _SAFE_DIR_BITS) | 0o700, follow_symlinks=False)
            os.utime(path, (member.mtime, member.mtime), follow_symlinks=False)

    def remove_all(self) -> None:
        for path in reversed(self.created):
            try:
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except FileNotFoundError:
                pass


def _write_members(tar_path: str, root: str, plan: list[_Member], max_total_bytes: int) -> _Writer:
    writer = _Writer(root)
    links: list[_Member] = []
    index = 0
    current = tar_path
    try:
        with open(tar_path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
            stream = _Expansion(gz, max_total_bytes)
            with _open_stream(stream) as tar:
                for info in tar:
                    expected = plan[index] if index < len(plan) else None
                    index += 1
                    if expected is None or _member_from(info, expected.rel) != expected:
                        raise ArchiveError(READ_FAILED.format(msg=CHANGED))
                    current = expected.name
                    if info.type == tarfile.DIRTYPE:
                        writer.directory(expected)
                    elif info.type == tarfile.SYMTYPE:
                        links.append(expected)
                    else:
                        source = tar.extractfile(info)
                        if source is None:  # pragma: no cover - regular members always have data
                            raise ArchiveError(READ_FAILED.format(msg=CHANGED))
                        writer.file(expected, source)
        if index != len(plan):
            raise ArchiveError(READ_FAILED.format(msg=CHANGED))
        for member in links:
            current = member.name
            writer.symlink(member)
        current = tar_path
        writer.finish_dirs()
    except BaseException as exc:
        writer.remove_all()
        if isinstance(exc, ArchiveError):
            raise
        if isinstance(exc, (EOFError, zlib.error, tarfile.TarError)):
            raise ArchiveError(READ_FAILED.format(msg=exc)) from exc
        if isinstance(exc, OSError):
            raise ArchiveError(WRITE_FAILED.format(member=current, msg=exc.strerror or exc)) from exc
        raise
    return writer


def safe_extract_tar_gz(
    tar_path: str,
    dest_dir: str,
    expected_name: str,
    *,
    max_total_bytes: int,
    max_members: int,
    sha256: str | None = None,
) -> str:
    """Extract the gzipped tar at ``tar_path`` into the existing ``dest_dir``; return the member's path.

    Every member is checked before anything is written: a readable gzip stream that expands to at
    most ``max_total_bytes`` with at most ``max_members`` members, safe names, only files,
    directories and symlinks whose target stays inside, and nothing written beneath a file or a
    symlink. The result is the top-level entry named ``expected_name``, else the single top-level
    entry that is not an AppleDouble ``._`` file. Any failure raises ``ArchiveError`` and removes
    everything this call wrote under ``dest_dir``.

    With ``sha256`` (hex), the first read, which checks the members, also digests every byte of the
    file; a file of another digest raises ``DigestMismatchError`` before anything is written, in
    place of any other failure.
    """
    plan = _plan(_read_members(tar_path, max_total_bytes, max_members, sha256))
    root = os.path.realpath(dest_dir)
    writer = _write_members(tar_path, root, plan, max_total_bytes)
    entries = sorted(os.listdir(root))
    if expected_name in entries:
        return os.path.join(dest_dir, expected_name)
    candidates = [entry for entry in entries if not entry.startswith("._")]
    if len(candidates) == 1:
        return os.path.join(dest_dir, candidates[0])
    writer.remove_all()
    raise ArchiveError(UNIDENTIFIED.format(name=expected_name, count=len(entries)))


# --------------------------------------------------------------------------------------------------
# One member's file, in memory


def _kind(info: tarfile.TarInfo) -> str:
    name = _KIND_NAMES.get(info.type)
    if name is not None:
        return f'a {name} "{info.name}"'
    letter = info.type.decode("latin-1") or "?"
    return f'an entry of type "{letter}" ("{info.name}")'


def _the_file(tar: tarfile.TarFile, info: tarfile.TarInfo | None, max_file_bytes: int) -> bytes:
    """The data of the first entry, when it is a top-level regular file within the limit."""
    if info is None:
        raise NotOneFileError("no entry")
    rel = normalize_member_name(info.name)
    if rel is None:
        raise ArchiveError(UNSAFE_PATH.format(member=info.name))
    if info.type not in _REGULAR_TYPES:
        raise NotOneFileError(_kind(info))
    if "/" in rel:
        raise NotOneFileError(f'a file below the top level "{info.name}"')
    if info.size > max_file_bytes:
        raise FileTooLargeError(info.name, info.size, max_file_bytes)
    source = tar.extractfile(info)
    if source is None:  # pragma: no cover - a regular member always has data
        raise NotOneFileError(_kind(info))
    data = source.read(info.size)
    if len(data) != info.size:
        raise ArchiveError(READ_FAILED.format(msg="unexpected end of data"))
    return data


def read_single_file_tar_gz(
    tar_path: str, *, max_file_bytes: int, max_overhead_bytes: int, sha256: str | None = None
) -> bytes:
    """The bytes of the one regular file in the gzipped tar at ``tar_path``, read into memory.

    A member of a flow travels as such an archive and ends in memory anyway, so nothing is written.
    Each check refuses as soon as the stream shows the problem: a first entry that is not a
    top-level regular file with a safe name (``NotOneFileError``, or ``ArchiveError`` for an unsafe
    name), a file declared over ``max_file_bytes`` (``FileTooLargeError``, before its data is read),
    the header of a second entry (``NotOneFileError``), and a stream that expands beyond the file
    plus ``max_overhead_bytes``. The end blocks are read, so the gzip trailer is verified.

    With ``sha256`` (hex), the same read digests every byte of the file, and a file of another
    digest raises ``DigestMismatchError`` in place of the bytes or of any other failure.
    """
    with _expanded(tar_path, max_file_bytes + max_overhead_bytes, sha256) as stream:
        try:
            tar = _open_stream(stream)
        except tarfile.ReadError:
            # Nothing readable at the start: no entry at all when only padding follows.
            stream.drain()
            if stream.nonzero_end == 0:
                raise NotOneFileError("no entry") from None
            raise
        with tar:
            data = _the_file(tar, tar.next(), max_file_bytes)
            if tar.next() is not None:
                raise NotOneFileError("more than one entry")
            end = tar.offset
        _refuse_trailing_data(stream, end)
    return data
