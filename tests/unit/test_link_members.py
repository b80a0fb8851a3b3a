"""Seed "Members", "Spelling", "Tool files" and "Baselines": the client's collection on real files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from argent.client.collect import Collection, collect_flow_members
from argent.link.codec import to_wire
from argent.link.members import Member
from argent.link.spelling import Spelling
from argent.tools.flow_tools import FLOW_FILE_INPUT, FLOW_PATH_INPUT
from tests.flow_files import flows, new_project, write

SCREENSHOT_DIFF: dict[str, Any] = {
    "name": "screenshot-diff",
    "fileInputs": [
        {"target": "baselinePath", "path": "${baselinePath}", "kind": "file", "optional": True},
        {"target": "currentPath", "path": "${currentPath}", "kind": "file", "optional": True},
        {"target": "outputDir", "path": "${outputDir}", "kind": "probe", "optional": True},
    ],
}
LISTING: list[dict[str, Any]] = [
    SCREENSHOT_DIFF,
    {
        "name": "open-file",
        "fileInputs": [
            {"target": "file", "path": "${file}", "kind": "file", "unwrapWhenSet": "url"},
            {"target": "joined", "path": "${dir}/${name}.png", "kind": "file"},
        ],
    },
]


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return new_project(tmp_path)


def collect(
    proj: Path, name: str = "main", listing: list[dict[str, Any]] | None = None, **args: Any
) -> Collection:
    path = f"{proj}/.argent/flows/{name}.yaml"
    return collect_flow_members(
        path, Path(path).read_bytes(), {"project_root": str(proj), "name": name, **args}, listing or LISTING
    )


def by_role(collection: Collection, role: str) -> list[Member]:
    return [m for m in collection.members if m.role == role]


def keys(collection: Collection, role: str = "flow") -> list[str]:
    return [m.key for m in by_role(collection, role)]


# --------------------------------------------------------------------------------------------
# The flow file input


def test_the_flow_file_gets_its_canonical_path_and_spelling(proj: Path, tmp_path: Path) -> None:
    real = write(tmp_path / "vault" / "main.yaml", "echo: hi")
    (flows(proj) / "main.yaml").symlink_to(real)
    collection = collect(proj)
    assert collection.canonical == str(real)
    assert collection.spelling == Spelling("listed")
    assert collection.members == ()


# --------------------------------------------------------------------------------------------
# Members: the run: walk


def test_run_targets_of_all_steps_and_when_blocks_are_members_with_every_field(proj: Path) -> None:
    write(
        flows(proj) / "main.yaml",
        "run: a.yaml",
        "when: { platform: ios }\n    steps:\n      - run: sub/b.yaml",
    )
    a = write(flows(proj) / "a.yaml", "echo: a")
    write(flows(proj) / "sub" / "b.yaml", "run: ../c.yaml")
    write(flows(proj) / "c.yaml", "echo: c")
    collection = collect(proj)
    d = str(flows(proj))
    assert keys(collection) == [f"{d}\0a.yaml", f"{d}\0sub/b.yaml", f"{d}/sub\0../c.yaml"]
    first = collection.members[0]
    st = os.stat(a)
    assert first.wire_head() == {
        "role": "flow",
        "key": f"{d}\0a.yaml",
        "path": f"{d}/a.yaml",
        "canonical": f"{d}/a.yaml",
        "spelling": {"state": "listed"},
        "size": st.st_size,
        "mtimeMs": st.st_mtime_ns / 1_000_000,
    }
    assert first.data == a.read_bytes() and first.wire_tail() == {}
    # a target resolves beside the real file that names it: ../c.yaml beside sub/b.yaml
    assert collection.members[2].path == f"{d}/sub/../c.yaml"
    assert collection.members[2].canonical == f"{d}/c.yaml"


def test_targets_resolve_beside_the_real_file_of_a_symlinked_fragment(proj: Path) -> None:
    shared = proj / "shared"
    write(shared / "login.yaml", "run: helper.yaml")
    write(shared / "helper.yaml", "echo: h")
    write(flows(proj) / "main.yaml", "run: login.yaml")
    (flows(proj) / "login.yaml").symlink_to(shared / "login.yaml")
    collection = collect(proj)
    assert keys(collection) == [f"{flows(proj)}\0login.yaml", f"{shared}\0helper.yaml"]
    assert collection.members[0].canonical == str(shared / "login.yaml")
    assert collection.members[1].path == f"{shared}/helper.yaml"


def test_a_fragment_whose_real_file_is_outside_the_roots_is_refused(proj: Path, tmp_path: Path) -> None:
    write(tmp_path / "shared" / "login.yaml", "echo: x")
    write(flows(proj) / "main.yaml", "run: login.yaml")
    (flows(proj) / "login.yaml").symlink_to(tmp_path / "shared" / "login.yaml")
    login = collect(proj).members[0]
    assert (login.canonical, login.state, login.data) == (
        str(tmp_path / "shared" / "login.yaml"),
        "refused",
        None,
    )
    assert login.error == f"login.yaml is outside every root this client serves ({proj}, {flows(proj)})"


def test_each_directory_target_pair_once_and_a_cycle_stops(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "run: a.yaml", "run: a.yaml", "run: b.yaml")
    write(flows(proj) / "a.yaml", "run: b.yaml")
    write(flows(proj) / "b.yaml", "run: a.yaml", "run: main.yaml")
    collection = collect(proj)
    d = str(flows(proj))
    assert keys(collection) == [f"{d}\0a.yaml", f"{d}\0b.yaml", f"{d}\0main.yaml"]


def test_the_walk_stops_at_20_levels(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "run: f1.yaml")
    for i in range(1, 30):
        write(flows(proj) / f"f{i}.yaml", f"run: f{i + 1}.yaml")
    collection = collect(proj)
    # the root is level 1: fragments f1..f19 are levels 2..20
    assert keys(collection) == [f"{flows(proj)}\0f{i}.yaml" for i in range(1, 20)]


def test_a_file_reached_at_several_depths_is_walked_from_the_shallowest(proj: Path) -> None:
    write(flows(proj) / "main.yaml", *[f"run: f{i}.yaml" for i in (1,)], "run: deep.yaml")
    for i in range(1, 19):
        write(flows(proj) / f"f{i}.yaml", f"run: f{i + 1}.yaml")
    write(flows(proj) / "f19.yaml", "run: deep.yaml")
    write(flows(proj) / "deep.yaml", "run: leaf.yaml")
    write(flows(proj) / "leaf.yaml", "echo: leaf")
    collection = collect(proj)
    assert f"{flows(proj)}\0leaf.yaml" in keys(collection)


def test_a_missing_target_is_missing_with_the_nearest_real_directory(proj: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (flows(proj) / "lib").symlink_to(real)
    write(flows(proj) / "main.yaml", "run: gone.yaml")
    collection = collect(proj)
    gone = collection.members[0]
    assert (gone.state, gone.canonical, gone.data) == ("missing", f"{flows(proj)}/gone.yaml", None)
    assert gone.wire_head().keys() == {"role", "key", "path", "canonical", "spelling"}
    assert gone.wire_tail() == {"state": "missing"}


def test_spelling_case_folded_and_absent(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "run: login.yaml", "run: nothing.yaml", "run: weird.yaml")
    write(flows(proj) / "Login.yaml", "echo: x")
    write(flows(proj) / "WEIRD.YAML", "echo: x")
    members = collect(proj).members
    assert members[0].spelling == Spelling("case_folded", actual="Login.yaml", addressable=True)
    assert members[0].wire_head()["spelling"] == {
        "state": "case_folded",
        "actual": "Login.yaml",
        "addressable": True,
    }
    assert members[1].spelling == Spelling("absent")
    assert members[2].spelling == Spelling("case_folded", actual="WEIRD.YAML", addressable=False)


def test_refused_members_carry_the_reason(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "run: dir.yaml", "run: loop.yaml")
    (flows(proj) / "dir.yaml").mkdir()
    (flows(proj) / "loop.yaml").symlink_to(flows(proj) / "loop.yaml")
    members = collect(proj).members
    assert members[0].wire_tail() == {
        "state": "refused",
        "error": "EISDIR: illegal operation on a directory, read",
    }
    assert members[1].state == "refused" and (members[1].error or "").startswith("ELOOP: ")


def test_an_unparsable_fragment_is_sent_but_not_walked(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "run: bad.yaml")
    (flows(proj) / "bad.yaml").write_text("steps: ][\n")
    members = collect(proj).members
    assert [m.key for m in members] == [f"{flows(proj)}\0bad.yaml"] and members[0].data is not None


# --------------------------------------------------------------------------------------------
# Nested flows


def test_nested_flows_named_by_name_and_absolute_root_are_followed(proj: Path) -> None:
    write(
        flows(proj) / "main.yaml",
        f"tool: flow-execute\n    args: {{ name: inner, project_root: {proj} }}",
        f"tool: flow-execute\n    args: {{ flow_path: {flows(proj)}/other.yaml, project_root: {proj} }}",
        "tool: flow-execute\n    args: { name: inner2, project_root: relative/root }",
        f"tool: flow-execute\n    args: {{ name: inner3, project_root: {proj}/../proj }}",
    )
    write(flows(proj) / "inner.yaml", "run: frag.yaml")
    write(flows(proj) / "frag.yaml", "echo: f")
    write(flows(proj) / "other.yaml", "echo: o")
    collection = collect(proj)
    d = str(flows(proj))
    assert keys(collection) == [f"{d}\0inner.yaml", f"{d}\0frag.yaml"]
    assert collection.members[0].path == f"{proj}/.argent/flows/inner.yaml"


def test_a_nested_flow_counts_as_one_level(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "run: f1.yaml")
    for i in range(1, 18):
        write(flows(proj) / f"f{i}.yaml", f"run: f{i + 1}.yaml")
    write(flows(proj) / "f18.yaml", f"tool: flow-execute\n    args: {{ name: n1, project_root: {proj} }}")
    write(flows(proj) / "n1.yaml", "run: last.yaml")  # n1 is level 20; last.yaml would be 21
    write(flows(proj) / "last.yaml", "echo: x")
    found = keys(collect(proj))
    assert f"{flows(proj)}\0n1.yaml" in found and f"{flows(proj)}\0last.yaml" not in found


# --------------------------------------------------------------------------------------------
# Tool files


def test_file_arguments_are_sent_once_per_path_with_their_key_as_written(proj: Path) -> None:
    png = proj / "shots" / "a.PNG"
    png.parent.mkdir()
    png.write_bytes(b"\x89PNG a")
    write(
        flows(proj) / "main.yaml",
        f"tool: screenshot-diff\n    args: {{ baselinePath: {png}, currentPath: {png}, outputDir: {proj}/out }}",
        "when: { platform: ios }\n    steps:\n"
        f"      - tool: screenshot-diff\n        args: {{ baselinePath: {proj}/shots/missing.png }}",
        "tool: screenshot-diff\n    args: { baselinePath: relative.png, currentPath: /abs/not-an-image.jpg }",
        f"tool: open-file\n    args: {{ file: {png}, url: http://x }}",
        f"tool: open-file\n    args: {{ dir: {proj}, name: a }}",
        f"tool: keyboard\n    args: {{ text: {png} }}",
    )
    tools = by_role(collect(proj), "tool")
    assert [(m.key, m.path, m.state) for m in tools] == [
        (str(png), str(png), None),
        (f"{proj}/shots/missing.png", f"{proj}/shots/missing.png", "missing"),
    ]
    assert tools[0].data == b"\x89PNG a" and tools[0].wire_head().get("canonical") is None


def test_tool_files_follow_the_policy_and_their_types(proj: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"x")
    (proj / "text.txt").write_text("t")
    (proj / "link.png").symlink_to(proj / "text.txt")
    (proj / "dir.png").mkdir()
    write(
        flows(proj) / "main.yaml",
        f"tool: screenshot-diff\n    args: {{ baselinePath: {outside}, currentPath: {proj}/link.png }}",
        f"tool: screenshot-diff\n    args: {{ baselinePath: {proj}/dir.png }}",
        f"tool: screenshot-diff\n    args: {{ baselinePath: {tmp_path}/gone.png }}",
    )
    tools = by_role(collect(proj), "tool")
    assert [(m.state, m.error) for m in tools] == [
        ("refused", f"{outside} is outside every root this client serves ({proj}, {flows(proj)})"),
        ("refused", f"{proj}/link.png links to a file that is not one of .png, .yaml"),
        ("refused", "EISDIR: illegal operation on a directory, read"),
        ("refused", f"{tmp_path}/gone.png is outside every root this client serves ({proj}, {flows(proj)})"),
    ]


def test_tool_files_of_fragments_and_nested_flows_are_sent(proj: Path) -> None:
    png = proj / "x.png"
    png.write_bytes(b"png")
    write(
        flows(proj) / "main.yaml",
        "run: frag.yaml",
        f"tool: flow-execute\n    args: {{ name: n, project_root: {proj} }}",
    )
    write(flows(proj) / "frag.yaml", f"tool: screenshot-diff\n    args: {{ baselinePath: {png} }}")
    write(flows(proj) / "n.yaml", f"tool: screenshot-diff\n    args: {{ currentPath: {png} }}")
    assert keys(collect(proj), "tool") == [str(png)]


# --------------------------------------------------------------------------------------------
# Baselines


def baselines(proj: Path, name: str = "main") -> Path:
    d = flows(proj) / "__baselines__" / name
    d.mkdir(parents=True, exist_ok=True)
    return d


def test_no_snapshot_step_no_baselines(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "echo: x")
    (baselines(proj) / "home__chromium-1000x800.png").write_bytes(b"p")
    assert by_role(collect(proj), "baseline") == []


def test_a_comparing_run_sends_the_bytes_of_its_snapshot_names_only(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "snapshot: home", "run: frag.yaml")
    write(flows(proj) / "frag.yaml", "when: { platform: ios }\n    steps:\n      - snapshot: cart")
    d = baselines(proj)
    for f in (
        "home__chromium-1000x800.png",
        "home__ios-390x844.png",
        "cart__ios-1x1.png",
        "other__chromium-1x1.png",
    ):
        (d / f).write_bytes(f.encode())
    members = by_role(collect(proj), "baseline")
    assert [(m.key, m.data) for m in members] == [
        (f"{d}/cart__ios-1x1.png", b"cart__ios-1x1.png"),
        (f"{d}/home__chromium-1000x800.png", b"home__chromium-1000x800.png"),
        (f"{d}/home__ios-390x844.png", b"home__ios-390x844.png"),
    ]
    assert members[0].path == members[0].key


def test_the_platform_filter_of_a_chromium_device_or_the_platform_arg(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "snapshot: home")
    d = baselines(proj)
    for f in ("home__chromium-1000x800.png", "home__ios-390x844.png"):
        (d / f).write_bytes(b"p")
    assert keys(collect(proj, device="chromium-cdp-9222"), "baseline") == [f"{d}/home__chromium-1000x800.png"]
    assert keys(collect(proj, platform="ios"), "baseline") == [f"{d}/home__ios-390x844.png"]
    assert len(keys(collect(proj, device="emulator-5554"), "baseline")) == 2


def test_an_updating_run_lists_every_png_without_bytes(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "snapshot: home")
    d = baselines(proj)
    (d / "home__chromium-1x1.png").write_bytes(b"p")
    (d / "stale__ios-1x1.png").write_bytes(b"p")
    (d / "notes.txt").write_text("x")
    members = by_role(collect(proj, updateBaselines=True), "baseline")
    assert [(m.key, m.state, m.data) for m in members] == [
        (f"{d}/home__chromium-1x1.png", "listed", None),
        (f"{d}/stale__ios-1x1.png", "listed", None),
    ]
    assert members[0].wire_head() == {
        "role": "baseline",
        "key": f"{d}/home__chromium-1x1.png",
        "path": f"{d}/home__chromium-1x1.png",
    }


def test_a_link_to_nothing_is_missing_when_comparing_and_refused_when_updating(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "snapshot: home")
    d = baselines(proj)
    (d / "home__chromium-1x1.png").symlink_to(d / "nowhere.png")
    compare = by_role(collect(proj), "baseline")
    update = by_role(collect(proj, updateBaselines=True), "baseline")
    assert compare[0].state == "missing"
    assert (update[0].state, update[0].error) == (
        "refused",
        f"{d}/home__chromium-1x1.png is a link to nothing — the client writes no baseline through it",
    )


def test_a_png_name_linking_out_of_the_roots_or_to_another_type_is_refused(
    proj: Path, tmp_path: Path
) -> None:
    write(flows(proj) / "main.yaml", "snapshot: home")
    d = baselines(proj)
    (tmp_path / "out.png").write_bytes(b"p")
    (proj / "t.txt").write_text("t")
    (d / "home__a-1x1.png").symlink_to(tmp_path / "out.png")
    (d / "home__b-1x1.png").symlink_to(proj / "t.txt")
    members = by_role(collect(proj), "baseline")
    assert [m.state for m in members] == ["refused", "refused"]
    assert (members[0].error or "").startswith(f"{d}/home__a-1x1.png is outside every root")
    assert members[1].error == f"{d}/home__b-1x1.png links to a file that is not a PNG file"


def test_nested_runs_have_their_own_directory_keyed_by_the_step_name(proj: Path, tmp_path: Path) -> None:
    write(
        flows(proj) / "main.yaml",
        f"tool: flow-execute\n    args: {{ name: inner, project_root: {proj} }}",
        f"tool: flow-execute\n    args: {{ name: upd, project_root: {proj}, updateBaselines: true }}",
    )
    write(flows(proj) / "inner.yaml", "snapshot: a")
    write(flows(proj) / "upd.yaml", "snapshot: b")
    (baselines(proj, "inner") / "a__chromium-1x1.png").write_bytes(b"a")
    (baselines(proj, "upd") / "b__chromium-1x1.png").write_bytes(b"b")
    (baselines(proj, "main") / "x__chromium-1x1.png").write_bytes(b"x")
    members = by_role(collect(proj), "baseline")
    assert [(m.key, m.state) for m in members] == [
        (f"{flows(proj)}/__baselines__/inner/a__chromium-1x1.png", None),
        (f"{flows(proj)}/__baselines__/upd/b__chromium-1x1.png", "listed"),
    ]


def test_a_nested_run_inherits_updates_unless_its_step_sets_them(proj: Path) -> None:
    write(
        flows(proj) / "main.yaml",
        f"tool: flow-execute\n    args: {{ name: inherit, project_root: {proj} }}",
        f"tool: flow-execute\n    args: {{ name: compare, project_root: {proj}, updateBaselines: false }}",
    )
    write(flows(proj) / "inherit.yaml", "snapshot: a")
    write(flows(proj) / "compare.yaml", "snapshot: b")
    (baselines(proj, "inherit") / "a__chromium-1x1.png").write_bytes(b"a")
    (baselines(proj, "compare") / "b__chromium-1x1.png").write_bytes(b"b")
    members = by_role(collect(proj, updateBaselines=True), "baseline")
    assert [m.state for m in members] == ["listed", None]


def test_a_directory_shared_by_a_comparing_and_an_updating_run(proj: Path, tmp_path: Path) -> None:
    # Two flow names whose real files are one file: both runs key their baselines at its stem.
    write(flows(proj) / "shared.yaml", "snapshot: home")
    (flows(proj) / "alias.yaml").symlink_to(flows(proj) / "shared.yaml")
    write(
        flows(proj) / "main.yaml",
        f"tool: flow-execute\n    args: {{ name: shared, project_root: {proj} }}",
        f"tool: flow-execute\n    args: {{ name: alias, project_root: {proj}, updateBaselines: true }}",
    )
    d = baselines(proj, "shared")
    (d / "home__chromium-1x1.png").write_bytes(b"h")
    (d / "other__chromium-1x1.png").write_bytes(b"o")
    members = by_role(collect(proj), "baseline")
    assert [(m.key.rsplit("/", 1)[1], m.state, m.data) for m in members] == [
        ("home__chromium-1x1.png", None, b"h"),
        ("other__chromium-1x1.png", "listed", None),
    ]


def test_nothing_is_sent_for_a_baseline_directory_outside_the_roots(proj: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other / ".argent" / "flows" / "inner.yaml", "snapshot: a")
    d = other / ".argent" / "flows" / "__baselines__" / "inner"
    d.mkdir(parents=True)
    (d / "a__chromium-1x1.png").write_bytes(b"a")
    write(
        flows(proj) / "main.yaml", f"tool: flow-execute\n    args: {{ name: inner, project_root: {other} }}"
    )
    collection = collect(proj)
    assert by_role(collection, "baseline") == []
    assert by_role(collection, "flow")[0].state == "refused"


def test_a_tool_file_member_stands_for_the_baseline_of_the_same_path(proj: Path) -> None:
    d = baselines(proj)
    png = d / "home__chromium-1x1.png"
    png.write_bytes(b"h")
    write(
        flows(proj) / "main.yaml",
        "snapshot: home",
        f"tool: screenshot-diff\n    args: {{ baselinePath: {png} }}",
    )
    collection = collect(proj)
    assert [(m.role, m.key) for m in collection.members] == [("tool", str(png))]


def test_baselines_come_last(proj: Path) -> None:
    write(flows(proj) / "main.yaml", "snapshot: home", "run: frag.yaml")
    write(flows(proj) / "frag.yaml", "echo: f")
    (baselines(proj) / "home__chromium-1x1.png").write_bytes(b"h")
    assert [m.role for m in collect(proj).members] == ["flow", "baseline"]


def test_the_key_is_the_stem_of_path_when_the_canonical_stem_is_not_a_flow_name(
    proj: Path, tmp_path: Path
) -> None:
    real = write(tmp_path / "vault" / "not a name.yaml", "snapshot: home")
    (flows(proj) / "main.yaml").symlink_to(real)
    d = tmp_path / "vault" / "__baselines__" / "main"
    d.mkdir(parents=True)
    (d / "home__chromium-1x1.png").write_bytes(b"h")
    # the vault is a root: it is the directory of the flow's real file
    assert keys(collect(proj), "baseline") == [f"{d}/home__chromium-1x1.png"]
    assert os.path.isdir(d)


# --------------------------------------------------------------------------------------------
# Seed gaps


def test_spelling_is_listed_when_the_directory_cannot_be_read(proj: Path) -> None:
    # Seed "Spelling": the client also sends `listed` when it cannot read the directory.
    write(flows(proj) / "main.yaml", "run: nodir/x.yaml")
    (member,) = collect(proj).members
    assert (member.state, member.spelling) == ("missing", Spelling("listed"))
    assert member.wire_head()["spelling"] == {"state": "listed"}


def test_a_flow_execute_step_has_no_file_argument_even_when_listed_as_one(proj: Path) -> None:
    # Seed "Tool files": a tool: flow-execute step has no file argument: the client follows it as
    # a nested flow (flow_path is "${flow_path}" in GET /tools, yet it is never sent as a tool file).
    listing = [
        *LISTING,
        {"name": "flow-execute", "fileInputs": [to_wire(FLOW_PATH_INPUT), to_wire(FLOW_FILE_INPUT)]},
    ]
    write(flows(proj) / "other.yaml", "echo: o")
    write(flows(proj) / "inner.yaml", "echo: i")
    write(
        flows(proj) / "main.yaml",
        f"tool: flow-execute\n    args: {{ flow_path: {flows(proj)}/other.yaml, project_root: {proj} }}",
        f"tool: flow-execute\n    args: {{ name: inner, project_root: {proj} }}",
    )
    collection = collect(proj, listing=listing)
    assert [(m.role, m.key) for m in collection.members] == [("flow", f"{flows(proj)}\0inner.yaml")]


def test_a_nested_run_takes_the_platform_filter_of_the_call_not_of_its_step(proj: Path) -> None:
    # Seed "Baselines": for a nested run, the client applies the platform filter of the call. It
    # ignores the device and platform of the step.
    write(
        flows(proj) / "main.yaml",
        f"tool: flow-execute\n    args: {{ name: inner, project_root: {proj}, device: chromium-cdp-1, "
        "platform: ios }",
    )
    write(flows(proj) / "inner.yaml", "snapshot: a")
    d = baselines(proj, "inner")
    for f in ("a__android-1x1.png", "a__chromium-1x1.png", "a__ios-1x1.png"):
        (d / f).write_bytes(f.encode())
    assert keys(collect(proj, platform="android"), "baseline") == [f"{d}/a__android-1x1.png"]
    assert keys(collect(proj, device="chromium-cdp-9222"), "baseline") == [f"{d}/a__chromium-1x1.png"]
    assert keys(collect(proj), "baseline") == [
        f"{d}/a__android-1x1.png",
        f"{d}/a__chromium-1x1.png",
        f"{d}/a__ios-1x1.png",
    ]
