"""JSON errors for everything (a middleware), the Host-header check and bearer auth (checks the
front guard of ``argent.server.policy_guard`` runs)."""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from argent.errors import ArgentError, ServerStorageError
from argent.link.codec import to_wire
from argent.link.models import ErrorBody
from argent.server.body import BodyReadInterrupted
from argent.server.config import LOOPBACK_HOSTS, ServerConfig
from argent.server.connections import GuardedRequestHandler
from argent.server.keys import CONFIG
from argent.utils.oserrors import DISK_ERRNOS

log = logging.getLogger("argent.server")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


UNAUTHORIZED = (
    "Missing or invalid Authorization header. Tool-server requires `Authorization: Bearer <token>` where "
    "<token> is the token `argent server start` printed (argent link argent://<token>@<host>:<port>)."
)
PUBLIC_PATHS = frozenset({"/healthz"})


def json_error(status: int, message: str, *, error_code: str | None = None) -> web.Response:
    return web.json_response(to_wire(ErrorBody(message, error_code)), status=status)


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure answers JSON: never aiohttp's HTML pages, never a traceback."""
    try:
        return await handler(request)
    except ArgentError as exc:
        return web.json_response(exc.to_wire(), status=exc.status)
    except BodyReadInterrupted as exc:
        # A stalled body, or shutdown: answer and close now rather than wait for the rest of the body.
        if isinstance(request.protocol, GuardedRequestHandler):
            request.protocol.close_after_response()
        response = json_error(exc.status, exc.message)
        response.force_close()
        return response
    except web.HTTPRequestEntityTooLarge:
        return json_error(
            413,
            f"Request body is larger than the {request.app[CONFIG].max_body_bytes}-byte limit of the tool-server. "
            "Send large files through POST /upload.",
        )
    except web.HTTPException as exc:
        if exc.status == 404:
            return json_error(404, f"No route {request.method} {request.path} on the tool-server.")
        if exc.status == 405:
            refused = json_error(405, f"{request.method} is not allowed on {request.path}.")
            if "Allow" in exc.headers:  # the methods the path takes (RFC 9110 requires it with a 405)
                refused.headers["Allow"] = exc.headers["Allow"]
            return refused
        if exc.empty_body or exc.status < 400:
            raise
        return json_error(exc.status, exc.reason)
    except asyncio.CancelledError:
        # aiohttp cancels the handler of a client that hung up (handler_cancellation): nobody to answer.
        if request.transport is None or request.transport.is_closing():
            log.debug("client closed the connection during %s %s", request.method, request.path)
        raise
    except ConnectionResetError:
        if request.transport is None or request.transport.is_closing():
            # The client went away mid-request (a dropped upload): nobody to answer, nothing to log.
            log.debug("client closed the connection during %s %s", request.method, request.path)
            return json_error(400, "The client closed the connection before the request finished.")
        log.exception("unexpected error on %s %s", request.method, request.path)
        return json_error(500, "Internal error in the tool-server; its log has the details.")
    except OSError as exc:
        if exc.errno in DISK_ERRNOS:  # a careless host: a full or read-only temp dir, wherever it struck
            log.warning("disk refused a write during %s %s: %s", request.method, request.path, exc)
            return web.json_response(
                ServerStorageError.refused(exc, "write", "the call did not run").to_wire(), status=507
            )
        log.exception("unexpected error on %s %s", request.method, request.path)
        return json_error(500, "Internal error in the tool-server; its log has the details.")
    except Exception:
        log.exception("unexpected error on %s %s", request.method, request.path)
        return json_error(500, "Internal error in the tool-server; its log has the details.")


#: A check of the request's headers before its handler: a refusal to answer with, or None.
Check = Callable[[web.Request], web.StreamResponse | None]


def host_check(config: ServerConfig) -> Check | None:
    """Refuse Host headers other than loopback and the bind host (DNS-rebinding defence); None when
    every Host is accepted."""
    allowed = config.allowed_hosts
    if allowed is None:
        return None
    bind_note = "" if config.host in LOOPBACK_HOSTS else f" and its bind host ({config.host})"

    def check(request: web.Request) -> web.StreamResponse | None:
        raw = request.headers.get("Host")
        if not raw:
            return json_error(400, "Missing Host header")
        hostname = raw[1 : raw.index("]")] if raw.startswith("[") and "]" in raw else raw.split(":", 1)[0]
        if hostname.lower() not in allowed:
            shown = raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            return json_error(
                403,
                f'Refusing request with Host "{shown}". The tool-server accepts loopback hostnames '
                f"(127.0.0.1, localhost, ::1){bind_note} to defend against DNS-rebinding. If you are reaching "
                "this from your own client, use one of those instead of a public hostname.",
            )
        return None

    return check


def bearer_check(token: str | None) -> Check | None:
    """Require `Authorization: Bearer <token>` (constant-time compare) on every route but /healthz;
    None without a token."""
    if not token:
        return None
    expected = token.encode()

    def check(request: web.Request) -> web.StreamResponse | None:
        if request.path in PUBLIC_PATHS:
            return None
        header = request.headers.get("Authorization", "")
        # aiohttp keeps undecodable header bytes as surrogates: compare the bytes the client sent.
        given = (
            header[len("Bearer ") :].strip().encode("utf-8", "surrogateescape")
            if header.startswith("Bearer ")
            else b""
        )
        if not given or not hmac.compare_digest(given, expected):
            return json_error(401, UNAUTHORIZED)
        return None

    return check
