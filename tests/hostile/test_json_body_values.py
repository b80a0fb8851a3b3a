"""A tool call whose JSON body is small in bytes and huge in values, against a real `argent server start`.

`json.loads` of a 14 MB object of a million keys holds the GIL for seconds (on or off the event loop); it
stalled `/healthz` for 6 s. Such a body is refused (400 JSON, naming the limit) before it is parsed.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from argent.limits import MAX_BODY_JSON_VALUES
from tests.hostile.conftest import HEALTHZ_WITHIN_SECONDS, Probe

pytestmark = pytest.mark.e2e


def probe_while(probe: Probe, done: threading.Event) -> list[float]:
    """/healthz times, polled until ``done``."""
    times: list[float] = []

    def poll() -> None:
        while not done.is_set():
            times.append(probe.healthz_seconds())
            time.sleep(0.02)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    return times


@pytest.mark.parametrize(
    "body",
    [
        {f"k{i}": 0 for i in range(1_000_000)},
        {"udid": "x", "steps": [{}] * 2_000_000},
        {"udid": "x", "steps": [{"tool": "a"}], "text": "," * (MAX_BODY_JSON_VALUES + 1)},
    ],
    ids=["a-million-keys", "two-million-items", "separators-in-a-string"],
)
def test_a_body_of_too_many_json_values_is_refused_before_it_is_parsed(
    hostile_server: Probe, body: object
) -> None:
    raw = json.dumps(body).encode()
    done = threading.Event()
    times = probe_while(hostile_server, done)
    t0 = time.monotonic()
    # Encoded beforehand: encoding a million keys while posting would hold this process's GIL, and with it
    # the /healthz probe thread, for seconds.
    status, answer = hostile_server.post("run-sequence", raw, timeout=60)
    took = time.monotonic() - t0
    done.set()
    assert status == 400, answer
    assert answer["error"].startswith(f"Request body holds more than {MAX_BODY_JSON_VALUES:,} JSON values"), (
        answer
    )
    assert took < 5, f"the refusal of {len(raw):,} bytes took {took:.2f}s"
    assert max(times, default=0.0) < HEALTHZ_WITHIN_SECONDS, times
    hostile_server.assert_still_fine()


def test_a_body_under_the_cap_is_parsed_as_before(hostile_server: Probe) -> None:
    status, answer = hostile_server.call("list-devices", {"udid": "x"})
    assert status == 400 and "udid" in answer["error"], answer
