"""Composition over files that are not on this disk: an in-memory FlowFiles like a link's member store."""

from __future__ import annotations

import posixpath
from typing import Any

from attrs import define, field

from argent.flows.parse import parse_flow
from argent.runner.composition import miscased_fragment_message
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import FlowFileError, FlowRef, Spelling
from argent.runner.report import FlowRunResult
from argent.utils.oserrors import enoent_message


@define
class MemberFiles:
    """Flow files by canonical path; nothing is ever opened, and no file is local."""

    texts: dict[str, str]
    spellings: dict[str, Spelling] = field(factory=dict)
    reads: list[str] = field(factory=list)

    def _ref(self, directory: str, target: str) -> FlowRef:
        path = f"{directory}/{target}"
        canonical = posixpath.normpath(path)
        return FlowRef(
            key=f"{directory}\0{target}",
            path=path,
            canonical=canonical,
            spelling=self.spellings.get(canonical, Spelling("listed")),
        )

    async def locate(self, path: str) -> FlowRef:
        return self._ref(posixpath.dirname(path), posixpath.basename(path))

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef:
        return self._ref(posixpath.dirname(naming.canonical), target)

    async def named_flow(self, project_root: str, name: str) -> FlowRef:
        return self._ref(f"{project_root}/.argent/flows", f"{name}.yaml")

    async def read_text(self, ref: FlowRef) -> str:
        self.reads.append(ref.canonical)
        try:
            return self.texts[ref.canonical]
        except KeyError:
            raise FlowFileError(enoent_message(ref.canonical)) from None

    def local_path(self, ref: FlowRef, relative: str) -> str | None:
        return None


class NoteTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return frozenset() if tool == "note" else None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        return ToolOutcome(result=None)


FLOWS = "/client/proj/.argent/flows"


async def run_main(files: MemberFiles) -> FlowRunResult:
    root = await files.named_flow("/client/proj", "main")
    flow = parse_flow(await files.read_text(root))
    return await run_flow(flow, root, "main", files=files, tools=NoteTools(), project_root="/client/proj")


def lines(result: FlowRunResult) -> list[str]:
    return [f"{s.kind}:{s.status}:{s.depth}:{s.flow}" for s in result.steps]


async def test_fragments_resolve_and_expand_from_members() -> None:
    files = MemberFiles(
        {
            f"{FLOWS}/main.yaml": "steps:\n  - run: shared/login.yaml\n  - echo: done\n",
            f"{FLOWS}/shared/login.yaml": "steps:\n  - tool: note\n  - run: ../common.yaml\n",
            f"{FLOWS}/common.yaml": "steps:\n  - echo: common\n",
        }
    )
    result = await run_main(files)
    assert lines(result) == [
        "run:pass:0:login",
        "tool:pass:1:login",
        "run:pass:1:common",
        "echo:pass:2:common",
        "echo:pass:0:main",
    ]


async def test_a_missing_member_reports_enoent_for_its_canonical_path() -> None:
    files = MemberFiles({f"{FLOWS}/main.yaml": "steps:\n  - run: gone.yaml\n  - echo: after\n"})
    result = await run_main(files)
    assert lines(result) == ["run:error:0:gone", "echo:skip:0:main"]
    assert result.steps[0].reason == (
        f"could not load fragment \"gone.yaml\": ENOENT: no such file or directory, open '{FLOWS}/gone.yaml'"
    )


async def test_a_run_step_in_an_untaken_when_block_needs_no_file() -> None:
    files = MemberFiles(
        {
            f"{FLOWS}/main.yaml": "steps:\n  - when: { platform: android }\n    steps:\n      - run: gone.yaml\n"
        }
    )
    root = await files.named_flow("/client/proj", "main")
    flow = parse_flow(await files.read_text(root))
    result = await run_flow(flow, root, "main", files=files, tools=NoteTools(), platform="ios")
    assert result.ok
    assert files.reads == [f"{FLOWS}/main.yaml"]


async def test_a_case_folded_member_is_refused_before_it_is_read() -> None:
    spelling = Spelling("case_folded", actual="frag.yaml", addressable=True)
    files = MemberFiles(
        {f"{FLOWS}/main.yaml": "steps:\n  - run: Frag.yaml\n", f"{FLOWS}/Frag.yaml": "steps:\n  - echo: x\n"},
        spellings={f"{FLOWS}/Frag.yaml": spelling},
    )
    result = await run_main(files)
    assert result.steps[0].reason == miscased_fragment_message("Frag.yaml", spelling)
    assert f"{FLOWS}/Frag.yaml" not in files.reads


async def test_cycle_and_depth_guards_work_on_member_keys() -> None:
    texts = {
        f"{FLOWS}/main.yaml": "steps:\n  - run: a.yaml\n",
        f"{FLOWS}/a.yaml": "steps:\n  - run: main.yaml\n",
    }
    result = await run_main(MemberFiles(texts))
    assert result.steps[-1].reason == "cyclic flow reference: main → a → ./main"


async def test_nested_flow_execute_finds_its_flow_by_name_and_project_root() -> None:
    nested = "tool: flow-execute\n    args: { name: sub, project_root: /client/proj }"
    files = MemberFiles(
        {
            f"{FLOWS}/main.yaml": f"steps:\n  - {nested}\n",
            f"{FLOWS}/sub.yaml": "steps:\n  - echo: inside\n",
        }
    )
    result = await run_main(files)
    assert result.ok
    assert isinstance(result.steps[0].result, FlowRunResult)
    missing = MemberFiles({f"{FLOWS}/main.yaml": f"steps:\n  - {nested}\n"})
    failed = await run_main(missing)
    assert failed.steps[0].reason == f"ENOENT: no such file or directory, open '{FLOWS}/sub.yaml'"


async def test_scripts_and_nested_flow_paths_need_local_files() -> None:
    files = MemberFiles(
        {
            f"{FLOWS}/main.yaml": "steps:\n  - script: seed.py\n",
            f"{FLOWS}/other.yaml": (
                "steps:\n  - tool: flow-execute\n    args: { flow_path: /x/y.yaml, project_root: /client/proj }\n"
            ),
        }
    )
    result = await run_main(files)
    assert result.steps[0].reason == "script: steps run only where the flow's files are (co-located runs)"
    root = await files.named_flow("/client/proj", "other")
    other = await run_flow(
        parse_flow(await files.read_text(root)), root, "other", files=files, tools=NoteTools()
    )
    assert other.steps[0].status == "error"
    assert other.steps[0].reason is not None
    assert other.steps[0].reason.startswith('Invalid flow_path "/x/y.yaml": explicit flow paths require')


async def test_a_nested_flow_execute_whose_args_are_not_a_map_errors_its_step_and_runs_on() -> None:
    files = MemberFiles(
        {f"{FLOWS}/main.yaml": "steps:\n  - tool: flow-execute\n    args: [sub]\n  - echo: after\n"}
    )
    result = await run_main(files)
    first = result.steps[0]
    assert (first.kind, first.status, first.depth, first.tool) == ("tool", "error", 0, "flow-execute")
    assert first.reason == "the args of a flow-execute tool step must be a map, not list"
    assert lines(result)[1:] == ["echo:skip:0:main"]
