"""The network and console recordings of a Chromium device, fed the CDP events Chromium sends
(in the orders it sends them), and the text the network tools render from them."""

from __future__ import annotations

import pytest

from argent.devices.chromium.recorders import ConsoleLog, NetworkLog, log_lines
from argent.errors import InvalidToolInputError
from argent.tools.web.common import metro_port
from argent.tools.web.network import entry_line, format_bytes, page_index, redact, render_page


def sent(rid: str, url: str = "http://127.0.0.1/a", method: str = "GET") -> dict[str, object]:
    return {
        "requestId": rid,
        "request": {"url": url, "method": method, "headers": {"Accept": "*/*"}},
        "type": "Fetch",
        "timestamp": 10.0,
        "wallTime": 1_700_000_000.0,
    }


def test_extra_info_before_the_request_merges_headers() -> None:
    log = NetworkLog()
    log._sent_extra({"requestId": "1", "headers": {"Authorization": "Bearer x"}})
    log._sent(sent("1"))
    log._response(
        {"requestId": "1", "response": {"status": 200, "statusText": "OK", "mimeType": "text/plain"}}
    )
    log._finished({"requestId": "1", "timestamp": 10.25, "encodedDataLength": 1536})
    (rec,) = log.records()
    assert rec.request_headers == {"Authorization": "Bearer x", "Accept": "*/*"}
    assert rec.state == "complete" and rec.duration_ms == 250.0 and rec.started == "2023-11-14T22:13:20.000Z"
    assert entry_line(rec) == '{id: 1} "GET /a" 200 OK Fetch 1.5 KB 250 ms'


def test_a_failed_and_a_pending_request() -> None:
    log = NetworkLog()
    log._sent(sent("1", "http://example.test/"))
    log._failed({"requestId": "1", "errorText": "net::ERR_CONNECTION_REFUSED"})
    log._sent(sent("2", "http://example.test/slow", "POST"))
    failed, pending = log.records()
    assert entry_line(failed) == '{id: 1} "GET example.test" net::ERR_CONNECTION_REFUSED Fetch'
    assert entry_line(pending) == '{id: 2} "POST /slow" pending Fetch'


def test_the_ring_drops_the_oldest_and_ignores_their_late_events() -> None:
    log = NetworkLog(capacity=3)
    for i in range(5):
        log._sent(sent(str(i)))
    log._response({"requestId": "0", "response": {"status": 200}})
    log._response_extra({"requestId": "1", "headers": {"a": "b"}})
    assert [r.request_id for r in log.records()] == ["2", "3", "4"]
    assert log.get("0") is None


def test_pages_of_fifty() -> None:
    log = NetworkLog()
    for i in range(120):
        log._sent(sent(str(i)))
    text = render_page(log.records(), None)
    assert text.startswith("=== NETWORK LOGS (page 3/3, 120 total) ===\n\n{id: 100} ")
    assert render_page(log.records(), 0).count("\n") == 51
    assert (
        render_page(log.records(), 3)
        == "Page index out of range. Valid range: 0-2 (3 pages, 120 total requests)."
    )
    assert render_page([], None).startswith("No network traffic captured.")


def test_argument_forms_upstream_coerces() -> None:
    assert page_index("latest") is None and page_index("2") == 2 and page_index(0) == 0
    for bad in (-1, 1.5, "x", True, None):
        with pytest.raises(InvalidToolInputError):
            page_index(bad)
    assert metro_port(None) is None and metro_port("8081") == 8081
    for bad in (0, 70000, "x", False):
        with pytest.raises(InvalidToolInputError):
            metro_port(bad)


def test_sizes_and_redaction() -> None:
    assert [format_bytes(n) for n in (512, 1024, 1536, 1433.6 * 1024**2)] == [
        "512 B",
        "1 KB",
        "1.5 KB",
        "1.4 GB",
    ]
    assert redact({"X-Api-Key": "k", "Set-Cookie": "c", "Content-Type": "t"}) == {
        "X-Api-Key": "[REDACTED]",
        "Set-Cookie": "[REDACTED]",
        "Content-Type": "t",
    }


def test_console_entries_counts_and_clusters() -> None:
    log = ConsoleLog(capacity=2)
    frame = {"callFrames": [{"url": "http://h/static/app.js", "lineNumber": 7}]}
    log._called(
        {"type": "log", "args": [{"type": "string", "value": "hi"}, {"type": "object", "value": {"n": 1}}]}
    )
    log._called(
        {"type": "error", "args": [{"type": "object", "description": "Error: x"}], "stackTrace": frame}
    )
    log._called({"type": "error", "args": [{"type": "object", "description": "Error: x"}], "timestamp": 0})
    assert log.total == 3 and log.by_level == {"log": 1, "error": 2}
    assert [e.id for e in log.entries] == [1, 2]
    assert log.clusters["Error: x"].count == 2 and log.clusters["Error: x"].source_file == "static/app.js"
    assert log.clusters['hi {"n":1}'].level == "log"
    lines = log_lines(log.entries).splitlines()
    assert (
        lines[0].endswith("ERROR static/app.js:7 | Error: x")
        and lines[1] == "[L:2] 1970-01-01T00:00:00.000Z ERROR - | Error: x"
    )
