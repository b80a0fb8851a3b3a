"""Soak: 200 busy clients and every hostile call of this suite at once, on one real server (issue 10, "Done when").

One `argent server start` on loopback. The hostile calls of the other tests here start first — a
`run:` fan-out, a flow of 100k top-level keys, a gzip-bomb member, connections trickling their
headers, a stalled upload, a 100k-deep JSON body, a non-UTF-8 Authorization — and once the fan-out
reports its first step, 200 normal clients (the real client class, as the CLI uses it over a link)
each stream a 20-echo flow at once. Every normal call must pass with its 20 steps in order, every
hostile call must get its own refusal, `/healthz` must answer within a second throughout, and the
server's temp dir must hold nothing afterwards. Bounded: about a minute, loopback only, fixed counts.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from attrs import define

from argent.client.session import ToolServerClient
from argent.limits import BODY_IDLE_TIMEOUT_SECONDS, HEADER_READ_TIMEOUT_SECONDS, MAX_YAML_MAPPING_KEYS
from tests.hostile.conftest import HEALTHZ_WITHIN_SECONDS, Probe
from tests.hostile.hostile_server import MEMBER_PATH, post_upload
from tests.hostile.test_hostile_http import (
    answer_in,
    connect,
    exchange,
    request,
    seconds_until_closed,
    trickle,
)
from tests.hostile.test_hostile_parse import flow_call
from tests.hostile.test_hostile_runs import FanOutClient
from tests.hostile.test_hostile_uploads import FILE_LIMIT, GIB, declared_bomb, member_call

pytestmark = pytest.mark.e2e

NORMAL_CALLS = 200
ECHOES = 20
TRICKLERS = 20
#: "bounded ... under 2 minutes" (issue 10, "Done when").
SOAK_WITHIN_SECONDS = 120.0
#: How long a connection that trickles its headers or stalls its upload may be held.
HELD_AT_MOST_SECONDS = max(HEADER_READ_TIMEOUT_SECONDS, BODY_IDLE_TIMEOUT_SECONDS) + 5


def write_echo_flow(project: Path) -> None:
    flows = project / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / "echo20.yaml").write_text("steps:\n" + "".join(f"  - echo: step {i}\n" for i in range(ECHOES)))


#: A client of its own (a process apart from the 200, so their work never delays its probes) that times
#: `/healthz` until its stdin closes. One line per probe: when it started (CLOCK_MONOTONIC, shared by every
#: process) and the seconds it took, or "inf" for no answer within 5 s.
WATCH = """
import json, sys, threading, time, urllib.request
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
while not done.is_set():
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(sys.argv[1] + "/healthz", timeout=5) as resp:
            assert json.loads(resp.read())["ok"] is True
        took = time.monotonic() - t0
    except Exception:
        took = float("inf")
    print(t0, took, flush=True)
    done.wait(0.05)  # pacing the probes, not synchronising with anything
"""


@define
class HealthzWatch:
    """Times `/healthz` again and again, from a process of its own, until stopped."""

    url: str
    _proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", WATCH, self.url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def stop(self) -> list[tuple[float, float]]:
        """Every probe: (when it started, seconds it took)."""
        assert self._proc is not None
        out, _ = self._proc.communicate(timeout=30)
        return [(float(start), float(took)) for start, took in (line.split() for line in out.splitlines())]


async def normal_call(probe: Probe, index: int) -> None:
    """One busy client: the real client streams a 20-echo flow over the link; every step passes in order."""
    progress: list[dict[str, Any]] = []
    args = {"project_root": str(probe.project), "name": "echo20", "prerequisiteAcknowledged": True}
    async with ToolServerClient(probe.url, probe.token, linked=True, notice=lambda _: None) as client:
        result = await client.call("flow-execute", args, on_progress=progress.append)
    expected = [("echo", "pass", f"step {i}") for i in range(ECHOES)]
    assert [(s["kind"], s["status"], s.get("message")) for s in progress] == expected, f"client {index}"
    assert result["ok"] is True, f"client {index}: {result}"
    assert [(s["kind"], s["status"], s.get("message")) for s in result["steps"]] == expected, (
        f"client {index}"
    )


# --------------------------------------------------------------------------------------------
# The hostile calls, each asserting its own refusal


async def fan_out(client: FanOutClient) -> None:
    code, out, err = await asyncio.to_thread(client.finish, SOAK_WITHIN_SECONDS)
    assert code == 1, out[-2000:] + err
    assert "step limit reached" in out and "MAX_STEPS_PER_CALL" in out


async def keys_100k(probe: Probe) -> None:
    text = "steps:\n  - echo: hi\n" + "".join(f"k{i:07d}: {i:08d}\n" for i in range(100_000))
    status, body = await asyncio.to_thread(probe.call, "flow-execute", flow_call(text.encode()), timeout=60)
    assert (status, body["error_code"]) == (500, "FLOW_FILE_INVALID")
    assert f"a mapping with more than {MAX_YAML_MAPPING_KEYS} keys" in body["error"]


async def gzip_bomb(probe: Probe) -> None:
    data = declared_bomb()
    upload_id = await asyncio.to_thread(post_upload, probe, data)
    status, body = await asyncio.to_thread(probe.call, "flow-execute", member_call(upload_id, data))
    assert (status, body["error"]) == (
        422,
        f'Member "{MEMBER_PATH}" is {GIB} bytes — exceeds the {FILE_LIMIT}-byte limit on one file.',
    )


async def trickling_headers(probe: Probe) -> None:
    async def one() -> None:
        reader, writer = await connect(probe.url)
        sender = asyncio.create_task(
            trickle(writer, b"GET /tools HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 0.5)
        )
        try:
            took, _ = await seconds_until_closed(reader, HELD_AT_MOST_SECONDS)
        finally:
            sender.cancel()
            writer.close()
        assert took < HEADER_READ_TIMEOUT_SECONDS + 5

    await asyncio.gather(*(one() for _ in range(TRICKLERS)))


async def stalled_upload(probe: Probe) -> None:
    reader, writer = await connect(probe.url)
    writer.write(
        request("POST", "/upload", headers=probe.auth(), length=10_000_000, close=False) + b"x" * 65536
    )
    await writer.drain()
    took, received = await seconds_until_closed(reader, HELD_AT_MOST_SECONDS)
    writer.close()
    answer = answer_in(received)
    assert answer.status == 408 and "stalled" in answer.json()["error"]
    assert took < BODY_IDLE_TIMEOUT_SECONDS + 5


async def deep_json(probe: Probe) -> None:
    headers = {**probe.auth(), "Content-Type": "application/json"}
    answer = await exchange(
        probe.url, request("POST", "/tools/flow-execute", headers=headers, body=b"[" * 100_000)
    )
    assert answer.status == 400 and "nest" in answer.json()["error"]


async def non_utf8_authorization(probe: Probe) -> None:
    raw = request("GET", "/tools", raw_headers=b"Authorization: Bearer \xff\xfe\r\n")
    answer = await exchange(probe.url, raw)
    assert answer.status == 401 and "Authorization" in answer.json()["error"]


# --------------------------------------------------------------------------------------------


async def test_200_busy_clients_all_pass_among_every_hostile_call(hostile_server: Probe) -> None:
    probe = hostile_server
    write_echo_flow(probe.project)
    watch = HealthzWatch(probe.url)
    watch.start()
    t0 = time.monotonic()
    try:
        fan_out_client = FanOutClient(probe)
        hostile = asyncio.gather(
            fan_out(fan_out_client),
            keys_100k(probe),
            gzip_bomb(probe),
            trickling_headers(probe),
            stalled_upload(probe),
            deep_json(probe),
            non_utf8_authorization(probe),
        )
        await asyncio.to_thread(fan_out_client.wait_started)  # the fan-out runs: the server is busy
        normal = await asyncio.gather(
            *(normal_call(probe, i) for i in range(NORMAL_CALLS)), return_exceptions=True
        )
        await hostile
    finally:
        probes = watch.stop()
    took = time.monotonic() - t0
    failed = [f"{i}: {outcome!r}" for i, outcome in enumerate(normal) if outcome is not None]
    assert not failed, f"{len(failed)} of {NORMAL_CALLS} normal calls failed: {failed[:5]}"
    slow = [
        (round(start - t0, 1), round(seconds, 2))
        for start, seconds in probes
        if seconds >= HEALTHZ_WITHIN_SECONDS
    ]
    assert not slow, f"/healthz took over {HEALTHZ_WITHIN_SECONDS:g}s (at s into the soak, seconds): {slow}"
    assert len(probes) > 20
    assert took < SOAK_WITHIN_SECONDS, f"the soak took {took:.0f}s"
    await asyncio.to_thread(probe.assert_still_fine)
