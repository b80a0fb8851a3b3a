"""What a Firefox device records from its BiDi events: network requests and console calls, into the
engine-neutral rings of ``argent.devices.web.recorders`` (``network.*`` and ``log.entryAdded``)."""

from __future__ import annotations

import json
import time
from typing import Any

from argent import limits
from argent.devices.firefox.values import python_value
from argent.devices.web.recorders import (
    ConsoleRing,
    NetworkRing,
    add_headers,
    cut,
    iso,
    join_message,
    source_path,
)

#: A request's ``destination`` (or, for none, its initiator's type) as the resource type the network
#: tools show (the names Chromium gives them).
RESOURCE_TYPES = {
    "document": "Document",
    "iframe": "Document",
    "frame": "Document",
    "script": "Script",
    "style": "Stylesheet",
    "image": "Image",
    "font": "Font",
    "audio": "Media",
    "video": "Media",
    "track": "Media",
    "manifest": "Manifest",
    "fetch": "Fetch",
    "xmlhttprequest": "XHR",
    "beacon": "Ping",
    "websocket": "WebSocket",
    "eventsource": "EventSource",
}
#: The resource types whose requests live as long as the page (they never hold it busy).
LONG_LIVED = frozenset({"EventSource", "WebSocket", "Media", "Ping"})


def _headers(value: Any) -> dict[str, str]:
    """BiDi's header list (``[{name, value: {type, value}}]``) as a mapping (repeated names joined)."""
    out: dict[str, str] = {}
    for header in value if isinstance(value, list) else []:
        if not isinstance(header, dict) or not isinstance(header.get("name"), str):
            continue
        raw = header.get("value")
        text = raw.get("value") if isinstance(raw, dict) else raw
        if isinstance(text, str):
            name = header["name"]
            out[name] = f"{out[name]}, {text}" if name in out else text
    return out


def resource_type(request: dict[str, Any]) -> str | None:
    destination = request.get("destination")
    initiator = request.get("initiatorType")
    for key in (destination, initiator):
        if isinstance(key, str) and key in RESOURCE_TYPES:
            return RESOURCE_TYPES[key]
    return None


def request_id(params: dict[str, Any]) -> str | None:
    request = params.get("request")
    rid = request.get("request") if isinstance(request, dict) else None
    return rid if isinstance(rid, str) else None


class NetworkLog(NetworkRing):
    """The ring of a Firefox device, fed the browser's ``network`` events."""

    def sent(self, params: dict[str, Any]) -> None:
        rid = request_id(params)
        if rid is None or self.dropped_lately(rid):
            return
        request = params["request"]
        rec = self.record(rid)
        rec.method = str(request.get("method") or rec.method)
        rec.url = cut(request.get("url") or rec.url, limits.MAX_NETWORK_URL_CHARS)
        add_headers(rec.request_headers, _headers(request.get("headers")))
        rec.resource_type = resource_type(request) or rec.resource_type
        initiator = params.get("initiator")
        if isinstance(initiator, dict) and isinstance(initiator.get("type"), str):
            rec.initiator = {"type": initiator["type"]}
        stamp = params.get("timestamp")
        if isinstance(stamp, int | float):
            rec.start_ts = float(stamp) / 1000.0
            rec.started = iso(rec.start_ts)
        elif not rec.started:
            rec.started = iso(time.time())

    def completed(self, params: dict[str, Any]) -> None:
        rid = request_id(params)
        response = params.get("response")
        if rid is None or self.dropped_lately(rid) or not isinstance(response, dict):
            return
        rec = self.record(rid)
        status = response.get("status")
        rec.status = int(status) if isinstance(status, int | float) else None
        rec.status_text = str(response.get("statusText") or "")
        rec.mime_type = str(response.get("mimeType") or "").split(";")[0].strip()
        add_headers(rec.response_headers, _headers(response.get("headers")))
        rec.from_cache = response.get("fromCache") is True
        size = response.get("bytesReceived")
        rec.encoded_data_length = float(size) if isinstance(size, int | float) else None
        self._ended(rec.request_id, params)

    def failed(self, params: dict[str, Any]) -> None:
        rid = request_id(params)
        rec = self.get(rid) if rid is not None else None
        if rec is None:
            return
        rec.failed = True
        rec.error_text = str(params.get("errorText") or "failed")
        self._ended(rec.request_id, params)

    def _ended(self, rid: str, params: dict[str, Any]) -> None:
        rec = self.get(rid)
        stamp = params.get("timestamp")
        if rec is not None and rec.start_ts and isinstance(stamp, int | float):
            rec.duration_ms = float(stamp) - rec.start_ts * 1000.0


def _console_value(arg: Any, most: int) -> str:
    """One console argument as text, at most ``most`` characters (a deep value is named, not encoded)."""
    value = python_value(arg)
    if isinstance(value, str):
        return value[:most]
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))[:most]
    except (RecursionError, ValueError, TypeError):
        return f"[{arg.get('type', 'object') if isinstance(arg, dict) else 'object'}]"


class ConsoleLog(ConsoleRing):
    """The console ring of a Firefox device, fed ``log.entryAdded`` (its console API calls)."""

    def entry(self, params: dict[str, Any]) -> None:
        if params.get("type") != "console":
            return
        args = params.get("args") if isinstance(params.get("args"), list) else None
        message = (
            join_message(args, _console_value)
            if args is not None
            else cut(params.get("text") or "", limits.MAX_CONSOLE_MESSAGE_CHARS)
        )
        stamp = params.get("timestamp")
        seconds = float(stamp) / 1000.0 if isinstance(stamp, int | float) else time.time()
        trace = params.get("stackTrace")
        frames = trace.get("callFrames") if isinstance(trace, dict) else None
        top = frames[0] if isinstance(frames, list) and frames and isinstance(frames[0], dict) else {}
        line = top.get("lineNumber") if isinstance(top.get("lineNumber"), int) else None
        method = params.get("method")
        level = method if isinstance(method, str) and method else str(params.get("level") or "log")
        self.add(level, message, seconds, source_path(str(top.get("url") or "")), line)
