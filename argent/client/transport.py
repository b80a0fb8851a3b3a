"""The transport of a tool-server client: one ``aiohttp.ClientSession``, ``GET /tools``, one call
(``POST /tools/<name>``, buffered or streamed) and ``POST /upload``; every failure in words.

The client trusts no tool-server: every answer is read in bounded memory (``argent.client.bounded``:
a cap on one stream line, on one body, on the JSON values of one answer, and on all the progress
lines of one call together) and never decompressed (``Accept-Encoding: identity``, no automatic
decoding), so no answer can take the client's memory. No request follows a redirect: a 3xx answer
is an error naming its location, so a call's token and files go only to the URL the user linked.

A streamed call asks for NDJSON (``Accept: application/x-ndjson``, ``Accept-Encoding: identity`` so no
proxy compresses and holds it) and hands each progress line to the callback as it arrives; a server
that answers plain JSON is read the buffered way. When the connection closes before the terminal
line the call is not sent again: the tool may have run, and the error says so.

What a call carries (file inputs and their members) and what it leaves behind (client files) are
``argent.client.members`` and ``argent.client.writes``; ``argent.client.session`` puts them together.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import socket
import tempfile
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import aiohttp
from attrs import evolve
from yarl import URL

from argent.client.affinity import AFFINITY_HEADER
from argent.client.base import ProgressCallback, ToolCallError
from argent.client.bounded import (
    AnswerNotJson,
    AnswerRefused,
    NdjsonReader,
    ProgressBudget,
    parse_json,
    read_body,
)
from argent.errors import TOOL_SERVER_CONNECTION_CLOSED, TOOL_SERVER_PROTOCOL, TOOL_SERVER_UNREACHABLE
from argent.limits import (
    CLIENT_TCP_KEEPALIVE_IDLE_SECONDS,
    CLIENT_TCP_KEEPALIVE_INTERVAL_SECONDS,
    CLIENT_TCP_KEEPALIVE_PROBES,
    MAX_PROGRESS_BYTES,
    MAX_PROGRESS_JSON_VALUES,
    MAX_RESULT_BYTES,
    MAX_RESULT_JSON_DEPTH,
    MAX_RESULT_JSON_VALUES,
    MAX_STREAM_LINE_BYTES,
)
from argent.link.archive import ArchiveError, build_tar_gz
from argent.link.codec import read_event, read_or_none
from argent.link.models import (
    ErrorBody,
    ProgressEvent,
    ResultBody,
    ResultEvent,
    ToolEntry,
    ToolListing,
    UploadAnswer,
)

NDJSON = "application/x-ndjson"
#: Connecting (TCP + TLS) may take this long; a call itself has no time limit (flows run long).
CONNECT_TIMEOUT_SECONDS = 10.0
#: GET /tools is small and quick.
LIST_TIMEOUT_SECONDS = 60.0

CONNECTION_CLOSED = (
    "The connection to the tool-server closed before {name} finished ({detail}). "
    "The tool may have run; check its effect before you run it again."
)
STREAM_ENDED_DETAIL = "the stream ended without a result"
UNREACHABLE = "Could not reach the tool-server at {url} ({detail}). {how}"
UNREACHABLE_HOW = {
    "env": (
        "ARGENT_TOOLS_URL routes calls there. Start the tool-server on that machine (argent server start), "
        "correct ARGENT_TOOLS_URL, or unset it (or pass --local) to run on an embedded tool-server."
    ),
    "link": (
        "The link in ~/.argent/link.json routes calls there (argent link --show). Start the tool-server on "
        "that machine (argent server start), link again with argent link <target>, or run argent unlink "
        "(or pass --local) to run on an embedded tool-server."
    ),
    "embedded": "It is the embedded tool-server this command started; run the command again.",
}
UNREACHABLE_HOW_DEFAULT = "Check the URL and that the tool-server is running."
NOT_HTTP_DETAIL = "not an http:// or https:// URL with a host"
TOKEN_HINT = {
    "env": "The token comes from ARGENT_AUTH_TOKEN: set it to the token `argent server start` printed.",
    "link": "The token comes from ~/.argent/link.json: link again with argent link argent://<token>@<host>:<port>.",
}
LIST_FAILED = "GET {url}/tools failed: {status} {reason}"
CALL_FAILED = "The tool-server at {url} answered {status} {reason} to {name}."
UPLOAD_FAILED = "Upload to {url}/upload failed: {status} {reason}"
UPLOAD_TOO_LARGE = (
    "Upload to {url}/upload failed: 413 {reason} — the proxy in front of the tool-server refused the "
    "{size}-byte archive of {path}. The proxy must accept request bodies of at least {size} bytes on "
    "POST /upload (client_max_body_size in nginx). The call was not sent."
)
UPLOAD_NOTICE = "Uploading {name} to the remote tool-server..."
PACK_FAILED = "Could not pack {path} for upload: {msg}"
ANSWER_REFUSED = (
    "The tool-server's answer to {name} {what}; the client stopped reading. The tool may have run; check "
    "its effect before you run it again, and check the tool-server you are linked to."
)
LIST_REFUSED = "GET {url}/tools failed: the answer {what}; is this an argent tool-server?"
REDIRECTED = (
    "The tool-server at {url} answered {status} {reason} to {what}, a redirect to {location}. The client follows "
    "no redirect: a call carries your token and your files, and goes only to the URL you linked. If the "
    "tool-server moved, link to its new URL (argent link <url>, or set ARGENT_TOOLS_URL)."
)
REDIRECT_NO_LOCATION = "no location"
ENCODED = (
    "The tool-server at {url} answered {what} with a body in the {encoding} content encoding, though the client "
    "asks for none (Accept-Encoding: identity) and decodes none (it could expand past every cap). A proxy in "
    "front of the tool-server compresses its answers: turn that off for the tool-server (gzip off; in nginx)."
)
MAY_HAVE_RUN = "The tool may have run; check its effect before you run it again."

ERROR_KIND_TRANSPORT = "transport"


class UploadRefusedByProxy(ToolCallError):
    """A 413 on ``POST /upload`` that no tool-server wrote (a proxy's body limit)."""

    def __init__(self, message: str, *, url: str, reason: str, size: int, path: str) -> None:
        super().__init__(message, status=413)
        self.url = url
        self.reason = reason
        self.size = size
        self.path = path


def transport_error(message: str, code: str, *, may_have_run: bool = False) -> ToolCallError:
    """A failure of the link itself (502, kind ``transport``): closed, or not the protocol."""
    return ToolCallError(
        message, status=502, error_code=code, error_kind=ERROR_KIND_TRANSPORT, may_have_run=may_have_run
    )


def connection_closed_error(name: str, detail: str) -> ToolCallError:
    return transport_error(
        CONNECTION_CLOSED.format(name=name, detail=detail),
        TOOL_SERVER_CONNECTION_CLOSED,
        may_have_run=True,
    )


def describe_exception(exc: BaseException) -> str:
    """A short reason for a transport failure, for the parentheses of a message."""
    if isinstance(exc, aiohttp.InvalidUrlClientError):
        return NOT_HTTP_DETAIL
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "server disconnected"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "response payload is not completed"
    if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
        return "timed out"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"cannot resolve {exc.host}"
    if isinstance(exc, aiohttp.ClientConnectorError):
        if isinstance(exc.os_error, ConnectionRefusedError):
            return "connection refused"
        return exc.os_error.strerror or str(exc.os_error) or type(exc.os_error).__name__
    if isinstance(exc, aiohttp.ClientOSError):
        return exc.strerror or str(exc) or type(exc).__name__
    return str(exc) or type(exc).__name__


def answer_refused(name: str, refused: AnswerRefused) -> ToolCallError:
    return transport_error(
        ANSWER_REFUSED.format(name=name, what=refused.what),
        TOOL_SERVER_PROTOCOL,
        may_have_run=True,
    )


class Transport:
    """The HTTP exchanges with one tool-server. ``close()`` it when done.

    ``max_line_bytes``, ``max_result_bytes`` and ``max_values`` bound what one answer may take, and
    ``max_progress_bytes`` and ``max_progress_values`` what the progress lines of one call take
    together (defaults in ``argent.limits``); ``source`` (``env``, ``link``, ``embedded``) words an
    unreachable tool-server and a refused token; ``notice`` hears the upload of a ``tar-upload`` input.
    """

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        source: str | None = None,
        notice: Callable[[str], None] | None = None,
        max_line_bytes: int = MAX_STREAM_LINE_BYTES,
        max_result_bytes: int = MAX_RESULT_BYTES,
        max_values: int = MAX_RESULT_JSON_VALUES,
        max_progress_bytes: int = MAX_PROGRESS_BYTES,
        max_progress_values: int = MAX_PROGRESS_JSON_VALUES,
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token or None
        self.source = source
        self._notice = notice
        self.max_line_bytes = max_line_bytes
        self.max_result_bytes = max_result_bytes
        self.max_values = max_values
        self.max_progress_bytes = max_progress_bytes
        self.max_progress_values = max_progress_values
        self._session: aiohttp.ClientSession | None = None
        self._tools: list[ToolEntry] | None = None

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def _http(self) -> aiohttp.ClientSession:
        """The one session of this client: requests name paths relative to the tool-server's URL
        and carry its token; a URL that is not http(s) fails here, as an unreachable tool-server."""
        if self._session is None or self._session.closed:
            base = _base_url(self.url)
            if base is None:
                raise self._unreachable(aiohttp.InvalidUrlClientError(self.url))
            headers = {"Accept-Encoding": "identity"}  # a compressed answer could expand past every cap
            if self.token:
                headers["Authorization"] = f"Bearer {self.token}"
            self._session = aiohttp.ClientSession(
                base_url=base,
                connector=aiohttp.TCPConnector(socket_factory=keepalive_socket),
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT_SECONDS),
                auto_decompress=False,
            )
        return self._session

    # ------------------------------------------------------------------------------------------
    # Errors

    def _unreachable(self, exc: BaseException) -> ToolCallError:
        how = UNREACHABLE_HOW.get(self.source or "", UNREACHABLE_HOW_DEFAULT)
        return ToolCallError(
            UNREACHABLE.format(url=self.url, detail=describe_exception(exc), how=how),
            status=503,
            error_code=TOOL_SERVER_UNREACHABLE,
            error_kind=ERROR_KIND_TRANSPORT,
        )

    def _parse(self, raw: bytes | bytearray) -> Any:
        return parse_json(raw, max_values=self.max_values, max_depth=MAX_RESULT_JSON_DEPTH)

    def _json_or_none(self, raw: bytes | bytearray) -> Any:
        """An error body's JSON, or None when it is not JSON (an HTML page from a proxy)."""
        if not raw.strip():
            return None
        try:
            return self._parse(raw)
        except AnswerNotJson:
            return None

    async def _body(self, resp: aiohttp.ClientResponse) -> bytearray:
        return await read_body(resp.content, self.max_result_bytes, resp.content_length)

    def _check_not_redirected(self, resp: aiohttp.ClientResponse, what: str) -> None:
        """Refuse a 3xx answer: no request follows a redirect, so neither the token nor the files of a
        call ever reach a host the user did not link (aiohttp resends a 307's body, files and all)."""
        if 300 <= resp.status < 400:
            location = resp.headers.get("Location") or REDIRECT_NO_LOCATION
            raise transport_error(
                REDIRECTED.format(
                    url=self.url, status=resp.status, reason=resp.reason or "", what=what, location=location
                ),
                TOOL_SERVER_PROTOCOL,
            )

    def _check_not_encoded(self, resp: aiohttp.ClientResponse, what: str, *, call: bool = False) -> None:
        """Refuse a successful answer in a content encoding: the client never decodes one, so it would
        read as bytes that are not JSON; say which proxy setting did it. (An error answer is told by its
        status, whatever its body.)"""
        encoding = resp.headers.get("Content-Encoding", "").strip().lower()
        if resp.ok and encoding and encoding != "identity":
            message = ENCODED.format(url=self.url, what=what, encoding=encoding)
            raise transport_error(
                f"{message} {MAY_HAVE_RUN}" if call else message, TOOL_SERVER_PROTOCOL, may_have_run=call
            )

    def _token_hint(self, status: int) -> str | None:
        """The client's advice under a refused token (401): where the token comes from."""
        if status != 401:
            return None
        hint = TOKEN_HINT.get(self.source or "")
        if hint is None:
            return None
        return "No token is configured. " + hint if self.token is None else hint

    # ------------------------------------------------------------------------------------------
    # GET /tools

    async def list_tools(self) -> list[ToolEntry]:
        """The tool listing, fetched once for the client's life."""
        if self._tools is None:
            self._tools = await self._fetch_tools()
        return self._tools

    @contextlib.contextmanager
    def _exchange(self, *, refused: Callable[[str], str], failed: Callable[[str], str]) -> Iterator[None]:
        """One request's transport failures in words: unreachable (503), an answer refused by its
        limits (``refused(what)``, 502) and a broken exchange (``failed(detail)``, 502)."""
        try:
            yield
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            raise self._unreachable(exc) from exc
        except AnswerRefused as exc:
            raise transport_error(refused(exc.what), TOOL_SERVER_PROTOCOL) from exc
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise transport_error(failed(describe_exception(exc)), TOOL_SERVER_CONNECTION_CLOSED) from exc

    async def _fetch_tools(self) -> list[ToolEntry]:
        with self._exchange(
            refused=lambda what: LIST_REFUSED.format(url=self.url, what=what),
            failed=lambda detail: f"GET {self.url}/tools failed ({detail}).",
        ):
            async with self._http().get(
                "tools",
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(
                    total=LIST_TIMEOUT_SECONDS, sock_connect=CONNECT_TIMEOUT_SECONDS
                ),
            ) as resp:
                self._check_not_redirected(resp, "GET /tools")
                self._check_not_encoded(resp, "GET /tools")
                body = self._json_or_none(await self._body(resp))
                if not resp.ok:
                    message = LIST_FAILED.format(url=self.url, status=resp.status, reason=resp.reason or "")
                    error = _error_of(body).text
                    if error:
                        message = f"{message}: {error}"
                    raise ToolCallError(message, status=resp.status, hint=self._token_hint(resp.status))
        listing = read_or_none(body, ToolListing)
        if listing is None:
            raise transport_error(
                f"GET {self.url}/tools did not answer a tool listing; is this an argent tool-server?",
                TOOL_SERVER_PROTOCOL,
            )
        return [_listed_tool(entry) for entry in listing.tools]

    async def entry(self, name: str) -> ToolEntry | None:
        for tool in await self.list_tools():
            if tool.name == name:
                return tool
        return None

    # ------------------------------------------------------------------------------------------
    # POST /tools/<name>

    async def post_call(
        self, name: str, body: bytes, headers: Mapping[str, str], on_progress: ProgressCallback | None
    ) -> Any:
        """Send one call once and read its answer: the NDJSON stream, each progress line to
        ``on_progress``, when ``on_progress`` is given and the tool-server streams; else the buffered
        JSON. Returns the result's data; a failure raises ``ToolCallError`` in words."""
        try:
            resp = await self._http().post(
                f"tools/{quote(name, safe='')}", data=body, headers=dict(headers), allow_redirects=False
            )
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            raise self._unreachable(exc) from exc
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise connection_closed_error(name, describe_exception(exc)) from exc
        try:
            self._check_not_redirected(resp, name)
            self._check_not_encoded(resp, name, call=True)
            streamed = (
                on_progress is not None and resp.ok and NDJSON in resp.headers.get("Content-Type", "").lower()
            )
            if streamed and on_progress is not None:
                data = await self._read_stream(name, resp, on_progress)
            else:
                data = await self._read_buffered(name, resp)
        except AnswerRefused as exc:
            raise answer_refused(name, exc) from exc
        finally:
            # A fully read response gives its connection back; anything else drops it.
            if resp.content.at_eof():
                resp.release()
            else:
                resp.close()
        return data

    async def _read_buffered(self, name: str, resp: aiohttp.ClientResponse) -> Any:
        try:
            raw = await self._body(resp)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise connection_closed_error(name, describe_exception(exc)) from exc
        body = self._json_or_none(raw)
        del raw
        if resp.ok:
            answer = read_or_none(body, ResultBody)
            if answer is None:
                raise transport_error(
                    f"The tool-server at {self.url} answered {name} with a body that is not a JSON object.",
                    TOOL_SERVER_PROTOCOL,
                )
            return answer.data
        error = _error_of(body)
        if error.text is None:
            message = CALL_FAILED.format(
                url=self.url, status=resp.status, reason=resp.reason or "", name=name
            )
            raise ToolCallError(message, status=resp.status, hint=self._token_hint(resp.status))
        raise ToolCallError(
            error.text,
            hint=self._token_hint(resp.status),
            status=resp.status,
            error_code=error.error_code,
            error_kind=error.error_kind,
        )

    async def _read_stream(
        self, name: str, resp: aiohttp.ClientResponse, on_progress: ProgressCallback
    ) -> Any:
        reader = NdjsonReader(resp.content, self.max_line_bytes)
        budget = ProgressBudget(self.max_progress_bytes, self.max_progress_values)
        while True:
            try:
                line = await reader.next_line()
            except (TimeoutError, aiohttp.ClientError) as exc:
                raise connection_closed_error(name, describe_exception(exc)) from exc
            if line is None:
                raise connection_closed_error(name, STREAM_ENDED_DETAIL)
            event = read_event(self._parse_event(name, line))
            if isinstance(event, ProgressEvent):
                budget.spend(line)
            del line  # a line may be tens of megabytes: free it before the next one arrives
            if isinstance(event, ProgressEvent) and isinstance(event.data, dict):
                outcome = on_progress(event.data)
                if inspect.isawaitable(outcome):
                    await outcome
            elif isinstance(event, ResultEvent):
                return event.data
            elif isinstance(event, ErrorBody):
                raise ToolCallError(
                    event.error or "tool invocation failed",
                    status=500,
                    error_code=event.error_code,
                    error_kind=event.error_kind,
                )

    def _parse_event(self, name: str, line: bytearray) -> Any:
        try:
            event = self._parse(line)
        except AnswerNotJson as exc:
            raise ToolCallError(
                f"The tool-server sent a stream line that is not JSON while {name} ran ({exc}). "
                "The tool may have run; check its effect before you run it again.",
                status=502,
                error_code=TOOL_SERVER_PROTOCOL,
                error_kind=ERROR_KIND_TRANSPORT,
                may_have_run=True,
            ) from exc
        return event

    # ------------------------------------------------------------------------------------------
    # POST /upload

    async def post_archive(self, archive: bytes, path: str, *, affinity: str | None = None) -> str:
        """Send one member's gzipped tar to ``POST /upload``; returns the upload id.

        ``affinity`` is the value of the call the upload belongs to (``argent.client.affinity``).
        """
        return await self._post_upload(archive, path, len(archive), affinity)

    async def upload(self, path: str, *, affinity: str | None = None) -> tuple[str, str]:
        """Tar ``path`` (a file or a directory) and stream it to ``POST /upload``.

        Returns ``(upload_id, sha256 hex of the tar.gz)``. The local tar is always deleted.
        ``affinity`` is the value of the call the upload belongs to.
        """
        name = os.path.basename(os.path.normpath(path))
        fd, tar_path = tempfile.mkstemp(prefix="argent-upload-", suffix=".tar.gz")
        os.close(fd)
        try:
            try:
                digest = await asyncio.to_thread(build_tar_gz, path, tar_path)
            except ArchiveError as exc:
                raise ToolCallError(PACK_FAILED.format(path=path, msg=exc.message), status=422) from exc
            except OSError as exc:
                raise ToolCallError(
                    PACK_FAILED.format(path=path, msg=exc.strerror or exc), status=422
                ) from exc
            size = os.path.getsize(tar_path)
            if self._notice is not None:
                self._notice(UPLOAD_NOTICE.format(name=name))
            upload_id = await self._post_upload(tar_path, path, size, affinity)
            return upload_id, digest
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tar_path)

    async def _post_upload(self, body: str | bytes, path: str, size: int, affinity: str | None) -> str:
        """POST a tar file (``body`` a path) or archive bytes to ``/upload``; returns the upload id."""
        headers = {"Content-Type": "application/gzip"}
        if affinity is not None:
            headers[AFFINITY_HEADER] = affinity
        with (
            self._exchange(
                refused=lambda what: (
                    f"Upload to {self.url}/upload failed: the answer {what}. The call was not sent."
                ),
                failed=lambda detail: (
                    f"Upload to {self.url}/upload failed ({detail}). The call was not sent."
                ),
            ),
            contextlib.ExitStack() as stack,
        ):
            data = body if isinstance(body, bytes) else stack.enter_context(open(body, "rb"))
            async with self._http().post("upload", data=data, headers=headers, allow_redirects=False) as resp:
                self._check_not_redirected(resp, f"the upload of {path}")
                self._check_not_encoded(resp, f"the upload of {path}")
                raw = await self._body(resp)
                status, reason = resp.status, resp.reason or ""
        body = self._json_or_none(raw)
        error = _error_of(body).text
        if status == 413 and error is None:
            raise UploadRefusedByProxy(
                UPLOAD_TOO_LARGE.format(url=self.url, reason=reason, size=size, path=path),
                url=self.url,
                reason=reason,
                size=size,
                path=path,
            )
        if not 200 <= status < 300:
            message = UPLOAD_FAILED.format(url=self.url, status=status, reason=reason)
            if error:
                message = f"{message}: {error}"
            if status == 413:
                message = f"{message} (the archive of {path} is {size} bytes)"
            raise ToolCallError(message, status=status, hint=self._token_hint(status))
        answer = read_or_none(body, UploadAnswer)
        if answer is None or not answer.upload_id:
            raise transport_error(
                f"Upload to {self.url}/upload failed: the answer carried no uploadId.",
                TOOL_SERVER_PROTOCOL,
            )
        return answer.upload_id


def keepalive_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    """A connection's socket with TCP keep-alive on (``CLIENT_TCP_KEEPALIVE_*``): a call has no read
    timeout (a step may run for minutes in silence), so a tool-server whose machine or network is gone
    ends the call as closed (the seed's message) once its kernel answers no probe, instead of never."""
    family, kind, proto = addr_info[0], addr_info[1], addr_info[2]
    sock = socket.socket(family=family, type=kind, proto=proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (
        ("TCP_KEEPIDLE", CLIENT_TCP_KEEPALIVE_IDLE_SECONDS),
        ("TCP_KEEPINTVL", CLIENT_TCP_KEEPALIVE_INTERVAL_SECONDS),
        ("TCP_KEEPCNT", CLIENT_TCP_KEEPALIVE_PROBES),
    ):
        if hasattr(socket, option):  # Linux; elsewhere the system's keep-alive timing applies
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)
    return sock


def _base_url(url: str) -> URL | None:
    """``url`` as the base of the tool-server's paths (a trailing ``/``), or None when it is not an
    http(s) URL with a host and without query or fragment."""
    try:
        base = URL(url + "/")
    except ValueError:
        return None
    if base.scheme not in ("http", "https") or not base.host or base.query_string or base.fragment:
        return None
    return base


def _listed_tool(entry: ToolEntry) -> ToolEntry:
    """A listing entry the CLI can show: its JSON Schema with only object properties (their ``enum``
    a non-empty list, ``items`` an object) and name strings in ``required``. The codec already
    left out every field of another type, so no listing from any tool-server can crash the client."""
    if entry.input_schema is None:
        return entry
    return evolve(entry, input_schema=_listed_schema(entry.input_schema))


def _listed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with only object properties (their ``enum`` a non-empty list, ``items`` an object)
    and name strings in ``required``; a field the input lacks stays absent."""
    out = dict(schema)
    if "properties" in schema:
        properties = schema["properties"]
        listed: dict[str, Any] = properties if isinstance(properties, dict) else {}
        out["properties"] = {
            name: _listed_property(prop) for name, prop in listed.items() if isinstance(prop, dict)
        }
    if "required" in schema:
        required = schema["required"]
        out["required"] = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    return out


def _listed_property(prop: dict[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in prop.items() if isinstance(value, _PROPERTY_TYPES.get(key, object))}
    if not out.get("enum", True):
        del out["enum"]  # the CLI shows the first value of an enum
    return out


#: The JSON types of the schema keywords the CLI reads.
_PROPERTY_TYPES: dict[str, type] = {"enum": list, "items": dict}


def _error_of(body: Any) -> ErrorBody:
    """An error answer as the client reads it; an empty one when the body is not a JSON object."""
    return read_or_none(body, ErrorBody) or ErrorBody()
