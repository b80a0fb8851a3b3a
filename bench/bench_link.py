"""Flows over a link: the client's collection and the server's intake of members.

    .venv/bin/python bench/bench_link.py [--repeat N]

1. client collection of a project with 1,000 fragments (50 chains, 20 deep) and 500 baselines
   (policy checks, realpaths, spellings, reads, parses, the transfer plan) vs a bare walk that
   reads the same files (target <= 3x);
2. the tool-server taking 32 MiB of flow members: ``read_members`` alone (time, and the memory it
   adds, by tracemalloc), and one whole flow-execute call on ``argent server start`` (wall time
   against the same call without members, and the server's RSS high-water mark over idle).

Prints a table and writes ``bench/results/link.json``. Medians of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import aiohttp
from common import median_seconds, report, rss_kib

from argent.client.collect import collect_flow_members
from argent.client.flow_members import plan_transfer
from argent.limits import MAX_FLOW_MEMBERS_BYTES, MIB
from argent.server.members import read_members

CHAINS, DEPTH, BASELINES = 50, 20, 500


def make_project(root: Path) -> Path:
    flows = root / ".argent" / "flows"
    for chain in range(CHAINS):
        for level in range(1, DEPTH + 1):
            target = f"c{chain}/f{level + 1}.yaml" if level < DEPTH else None
            steps = [f"  - echo: chain {chain} level {level}\n", f"  - tap: {{ id: button-{level} }}\n"]
            if target:
                steps.append(f"  - run: f{level + 1}.yaml\n")
            path = flows / f"c{chain}" / f"f{level}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("steps:\n" + "".join(steps))
    names = [f"s{i}" for i in range(BASELINES)]
    main = [f"  - run: c{chain}/f1.yaml\n" for chain in range(CHAINS)] + [
        f"  - snapshot: {n}\n" for n in names
    ]
    (flows / "main.yaml").write_text("steps:\n" + "".join(main))
    shots = flows / "__baselines__" / "main"
    shots.mkdir(parents=True)
    for name in names:
        (shots / f"{name}__chromium-1000x800.png").write_bytes(os.urandom(2048))
    return flows / "main.yaml"


def bench_collection(repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        main = make_project(root)
        data = main.read_bytes()
        args = {"project_root": str(root), "name": "main", "device": "chromium-cdp-9222"}

        def ours() -> None:
            collection = collect_flow_members(str(main), data, args, [])
            assert len(collection.members) == CHAINS * (DEPTH - 1) + BASELINES, len(collection.members)
            plan_transfer(collection.members)

        def bare() -> None:
            count = 0
            for directory, _, files in os.walk(root / ".argent" / "flows"):
                for name in files:
                    with open(os.path.join(directory, name), "rb") as handle:
                        handle.read()
                    count += 1
            assert count == CHAINS * DEPTH + BASELINES + 1

        ours()
        bare()
        t_ours = median_seconds(ours, repeat)
        t_bare = median_seconds(bare, repeat)
    return {"ours_s": t_ours, "bare_s": t_bare, "ratio": t_ours / t_bare}


def members_of(total: int, size: int) -> list[dict[str, Any]]:
    members: list[dict[str, Any]] = []
    for i in range(total // size):
        members.append(
            {
                "role": "flow",
                "key": f"/client/p/.argent/flows\0f{i}.yaml",
                "path": f"/client/p/.argent/flows/f{i}.yaml",
                "canonical": f"/client/p/.argent/flows/f{i}.yaml",
                "spelling": {"state": "listed"},
                "size": size,
                "content": base64.b64encode(b"#" * size).decode(),
            }
        )
    return members


def bench_store(repeat: int) -> dict[str, float]:
    """``read_members`` alone: decode and check 32 MiB of inline flow members."""
    members = members_of(MAX_FLOW_MEMBERS_BYTES, 2 * MIB)

    async def no_uploads(upload_id: str, content_hash: Any, path: str) -> bytes:
        raise AssertionError

    def take() -> None:
        store = asyncio.run(read_members(members, owner="/client/p/main.yaml", fetch_upload=no_uploads))
        assert len(store) == len(members)

    seconds = median_seconds(take, repeat)
    tracemalloc.start()
    take()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"seconds": seconds, "peak_added_mib": peak / MIB}


def bench_call(repeat: int) -> dict[str, float]:
    """One flow-execute call carrying 32 MiB of flow members on a real ``argent server start``:
    the wall time of the call (body upload, JSON, members, a one-step run) and the server's RSS."""
    body = {
        "project_root": "/client/p",
        "name": "main",
        "flow_file": {
            "__argentFileInput": True,
            "path": "/client/p/.argent/flows/main.yaml",
            "content": base64.b64encode(b"steps:\n  - echo: hi\n").decode(),
            "canonical": "/client/p/.argent/flows/main.yaml",
            "spelling": {"state": "listed"},
            "members": members_of(MAX_FLOW_MEMBERS_BYTES, 2 * MIB),
        },
    }
    payload = json.dumps(body).encode()
    small = json.dumps({**body, "flow_file": {**body["flow_file"], "members": []}}).encode()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "argent", "server", "start", "--port", "0", "--no-auth"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "TMPDIR": tmp},
        )
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip().removeprefix("Tools server listening on ")

            async def post(data: bytes) -> float:
                async with aiohttp.ClientSession() as session:
                    t0 = time.perf_counter()
                    headers = {"Content-Type": "application/json"}
                    async with session.post(f"{url}/tools/flow-execute", data=data, headers=headers) as resp:
                        assert resp.status == 200, await resp.text()
                        await resp.read()
                    return time.perf_counter() - t0

            asyncio.run(post(small))
            idle = rss_kib(proc.pid, "VmRSS")
            empty_s = statistics.median([asyncio.run(post(small)) for _ in range(repeat)])
            full_s = statistics.median([asyncio.run(post(payload)) for _ in range(repeat)])
            peak = rss_kib(proc.pid, "VmHWM")
            after = rss_kib(proc.pid, "VmRSS")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return {
        "body_mib": len(payload) / MIB,
        "call_s": full_s,
        "call_without_members_s": empty_s,
        "peak_rss_growth_mib": (peak - idle) / 1024,
        "rss_after_mib_over_idle": (after - idle) / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results = {
        "collect_1000_fragments_500_baselines": bench_collection(args.repeat),
        "server_store_32_mib_members": bench_store(args.repeat),
        "server_call_32_mib_members": bench_call(args.repeat),
    }
    report("link", results)


if __name__ == "__main__":
    main()
