"""The runner against real files: temp projects, real symlinks, DiskFlowFiles and parse_flow."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from attrs import define, field

from argent.errors import (
    DeviceResolutionError,
    FlowError,
    FlowParseError,
    InvalidToolInputError,
    ToolExecutionError,
)
from argent.flows.model import Flow, ScriptStep
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.execute import FlowRequest, execute_flow, read_prerequisite
from argent.runner.files import DiskFlowFiles, FlowRef, Spelling
from argent.runner.report import FlowRunResult, PrerequisiteNotice, StepReport
from tests.flow_files import flows, new_project

# --------------------------------------------------------------------------------------------
# Doubles and helpers


@define
class Device:
    id: str
    platform: str
    endpoint: str | None = None


@define
class Provider:
    booted: list[Device] = field(factory=list)
    listed: int = 0

    async def get(self, device_id: str) -> Device:
        for device in self.booted:
            if device.id == device_id:
                return device
        raise DeviceResolutionError(f'Device "{device_id}" not found.')

    async def list_booted(self) -> list[Device]:
        self.listed += 1
        return list(self.booted)


class NoListing(Provider):
    async def list_booted(self) -> list[Device]:
        raise AssertionError("a device-free flow must not list devices")


@define
class Tools:
    declared: dict[str, frozenset[str]] = field(
        factory=lambda: {
            "note": frozenset({"text"}),
            "tap": frozenset({"udid", "x", "y"}),
            "sweep": frozenset({"devices"}),
        }
    )
    calls: list[tuple[str, dict[str, Any]]] = field(factory=list)

    def params(self, tool: str) -> frozenset[str] | None:
        return self.declared.get(tool)

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        self.calls.append((tool, args))
        return ToolOutcome(result={"tool": tool})


class FoldingFiles(DiskFlowFiles):
    """Disk files whose directories list some basenames in another case (a case-insensitive FS)."""

    def __init__(self, folds: dict[str, str]) -> None:
        self.folds = folds

    def _fold(self, ref: FlowRef, written: str) -> FlowRef:
        base = written.rsplit("/", 1)[-1]
        actual = self.folds.get(base)
        if actual is None:
            return ref
        addressable = actual.endswith(".yaml") and "." not in actual[:-5]
        return attrs.evolve(ref, spelling=Spelling("case_folded", actual=actual, addressable=addressable))

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef:
        return self._fold(await super().fragment(naming, target), target)

    async def named_flow(self, project_root: str, name: str) -> FlowRef:
        return self._fold(await super().named_flow(project_root, name), f"{name}.yaml")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def steps(*lines: str, prerequisite: str | None = None) -> str:
    body = "steps:\n" + "".join(f"  - {line}\n" for line in lines)
    if prerequisite is not None:
        body += f"executionPrerequisite: {prerequisite}\n"
    return body


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return new_project(tmp_path)


async def execute(
    project: Path,
    name: str | None = None,
    *,
    flow_path: str | None = None,
    files: DiskFlowFiles | None = None,
    tools: Tools | None = None,
    devices: Provider | None = None,
    device: str | None = None,
    platform: str | None = None,
    acknowledged: bool = True,
    progress: list[StepReport] | None = None,
    abort: asyncio.Event | None = None,
    directives: Any = None,
    update_baselines: bool = False,
) -> FlowRunResult | PrerequisiteNotice:
    async def on_progress(report: StepReport) -> None:
        assert progress is not None
        progress.append(report)

    return await execute_flow(
        FlowRequest(
            name=name,
            flow_path=flow_path,
            project_root=str(project),
            device=device,
            platform=platform,
            update_baselines=update_baselines,
            prerequisite_acknowledged=acknowledged,
        ),
        files=files or DiskFlowFiles(),
        tools=tools or Tools(),
        directives=directives,
        devices=devices,
        on_progress=on_progress if progress is not None else None,
        abort=abort,
    )


async def run(project: Path, name: str = "main", **kw: Any) -> FlowRunResult:
    result = await execute(project, name, **kw)
    assert isinstance(result, FlowRunResult)
    return result


def lines(result: FlowRunResult) -> list[str]:
    return [f"{s.kind}:{s.status}:{s.depth}" for s in result.steps]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --------------------------------------------------------------------------------------------
# Composition


async def test_fragment_steps_run_one_level_deeper_attributed_to_the_fragment(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: login.yaml", "echo: done"))
    write(flows(project) / "login.yaml", steps("echo: signing in", "tool: note"))
    result = await run(project)
    assert [f"{s.kind}:{s.status}" for s in result.steps] == [
        "run:pass",
        "echo:pass",
        "tool:pass",
        "echo:pass",
    ]
    assert [s.flow for s in result.steps] == ["login", "login", "login", "main"]
    assert [s.depth for s in result.steps] == [0, 1, 1, 0]
    assert result.steps[0].target == "login.yaml"
    assert [s.index for s in result.steps] == [0, 1, 2, 3]
    assert result.ok and result.passed == 2 and result.device == ""


async def test_nested_fragments_add_a_level_each(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: login.yaml", "echo: done"))
    write(flows(project) / "login.yaml", steps("tool: note", "run: inner.yaml"))
    write(flows(project) / "inner.yaml", steps("echo: deepest"))
    result = await run(project)
    assert lines(result) == ["run:pass:0", "tool:pass:1", "run:pass:1", "echo:pass:2", "echo:pass:0"]
    assert [s.flow for s in result.steps] == ["login", "login", "inner", "inner", "main"]


async def test_progress_streams_fragment_lines_with_their_attribution(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: login.yaml", "echo: done"))
    write(flows(project) / "login.yaml", steps("tool: note"))
    progress: list[StepReport] = []
    result = await run(project, progress=progress)
    assert [f"{s.kind}:{s.flow}" for s in progress] == ["run:login", "tool:login", "echo:main"]
    assert progress == result.steps


async def test_a_bare_target_resolves_beside_the_containing_file(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: helpers/steps.yaml"))
    write(flows(project) / "helpers" / "steps.yaml", steps("run: login.yaml"))
    write(flows(project) / "helpers" / "login.yaml", steps("echo: from helpers"))
    write(flows(project) / "login.yaml", steps("echo: WRONG FILE"))
    result = await run(project)
    assert [s.message for s in result.steps if s.kind == "echo"] == ["from helpers"]
    assert [s.flow for s in result.steps] == ["steps", "login", "login"]


async def test_root_login_composing_sub_login_is_no_cycle(project: Path) -> None:
    write(flows(project) / "login.yaml", steps("run: sub/login.yaml"))
    write(flows(project) / "sub" / "login.yaml", steps("echo: sub"))
    result = await run(project, "login")
    assert lines(result) == ["run:pass:0", "echo:pass:1"]
    assert result.steps[0].flow == "sub/login"


async def test_display_names_never_repeat_the_root_name(project: Path) -> None:
    write(flows(project) / "login.yaml", steps("run: helpers/login.yaml"))
    write(flows(project) / "checkout.yaml", steps("run: helpers/login.yaml"))
    write(flows(project) / "helpers" / "login.yaml", steps("echo: in helper"))
    as_login = await run(project, "login")
    assert [s.flow for s in as_login.steps] == ["helpers/login", "helpers/login"]
    as_checkout = await run(project, "checkout")
    assert [s.flow for s in as_checkout.steps] == ["login", "login"]


async def test_a_nested_bare_same_stem_fragment_is_shown_as_dot_slash(project: Path) -> None:
    write(flows(project) / "login.yaml", steps("run: helpers/steps.yaml"))
    write(flows(project) / "helpers" / "steps.yaml", steps("run: login.yaml"))
    write(flows(project) / "helpers" / "login.yaml", steps("echo: x"))
    result = await run(project, "login")
    assert [s.flow for s in result.steps] == ["steps", "./login", "./login"]


async def test_a_missing_same_stem_fragment_errors_with_enoent(project: Path) -> None:
    write(flows(project) / "login.yaml", steps("run: helpers/login.yaml", "echo: after"))
    result = await run(project, "login")
    assert lines(result) == ["run:error:0", "echo:skip:0"]
    line = result.steps[0]
    assert line.flow == "helpers/login"
    assert line.reason is not None
    assert line.reason.startswith('could not load fragment "helpers/login.yaml": ')
    missing = os.path.realpath(flows(project)) + "/helpers/login.yaml"
    assert line.reason.endswith(f"ENOENT: no such file or directory, open '{missing}'")


async def test_cycle_through_a_parent_directory_names_the_hop_as_written(project: Path) -> None:
    write(flows(project) / "a.yaml", steps("run: sub/b.yaml"))
    write(flows(project) / "sub" / "b.yaml", steps("run: ../a.yaml"))
    result = await run(project, "a")
    assert lines(result) == ["run:pass:0", "run:error:1"]
    assert result.steps[1].reason == "cyclic flow reference: a → b → ../a"
    assert result.steps[1].target == "../a.yaml"
    assert not result.ok


async def test_a_symlink_alias_of_the_root_is_a_cycle(project: Path) -> None:
    write(flows(project) / "a.yaml", steps("run: alias.yaml", "echo: never"))
    (flows(project) / "alias.yaml").symlink_to("a.yaml")
    result = await run(project, "a")
    assert lines(result)[0] == "run:error:0"
    assert result.steps[0].reason == "cyclic flow reference: a → alias"
    assert len([s for s in result.steps if s.kind == "run"]) == 1


async def test_cycle_chain_lists_every_flow_on_the_stack(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: a.yaml"))
    write(flows(project) / "a.yaml", steps("run: b.yaml"))
    write(flows(project) / "b.yaml", steps("run: a.yaml"))
    result = await run(project)
    assert lines(result) == ["run:pass:0", "run:pass:1", "run:error:2"]
    assert result.steps[2].reason == "cyclic flow reference: main → a → b → a"
    assert result.steps[2].target == "a.yaml"


async def test_a_loop_closing_at_the_depth_limit_is_reported_as_a_cycle(project: Path) -> None:
    write(flows(project) / "root.yaml", steps("run: n1.yaml"))
    for i in range(1, 20):
        nxt = f"n{i + 1}.yaml" if i < 19 else "root.yaml"
        write(flows(project) / f"n{i}.yaml", steps(f"run: {nxt}"))
    result = await run(project, "root")
    last = result.steps[-1]
    assert last.status == "error"
    assert last.reason is not None and last.reason.endswith("→ n19 → ./root")
    assert last.reason.startswith("cyclic flow reference: root → n1 → n2")
    assert "max run depth" not in last.reason
    assert len(result.steps) == 20


async def test_twenty_distinct_links_exceed_the_depth_limit(project: Path) -> None:
    write(flows(project) / "root.yaml", steps("run: n1.yaml"))
    for i in range(1, 21):
        body = steps(f"run: n{i + 1}.yaml") if i < 20 else steps("echo: too deep")
        write(flows(project) / f"n{i}.yaml", body)
    result = await run(project, "root")
    assert [s.status for s in result.steps] == ["pass"] * 19 + ["error"]
    last = result.steps[-1]
    assert (last.reason, last.flow, last.target, last.depth) == (
        "max run depth exceeded",
        "n20",
        "n20.yaml",
        19,
    )


async def test_nineteen_links_are_within_the_limit(project: Path) -> None:
    write(flows(project) / "root.yaml", steps("run: n1.yaml"))
    for i in range(1, 20):
        body = steps(f"run: n{i + 1}.yaml") if i < 19 else steps("echo: deepest")
        write(flows(project) / f"n{i}.yaml", body)
    result = await run(project, "root")
    assert result.ok
    assert result.steps[-1].kind == "echo" and result.steps[-1].depth == 19


async def test_a_missing_fragment_errors_and_the_rest_skips(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: gone.yaml", "tool: note"))
    result = await run(project)
    assert lines(result) == ["run:error:0", "tool:skip:0"]
    line = result.steps[0]
    assert (line.flow, line.target) == ("gone", "gone.yaml")
    assert line.reason is not None and "ENOENT: no such file or directory" in line.reason
    assert not result.ok


async def test_a_malformed_fragment_reports_the_parse_problem(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: bad.yaml"))
    write(flows(project) / "bad.yaml", steps("bogus: line"))
    result = await run(project)
    reason = result.steps[0].reason
    assert reason is not None
    assert reason.startswith('could not load fragment "bad.yaml": Unrecognized flow entry')
    assert "unrecognized step kind" in reason


async def test_a_non_flow_yaml_fragment_reason_is_bounded(project: Path) -> None:
    ci = "steps:\n" + "".join(f"  - name: step {i}\n    run: {'x' * 300}\n" for i in range(30))
    write(flows(project) / "main.yaml", steps("run: ci.yaml"))
    write(flows(project) / "ci.yaml", ci)
    result = await run(project)
    reason = result.steps[0].reason
    assert reason is not None
    assert len(reason) < 500 and "…(+" in reason


async def test_a_mis_cased_fragment_is_refused_before_it_runs(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: Frag.yaml", "echo: after"))
    write(flows(project) / "frag.yaml", steps("tool: note"))
    tools = Tools()
    result = await run(project, files=FoldingFiles({"Frag.yaml": "frag.yaml"}), tools=tools)
    assert lines(result) == ["run:error:0", "echo:skip:0"]
    assert result.steps[0].reason == (
        'mis-cased fragment reference "Frag.yaml": no directory entry is named "Frag.yaml" (this filesystem '
        'matched it case-insensitively to "frag.yaml"), so the fragment name keying its step reports is one '
        "nothing on disk carries and a case-sensitive checkout could not find the file at all — reference it "
        'as "frag.yaml"'
    )
    assert tools.calls == []


async def test_a_mis_cased_fragment_hint_keeps_its_directory_prefix(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: sub/Frag.yaml"))
    write(flows(project) / "sub" / "frag.yaml", steps("echo: x"))
    result = await run(project, files=FoldingFiles({"Frag.yaml": "frag.yaml"}))
    assert result.steps[0].reason is not None
    assert result.steps[0].reason.endswith('— reference it as "sub/frag.yaml"')


async def test_a_mis_cased_fragment_with_an_unaddressable_name_asks_for_a_rename(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: frag.yaml"))
    result = await run(project, files=FoldingFiles({"frag.yaml": "Frag.YAML"}))
    assert result.steps[0].reason is not None
    assert result.steps[0].reason.endswith(
        '— rename "Frag.YAML" to "frag.yaml" to compose it — flow files must be lowercase .yaml'
    )


async def test_the_real_listing_refuses_a_mis_cased_target_even_on_a_case_sensitive_disk(
    project: Path,
) -> None:
    # ext4 would not open Frag.yaml at all; the listing check names the file that is there.
    write(flows(project) / "main.yaml", steps("run: Frag.yaml"))
    write(flows(project) / "frag.yaml", steps("echo: x"))
    result = await run(project)
    reason = result.steps[0].reason
    assert reason is not None and reason.startswith('mis-cased fragment reference "Frag.yaml"')
    assert reason.endswith('reference it as "frag.yaml"')


async def test_a_target_listed_in_no_case_is_an_ordinary_missing_fragment(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: Other.yaml"))
    write(flows(project) / "frag.yaml", steps("echo: x"))
    result = await run(project)
    reason = result.steps[0].reason
    assert reason is not None and reason.startswith('could not load fragment "Other.yaml": ENOENT')


async def test_exactly_spelled_mixed_case_fragment_and_renamed_alias_run(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: Frag.yaml", "run: alias.yaml"))
    write(flows(project) / "Frag.yaml", steps("echo: upper"))
    write(flows(project) / "real.yaml", steps("echo: real"))
    (flows(project) / "alias.yaml").symlink_to("real.yaml")
    result = await run(project)
    assert result.ok
    assert [s.flow for s in result.steps] == ["Frag", "Frag", "alias", "alias"]


async def test_a_symlinked_root_anchors_run_targets_at_its_real_file(project: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault / "real-main.yaml", steps("run: frag.yaml"))
    write(vault / "frag.yaml", steps("echo: vault fragment"))
    write(flows(project) / "frag.yaml", steps("echo: WRONG"))
    (flows(project) / "main.yaml").symlink_to(vault / "real-main.yaml")
    result = await run(project)
    assert [s.message for s in result.steps if s.kind == "echo"] == ["vault fragment"]


async def test_dot_dot_after_a_symlinked_directory_follows_the_kernel(project: Path, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "deep"
    write(real / "x.yaml", steps("echo: placeholder"))
    write(tmp_path / "elsewhere" / "shared.yaml", steps("echo: kernel"))
    write(flows(project) / "shared.yaml", steps("echo: lexical impostor"))
    (flows(project) / "link").symlink_to(real)
    write(flows(project) / "main.yaml", steps("run: link/../shared.yaml"))
    result = await run(project)
    assert [s.message for s in result.steps if s.kind == "echo"] == ["kernel"]


async def test_dot_dot_after_a_dangling_symlink_errors_without_a_lexical_impostor(project: Path) -> None:
    write(flows(project) / "shared.yaml", steps("echo: lexical impostor"))
    (flows(project) / "dangling").symlink_to(project / "nowhere")
    write(flows(project) / "main.yaml", steps("run: dangling/../shared.yaml"))
    result = await run(project)
    assert result.steps[0].status == "error"
    assert all(s.message != "lexical impostor" for s in result.steps)


async def test_targets_above_the_project_root_run(project: Path, tmp_path: Path) -> None:
    write(tmp_path / "shared" / "common.yaml", steps("echo: shared"))
    write(flows(project) / "main.yaml", steps("run: ../../../shared/common.yaml"))
    result = await run(project)
    assert result.ok and result.steps[-1].message == "shared"


async def test_a_fragment_with_a_prerequisite_composes_without_a_notice(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: frag.yaml"))
    write(flows(project) / "frag.yaml", steps("echo: x", prerequisite="Logged in"))
    result = await run(project, acknowledged=False)
    assert result.ok and lines(result) == ["run:pass:0", "echo:pass:1"]


# --------------------------------------------------------------------------------------------
# The prerequisite


async def test_an_unacknowledged_prerequisite_returns_the_notice_and_runs_nothing(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("tool: note", prerequisite="The cart holds one item"))
    tools = Tools()
    result = await execute(project, "main", acknowledged=False, tools=tools)
    assert isinstance(result, PrerequisiteNotice)
    assert result.flow == "main"
    assert result.execution_prerequisite == "The cart holds one item"
    assert "prerequisite" in result.notice
    assert tools.calls == []
    acked = await run(project, tools=tools)
    assert acked.ok and acked.execution_prerequisite == "The cart holds one item"


async def test_an_empty_prerequisite_runs_without_acknowledgement(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("echo: x"))
    result = await run(project, acknowledged=False)
    assert result.ok


async def test_read_prerequisite_answers_for_the_resolved_flow(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("echo: x", prerequisite="Ready"))
    answer = await read_prerequisite(
        FlowRequest(name="main", project_root=str(project)), files=DiskFlowFiles()
    )
    assert answer == {"flow": "main", "executionPrerequisite": "Ready"}


async def test_a_leading_run_chain_reaching_a_launch_refuses_a_prerequisite(project: Path) -> None:
    write(
        flows(project) / "main.yaml",
        steps("echo: hi", "run: quiet.yaml", "run: start.yaml", prerequisite="x"),
    )
    write(flows(project) / "quiet.yaml", steps("echo: only narration"))
    write(flows(project) / "start.yaml", steps("launch: com.acme.app", "echo: x"))
    with pytest.raises(FlowError) as info:
        await execute(project, "main", acknowledged=False)
    assert info.value.error_code == "FLOW_E2E_HAS_PREREQUISITE"
    assert info.value.message == (
        "A flow whose leading run: chain reaches a launch step must not declare executionPrerequisite — it "
        'launches its own app and controls its start state. Drop the leading launch in "start" to make it a '
        'fragment, or drop executionPrerequisite from "main".'
    )


async def test_the_chain_check_offers_the_chromium_pin_for_a_chromium_launch(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: start.yaml", prerequisite="x"))
    write(flows(project) / "start.yaml", steps("launch: { chromium: ./app }"))
    with pytest.raises(FlowError) as info:
        await execute(project, "main")
    assert info.value.message.endswith(
        " Or pin the run to a chromium instance you have already brought to that state "
        "(--device chromium-cdp-<port>), where the leading launch only attaches."
    )
    pinned = await execute(
        project,
        "main",
        acknowledged=False,
        device="chromium-cdp-9222",
        devices=Provider([Device("chromium-cdp-9222", "chromium")]),
    )
    assert isinstance(pinned, PrerequisiteNotice)


async def test_a_chain_that_starts_with_another_step_is_not_refused(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("run: start.yaml", prerequisite="x"))
    write(flows(project) / "start.yaml", steps("tool: note", "launch: com.acme.app"))
    result = await execute(project, "main", acknowledged=False)
    assert isinstance(result, PrerequisiteNotice)


# --------------------------------------------------------------------------------------------
# The source


async def test_a_case_folded_saved_flow_name_is_refused(project: Path) -> None:
    write(flows(project) / "snap.yaml", steps("echo: x"))
    with pytest.raises(FlowError) as info:
        await execute(project, "Snap", files=FoldingFiles({"Snap.yaml": "snap.yaml"}))
    assert info.value.error_code == "FLOW_NAME_INVALID"
    assert info.value.message == (
        'Invalid flow name "Snap": no saved flow is named "Snap.yaml" — this filesystem matched it '
        'case-insensitively to "snap.yaml", so the flow name (which keys the report and __baselines__/) '
        'would be one no directory entry carries. Pass name "snap".'
    )


async def test_an_exact_mixed_case_name_runs_and_a_missing_one_is_a_read_error(project: Path) -> None:
    write(flows(project) / "Snap.yaml", steps("echo: x"))
    assert (await run(project, "Snap")).ok
    with pytest.raises(ToolExecutionError) as info:
        await execute(project, "nothing")
    assert info.value.message.startswith("ENOENT: no such file or directory, open ")


@pytest.mark.parametrize(("base", "name"), [("...yaml", ".."), ("..yaml", ".")])
async def test_a_flow_path_with_a_dot_stem_is_an_invalid_flow_name(
    project: Path, base: str, name: str
) -> None:
    write(flows(project) / base, steps("echo: x"))
    with pytest.raises(FlowError) as info:
        await execute(project, flow_path=str(flows(project) / base))
    assert info.value.message.startswith(f'Invalid flow name "{name}". Flow names must match')
    assert not (flows(project) / "__baselines__").exists()


async def test_flow_path_rules(project: Path) -> None:
    good = write(flows(project) / "out-of-project.yaml", steps("echo: x"))
    result = await execute(project, flow_path=str(good))
    assert isinstance(result, FlowRunResult) and result.flow == "out-of-project"

    async def refused(path: str) -> str:
        with pytest.raises(FlowError) as info:
            await execute(project, flow_path=path)
        return info.value.message

    assert "flow paths must be absolute" in await refused("rel/x.yaml")
    assert 'must not contain ".." segments' in await refused(str(flows(project) / "sub" / ".." / "x.yaml"))
    assert await refused(str(flows(project) / "x.YAML")) == (
        f'Invalid flow_path "{flows(project) / "x.YAML"}": flow files must use the lowercase .yaml '
        'extension, not ".YAML".'
    )
    assert (await refused(str(flows(project) / "x.yml"))).endswith("flow files must use the .yaml extension.")


async def test_a_case_folded_flow_path_is_refused(project: Path) -> None:
    write(flows(project) / "checkout.yaml", steps("echo: x"))

    class Folding(DiskFlowFiles):
        async def locate(self, path: str) -> FlowRef:
            ref = await super().locate(path)
            return attrs.evolve(
                ref, spelling=Spelling("case_folded", actual="checkout.yaml", addressable=True)
            )

    path = str(flows(project) / "Checkout.yaml")
    with pytest.raises(FlowError) as info:
        await execute(project, flow_path=path, files=Folding())
    assert info.value.message == (
        f'Invalid flow_path "{path}": the file must be named as it appears on disk — this filesystem matched '
        '"Checkout.yaml" case-insensitively to "checkout.yaml", so the flow name (which keys the report and '
        "__baselines__/) would be one no directory entry carries. Pass flow_path with the on-disk basename "
        '"checkout.yaml".'
    )


async def test_exactly_one_source_and_a_valid_project_root(project: Path) -> None:
    with pytest.raises(InvalidToolInputError) as both:
        await execute(project, "main", flow_path=str(flows(project) / "main.yaml"))
    assert both.value.message == "Pass exactly one flow source: name or flow_path."
    with pytest.raises(InvalidToolInputError):
        await execute(project)
    for root, expected in [
        ("rel/proj", 'project_root must be an absolute path (got "rel/proj").'),
        ("/a/../b", 'project_root must not contain ".." segments (got "/a/../b").'),
    ]:
        with pytest.raises(FlowError) as info:
            await execute_flow(
                FlowRequest(name="main", project_root=root),
                files=DiskFlowFiles(),
                tools=Tools(),
                devices=None,
            )
        assert info.value.error_code == "FLOW_PROJECT_ROOT_INVALID"
        assert info.value.message.startswith(expected)


async def test_flow_file_must_resolve_to_the_saved_flow(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("echo: x"))
    expected = str(flows(project) / "main.yaml")
    ok = await execute_flow(
        FlowRequest(name="main", project_root=str(project), flow_file=expected),
        files=DiskFlowFiles(),
        tools=Tools(),
        devices=None,
    )
    assert isinstance(ok, FlowRunResult)
    with pytest.raises(FlowError) as info:
        await execute_flow(
            FlowRequest(name="main", project_root=str(project), flow_file="/tmp/other.yaml"),
            files=DiskFlowFiles(),
            tools=Tools(),
            devices=None,
        )
    assert info.value.message == (
        f'Invalid flow_file "/tmp/other.yaml": it must resolve to the flow\'s path under the project root '
        f'("{expected}"). flow_file is internal — leave it unset and pass project_root + name.'
    )


async def test_a_root_parse_error_is_the_parsers_error(project: Path) -> None:
    write(flows(project) / "main.yaml", "steps: ][\n")
    with pytest.raises(FlowParseError) as info:
        await execute(project, "main")
    assert info.value.message.startswith("Invalid flow file:")
    assert "line 1" in info.value.message
    assert info.value.error_code == "FLOW_FILE_INVALID"


# --------------------------------------------------------------------------------------------
# Device resolution


@pytest.mark.parametrize(
    "body",
    [
        steps("echo: x", "wait: 1"),
        steps("tool: note"),
        "",
        steps("run: quiet.yaml"),
        steps("script: hello.py"),
    ],
)
async def test_device_free_flows_run_without_listing_devices(project: Path, body: str) -> None:
    write(flows(project) / "main.yaml", body)
    write(flows(project) / "quiet.yaml", steps("echo: q"))
    write(flows(project) / "hello.py", "")
    result = await run(project, devices=NoListing())
    assert result.device == ""
    assert result.ok


async def test_an_explicit_device_is_used_and_named(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("echo: x"))
    device = Device("chromium-cdp-9222", "chromium")
    result = await run(project, device=device.id, devices=Provider([device]))
    assert result.device == "chromium-cdp-9222"


async def test_an_explicit_device_without_a_provider_is_a_resolution_error(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("echo: x"))
    with pytest.raises(DeviceResolutionError) as info:
        await execute(project, "main", device="emulator-5554")
    assert info.value.message.endswith("Available devices: none.")


@pytest.mark.parametrize(
    "body",
    [
        steps("tap: Save"),
        "steps:\n  - when: { platform: ios }\n    steps:\n      - echo: x\n",
        steps("launch: com.acme.app"),
        steps("tool: tap"),
        steps("run: needs.yaml"),
        "steps:\n  - when: { platform: ios }\n    steps:\n      - run: needs.yaml\n",
    ],
)
async def test_a_flow_that_needs_a_device_finds_none_booted(project: Path, body: str) -> None:
    write(flows(project) / "main.yaml", body)
    write(flows(project) / "needs.yaml", steps("snapshot: home"))
    for devices in (None, Provider()):
        with pytest.raises(DeviceResolutionError) as info:
            await execute(project, "main", devices=devices)
        assert info.value.message == (
            "No booted device found. Pass a device id or platform explicitly. Available devices: none."
        )
        assert info.value.error_code == "FLOW_DEVICE_RESOLUTION"


async def test_a_nested_flow_decides_whether_the_parent_needs_a_device(project: Path) -> None:
    write(flows(project) / "quiet.yaml", steps("echo: q", "tool: note"))
    write(flows(project) / "needs.yaml", steps("tap: Save"))
    write(flows(project) / "main.yaml", steps(nested("quiet", project)))
    result = await run(project, devices=NoListing())
    assert result.ok and result.device == ""
    write(flows(project) / "main.yaml", steps("echo: first", nested("needs", project)))
    with pytest.raises(DeviceResolutionError) as info:
        await execute(project, "main", devices=Provider())
    assert info.value.message.startswith("No booted device found.")


async def test_auto_detection_picks_the_one_booted_device_of_the_platform(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("tool: tap"))
    web = Device("chromium-cdp-9222", "chromium")
    phone = Device("emulator-5554", "android")
    tools = Tools()
    result = await run(project, devices=Provider([web, phone]), platform="chromium", tools=tools)
    assert result.device == web.id
    assert tools.calls == [("tap", {"udid": web.id})]
    with pytest.raises(DeviceResolutionError) as several:
        await execute(project, "main", devices=Provider([web, phone]))
    assert several.value.message == (
        "2 booted devices matched — pass --device or --platform to disambiguate. Available devices: "
        "chromium-cdp-9222 (chromium), emulator-5554 (android)."
    )
    with pytest.raises(DeviceResolutionError) as none:
        await execute(project, "main", devices=Provider([web]), platform="vega")
    assert none.value.message == (
        "No booted vega device found. Pass a device id or platform explicitly. Available devices: "
        "chromium-cdp-9222 (chromium)."
    )


async def test_a_cleanup_flow_scopes_the_one_booted_device_or_sweeps(project: Path) -> None:
    write(flows(project) / "main.yaml", steps("tool: sweep"))
    one = Device("chromium-cdp-9222", "chromium")
    tools = Tools()
    result = await run(project, devices=Provider([one]), tools=tools)
    assert result.device == one.id and tools.calls[-1] == ("sweep", {"devices": [one.id]})
    for booted in ([], [one, Device("emulator-5554", "android")]):
        swept = await run(project, devices=Provider(booted), tools=tools)
        assert swept.ok and swept.device == "" and tools.calls[-1] == ("sweep", {})


async def test_a_platform_guard_with_a_known_platform_is_evaluated_statically(project: Path) -> None:
    body = (
        "steps:\n"
        "  - when: { platform: ios }\n    steps:\n      - echo: on ios\n"
        "  - when: { platform: android }\n    steps:\n      - echo: on android\n"
    )
    write(flows(project) / "main.yaml", body)
    result = await run(project, platform="ios", devices=NoListing())
    assert result.device == ""
    assert [f"{s.kind}:{s.status}" for s in result.steps] == [
        "when:pass",
        "echo:pass",
        "when:skip",
        "echo:skip",
    ]
    assert result.steps[0].target == "platform ios"
    assert result.steps[2].reason == "condition not met (platform android) — block skipped (1 step)"


# --------------------------------------------------------------------------------------------
# Nested flow-execute


def nested(name: str, project: Path, **extra: Any) -> str:
    args = {"name": name, "project_root": str(project), **extra}
    inner = ", ".join(f"{k}: {v if not isinstance(v, str) else repr(v)}" for k, v in args.items())
    return f"tool: flow-execute\n    args: {{ {inner} }}"


async def test_a_nested_flow_execute_runs_and_its_result_is_the_line_result(project: Path) -> None:
    write(flows(project) / "main.yaml", steps(nested("sub", project), "echo: after"))
    write(flows(project) / "sub.yaml", steps("tool: note", "echo: inside"))
    progress: list[StepReport] = []
    result = await run(project, progress=progress)
    assert lines(result) == ["tool:pass:0", "echo:pass:0"]
    line = result.steps[0]
    assert line.tool == "flow-execute" and line.flow == "main"
    assert isinstance(line.result, FlowRunResult)
    assert line.result.flow == "sub" and line.result.ok
    assert [s.flow for s in line.result.steps] == ["sub", "sub"]
    assert progress == result.steps  # the nested run's lines stay in its own report


async def test_a_nested_flow_execute_is_rebound_to_the_run_device(project: Path) -> None:
    device = Device("chromium-cdp-9222", "chromium")
    write(flows(project) / "main.yaml", steps(nested("sub", project, device="STALE-ID")))
    write(flows(project) / "sub.yaml", steps("tool: tap"))
    tools = Tools()
    result = await run(project, device=device.id, devices=Provider([device]), tools=tools)
    assert result.steps[0].args["device"] == device.id
    assert tools.calls == [("tap", {"udid": device.id})]
    assert result.steps[0].result.device == device.id


async def test_a_failing_nested_flow_fails_the_step(project: Path) -> None:
    write(flows(project) / "main.yaml", steps(nested("sub", project), "echo: after"))
    write(flows(project) / "sub.yaml", steps("tool: note", "run: missing.yaml", "echo: skipped"))
    result = await run(project)
    assert lines(result) == ["tool:fail:0", "echo:skip:0"]
    reason = result.steps[0].reason
    assert reason is not None
    assert reason.startswith('flow "sub" failed: 1 passed, 0 failed, 1 errored (run: could not load fragment')


async def test_a_nested_flow_with_an_unacknowledged_prerequisite_errors(project: Path) -> None:
    write(flows(project) / "main.yaml", steps(nested("sub", project)))
    write(flows(project) / "sub.yaml", steps("echo: x", prerequisite="Signed in"))
    result = await run(project)
    assert result.steps[0].status == "error"
    assert result.steps[0].reason == (
        'flow "sub" did not run — its execution prerequisite was not acknowledged: Signed in. Add '
        "prerequisiteAcknowledged: true to the step's args, or compose with run: instead."
    )
    assert isinstance(result.steps[0].result, PrerequisiteNotice)
    write(flows(project) / "main.yaml", steps(nested("sub", project, prerequisiteAcknowledged=True)))
    assert (await run(project)).ok


async def test_a_missing_nested_flow_errors_with_the_read_error(project: Path) -> None:
    write(flows(project) / "main.yaml", steps(nested("nowhere", project)))
    result = await run(project)
    expected = os.path.realpath(flows(project)) + "/nowhere.yaml"
    assert result.steps[0].status == "error"
    assert result.steps[0].reason == f"ENOENT: no such file or directory, open '{expected}'"


async def test_a_case_folded_nested_flow_name_errors_with_invalid_flow_name(project: Path) -> None:
    write(flows(project) / "main.yaml", steps(nested("Sub", project)))
    write(flows(project) / "sub.yaml", steps("echo: x"))
    result = await run(project, files=FoldingFiles({"Sub.yaml": "sub.yaml"}))
    assert result.steps[0].status == "error"
    assert result.steps[0].reason is not None
    assert result.steps[0].reason.startswith('Invalid flow name "Sub": no saved flow is named "Sub.yaml"')


async def test_cycles_through_nested_runs_and_fragments_are_caught(project: Path) -> None:
    write(flows(project) / "main.yaml", steps(nested("sub", project)))
    write(flows(project) / "sub.yaml", steps("run: main.yaml"))
    result = await run(project)
    assert result.steps[0].status == "fail"
    inner = result.steps[0].result
    assert isinstance(inner, FlowRunResult)
    assert inner.steps[0].reason == "cyclic flow reference: main → sub → main"

    write(flows(project) / "main.yaml", steps("run: frag.yaml"))
    write(flows(project) / "frag.yaml", steps(nested("main", project)))
    again = await run(project)
    assert again.steps[1].status == "error"
    assert again.steps[1].reason == "cyclic flow reference: main → frag → main"


async def test_nested_runs_count_toward_the_run_depth(project: Path) -> None:
    # root → n1..n9 by run:, n9 runs the saved flow "deep" nested, deep → d1..d10 by run:
    write(flows(project) / "root.yaml", steps("run: n1.yaml"))
    for i in range(1, 10):
        write(
            flows(project) / f"n{i}.yaml", steps(f"run: n{i + 1}.yaml" if i < 9 else nested("deep", project))
        )
    write(flows(project) / "deep.yaml", steps("run: d1.yaml"))
    for i in range(1, 11):
        write(flows(project) / f"d{i}.yaml", steps(f"run: d{i + 1}.yaml" if i < 10 else "echo: bottom"))
    result = await run(project, "root")
    # stack: root, n1..n9 (10), deep (11), d1..d9 (20) → d10 is the 21st level
    nested_line = result.steps[-1]
    assert nested_line.kind == "tool" and nested_line.status == "fail"
    inner = nested_line.result
    assert isinstance(inner, FlowRunResult)
    assert inner.steps[-1].reason == "max run depth exceeded"
    assert inner.steps[-1].flow == "d10"


async def test_a_nested_flow_path_runs_where_files_are_local(project: Path, tmp_path: Path) -> None:
    other = write(tmp_path / "elsewhere" / "other.yaml", steps("echo: other"))
    write(
        flows(project) / "main.yaml",
        steps(f"tool: flow-execute\n    args: {{ flow_path: '{other}', project_root: '{project}' }}"),
    )
    result = await run(project)
    assert result.ok
    assert result.steps[0].result.flow == "other"

    class Remote(DiskFlowFiles):
        def local_path(self, ref: FlowRef, relative: str) -> str | None:
            return None

    remote = await run(project, files=Remote())
    assert remote.steps[0].status == "error"
    assert remote.steps[0].reason is not None
    assert remote.steps[0].reason.startswith(
        f'Invalid flow_path "{other}": explicit flow paths require a co-located'
    )


async def test_nested_runs_take_update_baselines_from_their_args_else_inherit(project: Path) -> None:
    from argent.runner.engine import DirectiveContext, DirectiveOutcome

    seen: list[tuple[str, bool]] = []

    class Recorder:
        async def execute(self, step: Any, device: Any, ctx: DirectiveContext) -> DirectiveOutcome:
            seen.append((ctx.run.name, ctx.run.update_baselines))
            return DirectiveOutcome("pass")

        async def check(self, *args: Any) -> Any:
            raise AssertionError("no guards here")

    device = Device("chromium-cdp-9222", "chromium")
    write(
        flows(project) / "main.yaml",
        steps("snapshot: top", nested("sub", project), nested("off", project, updateBaselines=False)),
    )
    write(flows(project) / "sub.yaml", steps("snapshot: inner"))
    write(flows(project) / "off.yaml", steps("snapshot: inner"))
    result = await run(
        project, device=device.id, devices=Provider([device]), directives=Recorder(), update_baselines=True
    )
    assert result.ok
    assert seen == [("main", True), ("sub", True), ("off", False)]


# --------------------------------------------------------------------------------------------
# script:


SCRIPT_ENV = """\
import os, sys
with open(sys.argv[1], "w") as fh:
    fh.write(os.environ["ARGENT_DEVICE"] + "|" + os.environ["ARGENT_PROJECT_ROOT"] + "|"
             + os.environ.get("ARGENT_CDP_URL", "-") + "|" + " ".join(sys.argv[2:]))
"""


async def test_a_python_script_passes_with_the_argent_environment(project: Path, tmp_path: Path) -> None:
    write(flows(project) / "env.py", SCRIPT_ENV)
    out = tmp_path / "env.txt"
    write(flows(project) / "main.yaml", steps(f"script: {{ path: env.py, args: ['{out}', a, b] }}"))
    result = await run(project)
    assert lines(result) == ["script:pass:0"]
    assert result.steps[0].target == "env.py"
    assert out.read_text() == f"|{project}|-|a b"

    device = Device("chromium-cdp-9222", "chromium", endpoint="http://127.0.0.1:9222")
    await run(project, device=device.id, devices=Provider([device]))
    assert out.read_text() == f"chromium-cdp-9222|{project}|http://127.0.0.1:9222|a b"


async def test_a_script_in_a_fragment_resolves_beside_the_fragment(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "ran.txt"
    write(flows(project) / "helpers" / "mark.sh", f'echo ran > "{out}"\n')
    write(flows(project) / "helpers" / "frag.yaml", steps("script: mark.sh"))
    write(flows(project) / "main.yaml", steps("run: helpers/frag.yaml"))
    result = await run(project)
    assert result.ok and out.read_text().strip() == "ran"


async def test_a_failing_script_fails_with_its_exit_code_and_stderr_tail(project: Path) -> None:
    write(
        flows(project) / "check.py",
        "import sys\nsys.stderr.write('x' * 5000 + 'END\\n')\nsys.exit(3)\n",
    )
    write(flows(project) / "main.yaml", steps("script: check.py", "echo: after"))
    result = await run(project)
    assert lines(result) == ["script:fail:0", "echo:skip:0"]
    reason = result.steps[0].reason
    assert reason is not None
    assert reason.startswith("script check.py exited with code 3: xxx")
    assert reason.endswith("xxxEND")
    # the last 2000 characters of stderr ("…xxxEND\n"), stripped
    assert len(reason) == len("script check.py exited with code 3: ") + 1999


async def test_a_shell_script_failure_and_a_missing_script(project: Path) -> None:
    write(flows(project) / "bad.sh", "echo 'no such table' >&2\nexit 7\n")
    write(flows(project) / "main.yaml", steps("script: bad.sh"))
    result = await run(project)
    assert result.steps[0].reason == "script bad.sh exited with code 7: no such table"
    write(flows(project) / "main.yaml", steps("script: gone.py"))
    missing = await run(project)
    assert missing.steps[0].status == "fail"
    assert missing.steps[0].reason is not None and missing.steps[0].reason.startswith(
        "script gone.py was not found"
    )


async def test_a_script_that_overruns_its_timeout_is_killed_with_its_children(
    project: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    write(flows(project) / "slow.sh", f'sleep 30 &\necho $! > "{pids}"\necho $$ >> "{pids}"\nsleep 30\n')
    write(flows(project) / "main.yaml", steps("script: { path: slow.sh, timeout: 300 }", "echo: after"))
    t0 = time.monotonic()
    result = await run(project)
    assert time.monotonic() - t0 < 5
    assert lines(result) == ["script:fail:0", "echo:skip:0"]
    assert result.steps[0].reason == "script slow.sh did not finish within 300ms"
    await asyncio.sleep(0.1)
    for pid in map(int, pids.read_text().split()):
        assert not alive(pid), pid


async def test_a_script_leaves_no_background_child_behind(project: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    write(flows(project) / "bg.sh", f'sleep 30 &\necho $! > "{pids}"\nexit 0\n')
    write(flows(project) / "main.yaml", steps("script: bg.sh"))
    result = await run(project)
    assert result.ok
    await asyncio.sleep(0.1)
    assert not alive(int(pids.read_text().split()[0]))


async def test_abort_during_a_script_kills_it_and_skips(project: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    write(
        flows(project) / "hang.py",
        f"import os, time\nopen({str(pids)!r}, 'w').write(str(os.getpid()))\ntime.sleep(30)\n",
    )
    write(flows(project) / "main.yaml", steps("script: hang.py", "echo: after"))
    abort = asyncio.Event()

    async def trip() -> None:
        while not pids.exists() or not pids.read_text():
            await asyncio.sleep(0.02)
        abort.set()

    tripper = asyncio.create_task(trip())
    t0 = time.monotonic()
    result = await run(project, abort=abort)
    await tripper
    assert time.monotonic() - t0 < 5
    assert [(s.status, s.reason) for s in result.steps] == [("skip", "run aborted"), ("skip", "run aborted")]
    assert result.aborted and not result.ok
    await asyncio.sleep(0.1)
    assert not alive(int(pids.read_text()))


async def test_a_script_step_off_the_local_disk_errors() -> None:
    class Remote(DiskFlowFiles):
        def local_path(self, ref: FlowRef, relative: str) -> str | None:
            return None

    root = FlowRef(key="/x\0main.yaml", path="/x/main.yaml", canonical="/x/main.yaml")
    result = await run_flow(Flow(steps=(ScriptStep("seed.py"),)), root, "main", files=Remote(), tools=Tools())
    assert result.steps[0].status == "error"
    assert result.steps[0].reason == "script: steps run only where the flow's files are (co-located runs)"


async def test_a_script_run_with_sys_executable(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "exe.txt"
    write(flows(project) / "which.py", f"import sys\nopen({str(out)!r}, 'w').write(sys.executable)\n")
    write(flows(project) / "main.yaml", steps("script: which.py"))
    assert (await run(project)).ok
    assert out.read_text() == sys.executable


async def test_cancelling_the_run_during_a_script_leaves_no_process(project: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    write(flows(project) / "hang.sh", f'sleep 30 &\necho $! > "{pids}"\necho $$ >> "{pids}"\nsleep 30\n')
    write(flows(project) / "main.yaml", steps("script: hang.sh"))
    task = asyncio.create_task(run(project))
    while not pids.exists() or len(pids.read_text().split()) < 2:
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.1)
    for pid in map(int, pids.read_text().split()):
        assert not alive(pid), pid
