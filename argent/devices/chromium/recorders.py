"""What a Chromium device records from its page's CDP events: network requests and console calls.

Both outlive a tab switch (``attach`` subscribes them to the new page session) and both are bounded
rings, so a busy page never grows the tool-server's memory: the web tools read them
(``view-network-logs``, ``debugger-log-registry``).
"""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from attrs import define, field

from argent import limits
from argent.devices.chromium.cdp import CdpSession

Off = Callable[[], None]


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _cut(text: Any, most: int) -> str:
    value = str(text)
    return value if len(value) <= most else value[:most]


def _add_headers(into: dict[str, str], value: Any) -> None:
    """Merge a page's headers into a record, at most ``MAX_NETWORK_HEADERS`` of them, each cut."""
    if not isinstance(value, dict):
        return
    most = limits.MAX_NETWORK_HEADER_CHARS
    size = sum(len(k) + len(v) for k, v in into.items())
    for k, v in value.items():
        name, text = _cut(k, most), _cut(v, most)
        grown = len(name) + len(text) - (len(name) + len(into[name]) if name in into else 0)
        if name not in into and len(into) >= limits.MAX_NETWORK_HEADERS:
            continue
        if size + grown > limits.MAX_NETWORK_HEADERS_CHARS:
            continue
        into[name] = text
        size += grown


def _initiator(value: dict[str, Any]) -> dict[str, Any]:
    """What started a request, its stack cut to ``MAX_NETWORK_INITIATOR_FRAMES`` frames, without the
    chain of async parent stacks (a page can make that as long as it likes)."""
    kept: dict[str, Any] = {
        k: v for k, v in value.items() if k != "stack" and isinstance(v, str | int | float | bool)
    }
    stack = value.get("stack")
    frames = stack.get("callFrames") if isinstance(stack, dict) else None
    if isinstance(frames, list):
        cut = [
            {k: v for k, v in f.items() if isinstance(v, str | int | float) and k in _FRAME_KEYS}
            for f in frames[: limits.MAX_NETWORK_INITIATOR_FRAMES]
            if isinstance(f, dict)
        ]
        kept["stack"] = {"callFrames": cut}
    return kept


_FRAME_KEYS = ("functionName", "scriptId", "url", "lineNumber", "columnNumber")


def _body(text: str) -> str:
    most = limits.MAX_NETWORK_BODY_CHARS
    if len(text) <= most:
        return text
    return f"[TRUNCATED — original size: {len(text)} chars]\n{text[:most]}..."


@define
class NetworkRecord:
    """One request as upstream's Chromium network recording keeps it."""

    request_id: str
    method: str = ""
    url: str = ""
    resource_type: str | None = None
    status: int | None = None
    status_text: str | None = None
    mime_type: str | None = None
    request_headers: dict[str, str] = field(factory=dict)
    response_headers: dict[str, str] = field(factory=dict)
    post_data: str | None = None
    initiator: dict[str, Any] | None = None
    started: str = ""
    start_ts: float = 0.0
    duration_ms: float | None = None
    from_cache: bool | None = None
    encoded_data_length: float | None = None
    failed: bool = False
    error_text: str | None = None

    @property
    def state(self) -> str:
        return "failed" if self.failed else "complete" if self.status is not None else "pending"


class NetworkLog:
    """The last ``limits.MAX_NETWORK_RECORDS`` requests of a device's pages, oldest first."""

    def __init__(self, capacity: int = limits.MAX_NETWORK_RECORDS) -> None:
        self.capacity = capacity
        self._records: OrderedDict[str, NetworkRecord] = OrderedDict()
        #: Ids dropped from the ring lately: their late events (a response) must not bring them back empty.
        self._dropped: OrderedDict[str, None] = OrderedDict()
        self._off: list[Off] = []

    def attach(self, session: CdpSession) -> None:
        """Follow ``session``'s Network events (the device's current page) from now on; the
        device enables the domain, once per session (``ChromiumDevice._prime``)."""
        self.detach()
        handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "Network.requestWillBeSent": self._sent,
            "Network.responseReceived": self._response,
            "Network.requestWillBeSentExtraInfo": self._sent_extra,
            "Network.responseReceivedExtraInfo": self._response_extra,
            "Network.loadingFinished": self._finished,
            "Network.loadingFailed": self._failed,
        }
        self._off = [session.on(method, handler) for method, handler in handlers.items()]

    def detach(self) -> None:
        for off in self._off:
            off()
        self._off = []

    def records(self) -> list[NetworkRecord]:
        return list(self._records.values())

    def get(self, request_id: str) -> NetworkRecord | None:
        return self._records.get(request_id)

    def _record(self, params: dict[str, Any]) -> NetworkRecord:
        rid = str(params.get("requestId", ""))
        rec = self._records.get(rid)
        if rec is None:
            rec = self._records[rid] = NetworkRecord(rid)
            while len(self._records) > self.capacity:
                dropped, _ = self._records.popitem(last=False)
                self._dropped[dropped] = None
            while len(self._dropped) > self.capacity:
                self._dropped.popitem(last=False)
        return rec

    def _dropped_lately(self, params: dict[str, Any]) -> bool:
        return str(params.get("requestId", "")) in self._dropped

    def _sent(self, params: dict[str, Any]) -> None:
        if self._dropped_lately(params):
            return
        rec = self._record(params)
        request = params.get("request") if isinstance(params.get("request"), dict) else {}
        assert isinstance(request, dict)
        rec.method = str(request.get("method") or rec.method)
        rec.url = _cut(request.get("url") or rec.url, limits.MAX_NETWORK_URL_CHARS)
        _add_headers(rec.request_headers, request.get("headers"))
        if isinstance(request.get("postData"), str):
            rec.post_data = _body(request["postData"])
        rec.resource_type = str(params.get("type") or rec.resource_type or "") or None
        if isinstance(params.get("initiator"), dict):
            rec.initiator = _initiator(params["initiator"])
        if isinstance(params.get("timestamp"), int | float):
            rec.start_ts = float(params["timestamp"])
        wall = params.get("wallTime")
        rec.started = _iso(float(wall)) if isinstance(wall, int | float) else rec.started or _iso(time.time())

    def _response(self, params: dict[str, Any]) -> None:
        if self._dropped_lately(params):
            return
        rec = self._record(params)
        response = params.get("response") if isinstance(params.get("response"), dict) else {}
        assert isinstance(response, dict)
        status = response.get("status")
        rec.status = int(status) if isinstance(status, int | float) else None
        rec.status_text = str(response.get("statusText") or "")
        rec.mime_type = str(response.get("mimeType") or "")
        _add_headers(rec.response_headers, response.get("headers"))
        rec.from_cache = bool(response.get("fromDiskCache"))
        rec.resource_type = str(params.get("type") or rec.resource_type or "") or None

    def _sent_extra(self, params: dict[str, Any]) -> None:
        if isinstance(params.get("headers"), dict) and not self._dropped_lately(params):
            _add_headers(self._record(params).request_headers, params["headers"])

    def _response_extra(self, params: dict[str, Any]) -> None:
        if isinstance(params.get("headers"), dict) and not self._dropped_lately(params):
            _add_headers(self._record(params).response_headers, params["headers"])

    def _finished(self, params: dict[str, Any]) -> None:
        rec = self._records.get(str(params.get("requestId", "")))
        if rec is None:
            return
        length = params.get("encodedDataLength")
        rec.encoded_data_length = float(length) if isinstance(length, int | float) else None
        stamp = params.get("timestamp")
        if rec.start_ts and isinstance(stamp, int | float):
            rec.duration_ms = (float(stamp) - rec.start_ts) * 1000.0

    def _failed(self, params: dict[str, Any]) -> None:
        rec = self._records.get(str(params.get("requestId", "")))
        if rec is None:
            return
        rec.failed = True
        rec.error_text = str(params.get("errorText") or "failed")
        rec.resource_type = str(params.get("type") or rec.resource_type or "") or None


@define
class ConsoleEntry:
    id: int
    timestamp: str
    level: str
    message: str
    source: str


@define
class Cluster:
    message: str
    count: int
    level: str
    first_id: int
    last_id: int
    source_file: str | None
    source_line: int | None


SOURCE_EXT = re.compile(r"\.(tsx?|jsx?|mjs|cjs)$")


def source_path(url: str) -> str | None:
    """A script's path as upstream names a log line's source (none for pages and inline scripts)."""
    try:
        path = urlsplit(url).path.lstrip("/")
    except ValueError:
        return None
    return path if SOURCE_EXT.search(path) else None


def _console_value(arg: Any, most: int) -> str:
    """One console argument as text, at most ``most`` characters (a deep value is named, not encoded)."""
    if not isinstance(arg, dict):
        return _cut(arg, most) if isinstance(arg, str | int | float | bool) or arg is None else "[unknown]"
    if "value" in arg:
        value = arg["value"]
        if isinstance(value, str):
            return value[:most]
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))[:most]
        except (RecursionError, ValueError, TypeError):
            return f"[{arg.get('type', 'object')}]"
    if arg.get("description"):
        return _cut(arg["description"], most)
    return f"[{_cut(arg.get('type', 'unknown'), 40)}]"


def _console_message(args: list[Any]) -> str:
    """The console call's arguments joined by spaces, cut at ``MAX_CONSOLE_MESSAGE_CHARS`` as they are
    read (a page's 50 one-megabyte strings are never joined whole)."""
    most = limits.MAX_CONSOLE_MESSAGE_CHARS
    parts: list[str] = []
    size = 0
    for arg in args:
        if size >= most:
            break
        part = _console_value(arg, most - size)
        parts.append(part)
        size += len(part) + 1
    return " ".join(parts)[:most]


class ConsoleLog:
    """Console API calls of a device's pages: the last ``limits.MAX_CONSOLE_LOG_ENTRIES`` entries,
    counts by level over all of them, and messages grouped by their first 80 characters."""

    def __init__(self, capacity: int = limits.MAX_CONSOLE_LOG_ENTRIES) -> None:
        self.capacity = capacity
        self.entries: list[ConsoleEntry] = []
        self.total = 0
        self.by_level: dict[str, int] = {}
        self.clusters: dict[str, Cluster] = {}
        self._off: Off | None = None

    async def attach(self, session: CdpSession) -> None:
        self.detach()
        self._off = session.on("Runtime.consoleAPICalled", self._called)
        await session.send("Runtime.enable")

    def detach(self) -> None:
        if self._off is not None:
            self._off()
            self._off = None

    def _called(self, params: dict[str, Any]) -> None:
        args = params.get("args") if isinstance(params.get("args"), list) else []
        assert isinstance(args, list)
        message = _console_message(args)
        level = _cut(params.get("type") or "log", 40)
        stamp = params.get("timestamp")
        seconds = float(stamp) / 1000.0 if isinstance(stamp, int | float) else time.time()
        frames = (
            (params.get("stackTrace") or {}).get("callFrames")
            if isinstance(params.get("stackTrace"), dict)
            else None
        )
        top = frames[0] if isinstance(frames, list) and frames and isinstance(frames[0], dict) else {}
        source_file = source_path(str(top.get("url") or ""))
        line = top.get("lineNumber") if isinstance(top.get("lineNumber"), int) else None
        entry_id = self.total
        self.total += 1
        self.by_level[level] = self.by_level.get(level, 0) + 1
        source = f"{source_file}:{line}" if source_file and line is not None else "-"
        self.entries.append(ConsoleEntry(entry_id, _iso(seconds), level, message, source))
        if len(self.entries) > self.capacity:
            del self.entries[: len(self.entries) - self.capacity]
        self._cluster(entry_id, level, message, source_file, line)

    def _cluster(
        self, entry_id: int, level: str, message: str, source_file: str | None, line: int | None
    ) -> None:
        key = message[:80]
        found = self.clusters.get(key)
        if found is not None:
            found.count += 1
            found.last_id = entry_id
        elif len(self.clusters) < limits.MAX_CONSOLE_CLUSTERS:
            self.clusters[key] = Cluster(message[:200], 1, level, entry_id, entry_id, source_file, line)


def log_lines(entries: list[ConsoleEntry]) -> str:
    """Console entries in upstream's log-file format, one a line."""
    return "".join(
        f"[L:{e.id}] {e.timestamp} {e.level.upper():<5} {e.source} | {e.message.replace(chr(10), ' ')}\n"
        for e in entries
    )
