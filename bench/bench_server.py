"""Tool-server benchmarks against real server processes, each a ratio measured side by side.

    .venv/bin/python bench/bench_server.py [--upload-mib 256] [--memory-mib 512] [--calls 200]

1. `POST /upload` throughput of `argent server start` vs a bare aiohttp handler that only reads and
   discards the same body (target >= 0.6x), and vs a bare handler that writes the body to a file in
   the same temp directory (what storing an upload costs on this disk);
2. the server's peak-RSS growth while it receives one large upload (target < 64 MiB for 512 MiB);
3. N concurrent streamed flow-execute calls of a 20-step echo flow: all must succeed; p50/p99
   latency reported against one call alone, and the throughput (calls/s) against one call at a time
   (target: 3x the 70-95 calls/s of issue 12, measured on the same machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
from common import cpu_seconds, report, rss_kib

CHUNK = b"\x00" * (1024 * 1024)

BARE_SERVER = """
import sys
from aiohttp import web

async def upload(request):
    async for _ in request.content.iter_chunked(1 << 20):
        pass
    return web.json_response({"uploadId": "bare"})

async def upload_to_disk(request):
    import os, tempfile
    fd, path = tempfile.mkstemp(prefix="bare-upload-")
    with os.fdopen(fd, "wb", buffering=0) as fh:
        async for chunk in request.content.iter_chunked(1 << 20):
            fh.write(chunk)
    os.remove(path)
    return web.json_response({"uploadId": "bare"})

app = web.Application(client_max_size=1 << 40)
app.router.add_post("/upload", upload)
app.router.add_post("/disk/upload", upload_to_disk)
print("ready", flush=True)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None)
"""


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_argent(tmp: str, concurrent: int | None = None) -> tuple[subprocess.Popen[str], str]:
    """``concurrent``: the calls the one token may run at once (a --config limit over the default)."""
    env = {**os.environ, "TMPDIR": tmp}
    extra: list[str] = []
    if concurrent is not None:
        config = Path(tmp) / "argent-server.yaml"
        config.write_text(f"limits:\n  concurrent_calls_per_token: {concurrent}\n")
        extra = ["--config", str(config)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "argent", "server", "start", "--port", "0", "--no-auth", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line and extra and proc.wait() != 0:
        # A server from before --config had no per-token limit on concurrent calls.
        return start_argent(tmp)
    return proc, line.removeprefix("Tools server listening on ")


def start_bare(tmp: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    env = {**os.environ, "TMPDIR": tmp}
    proc = subprocess.Popen(
        [sys.executable, "-c", BARE_SERVER, str(port)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    return proc, f"http://127.0.0.1:{port}"


async def body(mib: int) -> AsyncIterator[bytes]:
    for _ in range(mib):
        yield CHUNK


async def upload_seconds(url: str, mib: int) -> float:
    async with aiohttp.ClientSession() as session:
        t0 = time.perf_counter()
        headers = {"Content-Type": "application/gzip", "Content-Length": str(mib * len(CHUNK))}
        async with session.post(f"{url}/upload", data=body(mib), headers=headers) as resp:
            assert resp.status == 200, await resp.text()
            await resp.read()
        return time.perf_counter() - t0


async def bench_upload(mib: int, memory_mib: int, tmp_root: str | None, rounds: int = 3) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir=tmp_root) as tmp:
        ours, ours_url = start_argent(tmp)
        bare, bare_url = start_bare(tmp)
        try:
            await upload_seconds(ours_url, 8)  # warm both
            await upload_seconds(bare_url, 8)
            # Interleaved, so that all three see the same load of a shared machine.
            samples: dict[str, list[float]] = {"ours": [], "bare": [], "disk": []}
            cpu = 0.0
            for _ in range(rounds):
                cpu0 = cpu_seconds(ours.pid)
                samples["ours"].append(await upload_seconds(ours_url, mib))
                cpu += cpu_seconds(ours.pid) - cpu0
                samples["bare"].append(await upload_seconds(bare_url, mib))
                samples["disk"].append(await upload_seconds(bare_url + "/disk", mib))
            ours_s, bare_s, disk_s = (statistics.median(samples[k]) for k in ("ours", "bare", "disk"))
        finally:
            for proc in (ours, bare):
                proc.terminate()
                proc.wait(timeout=30)
        # On a fresh server: one that served the rounds above keeps some freed heap for its next
        # reads, which would count in "before" and hide that much of the growth.
        fresh, fresh_url = start_argent(tmp)
        try:
            await upload_seconds(fresh_url, 8)
            before = rss_kib(fresh.pid, "VmRSS")
            await upload_seconds(fresh_url, memory_mib)
            peak = rss_kib(fresh.pid, "VmHWM")
        finally:
            fresh.terminate()
            fresh.wait(timeout=30)
    return {
        "ours_mib_per_s": mib / ours_s,
        "bare_mib_per_s": mib / bare_s,
        "throughput_ratio": bare_s / ours_s,
        "bare_to_disk_mib_per_s": mib / disk_s,
        "ratio_vs_bare_to_disk": disk_s / ours_s,
        "peak_rss_growth_mib": (peak - before) / 1024,
        "server_cpu_ms_per_mib": cpu * 1000 / (rounds * mib),
    }


async def one_call(session: aiohttp.ClientSession, url: str, args: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    headers = {"Accept": "application/x-ndjson"}
    async with session.post(f"{url}/tools/flow-execute", json=args, headers=headers) as resp:
        assert resp.status == 200
        lines = (await resp.text()).splitlines()
    last = json.loads(lines[-1])
    assert last["event"] == "result" and last["data"]["ok"] and len(last["data"]["steps"]) == 20, last
    assert len(lines) == 21
    return time.perf_counter() - t0


async def bench_concurrent(calls: int, rounds: int = 3) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        flows = Path(tmp) / "proj" / ".argent" / "flows"
        flows.mkdir(parents=True)
        (flows / "echo20.yaml").write_text("steps:\n" + "".join(f"  - echo: step {i}\n" for i in range(20)))
        proc, url = start_argent(tmp, concurrent=calls)
        args = {"name": "echo20", "project_root": str(Path(tmp) / "proj")}
        try:
            conn = aiohttp.TCPConnector(limit=0)
            async with aiohttp.ClientSession(connector=conn) as session:
                singles = [await one_call(session, url, args) for _ in range(20)]
                single = statistics.median(singles[5:])
                walls = []
                latencies = []
                cpu0 = cpu_seconds(proc.pid)
                for _ in range(rounds):
                    t0 = time.perf_counter()
                    latencies += await asyncio.gather(*(one_call(session, url, args) for _ in range(calls)))
                    walls.append(time.perf_counter() - t0)
                wall = statistics.median(walls)
                cpu = cpu_seconds(proc.pid) - cpu0
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {
        "calls": calls,
        "succeeded": len(latencies) // rounds,
        "single_call_s": single,
        "p50_s": statistics.median(ordered),
        "p99_s": p99,
        "p99_over_single": p99 / single,
        "wall_s": wall,
        "calls_per_s": calls / wall,
        "single_calls_per_s": 1 / single,
        "throughput_over_single": calls / wall * single,
        "server_cpu_ms_per_call": cpu * 1000 / (calls * rounds),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    if "upload" in args.rows:
        results["upload"] = await bench_upload(args.upload_mib, args.memory_mib, args.tmp_root, args.rounds)
    if "concurrent" in args.rows:
        results["concurrent_flow_execute"] = await bench_concurrent(args.calls, args.rounds)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--upload-mib", type=int, default=256)
    parser.add_argument("--memory-mib", type=int, default=512)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument(
        "--rounds", type=int, default=3, help="Rounds of the uploads and of the concurrent calls (median)."
    )
    parser.add_argument(
        "--rows",
        type=lambda text: set(text.split(",")),
        default={"upload", "concurrent"},
        help="Comma-separated rows to run (default: upload,concurrent).",
    )
    parser.add_argument(
        "--tmp-root",
        help="Where both servers keep uploads (e.g. /dev/shm to take the disk out of the ratio).",
    )
    results = asyncio.run(main_async(parser.parse_args()))
    report("server", results)


if __name__ == "__main__":
    main()
