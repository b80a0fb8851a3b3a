"""`/healthz` under load: its p99 latency while 200 clients stream calls at once, as a ratio to idle.

    .venv/bin/python bench/bench_hostile.py [--calls 200] [--rounds 3]

One `argent server start` with its default limits (200 calls of one token fit). `/healthz` is probed
every 20 ms from this process, first with the server idle, then while a separate process runs
``--rounds`` rounds of ``--calls`` concurrent clients, each the real client class streaming a
20-echo flow over a link (members sent with the call), as `argent flow run` does. Every call must pass.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from common import report

#: Pacing of the probes (not a synchronisation: each probe waits for its answer).
PROBE_EVERY_SECONDS = 0.02
IDLE_PROBES = 250

CLIENTS = """
import asyncio, sys
from argent.client.session import ToolServerClient

url, project, calls, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
args = {"project_root": project, "name": "echo20", "prerequisiteAcknowledged": True}

async def one() -> None:
    steps = []
    async with ToolServerClient(url, None, linked=True, notice=lambda _: None) as client:
        result = await client.call("flow-execute", args, on_progress=steps.append)
    assert result["ok"] and len(result["steps"]) == 20 and len(steps) == 20, result

async def main() -> None:
    for _ in range(rounds):
        await asyncio.gather(*(one() for _ in range(calls)))

asyncio.run(main())
print("ok", flush=True)
"""


def start_argent(tmp: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "argent", "server", "start", "--port", "0", "--no-auth"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "TMPDIR": tmp},
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip().removeprefix("Tools server listening on ")


def healthz_seconds(url: str) -> float:
    t0 = time.perf_counter()
    with urllib.request.urlopen(f"{url}/healthz", timeout=30) as resp:
        resp.read()
    return time.perf_counter() - t0


def probe_until(url: str, done: threading.Event, limit: int | None = None) -> list[float]:
    samples: list[float] = []
    while not done.is_set() and (limit is None or len(samples) < limit):
        samples.append(healthz_seconds(url))
        done.wait(PROBE_EVERY_SECONDS)
    return samples


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def bench_healthz(calls: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        flows = project / ".argent" / "flows"
        flows.mkdir(parents=True)
        (flows / "echo20.yaml").write_text("steps:\n" + "".join(f"  - echo: step {i}\n" for i in range(20)))
        server, url = start_argent(tmp)
        try:
            for _ in range(20):  # warm
                healthz_seconds(url)
            idle = probe_until(url, threading.Event(), IDLE_PROBES)
            clients = subprocess.Popen(
                [sys.executable, "-c", CLIENTS, url, str(project), str(calls), str(rounds)],
                stdout=subprocess.PIPE,
                text=True,
            )
            done = threading.Event()
            waiter = threading.Thread(target=lambda: (clients.wait(), done.set()))
            t0 = time.perf_counter()
            waiter.start()
            busy = probe_until(url, done)
            waiter.join()
            wall = time.perf_counter() - t0
            assert clients.stdout is not None and clients.stdout.read() == "ok\n", "a call failed"
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {
        "calls": calls,
        "rounds": rounds,
        "calls_per_s": calls * rounds / wall,
        "idle_p50_ms": statistics.median(idle) * 1000,
        "idle_p99_ms": p99(idle) * 1000,
        "busy_probes": len(busy),
        "busy_p50_ms": statistics.median(busy) * 1000,
        "busy_p99_ms": p99(busy) * 1000,
        "busy_max_ms": max(busy) * 1000,
        "p99_ratio": p99(busy) / p99(idle),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    report("hostile", {f"healthz_p99_under_{args.calls}_calls": bench_healthz(args.calls, args.rounds)})


if __name__ == "__main__":
    main()
