"""CPU-heavy work runs on a pool of its own (argent.cpu), never on the threads that file I/O uses.

aiofiles and ``asyncio.to_thread`` run every file read and write of a call on the event loop's
default executor. Were the parses of large flows queued there too, as many of them as it has
workers would stall every other client's file I/O for as long as they take.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from argent.cpu import CPU_POOL, CpuPool, prompt_gil_handoff, run_cpu
from argent.flows.load import parse_flow_async
from argent.limits import CPU_WORKER_THREADS, GIL_SWITCH_INTERVAL_SECONDS, RESULT_STEPS_ENCODED_IN_PLACE
from argent.runner.report import FlowRunResult, StepReport
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.stream import encode_result, result_line

#: The loop's default executor in the first test: as many workers as there are large parses.
DEFAULT_WORKERS = 2
#: How fast the normal call must end while the large parses run.
PROMPTLY_SECONDS = 1.0


def large_flow(seed: int, steps: int = 800) -> str:
    """A flow within every limit that takes seconds to parse; ``seed`` makes each text (and cache key) its own."""
    return "steps:\n" + "".join(
        f"  - tool: t{seed}\n    args: {{ x: {i}, y: [1, 2, 3], z: {{ a: b }} }}\n" for i in range(steps)
    )


async def test_while_large_flows_parse_a_call_that_reads_files_ends_promptly(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    loop = asyncio.get_running_loop()
    default = ThreadPoolExecutor(max_workers=DEFAULT_WORKERS)
    loop.set_default_executor(default)
    project = tmp_path / "proj"
    flows = project / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "main.yaml").write_text("steps:\n  - echo: one\n  - run: part\n")
    (flows / "part.yaml").write_text("steps:\n  - echo: two\n")
    server_tmp = tmp_path / "server-tmp"
    server_tmp.mkdir()
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(server_tmp))))

    async def normal_call() -> float:
        """A co-located flow-execute: its flow and fragment are read from disk with aiofiles."""
        t0 = time.monotonic()
        resp = await client.post("/tools/flow-execute", json={"project_root": str(project), "name": "main"})
        body = await resp.json()
        assert resp.status == 200, body
        assert [(s["kind"], s["status"]) for s in body["data"]["steps"]] == [
            ("echo", "pass"),
            ("run", "pass"),
            ("echo", "pass"),
        ]
        return time.monotonic() - t0

    await normal_call()  # warm: the first call imports and caches what every later one uses
    with prompt_gil_handoff():  # as `argent server start` serves
        parses = [asyncio.create_task(parse_flow_async(large_flow(seed))) for seed in range(DEFAULT_WORKERS)]
        await asyncio.sleep(0)  # each parse task has handed its work to a thread
        took = await normal_call()
        still_parsing = sum(not task.done() for task in parses)
        flows_parsed = await asyncio.gather(*parses)
    assert [len(flow.steps) for flow in flows_parsed] == [800] * DEFAULT_WORKERS
    assert took < PROMPTLY_SECONDS, f"the call took {took:.2f}s while {DEFAULT_WORKERS} large flows parsed"
    assert still_parsing == DEFAULT_WORKERS, "the parses ended before the call: too small to prove anything"


def test_the_pool_never_runs_more_threads_than_its_workers_and_keeps_arrival_order() -> None:
    pool = CpuPool(2, name="test-cpu")
    gate = threading.Event()
    order: list[int] = []
    try:
        blockers = [pool.submit(gate.wait, 10) for _ in range(2)]
        queued = [pool.submit(order.append, i) for i in range(5)]
        assert pool.threads == 2
        assert not any(f.done() for f in queued)
        gate.set()
        for future in blockers + queued:
            future.result(10)
        assert order == [0, 1, 2, 3, 4]
        assert pool.threads == 2
    finally:
        gate.set()
        pool.shutdown()


def test_an_error_in_the_work_reaches_the_caller() -> None:
    async def main() -> None:
        with pytest.raises(ZeroDivisionError):
            await run_cpu(divmod, 1, 0)

    asyncio.run(main())


def test_shutdown_cancels_queued_work_and_refuses_new_work() -> None:
    pool = CpuPool(1, name="test-cpu")
    gate = threading.Event()
    running = pool.submit(gate.wait, 10)
    queued = pool.submit(time.sleep, 0)
    gate.set()
    pool.shutdown(cancel_futures=True)
    assert running.result(0) is True
    assert queued.cancelled() or queued.done()
    with pytest.raises(RuntimeError):
        pool.submit(time.sleep, 0)


def test_the_process_pool_is_bounded_by_its_named_limit() -> None:
    assert CPU_POOL.workers == CPU_WORKER_THREADS


def test_prompt_gil_handoff_sets_the_switch_interval_and_restores_it() -> None:
    before = sys.getswitchinterval()
    with prompt_gil_handoff():
        assert sys.getswitchinterval() == pytest.approx(GIL_SWITCH_INTERVAL_SECONDS)
    assert sys.getswitchinterval() == before


def test_a_process_exits_at_once_while_its_cpu_pool_still_works() -> None:
    """The pool's threads are daemons: a server that stops does not wait for a parse of seconds."""
    script = (
        "import time\n"
        "from argent.cpu import CPU_POOL\n"
        "CPU_POOL.submit(time.sleep, 60)\n"
        "print('submitted', flush=True)\n"
    )
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, "submitted\n"), done.stderr
    assert time.monotonic() - t0 < 10


async def test_a_report_of_many_steps_is_encoded_on_the_pool_and_a_small_one_in_place() -> None:
    """A fan-out's report of 100k lines takes seconds to encode: never on the event loop."""

    def report(steps: int) -> FlowRunResult:
        return FlowRunResult(
            flow="main",
            device="",
            steps=[StepReport(index=i, kind="echo", status="pass", flow="main") for i in range(steps)],
        )

    threads: list[str] = []

    def encode(result: Any) -> bytes:
        threads.append(threading.current_thread().name)
        return result_line(result)

    big = await encode_result(encode, report(RESULT_STEPS_ENCODED_IN_PLACE + 1))
    small = await encode_result(encode, report(RESULT_STEPS_ENCODED_IN_PLACE))
    assert threads[0].startswith(CPU_POOL.name) and threads[1] == threading.current_thread().name
    assert json.loads(big)["event"] == "result" and len(json.loads(big)["data"]["steps"]) == 1_001
    assert big.endswith(b"\n") and small.count(b"\n") == 1
