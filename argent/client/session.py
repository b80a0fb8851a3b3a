"""The HTTP client of a tool-server: list its tools, call one, upload — over a link or to an embedded one.

``ToolServerClient`` puts three concerns together, each a module of its own:

- the transport (``argent.client.transport``): one ``aiohttp.ClientSession``, ``GET /tools``, a call
  sent exactly once (streamed or buffered, every answer read in bounded memory, no redirect
  followed), ``POST /upload``;
- the members (``argent.client.members``, ``argent.client.collect``): over a link, the file inputs of
  a call carry the files of its flow; a call with ``members`` is always a stream;
- the client writes (``argent.client.writes``): the files the result tells the client to write,
  applied only once the result has arrived.

Each call and each of its uploads carry the call's ``X-Argent-Affinity`` value
(``argent.client.affinity``), so a balancer in front of a fleet keeps them on one tool-server.

The client never imports the server; both speak the wire of ``INTERFACE.md`` §2.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

from argent.client.affinity import AFFINITY_HEADER, new_affinity
from argent.client.base import ProgressCallback, RefusalCallback
from argent.client.baselines import BaselineWriteScope
from argent.client.calls import has_members, prepare_file_inputs
from argent.client.client_files import ClientFileCall, RefusedClientFile
from argent.client.members import attach_collected, flow_files_log_enabled
from argent.client.transport import NDJSON, Transport, describe_exception
from argent.client.writes import apply_writes
from argent.limits import (
    MAX_PROGRESS_BYTES,
    MAX_PROGRESS_JSON_VALUES,
    MAX_RESULT_BYTES,
    MAX_RESULT_JSON_VALUES,
    MAX_STREAM_LINE_BYTES,
)
from argent.link.models import FileInput, FileInputSpec, ToolEntry

__all__ = ["LINKED_HEADER", "ToolServerClient", "describe_exception"]

LINKED_HEADER = "x-argent-linked"


class ToolServerClient:
    """A ``ToolClient`` over HTTP. Use it as an async context manager, or ``close()`` it.

    ``linked``: the calls go over a link (``x-argent-linked: 1``; file contents and members sent).
    ``max_line_bytes``, ``max_result_bytes`` and ``max_values`` bound what one answer may take, and
    ``max_progress_bytes`` and ``max_progress_values`` what the progress lines of one call take
    together (defaults in ``argent.limits``).
    """

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        linked: bool,
        source: str | None = None,
        notice: Callable[[str], None] | None = None,
        max_line_bytes: int = MAX_STREAM_LINE_BYTES,
        max_result_bytes: int = MAX_RESULT_BYTES,
        max_values: int = MAX_RESULT_JSON_VALUES,
        max_progress_bytes: int = MAX_PROGRESS_BYTES,
        max_progress_values: int = MAX_PROGRESS_JSON_VALUES,
    ) -> None:
        self.transport = Transport(
            url,
            token,
            source=source,
            notice=notice,
            max_line_bytes=max_line_bytes,
            max_result_bytes=max_result_bytes,
            max_values=max_values,
            max_progress_bytes=max_progress_bytes,
            max_progress_values=max_progress_values,
        )
        self.linked = linked
        self._notice = notice

    @property
    def url(self) -> str:
        return self.transport.url

    @property
    def token(self) -> str | None:
        return self.transport.token

    @property
    def source(self) -> str | None:
        return self.transport.source

    async def __aenter__(self) -> ToolServerClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self.transport.close()

    async def list_tools(self) -> list[ToolEntry]:
        """The tool listing, fetched once for the client's life."""
        return await self.transport.list_tools()

    async def upload(self, path: str, *, affinity: str | None = None) -> tuple[str, str]:
        """Tar ``path`` and send it to ``POST /upload``: ``(upload_id, sha256 hex of the tar.gz)``."""
        return await self.transport.upload(path, affinity=affinity)

    async def post_archive(self, archive: bytes, path: str, *, affinity: str | None = None) -> str:
        """Send one member's gzipped tar to ``POST /upload``; returns the upload id."""
        return await self.transport.post_archive(archive, path, affinity=affinity)

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        on_progress: ProgressCallback | None = None,
        on_refused: RefusalCallback | None = None,
    ) -> Any:
        """Run one tool once; returns the result with its client-file directives applied.

        A tool missing from the listing is still called: the tool-server answers 404 in its words.
        Each text directive the client refuses goes to ``on_refused`` (else its line to the notice).
        """
        transport = self.transport
        entry = await transport.entry(name)
        scope = BaselineWriteScope()
        # One value for this call and each of its uploads: a balancer sends them to one tool-server.
        affinity = new_affinity()
        post = functools.partial(transport.post_archive, affinity=affinity)
        log = self._note if flow_files_log_enabled() else None

        async def collect(spec: FileInputSpec, wrapper: FileInput, call_args: Mapping[str, Any]) -> FileInput:
            listing = await transport.list_tools()
            wrapper, collection = await attach_collected(
                spec, wrapper, call_args, listing, post=post, log=log
            )
            scope.add(collection)
            return wrapper

        prepared = await prepare_file_inputs(
            entry.file_inputs if entry is not None else None,
            args,
            linked=self.linked,
            uploader=functools.partial(transport.upload, affinity=affinity) if self.linked else None,
            collector=collect if self.linked else None,
            on_untrusted=self._note,
        )
        headers = {"Content-Type": "application/json", AFFINITY_HEADER: affinity}
        if self.linked:
            headers[LINKED_HEADER] = "1"
        if on_progress is None and has_members(prepared):
            # A call with members is always a stream, so a proxy never buffers a long run.
            on_progress = _ignore_progress
        if on_progress is not None:
            headers["Accept"] = NDJSON
            headers["Accept-Encoding"] = "identity"
        body = json.dumps({} if prepared is None else prepared, ensure_ascii=False).encode("utf-8")
        data = await transport.post_call(name, body, headers, on_progress)
        return await apply_writes(
            data,
            ClientFileCall(name, args),
            scope,
            refused=lambda refusal: self._refused(refusal, on_refused),
            note=self._note,
        )

    def _refused(self, refused: RefusedClientFile, on_refused: RefusalCallback | None) -> None:
        if on_refused is not None:
            on_refused(refused)
        elif self._notice is not None:
            self._notice(refused.line())
        else:
            print(refused.line(), file=sys.stderr, flush=True)

    def _note(self, line: str) -> None:
        if self._notice is not None:
            self._notice(line)
        else:
            print(line, file=sys.stderr, flush=True)


def _ignore_progress(step: dict[str, Any]) -> None:
    return None
