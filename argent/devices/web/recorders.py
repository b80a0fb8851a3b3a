"""What a browser device records from its pages: network requests and console calls, as bounded rings.

Both outlive a tab switch and both are bounded, so a busy page never grows the tool-server's memory:
the web tools read them (``view-network-logs``, ``debugger-log-registry``). Each engine feeds them
from its own protocol's events (``argent.devices.chromium.recorders`` from CDP,
``argent.devices.firefox.recorders`` from WebDriver BiDi); what they keep and how it is cut is here.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from attrs import define, field

from argent import limits


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def cut(text: Any, most: int) -> str:
    value = str(text)
    return value if len(value) <= most else value[:most]


def add_headers(into: dict[str, str], value: Any) -> None:
    """Merge a page's headers (a name -> value mapping) into a record, at most ``MAX_NETWORK_HEADERS``
    of them, each cut."""
    if not isinstance(value, dict):
        return
    most = limits.MAX_NETWORK_HEADER_CHARS
    size = sum(len(k) + len(v) for k, v in into.items())
    for k, v in value.items():
        name, text = cut(k, most), cut(v, most)
        grown = len(name) + len(text) - (len(name) + len(into[name]) if name in into else 0)
        if name not in into and len(into) >= limits.MAX_NETWORK_HEADERS:
            continue
        if size + grown > limits.MAX_NETWORK_HEADERS_CHARS:
            continue
        into[name] = text
        size += grown


def initiator_of(value: dict[str, Any]) -> dict[str, Any]:
    """What started a request, its stack cut to ``MAX_NETWORK_INITIATOR_FRAMES`` frames, without the
    chain of async parent stacks (a page can make that as long as it likes)."""
    kept: dict[str, Any] = {
        k: v for k, v in value.items() if k != "stack" and isinstance(v, str | int | float | bool)
    }
    stack = value.get("stack")
    frames = stack.get("callFrames") if isinstance(stack, dict) else None
    if isinstance(frames, list):
        calls = [
            {k: v for k, v in f.items() if isinstance(v, str | int | float) and k in _FRAME_KEYS}
            for f in frames[: limits.MAX_NETWORK_INITIATOR_FRAMES]
            if isinstance(f, dict)
        ]
        kept["stack"] = {"callFrames": calls}
    return kept


_FRAME_KEYS = ("functionName", "scriptId", "url", "lineNumber", "columnNumber")


def body_text(text: str) -> str:
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


class NetworkRing:
    """The last ``limits.MAX_NETWORK_RECORDS`` requests of a device's pages, oldest first."""

    def __init__(self, capacity: int = limits.MAX_NETWORK_RECORDS) -> None:
        self.capacity = capacity
        self._records: OrderedDict[str, NetworkRecord] = OrderedDict()
        #: Ids dropped from the ring lately: their late events (a response) must not bring them back empty.
        self._dropped: OrderedDict[str, None] = OrderedDict()

    def records(self) -> list[NetworkRecord]:
        return list(self._records.values())

    def get(self, request_id: str) -> NetworkRecord | None:
        return self._records.get(request_id)

    def record(self, request_id: str) -> NetworkRecord:
        """The record of ``request_id``, made (and the oldest dropped past the capacity) when new."""
        rec = self._records.get(request_id)
        if rec is None:
            rec = self._records[request_id] = NetworkRecord(request_id)
            while len(self._records) > self.capacity:
                dropped, _ = self._records.popitem(last=False)
                self._dropped[dropped] = None
            while len(self._dropped) > self.capacity:
                self._dropped.popitem(last=False)
        return rec

    def dropped_lately(self, request_id: str) -> bool:
        return request_id in self._dropped


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


def join_message(args: list[Any], value: Callable[[Any, int], str]) -> str:
    """A console call's arguments joined by spaces, cut at ``MAX_CONSOLE_MESSAGE_CHARS`` as they are
    read (a page's 50 one-megabyte strings are never joined whole); ``value(arg, most)`` is the text
    of one argument in the engine's protocol, at most ``most`` characters."""
    most = limits.MAX_CONSOLE_MESSAGE_CHARS
    parts: list[str] = []
    size = 0
    for arg in args:
        if size >= most:
            break
        part = value(arg, most - size)
        parts.append(part)
        size += len(part) + 1
    return " ".join(parts)[:most]


class ConsoleRing:
    """Console API calls of a device's pages: the last ``limits.MAX_CONSOLE_LOG_ENTRIES`` entries,
    counts by level over all of them, and messages grouped by their first 80 characters."""

    def __init__(self, capacity: int = limits.MAX_CONSOLE_LOG_ENTRIES) -> None:
        self.capacity = capacity
        self.entries: list[ConsoleEntry] = []
        self.total = 0
        self.by_level: dict[str, int] = {}
        self.clusters: dict[str, Cluster] = {}

    def add(
        self, level: str, message: str, seconds: float, source_file: str | None, line: int | None
    ) -> None:
        """One console call: its level, its message (already cut), when, and the script line that made it."""
        level = cut(level or "log", 40)
        entry_id = self.total
        self.total += 1
        self.by_level[level] = self.by_level.get(level, 0) + 1
        source = f"{source_file}:{line}" if source_file and line is not None else "-"
        self.entries.append(ConsoleEntry(entry_id, iso(seconds), level, message, source))
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
