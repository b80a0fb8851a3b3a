"""The connection layer: aiohttp's HTTP protocol with the limits a shared server needs.

aiohttp closes idle kept-alive connections (``keepalive_timeout``) but gives a client all the time
it wants to send its headers, accepts connections without bound, answers parser errors in plain
text and, on shutdown, waits for a handler still reading a stalled body. ``GuardedRequestHandler``
adds a header-read deadline, a cap on open connections and JSON for the parser's errors;
``GuardedServer`` builds it for every connection and interrupts body reads when shutdown starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import resource
from http import HTTPStatus
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler

from argent.limits import (
    ENTRY_RENDER_CHARS,
    FD_RESERVE,
    MAX_HEADER_FIELD_BYTES,
    MAX_REQUEST_HEADERS,
    MAX_REQUEST_LINE_BYTES,
)
from argent.link.codec import to_wire
from argent.link.models import ErrorBody
from argent.server.body import ServerStopping
from argent.server.config import ServerConfig

log = logging.getLogger("argent.server")

HEADERS_TOO_SLOW = (
    "The request headers did not arrive within {seconds:g}s; the tool-server closed the connection."
)
TOO_MANY_CONNECTIONS = (
    "The tool-server holds its limit of {limit} open connections; retry shortly, and reuse connections."
)
TARGET_TOO_LONG = "The request target is longer than the {limit} bytes the tool-server accepts."
HEADER_TOO_LONG = "A request header is longer than the {limit} bytes the tool-server accepts."
TOO_MANY_HEADERS = "The request has more headers than the {limit} the tool-server accepts."
MALFORMED = "Malformed HTTP request: {reason}. Send a well-formed HTTP/1.1 request."
INTERNAL = "Internal error in the tool-server; its log has the details."

#: At most one log line per this many seconds while connections are refused at the cap.
REFUSAL_LOG_INTERVAL_SECONDS = 60.0
#: How a request target starts (origin-, absolute- or asterisk-form), after the method when it is included.
_TARGET = re.compile(rb"(?:[A-Z]+ )?(?:/|\*|https?://)")


def raw_json_response(status: int, message: str, **headers: str) -> bytes:
    """A complete HTTP/1.1 JSON answer that closes the connection, written straight to a transport."""
    body = json.dumps(to_wire(ErrorBody(message))).encode()
    lines = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "Content-Type: application/json; charset=utf-8",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return "\r\n".join(lines).encode() + b"\r\n\r\n" + body


def describe_parse_error(exc: BaseException | None, *, max_headers: int) -> tuple[int, str]:
    """The status and message for a request aiohttp's parser refused."""
    if isinstance(exc, LineTooLong):
        line, limit = exc.args[0], exc.args[1]
        snippet = (
            bytes(line) if isinstance(line, (bytes, bytearray)) else str(line).encode("latin-1", "replace")
        )
        if _TARGET.match(snippet):
            return 414, TARGET_TOO_LONG.format(limit=limit)
        return 431, HEADER_TOO_LONG.format(limit=limit)
    if isinstance(exc, HttpProcessingError):
        reason = (exc.message or HTTPStatus.BAD_REQUEST.phrase).strip().splitlines()[0].rstrip(":.")
        if reason == "Too many headers received":
            return 431, TOO_MANY_HEADERS.format(limit=max_headers)
        status = exc.code if 400 <= exc.code < 500 else 400
        return status, MALFORMED.format(reason=reason[:ENTRY_RENDER_CHARS])
    return 400, MALFORMED.format(reason=HTTPStatus.BAD_REQUEST.phrase)


class GuardedRequestHandler(RequestHandler):
    """One connection: aiohttp's protocol plus a header-read deadline, the connection cap and JSON errors.

    The header deadline runs from the connection opening until the first request's headers are
    parsed, and on a kept-alive connection from the first byte of each later request (idle time
    between requests is the keep-alive timeout's business)."""

    __slots__ = ("_config", "_header_deadline", "_refused")

    def __init__(self, manager: GuardedServer, *, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._config = config
        self._header_deadline: asyncio.TimerHandle | None = None
        self._refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        manager = self._manager
        assert isinstance(manager, GuardedServer)
        if manager.open_connections >= manager.max_connections:
            # Refused before aiohttp takes it on: no task, not counted, one write and a close.
            self._refused = True
            manager.note_refusal()
            assert isinstance(transport, asyncio.WriteTransport)
            transport.write(manager.refusal)
            transport.close()
            return
        super().connection_made(transport)
        self._arm_header_deadline()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._disarm_header_deadline()
        if not self._refused:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        starts = self._header_deadline is None and bool(data) and self._waiting_for_request()
        super().data_received(data)
        if self._messages:
            self._disarm_header_deadline()
        elif starts and self.transport is not None:
            # Armed once these bytes are parsed (the same instant): headers that came whole need none.
            self._arm_header_deadline()

    def _waiting_for_request(self) -> bool:
        """True while no request is being handled: bytes arriving now start the next request."""
        return self._waiter is not None and not self._waiter.done()

    def _arm_header_deadline(self) -> None:
        self._header_deadline = self._loop.call_later(
            self._config.header_timeout_seconds, self._headers_too_slow
        )

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.transport is None or self._messages or self._request_in_progress:
            return
        message = HEADERS_TOO_SLOW.format(seconds=self._config.header_timeout_seconds)
        self.transport.write(raw_json_response(408, message))
        self.force_close()

    def interrupt_body_read(self) -> None:
        """On shutdown: a handler still waiting for body bytes gets ServerStopping instead of waiting."""
        request = self._current_request
        if request is not None and not request.content.is_eof():
            request.content.set_exception(ServerStopping())
            self._lingering_time = 0.0  # the rest of that body is never read

    def close_after_response(self) -> None:
        """Close right after the answer, without lingering to read the rest of an abandoned body."""
        self._lingering_time = 0.0
        self.close()

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """aiohttp's error answers (parser errors, an exception past every middleware) as JSON."""
        if request.writer.output_size > 0:
            raise ConnectionError(
                "Response is sent already, cannot send another response with the error message"
            )
        if status >= 500:
            log.error("error handling a request from %s", request.remote, exc_info=exc)
            text = INTERNAL
        else:
            status, text = describe_parse_error(exc, max_headers=self.max_headers)
            log.debug("refused a malformed request from %s: %s", request.remote, exc)
        response = web.json_response(to_wire(ErrorBody(text)), status=status)
        response.force_close()
        return response


class GuardedServer(web.Server):
    """aiohttp's low-level server, making a ``GuardedRequestHandler`` for every connection."""

    def __init__(self, made: web.Server, config: ServerConfig, max_connections: int) -> None:
        super().__init__(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            **made._kwargs,
        )
        self.config = config
        self.max_connections = max_connections
        self._refusal_logged_at = -REFUSAL_LOG_INTERVAL_SECONDS
        self.refusal = raw_json_response(
            503, TOO_MANY_CONNECTIONS.format(limit=max_connections), **{"Retry-After": "1"}
        )

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    def note_refusal(self) -> None:
        """Tell the operator the cap is reached, at most once a minute however many are refused."""
        now = self._loop.time()
        if now - self._refusal_logged_at >= REFUSAL_LOG_INTERVAL_SECONDS:
            self._refusal_logged_at = now
            log.warning(
                "refusing new connections: %d are open, the limit of this tool-server", self.max_connections
            )

    def __call__(self) -> RequestHandler:
        return GuardedRequestHandler(self, config=self.config, loop=self._loop, **self._kwargs)

    def pre_shutdown(self) -> None:
        """Stop accepting requests on every connection and end the body reads still waiting for a client."""
        super().pre_shutdown()
        for handler in self._connections:
            if isinstance(handler, GuardedRequestHandler):
                handler.interrupt_body_read()


class GuardedAppRunner(web.AppRunner):
    """An AppRunner whose server is a ``GuardedServer``, with the keep-alive timeout of the config."""

    def __init__(self, app: web.Application, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(
            app,
            keepalive_timeout=config.keepalive_timeout_seconds,
            max_line_size=MAX_REQUEST_LINE_BYTES,
            max_field_size=MAX_HEADER_FIELD_BYTES,
            max_headers=MAX_REQUEST_HEADERS,
            **kwargs,
        )
        self.config = config

    async def _make_server(self) -> web.Server:
        made = await super()._make_server()
        return GuardedServer(made, self.config, fit_connections_to_fd_limit(self.config.max_connections))


def fit_connections_to_fd_limit(wanted: int) -> int:
    """Raise the soft file-descriptor limit so ``wanted`` connections fit; else lower the cap to what fits.

    Out of descriptors, asyncio stops accepting for a second at a time (everyone waits);
    a cap below the limit refuses only the surplus."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = wanted + FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    if soft == resource.RLIM_INFINITY or soft >= need:
        return wanted
    fitted = max(soft // 2, soft - FD_RESERVE)
    log.warning(
        "only %d file descriptors are available; the tool-server holds at most %d connections (not %d)",
        soft,
        fitted,
        wanted,
    )
    return fitted
