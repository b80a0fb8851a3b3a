"""A hostile review of the web tools' pure parts: the page a URL makes the browser read from this
host's disk, and the recorders' bounds against a hostile page's CDP events."""

from __future__ import annotations

from typing import Any

import pytest

from argent import limits
from argent.devices.chromium.recorders import ConsoleLog, NetworkLog
from argent.tools.call_policy import page_path


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "file:/etc/passwd",  # Chromium opens file:/x as file:///x
        "file:etc/passwd",
        "file://localhost/etc/passwd",
        "view-source:file:///etc/passwd",
        "VIEW-SOURCE: view-source:file:/etc/passwd",
        "fi\tle:///etc/passwd",  # tabs and newlines vanish from a URL (WHATWG)
        "file:///e\ntc/pas\rswd",
        " \x01file:///etc/passwd\x02 ",  # leading/trailing C0 controls and spaces are stripped
        "file:///etc/passwd?x=1#frag",
        "file:///etc/%70asswd",
        "file:\\\\\\etc\\passwd",  # backslashes are slashes in a file URL
    ],
)
def test_every_spelling_of_a_local_file_url_is_a_local_file(url: str) -> None:
    assert page_path(url, None) == "/etc/passwd"


@pytest.mark.parametrize(
    "url", ["https://example.com/", "data:text/html,hi", "about:blank", "http://x/file:/"]
)
def test_remote_pages_read_no_local_file(url: str) -> None:
    assert page_path(url, None) is None


def _sent(rid: str, **request: Any) -> dict[str, Any]:
    return {"requestId": rid, "request": {"method": "POST", "url": "http://x/", **request}, "timestamp": 1.0}


def test_a_request_record_holds_bounded_headers_and_post_data() -> None:
    log = NetworkLog()
    headers = {f"X-H{i}": "v" * 10_000 for i in range(5_000)}
    log._sent(_sent("1", headers=headers, postData="p" * 5_000_000))
    log._response_extra({"requestId": "1", "headers": headers})
    rec = log.get("1")
    assert rec is not None and rec.post_data is not None
    assert len(rec.post_data) <= limits.MAX_NETWORK_BODY_CHARS + 200
    assert len(rec.request_headers) <= limits.MAX_NETWORK_HEADERS
    assert len(rec.response_headers) <= limits.MAX_NETWORK_HEADERS
    assert all(len(v) <= limits.MAX_NETWORK_HEADER_CHARS for v in rec.request_headers.values())
    assert all(len(k) <= limits.MAX_NETWORK_HEADER_CHARS for k in rec.response_headers)
    assert len(rec.url) <= limits.MAX_NETWORK_URL_CHARS
    for side in (rec.request_headers, rec.response_headers):
        assert sum(len(k) + len(v) for k, v in side.items()) <= limits.MAX_NETWORK_HEADERS_CHARS


def test_a_requests_initiator_keeps_a_bounded_stack() -> None:
    log = NetworkLog()
    frame = {
        "functionName": "f" * 50,
        "url": "http://x/a.js",
        "lineNumber": 1,
        "columnNumber": 2,
        "scriptId": "9",
    }
    parent: Any = {"callFrames": [frame] * 500}
    for _ in range(1000):
        parent = {"callFrames": [frame] * 500, "parent": parent}
    log._sent({**_sent("1"), "initiator": {"type": "script", "stack": parent}})
    rec = log.get("1")
    assert rec is not None and rec.initiator is not None
    assert rec.initiator["type"] == "script" and "parent" not in rec.initiator["stack"]
    assert rec.initiator["stack"]["callFrames"] == [frame] * limits.MAX_NETWORK_INITIATOR_FRAMES


def test_a_console_call_with_huge_or_deep_values_stays_bounded() -> None:
    log = ConsoleLog()
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    log._called({"type": "log", "args": [{"type": "object", "value": deep}]})
    log._called({"type": "log", "args": [{"type": "string", "value": "x" * 1_000_000}] * 50})
    assert log.total == 2
    assert all(len(e.message) <= limits.MAX_CONSOLE_MESSAGE_CHARS for e in log.entries)


def test_a_relative_target_with_a_colon_is_a_path_beside_the_flow() -> None:
    """``resolve_launch_target`` opens ``x:../../etc/passwd`` as a path beside the flow: so is it checked."""
    assert page_path("x:../../etc/passwd", "/srv/flows") == "/srv/flows/x:../../etc/passwd"


class _Attached:
    """What debugger-log-registry reads of a device it did not boot (no profile of its own)."""

    def __init__(self) -> None:
        self.id, self.port, self.profile_dir, self.platform = "chromium-cdp-9", 9, None, "chromium"
        self.console = ConsoleLog()


async def test_the_console_log_file_of_an_attached_device_is_private(tmp_path: Any) -> None:
    """Another user of the host must not choose where the server writes page text: no predictable name
    in the shared temp directory (a planted symlink there would be followed)."""
    import os
    import stat
    import tempfile

    from argent.tools.web.debugger import log_registry

    device = _Attached()
    device.console._called({"type": "log", "args": [{"type": "string", "value": "hello"}]})
    victim = tmp_path / "victim"
    victim.write_text("keep")
    planted = os.path.join(tempfile.gettempdir(), f"argent-logs-9-{os.getpid()}.log")
    os.symlink(victim, planted)
    try:
        out = await log_registry(device)  # type: ignore[arg-type]
    finally:
        os.unlink(planted)
    assert victim.read_text() == "keep"
    parent = os.path.dirname(out["file"])
    assert parent != tempfile.gettempdir()
    assert stat.S_IMODE(os.stat(parent).st_mode) == 0o700 and os.stat(parent).st_uid == os.getuid()
    with open(out["file"], encoding="utf-8") as written:
        assert "hello" in written.read()
