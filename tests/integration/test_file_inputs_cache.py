"""The presence check of a file-input wrapper (the flow file our CLI sends with a co-located call) is
answered on the loop while inotify vouches for it, and checked afresh in a worker thread as soon as
the file, or any directory on its path, may have changed; refusals and paths the watches cannot
vouch for are checked afresh every time."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from argent.client.calls import prepare_file_inputs
from argent.errors import FileInputError, PolicyRefusal
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.file_inputs import PRESENCE, resolve_file_inputs
from argent.server.tmp_files import ServerFiles
from argent.server.uploads import UploadStore
from argent.tools.builtin import build_registry
from argent.tools.call_policy import CallPolicy
from argent.tools.flow_tools import FLOW_FILE_INPUT, FLOW_PATH_INPUT
from argent.tools.registry import ToolSpec
from tests.integration.test_runner_files_hops import CountingExecutor
from tests.integration.test_runner_read_cache import streamed_messages

ECHO20 = "steps:\n" + "".join(f"  - echo: step {i}\n" for i in range(20))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    flows = tmp_path / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "echo20.yaml").write_text(ECHO20)
    return tmp_path / "proj"


def flow_file(project: Path) -> Path:
    return project / ".argent" / "flows" / "echo20.yaml"


async def cli_args(project: Path, name: str = "echo20") -> dict[str, Any]:
    """The arguments our CLI sends for ``flow run`` on a co-located server: the flow file wrapped."""
    args = {"name": name, "project_root": str(project)}
    wrapped = await prepare_file_inputs([FLOW_PATH_INPUT, FLOW_FILE_INPUT], args, linked=False)
    assert isinstance(wrapped, dict) and wrapped["flow_file"]["__argentFileInput"] is True
    return wrapped


async def test_a_second_cli_call_hops_to_no_worker_thread(
    aiohttp_client: Any, project: Path, tmp_path: Path
) -> None:
    """End to end over HTTP, the wrapper as the client builds it: the first call checks the wrapper
    and reads the flow in worker threads, an identical second call touches no worker thread."""
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path)), build_registry()))
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    args = await cli_args(project)
    assert await streamed_messages(client, args) == [f"step {i}" for i in range(20)]
    assert executor.jobs >= 1
    executor.jobs = 0
    assert await streamed_messages(client, args) == [f"step {i}" for i in range(20)]
    assert executor.jobs == 0
    # A changed flow file is checked and read afresh, and its new steps run.
    flow_file(project).write_text("steps:\n  - echo: changed\n")
    args = await cli_args(project)
    assert await streamed_messages(client, args) == ["changed"]
    assert executor.jobs >= 1


# -- the resolution alone ------------------------------------------------------------------------------


SPEC: ToolSpec[Any] = build_registry().find("flow-execute")  # type: ignore[assignment]


class Looks:
    """Resolves the CLI's wrapper as the route does, counting the checks made in a worker thread."""

    def __init__(self, tmp_path: Path, policy: CallPolicy | None) -> None:
        self.uploads = UploadStore(ServerFiles(str(tmp_path / "server-tmp")))
        self.policy = policy

    async def resolve(self, project: Path, name: str = "echo20") -> tuple[bool, bool | None, int]:
        """(present on this host, stat verified, worker-thread checks made) of one call."""
        before = PRESENCE.misses
        try:
            resolved = await resolve_file_inputs(
                SPEC, await cli_args(project, name), uploads=self.uploads, policy=self.policy
            )
        except FileInputError as exc:
            # Co-located, the client sends no content: a file not found in place is refused.
            assert "was not found on the tool-server host" in exc.message
            return False, None, PRESENCE.misses - before
        meta = resolved.metadata["flow_file"]
        await resolved.cleanup()
        return meta.present_on_host, meta.stat_verified, PRESENCE.misses - before


@pytest.fixture
def looks(tmp_path: Path) -> Looks:
    (tmp_path / "server-tmp").mkdir()
    return Looks(tmp_path, CallPolicy())


async def test_an_unchanged_wrapper_is_answered_without_a_check(project: Path, looks: Looks) -> None:
    assert await looks.resolve(project) == (True, True, 1)
    hits = PRESENCE.hits
    assert await looks.resolve(project) == (True, True, 0)
    assert PRESENCE.hits == hits + 1


@pytest.mark.parametrize(
    "change",
    ["rewrite", "touch", "replace_by_rename", "delete", "rename_an_ancestor", "swap_the_flows_dir"],
)
async def test_every_change_on_the_path_is_checked_afresh(project: Path, looks: Looks, change: str) -> None:
    path = flow_file(project)
    await looks.resolve(project)
    assert (await looks.resolve(project))[2] == 0
    new = "steps:\n  - echo: changed\n"
    if change == "rewrite":
        path.write_text(new)
    elif change == "touch":
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    elif change == "replace_by_rename":
        (path.parent / "next.tmp").write_text(new)
        os.replace(path.parent / "next.tmp", path)
    elif change == "delete":
        path.unlink()
    elif change == "rename_an_ancestor":
        os.rename(project / ".argent", project / ".argent-old")
        path.parent.mkdir(parents=True)
        path.write_text(new)
    else:
        other = project / ".argent" / "other"
        other.mkdir()
        (other / "echo20.yaml").write_text(new)
        os.rename(path.parent, project / ".argent" / "gone")
        os.rename(other, path.parent)
    # The client's wrapper is built afresh (its size and mtime as now); the server checks afresh.
    present, verified, checks = await looks.resolve(project)
    assert checks == 1
    assert (present, verified) == ((False, None) if change == "delete" else (True, True))


async def test_a_wrapper_of_a_file_changed_after_the_client_stated_it_is_not_used_in_place(
    project: Path, looks: Looks
) -> None:
    """The client's size and mtime are compared with the file as it is at each call, also when the
    earlier check was kept: a file changed since the client stated it is not the client's file."""
    args = await cli_args(project)
    for _ in range(2):
        resolved = await resolve_file_inputs(SPEC, args, uploads=looks.uploads, policy=looks.policy)
        assert resolved.metadata["flow_file"].stat_verified is True
    flow_file(project).write_text(ECHO20 + "  - echo: one more\n")
    with pytest.raises(FileInputError, match="was not found on the tool-server host"):
        await resolve_file_inputs(SPEC, args, uploads=looks.uploads, policy=looks.policy)
    # A wrapper stating the file as it is now is used in place again.
    assert (await looks.resolve(project))[:2] == (True, True)


@pytest.mark.parametrize("target", ["file", "directory", "project"])
async def test_a_mode_change_alone_is_checked_afresh(project: Path, looks: Looks, target: str) -> None:
    await looks.resolve(project)
    assert (await looks.resolve(project))[2] == 0
    path = {"file": flow_file(project), "directory": flow_file(project).parent, "project": project}[target]
    path.chmod(0o700)
    assert (await looks.resolve(project))[2] == 1


async def test_a_wrapper_through_a_symbolic_link_is_checked_each_time(
    project: Path, tmp_path: Path, looks: Looks
) -> None:
    link = tmp_path / "link"
    link.symlink_to(project)
    assert [(await looks.resolve(link))[2] for _ in range(3)] == [1, 1, 1]
    # Once the path is plain again, it is watched, and the call after that is answered on the loop.
    link.unlink()
    project.rename(link)
    assert [(await looks.resolve(link))[2] for _ in range(3)] == [1, 1, 0]


async def test_a_path_spelled_with_dots_is_checked_each_time(project: Path, looks: Looks) -> None:
    dotted = project / "." / ".argent" / ".." / ".argent" / "flows" / "echo20.yaml"
    args = {"name": "echo20", "project_root": str(project)}
    for _ in range(3):
        before = PRESENCE.misses
        wire = await prepare_file_inputs([FLOW_FILE_INPUT], {**args, "flow_file": str(dotted)}, linked=False)
        assert isinstance(wire, dict) and wire["flow_file"] == str(dotted)  # the client keeps an override
        wire["flow_file"] = {"__argentFileInput": True, "path": str(dotted)}
        resolved = await resolve_file_inputs(SPEC, wire, uploads=looks.uploads, policy=looks.policy)
        assert resolved.metadata["flow_file"].present_on_host is True
        assert PRESENCE.misses == before + 1


async def test_a_file_on_a_file_system_without_events_is_checked_each_time(looks: Looks) -> None:
    """/proc changes without inotify events (as a network or FUSE file system may): never kept."""
    path = f"/proc/{os.getpid()}/status"  # not /proc/self: that is a symbolic link
    before = PRESENCE.misses
    for _ in range(3):
        wire = {"__argentFileInput": True, "path": path}
        args = {"name": "x", "project_root": f"/proc/{os.getpid()}", "flow_file": wire}
        resolved = await resolve_file_inputs(SPEC, args, uploads=looks.uploads, policy=None)
        assert resolved.metadata["flow_file"].present_on_host is True
    assert PRESENCE.misses == before + 3


async def test_a_queue_overflow_is_checked_afresh(project: Path, looks: Looks) -> None:
    """Events lost to a full inotify queue might have been about the path: nothing is vouched for."""
    await looks.resolve(project)
    assert (await looks.resolve(project))[2] == 0
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    noise = [flow_file(project).parent / name for name in ("a", "b")]
    for path in noise:
        path.write_text("")
    for i in range(limit + 10):  # alternating, so the kernel merges no two events
        os.utime(noise[i % 2])
    assert (await looks.resolve(project))[2] == 1
    assert (await looks.resolve(project))[2] == 0


async def test_a_refusal_is_never_kept(project: Path, tmp_path: Path) -> None:
    """A project outside the server's project roots is refused each time, also after it was allowed:
    the rules are part of what is kept, and a refusal is checked afresh every call."""
    (tmp_path / "server-tmp").mkdir()
    elsewhere = tmp_path / "roots"
    elsewhere.mkdir()
    refused = Looks(tmp_path, CallPolicy(project_roots=(str(elsewhere),)))
    allowed = Looks(tmp_path, CallPolicy())
    await allowed.resolve(project)
    assert (await allowed.resolve(project))[2] == 0
    for _ in range(3):
        before = PRESENCE.misses
        with pytest.raises(PolicyRefusal, match="outside the project roots"):
            await refused.resolve(project)
        assert PRESENCE.misses == before + 1


async def test_a_file_the_call_may_not_read_is_absent_each_time(project: Path, tmp_path: Path) -> None:
    """A server that reads no file of its own (link-only, no project roots) treats the wrapper's
    path as absent, unlooked at, every call: that answer is not kept either."""
    (tmp_path / "server-tmp").mkdir()
    looks = Looks(tmp_path, CallPolicy(local_flows=False))
    assert [await looks.resolve(project) for _ in range(3)] == [(False, None, 1)] * 3


async def test_a_mount_over_a_directory_of_the_path_is_seen(project: Path, looks: Looks) -> None:
    """A mount sends no inotify event: the mount table's own signal makes the next check afresh."""
    await looks.resolve(project)
    assert (await looks.resolve(project))[2] == 0
    flows = flow_file(project).parent
    mounted = subprocess.run(["mount", "-t", "tmpfs", "argent-test", str(flows)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount here: " + mounted.stderr.decode(errors="replace").strip())
    try:
        present, _, checks = await looks.resolve(project)
        assert (present, checks) == (False, 1)
    finally:
        subprocess.run(["umount", str(flows)], check=True)
