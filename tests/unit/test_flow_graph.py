"""The reference graph: what each directive names, and the walk of the files a flow reaches.

The files here are texts in a dict, resolved by a resolver that counts what it is asked: the graph
itself reads nothing."""

from __future__ import annotations

import posixpath
from typing import Any

from argent.flows.graph import FlowGraph, Resolve, Resolved, build_graph, build_graph_async, step_references
from argent.flows.parse import parse_flow
from argent.flows.references import (
    Baseline,
    Fragment,
    LaunchFile,
    NestedFlow,
    ScriptFile,
    ToolFile,
)
from argent.limits import MAX_RUN_DEPTH


def steps_of(*lines: str) -> str:
    return "steps:\n" + "".join(f"  - {line}\n" for line in lines)


class Disk:
    """Flow files by absolute path; resolves a fragment beside its naming file, a nested flow by name."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.asked: list[str] = []

    def resolve(self, request: Resolve[str]) -> Resolved[str] | None:
        self.asked.append(request.key)
        ref = request.ref
        if isinstance(ref, Fragment):
            path = posixpath.normpath(f"{posixpath.dirname(request.naming.canonical)}/{ref.target}")
        elif ref.by_name:
            path = f"{ref.project_root}/.argent/flows/{ref.name}.yaml"
        else:
            return None
        text = self.files.get(path)
        if text is None:
            return Resolved(path, path, None)
        try:
            return Resolved(path, path, parse_flow(text))
        except Exception:
            return Resolved(path, path, None)

    async def resolve_async(self, request: Resolve[str]) -> Resolved[str] | None:
        return self.resolve(request)

    def graph(self, root: str, tools: Any = None) -> FlowGraph[str]:
        flow = parse_flow(self.files[root])
        if tools is None:
            return build_graph(root, root, flow, self.resolve)
        return build_graph(root, root, flow, self.resolve, tools)


def refs(text: str, tools: Any = None) -> list[Any]:
    flow = parse_flow(text)
    out: list[Any] = []
    for step in _all(flow):
        out.extend(step_references(step) if tools is None else step_references(step, tools))
    return out


def _all(flow: Any) -> list[Any]:
    from argent.flows.model import walk_steps

    return list(walk_steps(flow.steps))


# --------------------------------------------------------------------------------------------
# What the directives declare


def test_each_directive_that_names_a_file_declares_it() -> None:
    text = steps_of(
        "run: frag.yaml",
        "snapshot: home",
        "script: { path: ../scripts/seed.sh }",
        "launch: { chromium: page.html }",
        "tool: flow-execute\n    args: { name: other, project_root: /p, updateBaselines: true }",
        "echo: nothing",
        "tap: Save",
    )
    assert refs(text) == [
        Fragment("frag.yaml"),
        Baseline("home"),
        ScriptFile("../scripts/seed.sh"),
        LaunchFile("page.html"),
        NestedFlow("other", "/p", None, True),
    ]


def test_a_tool_step_names_the_arguments_its_tool_says_are_files() -> None:
    text = steps_of("tool: read-file\n    args: { file: /a.png, note: /b.png }")

    def tool_files(tool: str, args: Any) -> list[tuple[str, str]]:
        assert tool == "read-file"
        return [("file", args["file"])]

    assert refs(text) == []
    assert refs(text, tool_files) == [ToolFile("read-file", "file", "/a.png")]


def test_flow_execute_names_its_nested_flow_and_no_file_argument() -> None:
    text = steps_of("tool: flow-execute\n    args: { flow_path: /x/a.yaml }")
    assert refs(text, lambda tool, args: [("flow_path", "/x/a.yaml")]) == [
        NestedFlow(None, None, "/x/a.yaml")
    ]
    assert refs(steps_of("tool: flow-execute\n    args: [1]")) == [NestedFlow()]


def test_steps_of_when_blocks_are_read_and_a_block_scalar_names_nothing() -> None:
    text = "steps:\n  - when: { platform: ios }\n    steps:\n      - run: a.yaml\n  - echo: |\n      - run: evil.yaml\n"
    assert refs(text) == [Fragment("a.yaml")]


def test_a_bare_launch_id_is_the_chromium_target_and_a_native_map_names_none() -> None:
    assert refs(steps_of("launch: com.example.app")) == [LaunchFile("com.example.app")]
    assert refs(steps_of("launch: { ios: com.example.app }")) == []


# --------------------------------------------------------------------------------------------
# The walk


def test_the_walk_reaches_fragments_and_nested_flows_breadth_first_each_file_once() -> None:
    disk = Disk(
        {
            "/p/.argent/flows/main.yaml": steps_of(
                "run: a.yaml",
                "tool: flow-execute\n    args: { name: other, project_root: /q }",
                "run: b.yaml",
            ),
            "/p/.argent/flows/a.yaml": steps_of("run: b.yaml", "run: sub/c.yaml"),
            "/p/.argent/flows/b.yaml": steps_of("run: a.yaml"),
            "/p/.argent/flows/sub/c.yaml": steps_of("echo: c"),
            "/q/.argent/flows/other.yaml": steps_of("run: a.yaml"),
        }
    )
    graph = disk.graph("/p/.argent/flows/main.yaml")
    assert [(f.canonical, f.level) for f in graph] == [
        ("/p/.argent/flows/main.yaml", 1),
        ("/p/.argent/flows/a.yaml", 2),
        ("/q/.argent/flows/other.yaml", 2),
        ("/p/.argent/flows/b.yaml", 2),
        ("/p/.argent/flows/sub/c.yaml", 3),
    ]
    # each key once: b.yaml named by main and by a (same directory) is resolved once
    assert disk.asked.count("/p/.argent/flows\0b.yaml") == 1
    assert len(disk.asked) == len(set(disk.asked))
    main = graph.root
    assert [(e.n, e.key) for e in main.edges] == [
        (1, "/p/.argent/flows\0a.yaml"),
        (2, "/q/.argent/flows\0other.yaml"),
        (3, "/p/.argent/flows\0b.yaml"),
    ]


def test_a_missing_or_broken_target_is_an_edge_but_not_walked() -> None:
    disk = Disk({"/p/main.yaml": steps_of("run: gone.yaml", "run: bad.yaml"), "/p/bad.yaml": "steps: [ {"})
    graph = disk.graph("/p/main.yaml")
    assert [f.canonical for f in graph] == ["/p/main.yaml"]
    assert [(e.target.canonical, e.target.flow) for e in graph.root.edges if e.target] == [
        ("/p/gone.yaml", None),
        ("/p/bad.yaml", None),
    ]


def test_a_cycle_stops_and_the_root_is_not_walked_again() -> None:
    disk = Disk({"/p/a.yaml": steps_of("run: b.yaml", "run: a.yaml"), "/p/b.yaml": steps_of("run: a.yaml")})
    graph = disk.graph("/p/a.yaml")
    assert [f.canonical for f in graph] == ["/p/a.yaml", "/p/b.yaml"]
    assert graph.reached(graph.files["/p/b.yaml"].edges[0]) is graph.root


def test_the_walk_stops_at_the_depth_of_a_run() -> None:
    files = {f"/p/f{i}.yaml": steps_of(f"run: f{i + 1}.yaml", "snapshot: s") for i in range(1, 30)}
    disk = Disk(files)
    graph = disk.graph("/p/f1.yaml")
    assert [f.level for f in graph] == list(range(1, MAX_RUN_DEPTH + 1))
    deepest = graph.files[f"/p/f{MAX_RUN_DEPTH}.yaml"]
    assert [(type(e.ref), e.key, e.target) for e in deepest.edges] == [
        (Fragment, None, None),
        (Baseline, None, None),
    ]
    assert f"/p\0f{MAX_RUN_DEPTH + 1}.yaml" not in disk.asked


def test_a_file_reached_at_several_depths_is_walked_at_the_shallowest() -> None:
    disk = Disk(
        {
            "/p/main.yaml": steps_of("run: a.yaml", "run: z.yaml"),
            "/p/a.yaml": steps_of("run: b.yaml"),
            "/p/b.yaml": steps_of("run: z.yaml"),
            "/p/z.yaml": steps_of("echo: z"),
        }
    )
    assert disk.graph("/p/main.yaml").files["/p/z.yaml"].level == 2


def test_a_reference_the_resolver_does_not_follow_has_no_target() -> None:
    disk = Disk(
        {"/p/main.yaml": steps_of("tool: flow-execute\n    args: { flow_path: /p/x.yaml, project_root: /p }")}
    )
    graph = disk.graph("/p/main.yaml")
    (edge,) = graph.root.edges
    assert edge.target is None
    assert edge.ref == NestedFlow(None, "/p", "/p/x.yaml")


async def test_the_async_walk_finds_what_the_blocking_one_does() -> None:
    files = {
        "/p/main.yaml": steps_of("run: a.yaml", "snapshot: s"),
        "/p/a.yaml": steps_of("run: main.yaml", "run: b.yaml"),
        "/p/b.yaml": steps_of("echo: b"),
    }
    disk = Disk(files)
    flow = parse_flow(files["/p/main.yaml"])
    blocking = build_graph("/p/main.yaml", "/p/main.yaml", flow, disk.resolve)
    awaited = await build_graph_async("/p/main.yaml", "/p/main.yaml", flow, disk.resolve_async)
    assert [(f.canonical, f.level, f.edges) for f in blocking] == [
        (f.canonical, f.level, f.edges) for f in awaited
    ]


def test_traverse_keeps_the_edges_a_consumer_follows_in_its_order() -> None:
    disk = Disk(
        {
            "/p/main.yaml": steps_of(
                "tool: flow-execute\n    args: { name: n, project_root: /p }", "run: a.yaml"
            ),
            "/p/a.yaml": steps_of("echo: a"),
            "/p/.argent/flows/n.yaml": steps_of("run: ../../deep.yaml"),
            "/p/deep.yaml": steps_of("echo: deep"),
        }
    )
    graph = disk.graph("/p/main.yaml")
    assert [f.canonical for f in graph.traverse()] == [
        "/p/main.yaml",
        "/p/.argent/flows/n.yaml",
        "/p/a.yaml",
        "/p/deep.yaml",
    ]
    fragments_first = graph.traverse(order=lambda e: (not isinstance(e.ref, Fragment), e.n))
    assert [f.canonical for f in fragments_first][:3] == [
        "/p/main.yaml",
        "/p/a.yaml",
        "/p/.argent/flows/n.yaml",
    ]
    only_run = graph.traverse(follow=lambda e: isinstance(e.ref, Fragment))
    assert [f.canonical for f in only_run] == ["/p/main.yaml", "/p/a.yaml"]


def test_traverse_counts_its_own_levels() -> None:
    """A file the graph walked shallow (through a nested flow) but a filtered view reaches deep is
    not followed past the depth of a run in that view."""
    files = {f"/p/f{i}.yaml": steps_of(f"run: f{i + 1}.yaml") for i in range(1, MAX_RUN_DEPTH + 10)}
    files["/p/f1.yaml"] = steps_of(
        "run: f2.yaml", "tool: flow-execute\n    args: { name: x, project_root: /p }"
    )
    files["/p/.argent/flows/x.yaml"] = steps_of("run: ../../f10.yaml")
    graph = Disk(files).graph("/p/f1.yaml")
    assert graph.files["/p/f10.yaml"].level == 3
    assert f"/p/f{MAX_RUN_DEPTH + 5}.yaml" in graph.files
    view = graph.traverse(follow=lambda e: isinstance(e.ref, Fragment))
    assert [f.canonical for f in view] == [f"/p/f{i}.yaml" for i in range(1, MAX_RUN_DEPTH + 1)]
