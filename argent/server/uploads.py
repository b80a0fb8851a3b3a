"""The pending-upload store behind ``POST /upload``, and the extraction of an upload for a file input.

``POST /upload`` streams its body (a gzipped tar) into ``<tmp_dir>/argent-upload-<server id>-<uuid>.tar.gz``
and answers with the id: the event loop reads the socket while the upload's worker thread writes
what was read before (``_ChunkWriter``). Nothing is digested while the body arrives: the protocol
needs the SHA-256 only when a call uses the upload. That call names the id with the SHA-256 it
expects; ``UploadStore.take`` hands the upload over exactly once and ``extract_upload`` unpacks the
archive into a fresh ``argent-tar-upload-<16 hex>-*`` directory, digesting the tar in the read that
checks it, and deletes the tar whatever happens. ``read_member_upload`` does the same for a member
of a flow, whose one file it reads into memory instead. A digest other than the one named is a 422
(and nothing is handed over), as is any other problem of the archive: neither is checked at upload
time. The archive work runs in a worker thread, off the event loop.

The app factory owns the lifetime: ``start_sweeper()`` on startup, ``await close()`` on cleanup.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import aiofiles
import aiofiles.os
from aiohttp import StreamReader
from attrs import frozen

from argent.cpu import run_cpu
from argent.errors import (
    UPLOAD_STORE_CLOSED,
    ArgentError,
    FileInputError,
    ServerStorageError,
    UploadStorageFullError,
    UploadTooLargeError,
)
from argent.limits import (
    BODY_IDLE_TIMEOUT_SECONDS,
    MAX_ARCHIVE_EXPANDED_BYTES,
    MAX_ARCHIVE_MEMBERS,
    MAX_FILE_BYTES,
    MAX_PENDING_UPLOAD_BYTES,
    MAX_PENDING_UPLOAD_BYTES_PER_TOKEN,
    MAX_UPLOAD_BYTES,
    MEMBER_ARCHIVE_OVERHEAD_BYTES,
    UPLOAD_BATCH_BYTES,
    UPLOAD_BATCH_CHUNKS,
    UPLOAD_BATCHES_IN_FLIGHT,
    UPLOAD_BYTES_IN_FLIGHT,
    UPLOAD_EXPIRY_SECONDS,
    UPLOAD_READ_BUFFER_BYTES,
    UPLOAD_SWEEP_INTERVAL_SECONDS,
)
from argent.link.archive import (
    ArchiveError,
    DigestMismatchError,
    FileTooLargeError,
    NotOneFileError,
    read_single_file_tar_gz,
    safe_extract_tar_gz,
)
from argent.server.body import body_reads
from argent.server.tmp_files import ServerFiles
from argent.utils.oserrors import DISK_ERRNOS

log = logging.getLogger(__name__)

EXTRACT_DIR_PREFIX = "argent-tar-upload-"

UPLOAD_TOO_LARGE_DECLARED = "Upload of {size} bytes exceeds the {limit}-byte limit on one upload."
UPLOAD_TOO_LARGE = "Upload exceeds the {limit}-byte limit on one upload."
PENDING_FULL = (
    "Pending uploads exceed the {limit}-byte storage limit; retry once earlier uploads are consumed."
)
PENDING_FULL_FOR_TOKEN = (
    "Uploads of your token not yet used by a call would exceed the {limit}-byte limit one token may hold; a "
    "call uses its uploads, and unused ones expire after {minutes:g} minutes. Retry once they are consumed."
)
STORE_CLOSED = "The tool-server is shutting down; the upload was discarded. Retry once it is back."
UPLOAD_NOT_FOUND = (
    'Upload "{id}" was not found on the tool-server — it may have expired. '
    "Re-run the tool to upload the path again."
)
MISSING_HASH = (
    'Upload for "{path}" is missing a content hash — update argent to a version that supports '
    "tar uploads for remote sessions."
)
HASH_MISMATCH = (
    'Upload content hash mismatch for "{path}" — the tarball may have been corrupted in transit. '
    "Re-run the tool to upload again."
)
EXTRACT_FAILED = 'Could not extract the uploaded archive for "{path}": {msg}'
_SHA256_HEX = re.compile(r"[0-9A-Fa-f]{64}")


@frozen
class Upload:
    """One stored upload: its tar file, its size and its deadline. Its digest is not known until a
    call reads it (the call names the digest it expects)."""

    upload_id: str
    tar_path: str
    size: int
    expire_at: float
    #: The named token that sent it (its guard); None on a server without named tokens.
    owner: str | None = None


def upload_not_found_message(upload_id: str) -> str:
    """The message for an upload id the store does not hold (never sent, expired or already used)."""
    return UPLOAD_NOT_FOUND.format(id=upload_id)


def upload_not_found(upload_id: str) -> FileInputError:
    """The 422 for an upload id the store does not hold."""
    return FileInputError(upload_not_found_message(upload_id))


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


async def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        await aiofiles.os.remove(path)


class _ChunkWriter:
    """One upload's worker thread, which writes the socket reads to the file in order while the
    event loop reads on (``os.writev`` releases the GIL, so reading and writing overlap on as many
    cores as are free). Nothing is digested here: the call that uses the upload checks its SHA-256
    while it reads the archive (``extract_upload``, ``read_member_upload``).

    The loop hands the reads themselves over, a batch of them at a time (``UPLOAD_BATCH_BYTES`` or
    ``UPLOAD_BATCH_CHUNKS`` reads, whichever comes first), and the thread writes each batch with one
    ``writev``: the bytes are copied once, into the file, and the thread takes the GIL once per
    batch. ``write`` waits while the batches handed over and not yet written hold more than
    ``UPLOAD_BYTES_IN_FLIGHT`` bytes or number ``UPLOAD_BATCHES_IN_FLIGHT``, so one upload holds
    at most that plus one batch being gathered (the count bounds the objects of a client sending
    tiny pieces). The thread closes the file when the upload ends."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._writer: ThreadPoolExecutor | None = None
        #: Batches handed to the thread and not yet reaped: (written, bytes, reads, the reads).
        self._queued: deque[tuple[asyncio.Future[None], int, int, list[bytes]]] = deque()
        self._batch: list[bytes] = []
        self._batch_bytes = 0
        self._in_flight = 0
        self._in_flight_reads = 0

    @property
    def held_bytes(self) -> int:
        """Bytes of the body this writer holds: handed to the thread and not yet written, or gathered."""
        return self._in_flight + self._batch_bytes

    @property
    def held_reads(self) -> int:
        """Socket reads this writer holds (each an object of its own, however small)."""
        return self._in_flight_reads + len(self._batch)

    async def write(self, chunk: bytes) -> None:
        """Add ``chunk`` to the file's next bytes; a full batch goes to the thread."""
        self._batch.append(chunk)
        self._batch_bytes += len(chunk)
        if self._batch_bytes >= UPLOAD_BATCH_BYTES or len(self._batch) >= UPLOAD_BATCH_CHUNKS:
            await self._submit()

    async def _submit(self) -> None:
        while self._queued and (
            self._queued[0][0].done()
            or self._in_flight + self._batch_bytes > UPLOAD_BYTES_IN_FLIGHT
            or len(self._queued) >= UPLOAD_BATCHES_IN_FLIGHT
        ):
            await self._reap()
        batch, size = self._batch, self._batch_bytes
        if not batch:
            return
        self._batch, self._batch_bytes = [], 0
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argent-upload-write")
        written = asyncio.get_running_loop().run_in_executor(self._writer, _writev_all, self._fd, batch)
        self._queued.append((written, size, len(batch), batch))
        self._in_flight += size
        self._in_flight_reads += len(batch)

    async def _reap(self) -> None:
        """Wait for the oldest batch handed over; a failed write fails the upload."""
        written, size, reads, _batch = self._queued[0]
        await asyncio.shield(written)
        self._queued.popleft()
        self._in_flight -= size
        self._in_flight_reads -= reads
        written.result()

    async def finish(self) -> None:
        """Write what is left, wait for every batch, then close the file (in the writing thread:
        a close may flush)."""
        await self._submit()
        while self._queued:
            await self._reap()
        writer, self._writer = self._writer, None
        if writer is None:
            os.close(self._fd)
            return
        await asyncio.get_running_loop().run_in_executor(writer, os.close, self._fd)
        writer.shutdown(wait=False)

    def abort(self) -> Future[None] | None:
        """Drop the batches not yet written (their bytes go with them); the file is closed once a
        batch being written is done (the returned future: until then an unlinked file still holds
        its space). Synchronous, so it completes while the receiving task is being cancelled.

        Each queued batch is emptied here: the thread's queue keeps its work items (and so their
        reads) until it reaches them, which a lagging disk delays for as long as it lags, while the
        upload's bytes no longer count against any cap. (The batch being written holds its own list.)"""
        for written, _size, _reads, batch in self._queued:
            written.cancel()
            batch.clear()
        self._queued.clear()
        self._in_flight = self._in_flight_reads = 0
        self._batch, self._batch_bytes = [], 0
        writer, self._writer = self._writer, None
        if writer is None:
            _close_quietly(self._fd)
            return None
        closed = writer.submit(_close_quietly, self._fd)  # after the batch being written, if any
        writer.shutdown(wait=False)
        return closed


#: The most buffers one ``writev`` takes (POSIX guarantees at least 16; Linux takes 1024).
_IOV_MAX = max(16, min(os.sysconf("SC_IOV_MAX"), 1024))


def _writev_all(fd: int, chunks: list[bytes]) -> None:
    """Write ``chunks`` in order, ``IOV_MAX`` at a time, resuming after a short write."""
    views: list[bytes | memoryview] = list(chunks)
    start = 0
    while start < len(views):
        written = os.writev(fd, views[start : start + _IOV_MAX])
        while written and written >= len(views[start]):
            written -= len(views[start])
            start += 1
        if written:
            views[start] = memoryview(views[start])[written:]


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


class UploadStore:
    """Uploads received and not yet used, with a cap on one upload and on all of them together.

    Pending bytes count the stored uploads and the bytes of uploads still arriving. An upload
    leaves the store when a call takes it (single use), when it expires, or when the store closes.
    """

    def __init__(
        self,
        tmp_dir: str,
        *,
        max_upload_bytes: int = MAX_UPLOAD_BYTES,
        max_pending_bytes: int = MAX_PENDING_UPLOAD_BYTES,
        max_pending_bytes_per_token: int = MAX_PENDING_UPLOAD_BYTES_PER_TOKEN,
        expiry_seconds: float = UPLOAD_EXPIRY_SECONDS,
        body_idle_seconds: float = BODY_IDLE_TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        files: ServerFiles | None = None,
    ) -> None:
        self.tmp_dir = tmp_dir
        #: The names of this server's files (a new server id unless the app passes its own).
        self.files = files if files is not None else ServerFiles(tmp_dir)
        self.max_upload_bytes = max_upload_bytes
        self.max_pending_bytes = max_pending_bytes
        self.max_pending_bytes_per_token = max_pending_bytes_per_token
        self.expiry_seconds = expiry_seconds
        self.body_idle_seconds = body_idle_seconds
        self._clock = clock
        self._uploads: dict[str, Upload] = {}
        self._in_flight: set[str] = set()
        self._pending = 0
        #: Pending bytes by named token (a server without named tokens counts only the total).
        self._pending_of: dict[str, int] = {}
        self._closed = False
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def pending_bytes(self) -> int:
        """Bytes of stored uploads plus bytes of uploads still arriving."""
        return self._pending

    def __len__(self) -> int:
        return len(self._uploads)

    def __contains__(self, upload_id: object) -> bool:
        return upload_id in self._uploads

    def _full(self) -> UploadStorageFullError:
        return UploadStorageFullError(PENDING_FULL.format(limit=self.max_pending_bytes))

    def _full_for_token(self) -> UploadStorageFullError:
        minutes = self.expiry_seconds / 60
        return UploadStorageFullError(
            PENDING_FULL_FOR_TOKEN.format(limit=self.max_pending_bytes_per_token, minutes=minutes)
        )

    def _count(self, owner: str | None, delta: int) -> None:
        self._pending += delta
        if owner is not None:
            left = self._pending_of.get(owner, 0) + delta
            if left:
                self._pending_of[owner] = left
            else:
                self._pending_of.pop(owner, None)

    def _over_for_token(self, owner: str | None, more: int = 0) -> bool:
        return owner is not None and self._pending_of.get(owner, 0) + more > self.max_pending_bytes_per_token

    def _closed_error(self) -> ArgentError:
        closed = ArgentError(STORE_CLOSED, error_code=UPLOAD_STORE_CLOSED, error_kind="unavailable")
        closed.status = 503  # as a body cut short by shutdown (``body.ServerStopping``): retry later
        return closed

    async def receive(
        self, stream: StreamReader, content_length: int | None, owner: str | None = None
    ) -> Upload:
        """Stream a request body to a new upload file (its digest is checked where it is used).

        A declared length over the per-upload cap is refused before a byte is read (413), and so is
        a body that grows past it. Pending bytes over the storage cap, or over the cap of the named
        token ``owner``, give 507, and so does a temp dir whose disk is full or read-only
        (``ServerStorageError``). On any failure, a dropped connection included, the partial file
        is deleted and no bytes stay reserved.
        """
        if self._closed:
            raise self._closed_error()
        if content_length is not None and content_length > self.max_upload_bytes:
            raise UploadTooLargeError(
                UPLOAD_TOO_LARGE_DECLARED.format(size=content_length, limit=self.max_upload_bytes)
            )
        if self._pending >= self.max_pending_bytes or (
            content_length is not None and self._pending + content_length > self.max_pending_bytes
        ):
            raise self._full()
        if self._over_for_token(owner, 1 if content_length is None else content_length):
            raise self._full_for_token()

        # Past twice this the socket pauses until the loop reads: fewer pauses, while the reads
        # themselves (``body_reads``) are never joined into larger ones.
        stream.set_read_chunk_size(UPLOAD_READ_BUFFER_BYTES)
        upload_id = str(uuid.uuid4())
        path = self.files.upload_path(upload_id)
        size = 0
        reserved = 0
        # Created here, not in a worker thread: a task cancelled while a thread is still creating
        # the file would leave it behind. The upload's worker thread only writes into it.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o600)
        except OSError as exc:
            raise _not_stored(exc) from None
        writer = _ChunkWriter(fd)
        self._in_flight.add(path)
        try:
            async for chunk in body_reads(stream, self.body_idle_seconds):
                if self._closed:
                    raise self._closed_error()
                size += len(chunk)
                if size > self.max_upload_bytes:
                    raise UploadTooLargeError(UPLOAD_TOO_LARGE.format(limit=self.max_upload_bytes))
                reserved += len(chunk)
                self._count(owner, len(chunk))
                if self._pending > self.max_pending_bytes:
                    raise self._full()
                if self._over_for_token(owner):
                    raise self._full_for_token()
                try:
                    await writer.write(chunk)
                except OSError as exc:  # the disk's, not the socket's: only the file is written here
                    raise _not_stored(exc) from None
            try:
                await writer.finish()
            except OSError as exc:
                raise _not_stored(exc) from None
            if self._closed:
                raise self._closed_error()
        except BaseException as exc:
            # Synchronous on purpose: this must finish even while the task is being cancelled.
            self._count(owner, -reserved)
            self._in_flight.discard(path)
            _remove_quietly(path)
            closed = writer.abort()
            if closed is not None and not isinstance(exc, asyncio.CancelledError):
                # An answered refusal (a full disk, a cap) comes once the file's space is free.
                with contextlib.suppress(Exception):
                    await asyncio.wrap_future(closed)
            raise
        self._in_flight.discard(path)
        upload = Upload(upload_id, path, size, self._clock() + self.expiry_seconds, owner)
        self._uploads[upload_id] = upload
        return upload

    def take(self, upload_id: str) -> Upload | None:
        """Hand over an upload exactly once; None when unknown, already taken or expired.

        The caller then owns the tar file (``extract_upload`` deletes it).
        """
        upload = self._uploads.pop(upload_id, None)
        if upload is None:
            return None
        self._count(upload.owner, -upload.size)
        if upload.expire_at <= self._clock():
            _remove_quietly(upload.tar_path)
            return None
        return upload

    async def sweep(self) -> int:
        """Delete the expired uploads and their files; return how many went."""
        now = self._clock()
        expired = [upload for upload in self._uploads.values() if upload.expire_at <= now]
        for upload in expired:
            del self._uploads[upload.upload_id]
            self._count(upload.owner, -upload.size)
        for upload in expired:
            await _remove(upload.tar_path)
        return len(expired)

    def start_sweeper(self, interval: float = UPLOAD_SWEEP_INTERVAL_SECONDS) -> asyncio.Task[None]:
        """Start (once) the task that sweeps every ``interval`` seconds until ``close()``."""
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep_forever(interval), name="argent-upload-sweeper")
        return self._sweeper

    async def _sweep_forever(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.sweep()
            except Exception:  # pragma: no cover - a failed sweep must not stop the next one
                log.exception("Sweeping expired uploads failed")

    async def close(self) -> None:
        """Stop the sweeper and delete every pending upload, arriving ones included. Idempotent."""
        self._closed = True
        sweeper, self._sweeper = self._sweeper, None
        if sweeper is not None:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
        uploads = list(self._uploads.values())
        self._uploads.clear()
        for upload in uploads:
            self._count(upload.owner, -upload.size)
            await _remove(upload.tar_path)
        for path in list(self._in_flight):
            await _remove(path)


def _not_stored(exc: OSError) -> ArgentError:
    """The 507 for an upload the temp dir's disk refused (full, read-only)."""
    return ServerStorageError.refused(exc, "store the upload", "the upload was discarded")


def _client_basename(client_path: str) -> str:
    return re.split(r"[\\/]", client_path.rstrip("/\\"))[-1]


def _extract_in_thread(
    tar_path: str,
    dest_parent: str,
    prefix: str,
    name: str,
    max_total_bytes: int,
    max_members: int,
    sha256: str,
) -> str:
    try:
        temp_dir = tempfile.mkdtemp(prefix=prefix, dir=dest_parent)
        try:
            return safe_extract_tar_gz(
                tar_path,
                temp_dir,
                name,
                max_total_bytes=max_total_bytes,
                max_members=max_members,
                sha256=sha256,
            )
        except BaseException:
            shutil.rmtree(temp_dir, ignore_errors=True)
            raise
    finally:
        _remove_quietly(tar_path)


def _discard_extraction(future: asyncio.Future[str]) -> None:
    """Remove what a thread extracted for a call that was cancelled meanwhile."""
    if not future.cancelled() and future.exception() is None:
        shutil.rmtree(os.path.dirname(future.result()), ignore_errors=True)


async def _named_hash(upload: Upload, content_hash: str | None, client_path: str) -> str:
    """The SHA-256 (lower-case hex) the call names for ``upload``; refuses (422, deleting the tar)
    a hash that is missing or that no SHA-256 digest can equal. The digest itself is checked by
    the read that uses the upload."""
    try:
        if not content_hash:
            raise FileInputError(MISSING_HASH.format(path=client_path))
        if not _SHA256_HEX.fullmatch(content_hash):
            raise FileInputError(HASH_MISMATCH.format(path=client_path))
    except FileInputError:
        await _remove(upload.tar_path)
        raise
    return content_hash.lower()


async def extract_upload(
    upload: Upload,
    content_hash: str | None,
    client_path: str,
    dest_parent: str,
    *,
    max_total_bytes: int = MAX_ARCHIVE_EXPANDED_BYTES,
    max_members: int = MAX_ARCHIVE_MEMBERS,
) -> str:
    """Unpack ``upload`` for the file input at ``client_path``, once its bytes have ``content_hash``.

    The read that checks the archive's members digests its bytes too; a different digest is
    refused (422) before anything is written, in place of any other failure, as it would be had it
    been checked first. Returns the extracted member's path inside a new
    ``<dest_parent>/argent-tar-upload-<16 hex>-*`` directory (the hash's first 16 digits); the
    caller removes that directory (the parent of the result) when the call ends. The tar file is
    deleted on every path. Failures raise ``FileInputError`` (422).
    """
    sha256 = await _named_hash(upload, content_hash, client_path)
    prefix = f"{EXTRACT_DIR_PREFIX}{sha256[:16]}-"
    work = asyncio.ensure_future(
        run_cpu(
            _extract_in_thread,
            upload.tar_path,
            dest_parent,
            prefix,
            _client_basename(client_path),
            max_total_bytes,
            max_members,
            sha256,
        )
    )
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        # The thread cannot be stopped; it removes the tar itself, and whatever it extracts goes too.
        work.add_done_callback(_discard_extraction)
        raise
    except DigestMismatchError as exc:
        raise FileInputError(HASH_MISMATCH.format(path=client_path)) from exc
    except ArchiveError as exc:
        raise _extract_failed(client_path, exc) from exc
    except OSError as exc:
        if exc.errno in DISK_ERRNOS:
            raise ServerStorageError.refused(
                exc, f'extract the upload for "{client_path}"', "the call did not run"
            ) from None
        raise FileInputError(EXTRACT_FAILED.format(path=client_path, msg=exc.strerror or exc)) from exc


def _extract_failed(client_path: str, exc: ArchiveError) -> FileInputError:
    return FileInputError(EXTRACT_FAILED.format(path=client_path, msg=exc.message))


def _read_in_thread(tar_path: str, max_file_bytes: int, max_overhead_bytes: int, sha256: str) -> bytes:
    try:
        return read_single_file_tar_gz(
            tar_path, max_file_bytes=max_file_bytes, max_overhead_bytes=max_overhead_bytes, sha256=sha256
        )
    finally:
        _remove_quietly(tar_path)


async def read_member_upload(
    upload: Upload,
    content_hash: str | None,
    member_path: str,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
    max_overhead_bytes: int = MEMBER_ARCHIVE_OVERHEAD_BYTES,
) -> bytes:
    """Read the one file of the member at ``member_path`` into memory, once its bytes have ``content_hash``.

    Nothing is written: each limit refuses the archive at the header or byte that breaks it, and
    the same read digests the bytes; a different digest is refused (422) in place of the file or of
    any other failure. The tar file is deleted on every path (by the worker thread, also when the
    call is cancelled). ``NotOneFileError`` and ``FileTooLargeError`` are left to the caller, whose
    messages name the member; any other archive failure is a ``FileInputError`` (422) as for a
    tar-upload input.
    """
    sha256 = await _named_hash(upload, content_hash, member_path)
    try:
        return await run_cpu(_read_in_thread, upload.tar_path, max_file_bytes, max_overhead_bytes, sha256)
    except DigestMismatchError as exc:
        raise FileInputError(HASH_MISMATCH.format(path=member_path)) from exc
    except (NotOneFileError, FileTooLargeError):
        raise
    except ArchiveError as exc:
        raise _extract_failed(member_path, exc) from exc
    except OSError as exc:
        raise FileInputError(EXTRACT_FAILED.format(path=member_path, msg=exc.strerror or exc)) from exc
