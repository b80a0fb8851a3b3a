"""What a Chromium device records from its page's CDP events: network requests and console calls,
into the engine-neutral rings of ``argent.devices.web.recorders``.

Both follow the device's current page session (``attach`` subscribes them to the new one on a tab
switch).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from argent import limits
from argent.devices.chromium.cdp import CdpSession
from argent.devices.web.recorders import (
    ConsoleRing,
    NetworkRecord,
    NetworkRing,
    add_headers,
    body_text,
    cut,
    initiator_of,
    iso,
    join_message,
    log_lines,
    source_path,
)

__all__ = ["ConsoleLog", "NetworkLog", "NetworkRecord", "log_lines"]

Off = Callable[[], None]


class NetworkLog(NetworkRing):
    """The ring of a Chromium device, fed its page sessions' CDP ``Network`` events."""

    def __init__(self, capacity: int = limits.MAX_NETWORK_RECORDS) -> None:
        super().__init__(capacity)
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

    def _record(self, params: dict[str, Any]) -> NetworkRecord:
        return self.record(str(params.get("requestId", "")))

    def _dropped_lately(self, params: dict[str, Any]) -> bool:
        return self.dropped_lately(str(params.get("requestId", "")))

    def _sent(self, params: dict[str, Any]) -> None:
        if self._dropped_lately(params):
            return
        rec = self._record(params)
        request = params.get("request") if isinstance(params.get("request"), dict) else {}
        assert isinstance(request, dict)
        rec.method = str(request.get("method") or rec.method)
        rec.url = cut(request.get("url") or rec.url, limits.MAX_NETWORK_URL_CHARS)
        add_headers(rec.request_headers, request.get("headers"))
        if isinstance(request.get("postData"), str):
            rec.post_data = body_text(request["postData"])
        rec.resource_type = str(params.get("type") or rec.resource_type or "") or None
        if isinstance(params.get("initiator"), dict):
            rec.initiator = initiator_of(params["initiator"])
        if isinstance(params.get("timestamp"), int | float):
            rec.start_ts = float(params["timestamp"])
        wall = params.get("wallTime")
        rec.started = iso(float(wall)) if isinstance(wall, int | float) else rec.started or iso(time.time())

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
        add_headers(rec.response_headers, response.get("headers"))
        rec.from_cache = bool(response.get("fromDiskCache"))
        rec.resource_type = str(params.get("type") or rec.resource_type or "") or None

    def _sent_extra(self, params: dict[str, Any]) -> None:
        if isinstance(params.get("headers"), dict) and not self._dropped_lately(params):
            add_headers(self._record(params).request_headers, params["headers"])

    def _response_extra(self, params: dict[str, Any]) -> None:
        if isinstance(params.get("headers"), dict) and not self._dropped_lately(params):
            add_headers(self._record(params).response_headers, params["headers"])

    def _finished(self, params: dict[str, Any]) -> None:
        rec = self.get(str(params.get("requestId", "")))
        if rec is None:
            return
        length = params.get("encodedDataLength")
        rec.encoded_data_length = float(length) if isinstance(length, int | float) else None
        stamp = params.get("timestamp")
        if rec.start_ts and isinstance(stamp, int | float):
            rec.duration_ms = (float(stamp) - rec.start_ts) * 1000.0

    def _failed(self, params: dict[str, Any]) -> None:
        rec = self.get(str(params.get("requestId", "")))
        if rec is None:
            return
        rec.failed = True
        rec.error_text = str(params.get("errorText") or "failed")
        rec.resource_type = str(params.get("type") or rec.resource_type or "") or None


def _console_value(arg: Any, most: int) -> str:
    """One console argument as text, at most ``most`` characters (a deep value is named, not encoded)."""
    if not isinstance(arg, dict):
        return cut(arg, most) if isinstance(arg, str | int | float | bool) or arg is None else "[unknown]"
    if "value" in arg:
        value = arg["value"]
        if isinstance(value, str):
            return value[:most]
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))[:most]
        except (RecursionError, ValueError, TypeError):
            return f"[{arg.get('type', 'object')}]"
    if arg.get("description"):
        return cut(arg["description"], most)
    return f"[{cut(arg.get('type', 'unknown'), 40)}]"


def _console_message(args: list[Any]) -> str:
    return join_message(args, _console_value)


class ConsoleLog(ConsoleRing):
    """The console ring of a Chromium device, fed its page sessions' ``Runtime.consoleAPICalled``."""

    def __init__(self, capacity: int = limits.MAX_CONSOLE_LOG_ENTRIES) -> None:
        super().__init__(capacity)
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
        self.add(str(params.get("type") or "log"), message, seconds, source_file, line)
