"""``view-network-logs`` and ``view-network-request-details``: the requests a browser device's pages
made, from its recording (``WebPage.network``, a bounded ring the engine feeds from its protocol's
network events), as upstream's Chromium path renders them."""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any
from urllib.parse import urlsplit

from attrs import frozen

from argent import limits
from argent.devices.base import Capability, DeviceProvider
from argent.devices.web.page import WebPage
from argent.devices.web.recorders import NetworkRecord
from argent.errors import InvalidToolInputError
from argent.tools.args import arg
from argent.tools.registry import ToolContext, ToolSpec
from argent.tools.web.common import DEVICE_ID_DOC, PORT_DOC, metro_port, numeric, page_device, web_spec

ITEMS_PER_PAGE = 50
SENSITIVE_HEADER_PARTS = ("auth", "cookie", "token", "secret", "key", "session", "credential", "password")
NO_TRAFFIC = (
    "No network traffic captured. Recording is active on the active tab — navigate or reload the page to "
    "populate it (requests made before the device was attached are not captured)."
)


@frozen
class NetworkLogsArgs:
    device_id: str = arg(doc=DEVICE_ID_DOC)
    port: Any = arg(None, doc=PORT_DOC)
    page_index: Any = arg(
        "latest",
        wire="pageIndex",
        doc='Page index (0-based) or "latest" for the most recent page. Each page contains up to 50 entries.',
    )


@frozen
class NetworkRequestArgs:
    device_id: str = arg(doc=DEVICE_ID_DOC)
    request_id: str = arg(
        wire="requestId", doc="The requestId from view-network-logs to get full details for"
    )
    port: Any = arg(None, doc=PORT_DOC)
    include_body: Any = arg(
        True,
        wire="includeBody",
        doc="Whether to include the response body (if captured). Defaults to true.",
    )


def page_index(value: Any) -> int | None:
    """Upstream's ``pageIndex``: "latest" (None here), or a whole number ≥ 0 (a numeric string too)."""
    if value == "latest":
        return None
    number = numeric(value)
    if number is None or number != int(number) or number < 0:
        raise InvalidToolInputError(f'pageIndex: must be a whole number ≥ 0 or "latest", got {value!r}.')
    return int(number)


def format_bytes(size: float) -> str:
    """Base-1024 with one decimal, as the ``bytes`` package prints it (``1.4 KB``)."""
    for unit, scale in (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if abs(size) >= scale:
            return f"{round(size / scale, 1):g} {unit}"
    return f"{round(size):g} B"


def entry_line(rec: NetworkRecord) -> str:
    try:
        parts = urlsplit(rec.url)
        name = (parts.hostname or rec.url) if parts.path in ("", "/") else parts.path
    except ValueError:
        name = rec.url
    if rec.failed:
        status = rec.error_text or "failed"
    elif rec.status is not None:
        status = f"{rec.status} {rec.status_text or ''}"
    else:
        status = "pending"
    size = format_bytes(rec.encoded_data_length) if rec.encoded_data_length is not None else ""
    duration = f"{round(rec.duration_ms)} ms" if rec.duration_ms is not None else ""
    line = f'{{id: {rec.request_id}}} "{rec.method} {name}" {status} '
    return f"{line}{rec.resource_type or ''} {size} {duration}".strip()


def render_page(records: list[NetworkRecord], index: int | None) -> str:
    total = len(records)
    if total == 0:
        return NO_TRAFFIC
    pages = math.ceil(total / ITEMS_PER_PAGE)
    chosen = pages - 1 if index is None else index
    if chosen >= pages:
        return f"Page index out of range. Valid range: 0-{pages - 1} ({pages} pages, {total} total requests)."
    start = chosen * ITEMS_PER_PAGE
    lines = [entry_line(rec) for rec in records[start : start + ITEMS_PER_PAGE]]
    return f"=== NETWORK LOGS (page {chosen + 1}/{pages}, {total} total) ===\n\n" + "\n".join(lines)


def redact(headers: dict[str, str]) -> dict[str, str]:
    return {
        k: "[REDACTED]" if any(part in k.lower() for part in SENSITIVE_HEADER_PARTS) else v
        for k, v in headers.items()
    }


async def response_body(device: WebPage, rec: NetworkRecord) -> str | None:
    """The body the browser still holds for the request (None once evicted or never had), truncated."""
    held = await device.response_body(rec.request_id)
    if held is None:
        return None
    body, encoded = held
    if encoded:
        try:
            body = base64.b64decode(body).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError):
            return None
    limit = limits.MAX_NETWORK_BODY_CHARS
    if len(body) > limit:
        return (
            f"[TRUNCATED — original size: {len(body)} chars, MIME: {rec.mime_type or ''}]\n{body[:limit]}..."
        )
    return body


async def request_details(device: WebPage, rec: NetworkRecord, include_body: bool) -> dict[str, Any]:
    details: dict[str, Any] = {"requestId": rec.request_id, "state": rec.state}
    optional = {
        "resourceType": rec.resource_type,
        "durationMs": round(rec.duration_ms) if rec.duration_ms is not None else None,
        "encodedDataLength": rec.encoded_data_length,
        "errorText": rec.error_text,
        "initiator": rec.initiator,
    }
    details.update({k: v for k, v in optional.items() if v is not None})
    if rec.url:
        request: dict[str, Any] = {
            "url": rec.url,
            "method": rec.method,
            "headers": redact(rec.request_headers),
        }
        if rec.post_data is not None:
            request["postData"] = rec.post_data
        details["request"] = request
    if rec.status is not None:
        response: dict[str, Any] = {
            "status": rec.status,
            "statusText": rec.status_text or "",
            "headers": redact(rec.response_headers),
            "mimeType": rec.mime_type or "",
        }
        if include_body:
            body = await response_body(device, rec)
            if body is not None:
                response["body"] = body
        details["response"] = response
    return details


def network_tools(devices: DeviceProvider) -> list[ToolSpec[Any]]:
    async def logs(args: NetworkLogsArgs, ctx: ToolContext) -> Any:
        metro_port(args.port)
        index = page_index(args.page_index)
        device = await page_device(devices, args.device_id, "view-network-logs", needs=Capability.EVENT_LOGS)
        return render_page(device.network.records(), index)

    async def details(args: NetworkRequestArgs, ctx: ToolContext) -> Any:
        metro_port(args.port)
        device = await page_device(
            devices, args.device_id, "view-network-request-details", needs=Capability.EVENT_LOGS
        )
        rec = device.network.get(args.request_id)
        if rec is None:
            return f"Request {args.request_id} not found. Use view-network-logs to list available requests."
        return await request_details(device, rec, bool(args.include_body))

    return [
        web_spec(
            "view-network-logs",
            "Retrieve the network (HTTP) requests a device's pages made: a paginated list with method, URL, status, "
            "resource type, size and duration, each with a requestId for view-network-request-details. On "
            "Chromium it reads the browser's CDP Network domain, on Firefox the WebDriver BiDi network events "
            f"(every request type; the last {limits.MAX_NETWORK_RECORDS} requests of the device's tabs).",
            NetworkLogsArgs,
            logs,
        ),
        web_spec(
            "view-network-request-details",
            "Full details of one request by its requestId (from view-network-logs): request/response headers "
            "(sensitive ones redacted), status, timing, and optionally the response body (truncated past "
            f"{limits.MAX_NETWORK_BODY_CHARS} characters). Returns a message string if the requestId is unknown.",
            NetworkRequestArgs,
            details,
        ),
    ]
