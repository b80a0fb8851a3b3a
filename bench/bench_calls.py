"""One flow-execute call at a time against `argent server start`, each a ratio to a bare aiohttp server.

    .venv/bin/python bench/bench_calls.py [--calls 200] [--src base=/path/to/other/checkout]

Rows (calls interleaved round-robin across the servers, so all see the same machine load):

1. ``streamed_20_echo``: a streamed call (``Accept: application/x-ndjson``) of a 20-step echo flow,
   vs a bare aiohttp handler that streams 20 NDJSON progress lines and a result line of the same
   shape, one ``write`` per line (target <= 1.2x);
2. ``buffered_20_echo``: the same call answered as one JSON body, vs a bare handler answering the
   same body;
3. ``run_chain_10_deep``: a streamed call of a flow whose `run:` chain is 10 fragments deep (an echo
   and a `run:` per level), vs the bare streaming handler of (1);
4. ``streamed_20_echo_cli``: the call of (1) as our CLI sends it to a co-located server, the flow file
   wrapped as a file input (``__argentFileInput`` with its size and mtime), vs the same bare handler.

``--src NAME=DIR`` adds a server running the ``argent`` package found in ``DIR`` (another checkout, say
the base commit), measured in the same rounds; its rows are suffixed ``@NAME``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from bench_server import free_port
from common import add_src_option, cpu_seconds, report, sources_of, start_argent_no_auth

from argent.client.calls import prepare_file_inputs
from argent.tools.flow_tools import FLOW_FILE_INPUT, FLOW_PATH_INPUT

STEPS = 20
CHAIN_DEPTH = 10

BARE_SERVER = """
import json, sys
from aiohttp import web

STEPS = int(sys.argv[2])
steps = [
    {"index": i, "kind": "echo", "status": "pass", "flow": "echo20", "message": f"step {i}", "durationMs": 0.002}
    for i in range(STEPS)
]
result = {"flow": "echo20", "device": "", "ok": True, "passed": 0, "failed": 0, "skipped": 0, "errored": 0,
          "steps": steps}

def line(payload):
    return (json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\\n").encode()

async def call(request):
    await request.read()
    if "application/x-ndjson" not in request.headers.get("Accept", ""):
        return web.json_response({"data": result})
    response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
    await response.prepare(request)
    for step in steps:
        await response.write(line({"event": "progress", "data": step}))
    await response.write(line({"event": "result", "data": result}))
    await response.write_eof()
    return response

app = web.Application()
app.router.add_post("/tools/flow-execute", call)
print("ready", flush=True)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
"""


def start_bare() -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", BARE_SERVER, str(port), str(STEPS)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    return proc, f"http://127.0.0.1:{port}"


def write_project(root: Path) -> None:
    flows = root / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "echo20.yaml").write_text("steps:\n" + "".join(f"  - echo: step {i}\n" for i in range(STEPS)))
    (flows / "chain.yaml").write_text("steps:\n  - echo: root\n  - run: c1\n")
    for level in range(1, CHAIN_DEPTH + 1):
        inner = f"  - run: c{level + 1}\n" if level < CHAIN_DEPTH else ""
        (flows / f"c{level}.yaml").write_text(f"steps:\n  - echo: level {level}\n{inner}")


async def streamed(session: aiohttp.ClientSession, url: str, args: dict[str, Any]) -> None:
    headers = {"Accept": "application/x-ndjson"}
    async with session.post(f"{url}/tools/flow-execute", json=args, headers=headers) as resp:
        assert resp.status == 200, await resp.text()
        last = b""
        async for raw in resp.content:
            last = raw
    final = json.loads(last)
    assert final["event"] == "result" and final["data"]["ok"], final


async def buffered(session: aiohttp.ClientSession, url: str, args: dict[str, Any]) -> None:
    async with session.post(f"{url}/tools/flow-execute", json=args) as resp:
        assert resp.status == 200, await resp.text()
        body = await resp.json()
    assert body["data"]["ok"], body


Call = Callable[[aiohttp.ClientSession, str, dict[str, Any]], Awaitable[None]]


async def timed(call: Call, session: aiohttp.ClientSession, url: str, args: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    await call(session, url, args)
    return time.perf_counter() - t0


async def bench(calls: int, sources: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        write_project(root)
        bare, bare_url = start_bare()
        servers = {label: start_argent_no_auth(tmp, path) for label, path in sources.items()}
        echo = {"name": "echo20", "project_root": str(root)}
        cli = await prepare_file_inputs([FLOW_PATH_INPUT, FLOW_FILE_INPUT], echo, linked=False)
        chain = {"name": "chain", "project_root": str(root)}
        # (row, server process, url, call, args); the bare server answers every call with its 20 lines.
        cases: list[tuple[str, int, str, Call, dict[str, Any]]] = [
            ("bare_streamed", bare.pid, bare_url, streamed, {}),
            ("bare_buffered", bare.pid, bare_url, buffered, {}),
        ]
        for label, (proc, url) in servers.items():
            suffix = f"@{label}" if label else ""
            cases.append((f"streamed_20_echo{suffix}", proc.pid, url, streamed, echo))
            cases.append((f"buffered_20_echo{suffix}", proc.pid, url, buffered, echo))
            cases.append((f"run_chain_10_deep{suffix}", proc.pid, url, streamed, chain))
            cases.append((f"streamed_20_echo_cli{suffix}", proc.pid, url, streamed, cli))
        samples: dict[str, list[float]] = {row: [] for row, *_ in cases}
        cpu = dict.fromkeys(samples, 0.0)
        try:
            async with aiohttp.ClientSession() as session:
                for _, _, url, call, args in cases:  # warm every path up
                    for _ in range(5):
                        await call(session, url, args)
                for _ in range(calls):
                    for row, pid, url, call, args in cases:
                        before = cpu_seconds(pid)
                        samples[row].append(await timed(call, session, url, args))
                        cpu[row] += cpu_seconds(pid) - before
        finally:
            for proc, _ in [*servers.values(), (bare, bare_url)]:
                proc.terminate()
                proc.wait(timeout=30)
    results: dict[str, dict[str, Any]] = {}
    for row, values in samples.items():
        bare_row = "bare_buffered" if "buffered" in row else "bare_streamed"
        figures: dict[str, Any] = {"ms": statistics.median(values) * 1000, "p10_ms": _p10(values) * 1000}
        if not row.startswith("bare"):
            figures["ratio_vs_bare"] = statistics.median(values) / statistics.median(samples[bare_row])
            figures["p10_ratio_vs_bare"] = _p10(values) / _p10(samples[bare_row])
        figures["server_cpu_ms"] = cpu[row] * 1000 / calls
        results[row] = figures
    return results


def _p10(values: list[float]) -> float:
    """The 10th percentile: on a machine shared with other work, the figure least moved by it."""
    return sorted(values)[len(values) // 10]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=200, help="Calls per row (median).")
    add_src_option(parser)
    args = parser.parse_args()
    sources = sources_of(parser, args.src)
    report("calls", asyncio.run(bench(args.calls, sources)))


if __name__ == "__main__":
    main()
