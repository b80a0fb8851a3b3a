"""Flow files reach the disk in as few worker-thread hops as they can: a resolution reads ahead."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from argent.runner.files import DiskFlowFiles, FlowFileError
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.tools.builtin import build_registry
from argent.tools.call_policy import CallPolicy


class CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor, counting the jobs handed to it."""

    def __init__(self) -> None:
        super().__init__(max_workers=4)
        self.jobs = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.jobs += 1
        return super().submit(fn, *args, **kwargs)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    flows = tmp_path / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "main.yaml").write_text("steps:\n  - run: frag\n")
    (flows / "frag.yaml").write_text("steps:\n  - echo: one\n")
    return tmp_path / "proj"


async def test_a_resolution_reads_ahead_and_the_next_one_reads_afresh(project: Path) -> None:
    files = DiskFlowFiles()
    root = await files.named_flow(str(project), "main")
    frag = await files.fragment(root, "frag.yaml")
    assert await files.read_text(frag) == "steps:\n  - echo: one\n"
    (project / ".argent" / "flows" / "frag.yaml").write_text("steps:\n  - echo: two\n")
    again = await files.fragment(root, "frag.yaml")
    assert await files.read_text(again) == "steps:\n  - echo: two\n"
    # What was read ahead serves one read of that file only; the next read goes to the disk.
    (project / ".argent" / "flows" / "frag.yaml").write_text("steps:\n  - echo: three\n")
    assert await files.read_text(again) == "steps:\n  - echo: three\n"


async def test_a_read_of_another_file_is_not_served_from_the_read_ahead(project: Path) -> None:
    files = DiskFlowFiles()
    root = await files.named_flow(str(project), "main")
    await files.fragment(root, "frag.yaml")
    assert await files.read_text(root) == "steps:\n  - run: frag\n"


async def test_a_missing_or_refused_fragment_fails_at_its_read_not_its_resolution(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text("steps:\n  - echo: x\n")
    files = CallPolicy(project_roots=(str(project),)).disk_files()
    root = await files.named_flow(str(project), "main")
    missing = await files.fragment(root, "gone.yaml")
    with pytest.raises(FlowFileError, match="ENOENT: no such file or directory"):
        await files.read_text(missing)
    refused = await files.fragment(root, "../../../outside/x.yaml")
    with pytest.raises(FlowFileError) as caught:
        await files.read_text(refused)
    assert "ENOENT" not in str(caught.value)


async def test_a_co_located_streamed_call_hops_to_a_worker_thread_twice(
    aiohttp_client: Any, project: Path, tmp_path: Path
) -> None:
    """The precheck's workspace check, then one hop that checks, resolves and reads the flow; the
    fragment is one more hop, and the parses come from the cache on the loop."""
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path)), build_registry()))
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    args = {"name": "main", "project_root": str(project)}
    headers = {"Accept": "application/x-ndjson"}

    async def call() -> list[dict[str, Any]]:
        resp = await client.post("/tools/flow-execute", json=args, headers=headers)
        assert resp.status == 200
        return [json.loads(line) for line in (await resp.text()).splitlines()]

    await call()  # the parses are cached from here on
    executor.jobs = 0
    lines = await call()
    assert lines[-1]["event"] == "result" and lines[-1]["data"]["ok"] is True
    # the precheck with the root flow read ahead, then the fragment for the device scan and for the run
    assert executor.jobs <= 3, executor.jobs


async def test_a_call_naming_an_unsafe_flow_reads_nothing_ahead(
    aiohttp_client: Any, project: Path, tmp_path: Path
) -> None:
    """The precheck reads a saved flow ahead only once its name and root are valid: a FIFO the
    name would reach is never opened (it would hold a worker thread), the run refuses the name."""
    os.mkfifo(project / ".argent" / "evil.yaml")
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path)), build_registry()))
    args = {"name": "../evil", "project_root": str(project)}
    resp = await asyncio.wait_for(client.post("/tools/flow-execute", json=args), timeout=10)
    body = await resp.json()
    assert body["error_code"] == "FLOW_NAME_INVALID", body


async def test_the_checks_before_a_run_read_each_fragment_of_a_chain_once(
    aiohttp_client: Any, project: Path, tmp_path: Path
) -> None:
    """The leading-launch scan and the device scan share their reads; the run reads afresh: a 10-deep
    `run:` chain costs one hop per fragment before the run and one in it."""
    flows = project / ".argent" / "flows"
    (flows / "chain.yaml").write_text("steps:\n  - echo: root\n  - run: c1\n")
    for level in range(1, 11):
        inner = f"  - run: c{level + 1}\n" if level < 10 else ""
        (flows / f"c{level}.yaml").write_text(f"steps:\n  - echo: level {level}\n{inner}")
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path)), build_registry()))
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    args = {"name": "chain", "project_root": str(project)}
    resp = await client.post("/tools/flow-execute", json=args)
    assert (await resp.json())["data"]["ok"] is True  # every parse is cached from here on
    executor.jobs = 0
    resp = await client.post("/tools/flow-execute", json=args)
    steps = (await resp.json())["data"]["steps"]
    assert [s["kind"] for s in steps] == ["echo"] + ["run", "echo"] * 10
    assert executor.jobs <= 1 + 10 + 10, executor.jobs
