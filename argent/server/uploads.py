"""The pending-upload store behind ``POST /upload``, and the extraction of an upload for a file input.

``POST /upload`` streams its body (a gzipped tar) into ``<tmp_dir>/argent-upload-<server id>-<uuid>.tar.gz``
while hashing it, and answers with the id: the event loop reads the socket while the upload's worker
thread hashes and writes what was read before (``_HashingWriter``). A later tool call names the id with the SHA-256 it
expects; ``UploadStore.take`` hands the upload over exactly once and ``extract_upload`` checks the
hash, unpacks the archive into a fresh ``argent-tar-upload-<16 hex>-*`` directory and deletes the
tar whatever happens. ``read_member_upload`` does the same for a member of a flow, whose one file
it reads into memory instead. Archive validity is not checked at upload time: problems surface as
a 422 when a call uses the upload. The archive work runs in a worker thread, off the event loop.

The app factory owns the lifetime: ``start_sweeper()`` on startup, ``await close()`` on cleanup.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import shutil
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import aiofiles
import aiofiles.os
from aiohttp import StreamReader
from attrs import frozen

from argent.cpu import run_cpu
from argent.errors import (
    UPLOAD_STORE_CLOSED,
    ArgentError,
    FileInputError,
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
    UPLOAD_BATCHES_IN_FLIGHT,
    UPLOAD_EXPIRY_SECONDS,
    UPLOAD_SWEEP_INTERVAL_SECONDS,
)
from argent.link.archive import (
    ArchiveError,
    FileTooLargeError,
    NotOneFileError,
    read_single_file_tar_gz,
    safe_extract_tar_gz,
)
from argent.server.body import body_chunks
from argent.server.tmp_files import ServerFiles

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


@frozen
class Upload:
    """One stored upload: its tar file, the SHA-256 (hex) of its bytes, its size and its deadline."""

    upload_id: str
    tar_path: str
    sha256: str
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


class _HashingWriter:
    """One upload's two worker threads: one hashes each batch, the other writes it to the file, each
    in order, while the event loop reads the next batches from the socket (hashlib and ``os.write``
    release the GIL, so reading, hashing and writing overlap on as many cores as are free).

    A batch is joined into one buffer, so each thread takes the GIL back once per batch rather than
    once per socket read; ``put`` waits only when ``UPLOAD_BATCHES_IN_FLIGHT`` batches are queued,
    which bounds what one upload buffers. The writing thread closes the file when the upload ends."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._digest = hashlib.sha256()
        self._hasher: ThreadPoolExecutor | None = None
        self._writer: ThreadPoolExecutor | None = None
        self._queued: deque[asyncio.Future[tuple[None, None]]] = deque()

    async def put(self, chunks: list[bytes]) -> None:
        if self._hasher is None or self._writer is None:
            self._hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argent-upload-hash")
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argent-upload-write")
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        loop = asyncio.get_running_loop()
        hashed = loop.run_in_executor(self._hasher, self._digest.update, data)
        written = loop.run_in_executor(self._writer, _write_all, self._fd, data)
        self._queued.append(asyncio.gather(hashed, written))
        while len(self._queued) > UPLOAD_BATCHES_IN_FLIGHT:
            await asyncio.shield(self._queued.popleft())

    async def finish(self) -> None:
        """Wait for every batch, then close the file (in the writing thread: a close may flush)."""
        while self._queued:
            await asyncio.shield(self._queued.popleft())
        writer, hasher = self._writer, self._hasher
        self._writer = self._hasher = None
        if writer is None or hasher is None:
            os.close(self._fd)
            return
        hasher.shutdown(wait=False)
        await asyncio.get_running_loop().run_in_executor(writer, os.close, self._fd)
        writer.shutdown(wait=False)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()

    def abort(self) -> None:
        """Drop the queued batches; the file is closed once a batch being written is done. Synchronous,
        so it completes while the receiving task is being cancelled."""
        for queued in self._queued:
            queued.cancel()
        self._queued.clear()
        writer, hasher = self._writer, self._hasher
        self._writer = self._hasher = None
        if writer is None or hasher is None:
            _close_quietly(self._fd)
            return
        hasher.shutdown(wait=False)
        writer.submit(_close_quietly, self._fd)  # after the batch being written, if any
        writer.shutdown(wait=False)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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
        return ArgentError(STORE_CLOSED, error_code=UPLOAD_STORE_CLOSED, error_kind="unavailable")

    async def receive(
        self, stream: StreamReader, content_length: int | None, owner: str | None = None
    ) -> Upload:
        """Stream a request body to a new upload file, hashing it on the way.

        A declared length over the per-upload cap is refused before a byte is read (413), and so is
        a body that grows past it. Pending bytes over the storage cap, or over the cap of the named
        token ``owner``, give 507. On any failure, a dropped connection included, the partial file
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

        upload_id = str(uuid.uuid4())
        path = self.files.upload_path(upload_id)
        size = 0
        reserved = 0
        # Created here, not in a worker thread: a task cancelled while a thread is still creating
        # the file would leave it behind. The upload's worker thread only hashes and writes into it.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        writer = _HashingWriter(os.open(path, flags, 0o600))
        self._in_flight.add(path)
        batch: list[bytes] = []
        batch_bytes = 0
        try:
            async for chunk in body_chunks(stream, self.body_idle_seconds):
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
                batch.append(chunk)
                batch_bytes += len(chunk)
                if batch_bytes >= UPLOAD_BATCH_BYTES:
                    await writer.put(batch)
                    batch, batch_bytes = [], 0
            if batch:
                await writer.put(batch)
            await writer.finish()
            if self._closed:
                raise self._closed_error()
        except BaseException:
            # Synchronous on purpose: this must finish even while the task is being cancelled.
            self._count(owner, -reserved)
            self._in_flight.discard(path)
            _remove_quietly(path)
            writer.abort()
            raise
        self._in_flight.discard(path)
        upload = Upload(upload_id, path, writer.hexdigest(), size, self._clock() + self.expiry_seconds, owner)
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


def _client_basename(client_path: str) -> str:
    return re.split(r"[\\/]", client_path.rstrip("/\\"))[-1]


def _extract_in_thread(
    tar_path: str, dest_parent: str, prefix: str, name: str, max_total_bytes: int, max_members: int
) -> str:
    try:
        temp_dir = tempfile.mkdtemp(prefix=prefix, dir=dest_parent)
        try:
            return safe_extract_tar_gz(
                tar_path, temp_dir, name, max_total_bytes=max_total_bytes, max_members=max_members
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


async def _check_hash(upload: Upload, content_hash: str | None, client_path: str) -> None:
    """Refuse (422, deleting the tar) an upload whose SHA-256 is missing or not the one named."""
    try:
        if not content_hash:
            raise FileInputError(MISSING_HASH.format(path=client_path))
        if content_hash.lower() != upload.sha256.lower():
            raise FileInputError(HASH_MISMATCH.format(path=client_path))
    except FileInputError:
        await _remove(upload.tar_path)
        raise


async def extract_upload(
    upload: Upload,
    content_hash: str | None,
    client_path: str,
    dest_parent: str,
    *,
    max_total_bytes: int = MAX_ARCHIVE_EXPANDED_BYTES,
    max_members: int = MAX_ARCHIVE_MEMBERS,
) -> str:
    """Check ``content_hash`` and unpack ``upload`` for the file input at ``client_path``.

    Returns the extracted member's path inside a new ``<dest_parent>/argent-tar-upload-<16 hex>-*``
    directory; the caller removes that directory (the parent of the result) when the call ends.
    The tar file is deleted on every path. Failures raise ``FileInputError`` (422).
    """
    await _check_hash(upload, content_hash, client_path)
    prefix = f"{EXTRACT_DIR_PREFIX}{upload.sha256[:16]}-"
    work = asyncio.ensure_future(
        run_cpu(
            _extract_in_thread,
            upload.tar_path,
            dest_parent,
            prefix,
            _client_basename(client_path),
            max_total_bytes,
            max_members,
        )
    )
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        # The thread cannot be stopped; it removes the tar itself, and whatever it extracts goes too.
        work.add_done_callback(_discard_extraction)
        raise
    except ArchiveError as exc:
        raise _extract_failed(client_path, exc) from exc
    except OSError as exc:
        raise FileInputError(EXTRACT_FAILED.format(path=client_path, msg=exc.strerror or exc)) from exc


def _extract_failed(client_path: str, exc: ArchiveError) -> FileInputError:
    return FileInputError(EXTRACT_FAILED.format(path=client_path, msg=exc.message))


def _read_in_thread(tar_path: str, max_file_bytes: int, max_overhead_bytes: int) -> bytes:
    try:
        return read_single_file_tar_gz(
            tar_path, max_file_bytes=max_file_bytes, max_overhead_bytes=max_overhead_bytes
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
    """Check ``content_hash`` and read the one file of the member at ``member_path`` into memory.

    Nothing is written: each limit refuses the archive at the header or byte that breaks it. The
    tar file is deleted on every path (by the worker thread, also when the call is cancelled).
    ``NotOneFileError`` and ``FileTooLargeError`` are left to the caller, whose messages name the
    member; any other archive failure is a ``FileInputError`` (422) as for a tar-upload input.
    """
    await _check_hash(upload, content_hash, member_path)
    try:
        return await run_cpu(_read_in_thread, upload.tar_path, max_file_bytes, max_overhead_bytes)
    except (NotOneFileError, FileTooLargeError):
        raise
    except ArchiveError as exc:
        raise _extract_failed(member_path, exc) from exc
    except OSError as exc:
        raise FileInputError(EXTRACT_FAILED.format(path=member_path, msg=exc.strerror or exc)) from exc
