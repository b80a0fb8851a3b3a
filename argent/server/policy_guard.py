"""The checks of the server's policy, in the order a request meets them (after the Host check):

1. ``origin_guard``: a request from a foreign web origin is refused (403), in every mode;
2. auth: the server's one bearer token, or with named tokens the token the caller sent (it names
   the call's guard ``token:<name>``);
3. ``call_guard``: a tool call's body must be ``application/json`` (415: a web page cannot send
   that cross-site without the browser asking first, so no page drives the tool-server, also
   without auth); a tool the caller's token may not call is refused with the guard's fixed
   sentence before the body is read (403 ``TOOL_NOT_ALLOWED``); a token over its concurrent calls
   gets 429 with ``Retry-After``, and other tokens are not affected.
"""

from __future__ import annotations

import json
import time
import weakref

import attrs
from aiohttp import web
from aiohttp.typedefs import Middleware
from yarl import URL

from argent.errors import BODY_NOT_JSON, ORIGIN_REFUSED, TOO_MANY_CALLS
from argent.limits import RETRY_AFTER_SECONDS, TOOL_LISTING_CACHE_SECONDS
from argent.link.codec import to_wire
from argent.link.models import Disabled, ToolEntry, ToolListing
from argent.server.config import ServerConfig
from argent.server.guards import UNAUTHORIZED, Check, Handler, bearer_check, host_check, json_error
from argent.server.keys import ACTIVITY, CONFIG, REGISTRY
from argent.server.policy import TokenRule
from argent.tools.call_policy import CallPolicy

#: The named token a request came with (absent: the server's one token, or no auth).
TOKEN_RULE = web.RequestKey("argent_token_rule", TokenRule)


FOREIGN_ORIGIN = (
    'Refusing a request from the web origin "{origin}": a page in a browser may not drive the tool-server. '
    "Call it from the argent CLI, an MCP adapter or a script (they send no Origin header)."
)
NOT_JSON = (
    "POST {path} takes a JSON object of tool arguments: send it with Content-Type: application/json "
    '(got "{got}").'
)
OVER_LIMIT = (
    "{who} already runs {limit} call{s} at once, the most this tool-server allows "
    "(limits.concurrent_calls_per_token). Retry when one of them has finished."
)

TOOL_CALL_PREFIX = "/tools/"


#: The request's ``CallPolicy``, made on first use: its guard, its call and its tool share one.
_CALL_POLICY = web.RequestKey("argent_call_policy", CallPolicy)


def call_policy(request: web.Request) -> CallPolicy:
    """The rules of this request's calls: the server's policy for the token it came with (one
    object per request, so what its file reads share stays within the call)."""
    policy = request.get(_CALL_POLICY)
    if policy is None:
        policy = request[_CALL_POLICY] = request.app[CONFIG].policy.for_token(request.get(TOKEN_RULE))
    return policy


def listed_tools(request: web.Request) -> list[ToolEntry]:
    """GET /tools for this caller: a tool its token may not call stays listed, disabled with what it needs."""
    policy = call_policy(request)
    entries = request.app[REGISTRY].entries()
    for index, entry in enumerate(entries):
        reason = policy.disabled_reason(entry.name)
        if reason and entry.disabled is None:
            entries[index] = attrs.evolve(entry, disabled=Disabled(reason))
    return entries


#: The GET /tools bodies of each app, by token name: (until when, the tool names, the body).
_LISTINGS: weakref.WeakKeyDictionary[
    web.Application, dict[str | None, tuple[float, tuple[str, ...], bytes]]
] = weakref.WeakKeyDictionary()


def listing_body(request: web.Request) -> bytes:
    """The JSON body of GET /tools for this caller, kept for TOOL_LISTING_CACHE_SECONDS.

    Every client lists the tools before it calls one, and a listing costs milliseconds (each tool's
    entry, whether Chromium is installed, 13 KB of JSON): a crowd of clients would stall the loop.
    A tool registered meanwhile shows at once; a change of availability within the period."""
    rule = request.get(TOKEN_RULE)
    token = rule.name if rule is not None else None
    names = tuple(spec.name for spec in request.app[REGISTRY])
    now = time.monotonic()
    kept = _LISTINGS.setdefault(request.app, {})
    cached = kept.get(token)
    if cached is not None and cached[0] > now and cached[1] == names:
        return cached[2]
    body = json.dumps(to_wire(ToolListing(listed_tools(request)))).encode()
    kept[token] = (now + TOOL_LISTING_CACHE_SECONDS, names, body)
    return body


def _hostname(raw: str) -> str:
    return (raw[1 : raw.index("]")] if raw.startswith("[") and "]" in raw else raw.split(":", 1)[0]).lower()


def _same_origin(origin: str, request: web.Request, allowed: frozenset[str] | None) -> bool:
    if origin.strip() == "null":
        return False
    try:
        url = URL(origin)
        host, port = (url.host or "").lower(), url.explicit_port
    except ValueError:
        return False
    raw_host = request.headers.get("Host", "")
    accepted = allowed if allowed is not None else {_hostname(raw_host)}
    if not host or host not in accepted:
        return False
    if port is None:
        return True  # a default-port page: the front (nginx) the request came through
    tail = raw_host.rsplit("]", 1)[-1]
    return ":" in tail and tail.rsplit(":", 1)[1] == str(port)


def origin_check(config: ServerConfig) -> Check:
    """Refuse a request from a foreign web origin (403 JSON), in every mode.

    An Origin is foreign unless its host is one the server accepts as Host (loopback and the bind
    host, or, bound to a wildcard, the host the request itself names) and an explicit port in it is
    the port the request was sent to: a page on another port of this machine is another origin.
    ``Origin: null`` is foreign, and so is a request with two Origin headers."""
    allowed = config.allowed_hosts

    def check(request: web.Request) -> web.StreamResponse | None:
        origins = request.headers.getall("Origin", [])
        if origins and (len(origins) > 1 or not _same_origin(origins[0], request, allowed)):
            shown = ", ".join(origins)[:200]
            return json_error(403, FOREIGN_ORIGIN.format(origin=shown), error_code=ORIGIN_REFUSED)
        return None

    return check


def named_token_check(config: ServerConfig) -> Check:
    """``Authorization: Bearer <token>`` of one of the named tokens; the request carries its rule."""
    policy = config.policy

    def check(request: web.Request) -> web.StreamResponse | None:
        if request.path == "/healthz":
            return None
        header = request.headers.get("Authorization", "")
        given = header[len("Bearer ") :].strip() if header.startswith("Bearer ") else ""
        rule = policy.match(given) if given else None
        if rule is None:
            return json_error(401, UNAUTHORIZED)
        request[TOKEN_RULE] = rule
        return None

    return check


class _CallGate:
    """A tool call: a JSON body, the guard of the caller's token, then its concurrent calls; nothing
    runs when one refuses."""

    def __init__(self, config: ServerConfig) -> None:
        self.limit = config.policy.concurrent_calls_per_token
        self.running: dict[str, int] = {}

    def enter(self, request: web.Request) -> web.StreamResponse | str:
        """A refusal, or the key of the caller's running calls (counted until ``leave``)."""
        if request.content_type != "application/json":
            got = request.headers.get("Content-Type", "none")[:100]
            return json_error(415, NOT_JSON.format(path=request.path, got=got), error_code=BODY_NOT_JSON)
        name = request.match_info.get("name")
        if name is not None and request.app[REGISTRY].find(name) is not None:
            refusal = call_policy(request).tool_refusal(name)
            if refusal is not None:
                return web.json_response(refusal.to_wire(), status=refusal.status)
        rule = request.get(TOKEN_RULE)
        key = rule.name if rule is not None else ""
        limit = self.limit
        if self.running.get(key, 0) >= limit:
            who = f'Token "{rule.name}"' if rule is not None else "This token"
            response = json_error(
                429,
                OVER_LIMIT.format(who=who, limit=limit, s="" if limit == 1 else "s"),
                error_code=TOO_MANY_CALLS,
            )
            response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        self.running[key] = self.running.get(key, 0) + 1
        return key

    def leave(self, key: str) -> None:
        self.running[key] -= 1
        if not self.running[key]:
            del self.running[key]


def front_guard(config: ServerConfig) -> Middleware:
    """Every check a request meets before its handler, in one middleware (one layer per check cost
    a coroutine and a partial per request): the Host check, then the policy's, in the order of the
    module docstring; a request that passes counts as activity (but ``/healthz``)."""
    auth = named_token_check(config) if config.policy.tokens else bearer_check(config.token)
    checks = tuple(check for check in (host_check(config), origin_check(config), auth) if check is not None)
    gate = _CallGate(config)

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        for check in checks:
            refusal = check(request)
            if refusal is not None:
                return refusal
        key: str | None = None
        if request.method == "POST" and request.path.startswith(TOOL_CALL_PREFIX):
            entered = gate.enter(request)
            if not isinstance(entered, str):
                return entered
            key = entered
        try:
            if request.path == "/healthz":
                return await handler(request)
            activity = request.app[ACTIVITY]
            activity.busy += 1
            try:
                return await handler(request)
            finally:
                activity.busy -= 1
                activity.last = time.monotonic()
        finally:
            if key is not None:
                gate.leave(key)

    return guard
