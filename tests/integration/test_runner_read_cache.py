"""A flow file read once is answered on the loop while inotify vouches for it, and read afresh (in a
worker thread) as soon as it, or any directory on its path, may have changed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from argent.runner.files import DiskFlowFiles, FlowFileError
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.tools.builtin import build_registry
from argent.utils.watch import FileWatches, plain_parts
from tests.flow_files import flows


@pytest.fixture
def project(tmp_path: Path) -> Path:
    flows = tmp_path / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "main.yaml").write_text("steps:\n  - echo: one\n  - run: frag\n")
    (flows / "frag.yaml").write_text("steps:\n  - echo: frag one\n")
    return tmp_path / "proj"


class Reads:
    """Counts the worker-thread hops that resolve and read a flow file (every ``DiskFlowFiles``)."""

    def __init__(self) -> None:
        self.hops = 0


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    counter = Reads()
    real = DiskFlowFiles._resolve_and_read

    def counted(self: DiskFlowFiles, *args: Any, **kwargs: Any) -> Any:
        counter.hops += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(DiskFlowFiles, "_resolve_and_read", counted)
    return counter


async def messages(files: DiskFlowFiles, project: Path) -> tuple[str, str]:
    """The texts of the root flow and its fragment, as a run reads them."""
    root = await files.named_flow(str(project), "main")
    root_text = await files.read_text(root)
    frag = await files.fragment(root, "frag.yaml")
    return root_text, await files.read_text(frag)


async def test_an_unchanged_flow_is_read_without_a_hop_and_a_changed_one_afresh(
    project: Path, reads: Reads
) -> None:
    await messages(DiskFlowFiles(), project)
    reads.hops = 0
    assert await messages(DiskFlowFiles(), project) == (
        "steps:\n  - echo: one\n  - run: frag\n",
        "steps:\n  - echo: frag one\n",
    )
    assert reads.hops == 0
    # Rewritten in place, the fragment is read afresh; the root is still vouched for.
    (flows(project) / "frag.yaml").write_text("steps:\n  - echo: frag two\n")
    assert (await messages(DiskFlowFiles(), project))[1] == "steps:\n  - echo: frag two\n"
    assert reads.hops == 1


@pytest.mark.parametrize(
    "change",
    ["rewrite", "replace_by_rename", "delete", "rename_an_ancestor", "swap_the_flows_dir"],
)
async def test_every_change_on_the_path_is_seen_by_the_next_read(project: Path, change: str) -> None:
    path = flows(project) / "main.yaml"
    await messages(DiskFlowFiles(), project)
    await messages(DiskFlowFiles(), project)
    new = "steps:\n  - echo: changed\n"
    if change == "rewrite":
        path.write_text(new)
    elif change == "replace_by_rename":
        (flows(project) / "next.tmp").write_text(new)
        os.replace(flows(project) / "next.tmp", path)
    elif change == "delete":
        path.unlink()
    elif change == "rename_an_ancestor":
        os.rename(project / ".argent", project / ".argent-old")
        flows(project).mkdir(parents=True)
        path.write_text(new)
    else:
        other = project / ".argent" / "other"
        other.mkdir()
        (other / "main.yaml").write_text(new)
        os.rename(flows(project), project / ".argent" / "gone")
        os.rename(other, flows(project))
    files = DiskFlowFiles()
    root = await files.named_flow(str(project), "main")
    if change == "delete":
        with pytest.raises(FlowFileError, match="ENOENT"):
            await files.read_text(root)
    else:
        assert await files.read_text(root) == new


@pytest.mark.parametrize("target", ["file", "directory"])
async def test_a_mode_change_alone_is_read_afresh(project: Path, reads: Reads, target: str) -> None:
    """Whether a file can be read depends on its mode and its directories': a change is a new read."""
    await messages(DiskFlowFiles(), project)
    reads.hops = 0
    (flows(project) / "main.yaml" if target == "file" else flows(project)).chmod(0o700)
    await messages(DiskFlowFiles(), project)
    assert reads.hops == (1 if target == "file" else 2)


async def test_a_flow_reached_through_a_symbolic_link_is_read_afresh_each_time(
    project: Path, tmp_path: Path, reads: Reads
) -> None:
    """Its resolution depends on the link's target, which the watches of its spelling do not cover."""
    link = tmp_path / "link"
    link.symlink_to(project)
    for _ in range(2):
        await messages(DiskFlowFiles(), link)
    reads.hops = 0
    await messages(DiskFlowFiles(), link)
    assert reads.hops == 1  # the root; its fragment is named from the root's real directory
    (flows(project) / "main.yaml").write_text("steps:\n  - echo: via link\n")
    files = DiskFlowFiles()
    assert await files.read_text(await files.named_flow(str(link), "main")) == "steps:\n  - echo: via link\n"


async def test_a_path_that_stops_going_through_a_link_is_kept_again(
    project: Path, tmp_path: Path, reads: Reads
) -> None:
    """A link on the path is not watched again (a hop each time); once the path is plain, the next
    resolution watches it and the one after is answered without a hop."""
    link = tmp_path / "where"
    link.symlink_to(project)

    async def root_hops() -> int:
        reads.hops = 0
        files = DiskFlowFiles()
        assert await files.read_text(await files.named_flow(str(link), "main")) == (
            "steps:\n  - echo: one\n  - run: frag\n"
        )
        return reads.hops

    assert [await root_hops() for _ in range(3)] == [1, 1, 1]
    link.unlink()
    project.rename(link)
    assert [await root_hops() for _ in range(3)] == [1, 1, 0]


async def test_a_mount_over_a_directory_of_the_path_is_seen(project: Path) -> None:
    """A mount sends no inotify event: the mount table's own signal makes every read afresh."""
    await messages(DiskFlowFiles(), project)
    await messages(DiskFlowFiles(), project)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "argent-test", str(flows(project))], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount here: " + mounted.stderr.decode(errors="replace").strip())
    try:
        (flows(project) / "main.yaml").write_text("steps:\n  - echo: on the mount\n")
        files = DiskFlowFiles()
        root = await files.named_flow(str(project), "main")
        assert await files.read_text(root) == "steps:\n  - echo: on the mount\n"
    finally:
        subprocess.run(["umount", str(flows(project))], check=True)


async def test_a_changed_saved_flow_and_fragment_reach_the_next_call(
    aiohttp_client: Any, project: Path, tmp_path: Path, reads: Reads
) -> None:
    """End to end over HTTP: a streamed call of an unchanged flow reads no flow file in a worker
    thread; the lines of a call made after a change carry the new text."""
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path)), build_registry()))
    args = {"name": "main", "project_root": str(project)}
    assert await streamed_messages(client, args) == ["one", "", "frag one"]
    reads.hops = 0
    assert await streamed_messages(client, args) == ["one", "", "frag one"]
    assert reads.hops == 0
    (flows(project) / "main.yaml").write_text("steps:\n  - echo: two\n  - run: frag\n")
    (flows(project) / "frag.yaml").write_text("steps:\n  - echo: frag two\n")
    assert await streamed_messages(client, args) == ["two", "", "frag two"]


async def streamed_messages(client: Any, args: dict[str, Any]) -> list[str]:
    """The step messages of one streamed flow-execute call that passed ("" for a step without one)."""
    resp = await client.post("/tools/flow-execute", json=args, headers={"Accept": "application/x-ndjson"})
    assert resp.status == 200
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert lines[-1]["event"] == "result" and lines[-1]["data"]["ok"] is True, lines[-1]
    return [step.get("message", "") for step in lines[-1]["data"]["steps"]]


def test_a_mount_with_no_event_around_it_still_spoils_earlier_stamps(tmp_path: Path) -> None:
    """A mount somewhere else, then a new watch (which takes the mount's signal): what was stamped
    before the mount is not vouched for, what is stamped after it is."""
    (tmp_path / "f.yaml").write_text("x")
    (tmp_path / "m").mkdir()
    watches = FileWatches(max_keys=64)
    try:
        before = watches.watch(str(tmp_path / "f.yaml"))
        assert before is not None and watches.unchanged(before)
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "argent-test", str(tmp_path / "m")], capture_output=True
        )
        if mounted.returncode != 0:
            pytest.skip("cannot mount here: " + mounted.stderr.decode(errors="replace").strip())
        try:
            after = watches.watch(str(tmp_path / "f.yaml"))
            assert after is not None and watches.unchanged(after)
            assert not watches.unchanged(before)
        finally:
            subprocess.run(["umount", str(tmp_path / "m")], check=True)
    finally:
        watches.close()


def test_only_plain_absolute_paths_on_local_file_systems_are_watched(tmp_path: Path) -> None:
    assert plain_parts("/a/b.yaml") == ["a", "b.yaml"]
    for path in ("a/b.yaml", "/a/../b.yaml", "/a/./b.yaml", "/a//b.yaml", "//a/b.yaml", "/a/"):
        assert plain_parts(path) is None, path
    watches = FileWatches(max_keys=64)
    try:
        assert watches.watch(str(tmp_path / "missing.yaml")) is None
        assert watches.watch("/proc/self/status") is None  # procfs changes without events
        (tmp_path / "f.yaml").write_text("x")
        assert watches.watch(str(tmp_path / "f.yaml")) is not None
    finally:
        watches.close()


def test_unrelated_changes_keep_a_stamp_and_a_fresh_start_drops_it(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.yaml").write_text("x")
    watches = FileWatches(max_keys=1)
    try:
        stamp = watches.watch(str(tmp_path / "d" / "f.yaml"))
        assert stamp is not None and watches.unchanged(stamp)
        (tmp_path / "other").mkdir()
        (tmp_path / "d" / "g.yaml").write_text("y")
        (tmp_path / "d" / "g.yaml").unlink()
        assert watches.unchanged(stamp)
        # Past its bound the instance starts afresh: nothing stamped before is vouched for.
        (tmp_path / "other" / "h.yaml").write_text("z")
        assert watches.watch(str(tmp_path / "other" / "h.yaml")) is not None
        assert not watches.unchanged(stamp)
    finally:
        watches.close()
