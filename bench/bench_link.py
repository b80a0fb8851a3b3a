"""Flows over a link: the client's collection and the server's intake of members.

    .venv/bin/python bench/bench_link.py [--repeat N]

1. client collection of a project with 1,000 fragments (50 chains, 20 deep) and 500 baselines
   (policy checks, realpaths, spellings, reads, parses, the transfer plan) vs a bare walk that
   reads the same files (target <= 3x);
2. the tool-server taking one call with 32 MiB of members: ``read_members`` of the wire members
   (base64 decode, checks) — its time, and the peak memory it adds, measured with tracemalloc.

Prints a table and writes ``bench/results/link.json``. Medians of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from argent.client.flow_members import member_wire, plan_transfer
from argent.limits import MAX_FLOW_MEMBERS_BYTES, MIB
from argent.link.members import collect_flow_members
from argent.link.store import read_members

CHAINS, DEPTH, BASELINES = 50, 20, 500


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


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


def bench_intake(repeat: int) -> dict[str, float]:
    size = 2 * MIB
    members: list[dict[str, Any]] = []
    for i in range(MAX_FLOW_MEMBERS_BYTES // size):
        data = b"#" * size
        members.append(
            {
                "role": "flow",
                "key": f"/p/.argent/flows\0f{i}.yaml",
                "path": f"/p/.argent/flows/f{i}.yaml",
                "canonical": f"/p/.argent/flows/f{i}.yaml",
                "spelling": {"state": "listed"},
                "size": size,
                "content": base64.b64encode(data).decode(),
            }
        )
    wire_bytes = sum(len(m["content"]) for m in members)

    async def no_uploads(upload_id: str, content_hash: Any, path: str) -> bytes:
        raise AssertionError

    def take() -> None:
        store = asyncio.run(
            read_members(members, owner="/p/.argent/flows/main.yaml", fetch_upload=no_uploads)
        )
        assert len(store) == len(members)

    t = median_seconds(take, repeat)
    tracemalloc.start()
    take()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "members_mib": MAX_FLOW_MEMBERS_BYTES / MIB,
        "wire_base64_mib": wire_bytes / MIB,
        "seconds": t,
        "peak_added_mib": peak / MIB,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results = {
        "collect_1000_fragments_500_baselines": bench_collection(args.repeat),
        "server_intake_32_mib_members": bench_intake(args.repeat),
    }
    for name, row in results.items():
        figures = ", ".join(f"{k}={v:.4f}" for k, v in row.items())
        print(f"{name:<38} {figures}")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "link.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
