"""Flows over a link: the client's collection and the server's intake of members.

    .venv/bin/python bench/bench_link.py [--repeat N]

1. client collection of a project with 1,000 fragments (50 chains, 20 deep) and 500 baselines
   (policy checks, realpaths, spellings, reads, parses, the transfer plan) vs a bare walk that
   reads the same files; and the share of the collection in a whole call over a link of such a
   project (echo steps: it runs without a device);
2. the tool-server taking 32 MiB of flow members: ``read_members`` alone (time, and the memory it
   adds, by tracemalloc), and one whole flow-execute call on ``argent server start`` (wall time
   against the same call without members, the server's CPU, and its RSS high-water mark over idle);
3. the check of ``MAX_BODY_JSON_VALUES`` on that call's body alone, against its parse;
4. a small streamed call of a 20-echo saved flow on the same server (wall time, server CPU).

``--src NAME=DIR`` adds a server running the ``argent`` package in ``DIR`` to the rows of calls
(2 and 4), measured in the same rounds; its rows are suffixed ``@NAME``. ``--calls-only`` runs only those.

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
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from common import (
    add_src_option,
    cpu_seconds,
    median_seconds,
    report,
    rss_kib,
    sources_of,
    start_argent_no_auth,
)

from argent.client.collect import collect_flow_members
from argent.client.members import plan_transfer
from argent.limits import MAX_BODY_JSON_VALUES, MAX_FLOW_MEMBERS_BYTES, MIB
from argent.server.members import read_members
from argent.utils.json_values import count_json_values

try:  # the check of the cap without a scan of every byte (newer checkouts)
    from argent.utils.json_values import more_json_values_than
except ImportError:  # pragma: no cover
    more_json_values_than = None  # type: ignore[assignment]

CHAINS, DEPTH, BASELINES = 50, 20, 500
_T = TypeVar("_T")


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


def make_echo_project(root: Path) -> Path:
    """The project of ``make_project`` with echo steps only (it runs without a device), no baselines,
    and chains a run can follow to their end (19 deep under the root: 950 fragments)."""
    flows = root / ".argent" / "flows"
    for chain in range(CHAINS):
        for level in range(1, DEPTH):
            steps = [f"  - echo: chain {chain} level {level}\n", f"  - echo: step {level}\n"]
            if level < DEPTH - 1:
                steps.append(f"  - run: f{level + 1}.yaml\n")
            path = flows / f"c{chain}" / f"f{level}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("steps:\n" + "".join(steps))
    (flows / "main.yaml").write_text(
        "steps:\n" + "".join(f"  - run: c{chain}/f1.yaml\n" for chain in range(CHAINS))
    )
    return flows / "main.yaml"


def bench_collection_share(repeat: int) -> dict[str, float]:
    """How much of a call over a link the client's collection is: 950 echo fragments (the shape of
    ``make_project``) run on ``argent server start``: the collection alone (every file read and
    parsed) against the whole call (collection, transfer, the server's intake and its run)."""
    from argent.client.session import ToolServerClient

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        main = make_echo_project(root)
        data = main.read_bytes()
        args = {"project_root": str(root), "name": "main"}
        collect = median_seconds(lambda: collect_flow_members(str(main), data, args, []), repeat)
        proc, url = start_argent_no_auth(tmp, None)

        async def calls() -> list[float]:
            times: list[float] = []
            async with ToolServerClient(url, None, linked=True) as client:
                for _ in range(repeat + 1):
                    t0 = time.perf_counter()
                    result = await client.call("flow-execute", dict(args))
                    times.append(time.perf_counter() - t0)
                    assert result["ok"] is True, result
            return times[1:]

        try:
            call = statistics.median(asyncio.run(calls()))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return {"collect_s": collect, "call_s": call, "share": collect / call}


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


def bench_call(repeat: int, echo_calls: int, sources: dict[str, str | None]) -> dict[str, dict[str, float]]:
    """One flow-execute call carrying 32 MiB of flow members on a real ``argent server start``:
    the wall time of the call (body upload, JSON, members, a one-step run) and the server's RSS;
    and a small streamed call of a 20-echo saved flow (name and project_root), its wall time and the
    server's CPU. One server per source, their calls interleaved, so all see the same load."""
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
        flows = Path(tmp) / "proj" / ".argent" / "flows"
        flows.mkdir(parents=True)
        (flows / "echo20.yaml").write_text("steps:\n" + "".join(f"  - echo: step {i}\n" for i in range(20)))
        echo = json.dumps({"name": "echo20", "project_root": str(flows.parent.parent)}).encode()
        servers = {label: start_argent_no_auth(tmp, path) for label, path in sources.items()}
        try:
            return asyncio.run(_calls(servers, payload, small, echo, repeat, echo_calls))
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=30)


async def _calls(
    servers: dict[str, tuple[subprocess.Popen[str], str]],
    payload: bytes,
    small: bytes,
    echo: bytes,
    repeat: int,
    echo_calls: int,
) -> dict[str, dict[str, float]]:
    headers = {"Content-Type": "application/json"}

    async def post(url: str, data: bytes, *, stream: bool = False) -> float:
        async with aiohttp.ClientSession() as session:
            return await timed_post(session, url, data, stream=stream)

    async def timed_post(
        session: aiohttp.ClientSession, url: str, data: bytes, *, stream: bool = False
    ) -> float:
        extra = {"Accept": "application/x-ndjson"} if stream else {}
        t0 = time.perf_counter()
        async with session.post(f"{url}/tools/flow-execute", data=data, headers={**headers, **extra}) as resp:
            assert resp.status == 200, await resp.text()
            await resp.read()
        return time.perf_counter() - t0

    idle: dict[str, int] = {}
    for label, (proc, url) in servers.items():
        await post(url, small)
        idle[label] = rss_kib(proc.pid, "VmRSS")
    big: dict[str, list[float]] = {label: [] for label in servers}
    empty: dict[str, list[float]] = {label: [] for label in servers}
    big_cpu = dict.fromkeys(servers, 0.0)
    order = list(servers.items())
    for round_ in range(repeat):
        for label, (proc, url) in _rotated(order, round_):
            empty[label].append(await post(url, small))
            before = cpu_seconds(proc.pid)
            big[label].append(await post(url, payload))
            big_cpu[label] += cpu_seconds(proc.pid) - before
    results: dict[str, dict[str, float]] = {}
    for label, (proc, _) in servers.items():
        suffix = f"@{label}" if label else ""
        results[f"server_call_32_mib_members{suffix}"] = {
            "body_mib": len(payload) / MIB,
            "call_s": statistics.median(big[label]),
            "call_without_members_s": statistics.median(empty[label]),
            "server_cpu_s": big_cpu[label] / repeat,
            "peak_rss_growth_mib": (rss_kib(proc.pid, "VmHWM") - idle[label]) / 1024,
            "rss_after_mib_over_idle": (rss_kib(proc.pid, "VmRSS") - idle[label]) / 1024,
        }
    small_s: dict[str, list[float]] = {label: [] for label in servers}
    small_cpu = dict.fromkeys(servers, 0.0)
    async with aiohttp.ClientSession() as session:
        for _, url in servers.values():
            for _ in range(5):
                await timed_post(session, url, echo, stream=True)
        for round_ in range(echo_calls):
            for label, (proc, url) in _rotated(order, round_):
                before = cpu_seconds(proc.pid)
                small_s[label].append(await timed_post(session, url, echo, stream=True))
                small_cpu[label] += cpu_seconds(proc.pid) - before
    for label in servers:
        suffix = f"@{label}" if label else ""
        values = sorted(small_s[label])
        results[f"server_call_20_echo{suffix}"] = {
            "ms": statistics.median(values) * 1000,
            "p10_ms": values[len(values) // 10] * 1000,
            "server_cpu_ms": small_cpu[label] * 1000 / echo_calls,
        }
    return results


def _rotated(items: list[_T], by: int) -> list[_T]:
    """``items`` starting at ``by`` (modulo): no server is always the first of a round."""
    by %= len(items)
    return items[by:] + items[:by]


def bench_value_count(repeat: int) -> dict[str, float]:
    """The check of ``MAX_BODY_JSON_VALUES`` alone on the 42.7 MiB body of the members call, against
    the parse of the same bytes (what the check guards: it runs before it, on every body)."""
    body = {"flow_file": {"members": members_of(MAX_FLOW_MEMBERS_BYTES, 2 * MIB)}}
    raw = json.dumps(body).encode()
    figures = {
        "count_ms": median_seconds(lambda: count_json_values(raw), repeat) * 1000,
        "parse_ms": median_seconds(lambda: json.loads(raw), repeat) * 1000,
    }
    if more_json_values_than is not None:
        check = more_json_values_than
        figures["check_ms"] = median_seconds(lambda: check(raw, MAX_BODY_JSON_VALUES), repeat) * 1000
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--echo-calls", type=int, default=200, help="Calls of the 20-echo row (median).")
    parser.add_argument("--calls-only", action="store_true", help="Only the rows of calls on a server.")
    add_src_option(parser)
    args = parser.parse_args()
    sources = sources_of(parser, args.src)
    results: dict[str, dict[str, float]] = {}
    if not args.calls_only:
        results["collect_1000_fragments_500_baselines"] = bench_collection(args.repeat)
        results["collect_share_of_a_950_fragment_call"] = bench_collection_share(args.repeat)
        results["server_store_32_mib_members"] = bench_store(args.repeat)
        results["body_value_count_32_mib_members"] = bench_value_count(args.repeat)
    results.update(bench_call(args.repeat, args.echo_calls, sources))
    report("link", results)


if __name__ == "__main__":
    main()
