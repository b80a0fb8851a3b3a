"""Seed "What the tool-server does with the members": snapshots and file arguments over a link.

The runner gets ``MemberFlowFiles`` built from a real client's collection of a temp project that
is then deleted: snapshots compare with baseline members, updates are kept for the result, later
steps and other nested runs read the new bytes, and tool file arguments resolve to them.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

import attrs
import pytest

from argent.client.baselines import BaselineWriteScope, apply_baseline_writes
from argent.client.collect import collect_flow_members
from argent.client.members import member_wire, plan_transfer
from argent.runner import pixels as P
from argent.runner.directives import DeviceDirectives
from argent.runner.execute import FlowRequest, execute_flow, load_root_flow, resolve_source
from argent.runner.member_files import MemberFlowFiles
from argent.runner.report import FlowRunResult
from argent.server.members import read_members
from argent.tools.args import arg
from argent.tools.flow_tools import flow_tools
from argent.tools.link_preflight import check_linked_flow
from argent.tools.member_invoker import MemberToolInvoker
from argent.tools.registry import FileInputSpec, ToolContext, ToolRegistry, ToolSpec
from tests.flow_files import flows, new_project, write
from tests.unit.test_directives import FAST, FakeDevice, OneDevice, canvas, node, page

KEY = "home__chromium-100x80"
LISTING = [
    {
        "name": "read-file",
        "fileInputs": [{"target": "file", "path": "${file}", "kind": "file", "optional": True}],
    }
]


@attrs.frozen
class ReadArgs:
    file: str | None = arg(None)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return new_project(tmp_path)


def baselines(proj: Path, key: str = "main") -> Path:
    d = flows(proj) / "__baselines__" / key
    d.mkdir(parents=True, exist_ok=True)
    return d


@attrs.define
class LinkedRun:
    result: FlowRunResult
    files: MemberFlowFiles
    reads: list[bytes]
    scope: BaselineWriteScope


async def run_over_link(
    proj: Path,
    tmp_path: Path,
    device: FakeDevice,
    *,
    update: bool = False,
    keep: bool = False,
    also_remove: tuple[Path, ...] = (),
) -> LinkedRun:
    path = f"{flows(proj)}/main.yaml"
    args: dict[str, Any] = {
        "project_root": str(proj),
        "name": "main",
        "device": device.id,
        "updateBaselines": update,
    }
    data = Path(path).read_bytes()
    collection = collect_flow_members(path, data, args, LISTING)
    members = [member_wire(m, how, None) for m, how in plan_transfer(collection.members)]
    scope = BaselineWriteScope()
    scope.add(collection)
    if not keep:
        shutil.rmtree(proj)  # nothing of the client's is on this disk any more
        for extra in also_remove:
            shutil.rmtree(extra)

    async def no_uploads(upload_id: str, content_hash: Any, member_path: str) -> bytes:
        raise AssertionError

    store = await read_members(members, owner=path, fetch_upload=no_uploads)
    files = MemberFlowFiles.for_root(path, collection.canonical, collection.spelling, data, store)
    reads: list[bytes] = []
    registry = ToolRegistry()
    for spec in flow_tools(registry):
        registry.register(spec)

    async def read_file(a: ReadArgs, ctx: ToolContext) -> Any:
        assert a.file is not None
        reads.append(Path(a.file).read_bytes())
        return {"ok": True}

    registry.register(
        ToolSpec(
            name="read-file",
            description="",
            args_type=ReadArgs,
            execute=read_file,
            file_inputs=(FileInputSpec(target="file", path="${file}", kind="file", optional=True),),
        )
    )
    request = FlowRequest(
        name="main",
        project_root=str(proj),
        device=device.id,
        update_baselines=update,
        prerequisite_acknowledged=True,
    )
    ref, _ = await resolve_source(request, files)
    await check_linked_flow(await load_root_flow(files, ref), ref, files, lambda t: None)
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    result = await execute_flow(
        request,
        files=files,
        tools=MemberToolInvoker(registry, files),
        directives=DeviceDirectives(timings=FAST, scratch_dir=str(scratch)),
        devices=OneDevice(device),  # type: ignore[arg-type]
    )
    assert isinstance(result, FlowRunResult)
    return LinkedRun(result, files, reads, scope)


def lines(result: FlowRunResult) -> list[tuple[str, str, str | None]]:
    return [(s.kind, s.status, s.reason) for s in result.steps]


async def test_a_snapshot_compares_with_the_baseline_member(proj: Path, tmp_path: Path) -> None:
    device = FakeDevice()
    write(flows(proj) / "main.yaml", "snapshot: home")
    (baselines(proj) / f"{KEY}.png").write_bytes(P.encode_png(device.image))
    run = await run_over_link(proj, tmp_path, device)
    assert run.result.ok, lines(run.result)
    assert run.result.steps[0].reason is not None and run.result.steps[0].reason.startswith("diff 0.00%")


async def test_a_snapshot_without_a_baseline_member_fails_as_a_missing_baseline(
    proj: Path, tmp_path: Path
) -> None:
    device = FakeDevice()
    write(flows(proj) / "main.yaml", "snapshot: home")
    run = await run_over_link(proj, tmp_path, device)
    expected = f"{flows(proj)}/__baselines__/main/{KEY}.png"
    assert run.result.steps[0].status == "fail"
    assert (run.result.steps[0].reason or "").startswith(
        f'no baseline for "home" on this device class — expected {expected}, nothing was compared.'
    )


async def test_a_refused_baseline_errors_with_the_clients_reason(proj: Path, tmp_path: Path) -> None:
    device = FakeDevice()
    write(flows(proj) / "main.yaml", "snapshot: home")
    (tmp_path / "outside.png").write_bytes(b"x")
    (baselines(proj) / f"{KEY}.png").symlink_to(tmp_path / "outside.png")
    run = await run_over_link(proj, tmp_path, device)
    assert run.result.steps[0].status == "error"
    assert (run.result.steps[0].reason or "").startswith(
        f"{flows(proj)}/__baselines__/main/{KEY}.png is outside every root this client serves ("
    )


async def test_updates_are_kept_for_the_result_and_read_by_later_steps_and_nested_runs(
    proj: Path, tmp_path: Path
) -> None:
    device = FakeDevice()
    target = f"{flows(proj)}/__baselines__/main/{KEY}.png"
    inner = f"{flows(proj)}/__baselines__/inner/{KEY}.png"
    write(
        flows(proj) / "main.yaml",
        "snapshot: home",
        "snapshot: home",
        f"tool: read-file\n    args: {{ file: {target} }}",
        f"tool: flow-execute\n    args: {{ name: inner, project_root: {proj}, updateBaselines: true }}",
        f"tool: flow-execute\n    args: {{ name: inner, project_root: {proj}, updateBaselines: false }}",
    )
    write(flows(proj) / "inner.yaml", "snapshot: home")
    run = await run_over_link(proj, tmp_path, device, update=True)
    result = run.result
    assert [(k, s) for k, s, _ in lines(result)] == [("snapshot", "pass")] * 2 + [("tool", "pass")] * 3
    assert result.steps[0].reason == f"baseline captured; the client writes it when the run ends ({target})"
    assert result.steps[1].reason == f"baseline captured; the client updates it when the run ends ({target})"
    nested_update = result.steps[3].result
    assert (
        nested_update.steps[0].reason
        == f"baseline captured; the client writes it when the run ends ({inner})"
    )
    nested_compare = result.steps[4].result
    assert nested_compare.steps[0].status == "pass"  # it compared with the bytes the earlier nested run wrote
    assert run.reads == [P.encode_png(device.image)]  # the file argument got the baseline written earlier
    image = base64.b64encode(P.encode_png(device.image)).decode()
    assert result.baseline_writes is None  # flow_tools adds the list; here it comes from the files
    assert run.files.baseline_writes() == [
        {"__argentClientFile": True, "path": target, "content": image, "encoding": "base64"},
        {"__argentClientFile": True, "path": inner, "content": image, "encoding": "base64"},
    ]
    assert nested_update.baseline_writes is None


async def test_a_listed_baseline_makes_the_update_say_updates(proj: Path, tmp_path: Path) -> None:
    device = FakeDevice()
    write(flows(proj) / "main.yaml", "snapshot: home")
    (baselines(proj) / f"{KEY}.png").write_bytes(b"old")
    run = await run_over_link(proj, tmp_path, device, update=True)
    target = f"{flows(proj)}/__baselines__/main/{KEY}.png"
    assert (
        run.result.steps[0].reason == f"baseline captured; the client updates it when the run ends ({target})"
    )


async def test_the_client_writes_the_result_into_its_project(proj: Path, tmp_path: Path) -> None:
    device = FakeDevice(image=canvas((10, 20, 30)))
    write(flows(proj) / "main.yaml", "snapshot: home")
    (baselines(proj) / f"{KEY}.png").write_bytes(b"old")
    run = await run_over_link(proj, tmp_path, device, update=True, keep=True)
    wire = {"ok": True, "baselineWrites": run.files.baseline_writes()}
    applied = apply_baseline_writes(wire, run.scope)
    target = baselines(proj) / f"{KEY}.png"
    assert applied.written == (str(target),)
    assert target.read_bytes() == P.encode_png(device.image)


async def test_a_masked_snapshot_over_a_link_writes_the_masked_baseline_and_nothing_else(
    proj: Path, tmp_path: Path
) -> None:
    # The mask is painted on the server: the client gets one baseline, masked, as for any snapshot.
    clock = node("div", 0.1, 0.25, 0.5, 0.25, identifier="clock")
    device = FakeDevice(view=lambda: page(clock), image=canvas((10, 20, 30)))
    write(flows(proj) / "main.yaml", "snapshot: { name: home, mask: [{ id: clock }] }")
    run = await run_over_link(proj, tmp_path, device, update=True, keep=True)
    assert run.result.ok, lines(run.result)
    writes = run.files.baseline_writes()
    assert [w["path"] for w in writes] == [f"{flows(proj)}/__baselines__/main/{KEY}.png"]
    applied = apply_baseline_writes({"ok": True, "baselineWrites": writes}, run.scope)
    target = baselines(proj) / f"{KEY}.png"
    assert applied.written == (str(target),)
    img = P.decode_png(target.read_bytes())
    assert (img[20:40, 10:60, :3] == P.MASK_COLOUR).all()  # 100x80: x 10..60, y 20..40
    img[20:40, 10:60, :3] = (10, 20, 30)
    assert (img[..., :3] == (10, 20, 30)).all()
    # Compared over the link, the clock changed: the mask keeps it out of the compare.
    device.image[20:40, 10:60, :3] = (200, 0, 0)
    again = await run_over_link(proj, tmp_path, device, keep=True)
    assert again.result.ok, lines(again.result)
    assert again.files.baseline_writes() == []


# --------------------------------------------------------------------------------------------
# Seed gaps


async def test_targets_and_baselines_resolve_beside_the_canonical_path_of_the_flow_file(
    proj: Path, tmp_path: Path
) -> None:
    # Seed: "When the flow has a run: or snapshot: step, the run: targets and the baselines of the
    # flow resolve beside the canonical path of the flow file" (the runner looks for the baselines
    # at the paths the client sent them from).
    device = FakeDevice()
    vault = tmp_path / "vault"
    write(vault / "shared.yaml", "run: part.yaml", "snapshot: home")
    write(vault / "part.yaml", "echo: beside the real file")
    (flows(proj) / "main.yaml").symlink_to(vault / "shared.yaml")
    shots = vault / "__baselines__" / "shared"
    shots.mkdir(parents=True)
    (shots / f"{KEY}.png").write_bytes(P.encode_png(device.image))
    run = await run_over_link(proj, tmp_path, device, also_remove=(vault,))
    assert [(k, s) for k, s, _ in lines(run.result)] == [
        ("run", "pass"),
        ("echo", "pass"),
        ("snapshot", "pass"),
    ]
    assert run.result.steps[1].message == "beside the real file"
    assert (run.result.steps[2].reason or "").startswith("diff 0.00%")
    assert run.files.root.canonical == str(vault / "shared.yaml")


async def test_a_refused_baseline_of_an_updating_run_errors_with_the_clients_reason(
    proj: Path, tmp_path: Path
) -> None:
    # Seed: a snapshot: step with updateBaselines ... "A refused baseline makes the step report error
    # with the reason of the client" (a link to nothing is refused in a run that updates).
    device = FakeDevice()
    write(flows(proj) / "main.yaml", "snapshot: home", "echo: after")
    path = baselines(proj) / f"{KEY}.png"
    path.symlink_to(baselines(proj) / "nowhere.png")
    run = await run_over_link(proj, tmp_path, device, update=True)
    assert lines(run.result) == [
        ("snapshot", "error", f"{path} is a link to nothing — the client writes no baseline through it"),
        ("echo", "skip", None),
    ]
    assert run.files.baseline_writes() == []


async def test_a_tool_file_member_stands_for_the_baseline_at_the_same_path(
    proj: Path, tmp_path: Path
) -> None:
    # Seed "Tool files": when a baseline has the same path, the tool file member stands for the
    # baseline too; the snapshot compares with its bytes.
    device = FakeDevice()
    path = baselines(proj) / f"{KEY}.png"
    image = P.encode_png(device.image)
    path.write_bytes(image)
    write(flows(proj) / "main.yaml", "snapshot: home", f"tool: read-file\n    args: {{ file: {path} }}")
    run = await run_over_link(proj, tmp_path, device)
    assert [m.role for m in run.files.store] == ["tool"]
    assert [(k, s) for k, s, _ in lines(run.result)] == [("snapshot", "pass"), ("tool", "pass")]
    assert (run.result.steps[0].reason or "").startswith("diff 0.00%")
    assert run.reads == [image]
