"""A directive that names a file is one module plus its table entry (issue 26).

``tests/include_directive.py`` is a directive no release has: its module declares that it names a
flow file (``Directive.files``), and the table gets its entry; nothing else in argent knows it. Yet
the client sends the file it names (and what that file reaches, and the baselines of its snapshots),
the link preflight checks that file and refuses it when the client did, and the checks before a run
on this host read it (the script refusal, the device a run needs) — because every one of them asks
the reference graph, which asks the table."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from argent.client.collect import collect_flow_members
from argent.errors import FlowError, PolicyRefusal
from argent.flows.parse import parse_flow
from argent.link.codec import to_wire
from argent.runner.execute import FlowRequest, flow_needs_device, prepare_run
from argent.runner.files import DiskFlowFiles
from argent.runner.member_files import MemberFlowFiles
from argent.server.members import read_members
from argent.tools.builtin import build_registry
from argent.tools.call_policy import refuse_script_steps
from argent.tools.invoker import RegistryInvoker
from argent.tools.link_preflight import check_linked_flow
from tests.flow_files import flows, new_project, write
from tests.include_directive import registered


@pytest.fixture(autouse=True)
def include(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with registered(monkeypatch):
        yield


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return new_project(tmp_path)


def main_of(proj: Path) -> Path:
    return flows(proj) / "main.yaml"


def collect(proj: Path, **args: Any) -> Any:
    main = main_of(proj)
    return collect_flow_members(
        str(main), main.read_bytes(), {"project_root": str(proj), "name": "main", **args}, []
    )


async def no_uploads(upload_id: str, content_hash: Any, path: str) -> bytes:
    raise AssertionError


async def preflight(proj: Path, *, sent: bool = True) -> None:
    """The tool-server's preflight of the flow, with the members this client collects for it."""
    collection = collect(proj)
    wire = [
        to_wire(m.wire(content=base64.b64encode(m.data).decode()) if m.data is not None else m.wire())
        for m in collection.members
    ]
    store = await read_members(wire, owner="main", fetch_upload=no_uploads) if sent else None
    data = main_of(proj).read_bytes()
    files = MemberFlowFiles.for_root(
        str(main_of(proj)), collection.canonical, collection.spelling, data, store
    )
    await check_linked_flow(parse_flow(data.decode()), files.root, files, lambda tool: None)


async def prepared(proj: Path) -> Any:
    return await prepare_run(FlowRequest(name="main", project_root=str(proj)), DiskFlowFiles())


def test_the_file_it_names_is_collected_with_all_it_reaches_and_its_baselines(proj: Path) -> None:
    write(main_of(proj), "include: parts/part.yaml")
    write(flows(proj) / "parts" / "part.yaml", "snapshot: home", "run: deeper.yaml")
    write(flows(proj) / "parts" / "deeper.yaml", "echo: deeper")
    shots = flows(proj) / "__baselines__" / "main"
    shots.mkdir(parents=True)
    (shots / "home__chromium-1000x800.png").write_bytes(b"\x89PNG home")
    collection = collect(proj, device="chromium-cdp-9222")
    d = str(flows(proj))
    assert [(m.role, m.key, m.state) for m in collection.members] == [
        ("flow", f"{d}\0parts/part.yaml", None),
        ("flow", f"{d}/parts\0deeper.yaml", None),
        ("baseline", f"{d}/__baselines__/main/home__chromium-1000x800.png", None),
    ]


async def test_the_preflight_checks_the_file_it_names(proj: Path) -> None:
    write(main_of(proj), "echo: first", "include: part.yaml")
    write(flows(proj) / "part.yaml", "script: ./seed.sh")
    with pytest.raises(FlowError) as info:
        await preflight(proj)
    assert info.value.message.splitlines()[1:] == [
        f"step 1 in {flows(proj)}/part.yaml: script: {{ path: ./seed.sh }} — a replay over a link runs no script: step"
    ]


async def test_the_preflight_refuses_a_file_the_client_refused_and_an_older_client(
    proj: Path, tmp_path: Path
) -> None:
    write(tmp_path / "elsewhere" / "part.yaml", "echo: outside")
    write(main_of(proj), "include: part.yaml")
    (flows(proj) / "part.yaml").symlink_to(tmp_path / "elsewhere" / "part.yaml")
    with pytest.raises(FlowError) as info:
        await preflight(proj)
    assert info.value.message.splitlines()[1:] == [
        f"step 1 in {flows(proj)}/main.yaml: include: part.yaml — the client did not send the flow: "
        f"part.yaml is outside every root this client serves ({proj}, {flows(proj)})"
    ]
    with pytest.raises(FlowError) as older:
        await preflight(proj, sent=False)
    assert "include: part.yaml — the client sent no fragments with the call" in older.value.message


async def test_the_checks_before_a_run_read_the_file_it_names(proj: Path) -> None:
    write(main_of(proj), "include: part.yaml")
    write(flows(proj) / "part.yaml", "echo: part")
    tools = RegistryInvoker(build_registry(), None)
    assert not flow_needs_device((await prepared(proj)).graph, tools, platform_known=False)
    write(flows(proj) / "part.yaml", "tap: Save", "script: ./seed.sh")
    run = await prepared(proj)
    assert flow_needs_device(run.graph, tools, platform_known=False)
    with pytest.raises(PolicyRefusal) as info:
        refuse_script_steps(run.graph)
    assert (
        f"step 2 in {flows(proj)}/part.yaml: script: {{ path: ./seed.sh }} — scripts are off on this tool-server"
        in (info.value.message)
    )
