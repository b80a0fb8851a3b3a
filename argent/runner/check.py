"""Everything a run would refuse, found without a device: `argent flow check`, and `argent flow run`'s
check before it starts one.

A flow is read and walked as a run reads it: the root resolved like a flow-execute request, every
`run:` fragment and nested saved flow resolved and read through ``DiskFlowFiles`` into the reference
graph (``argent.flows.graph``); then each reference of every file is checked where a run would
use it. One ``FlowProblem`` per problem, at the file and line to edit:

- a flow that cannot be read, or does not parse (in plain words: ``argent.flows.explain``);
- a `run:` target or a nested saved flow that names no file (or a file only a case-insensitive
  match finds);
- a `launch:` page that is not there (co-located), or a page path at all over a link (the tool-server
  opens what it can reach; the client sends no pages);
- a `script:` file that is not there or cannot be started (co-located), or any `script:` over a link
  (the tool-server refuses them);
- an `upload:` file that cannot be had;
- an ``executionPrerequisite`` on a flow whose leading `run:` chain launches;
- with ``baselines``: a `snapshot:` step with no baseline yet (a run fails it; `flow check` says so,
  `flow run` does not refuse: that run shows the capture ``--update-baselines`` would adopt).

Nothing here starts a device, runs a step or writes a file.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable

from attrs import field, frozen

from argent.errors import FLOW_FILE_INVALID, FlowError, FlowParseError
from argent.flows.explain import explain_parse_error
from argent.flows.graph import Edge, FlowGraph, GraphFile, Resolve, Resolved, build_graph_async
from argent.flows.model import Flow, LaunchStep, ScriptStep
from argent.flows.names import BASELINES_DIR, baseline_dir
from argent.flows.references import Baseline, Fragment, LaunchFile, NestedFlow, ScriptFile, UploadFile
from argent.flows.write import render_step
from argent.runner.files import DiskFlowFiles, FlowFileError, FlowFiles, FlowRef
from argent.runner.load import FlowRequest, check_leading_launch, read_flow, resolve_source
from argent.runner.reach import GraphLookup, resolve_reference
from argent.runner.run import StackEntry
from argent.runner.script import script_command
from argent.runner.uploads import unconditional_files

__all__ = ["FlowProblem", "check_flow"]

#: A `script:` file with one of these extensions runs through its interpreter; any other must be executable.
_INTERPRETED = (".py", ".mjs", ".js", ".cjs", ".sh")
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:)")
_PREREQUISITE = re.compile(r"^executionPrerequisite\s*:", re.MULTILINE)


@frozen
class FlowProblem:
    """One problem of one file: its absolute ``path``, the 1-based ``line`` (None: the file as a whole),
    what is wrong and what to do (sentences without their final period)."""

    path: str
    line: int | None
    what: str
    todo: str = field(default="")
    #: The ``error_code`` a run refusing this would answer with.
    code: str = FLOW_FILE_INVALID

    def text(self, shown: str | None = None) -> str:
        """``<path>:<line>: <what is wrong>. <what to do>.`` (``shown``: the path as the user reads it)."""
        where = f"{shown or self.path}:{self.line or 1}"
        todo = f" {_sentence(self.todo[:1].upper() + self.todo[1:])}" if self.todo else ""
        return f"{where}: {_sentence(self.what)}{todo}"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else f"{text}."


class _Checker:
    """One flow's check: the graph built through ``files``, every reference's problem kept once."""

    def __init__(
        self, files: FlowFiles, *, over_link: bool, baselines: bool, refusals: bool, conditional: bool
    ) -> None:
        self.files = files
        self.conditional = conditional
        self.over_link = over_link
        self.refusals = refusals
        self.baselines = baselines
        self.problems: list[FlowProblem] = []
        self._seen: set[tuple[str, int | None, str]] = set()
        #: Why a reference key names no file that can be read.
        self._why: dict[str, str] = {}
        #: The problem of each flow file that could not be read or parsed, by real path.
        self._unreadable: dict[str, FlowProblem] = {}

    def add(self, problem: FlowProblem) -> None:
        key = (problem.path, problem.line, problem.what)
        if key not in self._seen:
            self._seen.add(key)
            self.problems.append(problem)

    async def read(self, ref: FlowRef, path: str) -> Flow | None:
        """The flow of ``ref``, or None with its problem kept (at ``path``, the file as the user knows it)."""
        try:
            return await read_flow(self.files, ref)
        except FlowParseError as exc:
            text = ""
            with contextlib.suppress(Exception):
                text = await self.files.read_text(ref)
            said = explain_parse_error(exc, text)
            self._unreadable[ref.canonical] = FlowProblem(
                path, said.line, said.what, said.todo, exc.error_code
            )
        except FlowFileError as exc:
            self._unreadable[ref.canonical] = FlowProblem(
                path, None, f"the flow file cannot be read: {exc}", "Check that it exists and is readable"
            )
        return None

    async def resolve(self, request: Resolve[FlowRef]) -> Resolved[FlowRef] | None:
        try:
            target = await resolve_reference(self.files, request)
        except Exception as exc:
            self._why[request.key] = str(exc)
            return None
        if target is None:
            return None
        if target.spelling.state == "case_folded":
            self._why[request.key] = (
                f"only {target.spelling.actual} matches it, in another case (flow file names are matched exactly)"
            )
            return Resolved(target, target.canonical)
        if not os.path.exists(target.canonical):
            self._why[request.key] = f"{target.canonical} does not exist"
            return Resolved(target, target.canonical)
        return Resolved(target, target.canonical, await self.read(target, target.canonical))

    def edges(self, graph: FlowGraph[FlowRef]) -> list[tuple[GraphFile[FlowRef], Edge[FlowRef]]]:
        """The references to check: every one; or (not ``conditional``) those a run surely reaches, the
        top-level steps of the root and of the fragments its top-level `run:` steps reach."""
        if self.conditional:
            return [(file, edge) for file in graph for edge in file.edges]
        chosen: list[tuple[GraphFile[FlowRef], Edge[FlowRef]]] = []
        for file in unconditional_files(graph):
            top = {id(step) for step in file.flow.steps}
            chosen.extend((file, edge) for edge in file.edges if id(edge.step) in top)
        return chosen

    def references(self, graph: FlowGraph[FlowRef], root_name: str) -> None:
        for file, edge in self.edges(graph):
            self.reference(graph, file, edge, root_name)

    def reference(
        self, graph: FlowGraph[FlowRef], file: GraphFile[FlowRef], edge: Edge[FlowRef], root_name: str
    ) -> None:
        ref, at = edge.ref, file.canonical
        if isinstance(ref, Fragment | NestedFlow) and edge.key is not None:
            why = self._why.get(edge.key)
            if isinstance(why, str):
                step = render_step(edge.step)
                if isinstance(ref, Fragment):
                    todo = "Create that file, or fix the target: it is relative to this file, and .yaml may be left out"
                else:
                    todo = "Save a flow under that name in .argent/flows, or fix the name"
                self.add(FlowProblem(at, edge.line, f"`{step}` names no flow file: {why}", todo))
            elif edge.target is not None and edge.target.canonical in self._unreadable:
                self.add(self._unreadable[edge.target.canonical])
        elif isinstance(ref, LaunchFile):
            self.launch(file, edge, ref)
        elif isinstance(ref, ScriptFile):
            self.script(file, edge, ref)
        elif isinstance(ref, Baseline) and self.baselines:
            self.baseline(graph, file, edge, ref, root_name)

    def launch(self, file: GraphFile[FlowRef], edge: Edge[FlowRef], ref: LaunchFile) -> None:
        step = edge.step
        if not isinstance(step, LaunchStep) or (step.chromium is None and step.web_target() is None):
            return  # an app id: a device of its platform opens it
        target = ref.target.strip()
        if _URL.match(target):
            if self.over_link:
                return
        elif self.over_link:
            if not os.path.isabs(os.path.expanduser(target)):
                self.add(
                    FlowProblem(
                        file.canonical,
                        edge.line,
                        f'the page "{target}" is a file of this machine, which a tool-server over a link cannot open '
                        "(the client sends no pages)",
                        "Launch an http(s):// URL the tool-server can reach, or run with --local",
                    )
                )
            return
        from argent.devices.web.targets import LaunchTargetError, resolve_launch_target

        try:
            resolve_launch_target(target, os.path.dirname(file.canonical))
        except LaunchTargetError as exc:
            self.add(
                FlowProblem(file.canonical, edge.line, str(exc), "Fix the path: it is relative to this file")
            )

    def script(self, file: GraphFile[FlowRef], edge: Edge[FlowRef], ref: ScriptFile) -> None:
        if self.over_link:
            if not self.refusals:
                return
            self.add(
                FlowProblem(
                    file.canonical,
                    edge.line,
                    f"`script: {ref.path}` does not run over a link (the tool-server refuses script: steps)",
                    "Run the flow with --local, or move the script's work into the app under test",
                )
            )
            return
        if not isinstance(edge.step, ScriptStep):
            return
        path = os.path.normpath(os.path.join(os.path.dirname(file.canonical), ref.path))
        if not os.path.isfile(path):
            self.add(
                FlowProblem(
                    file.canonical,
                    edge.line,
                    f"script {ref.path} was not found: no file at {path}",
                    "Fix the path (it is relative to this file), or create the script",
                )
            )
        elif os.path.splitext(path)[1].lower() not in _INTERPRETED and not os.access(path, os.X_OK):
            self.add(
                FlowProblem(
                    file.canonical,
                    edge.line,
                    f"script {ref.path} cannot be started: it is not executable and "
                    f"{script_command(path)[0]} has no extension argent runs with an interpreter",
                    "Make it executable (chmod +x), or give it a .py, .sh, .mjs, .js or .cjs extension",
                )
            )

    def baseline(
        self,
        graph: FlowGraph[FlowRef],
        file: GraphFile[FlowRef],
        edge: Edge[FlowRef],
        ref: Baseline,
        root_name: str,
    ) -> None:
        directory = baseline_dir(graph.root.canonical, root_name)
        try:
            names = os.listdir(directory)
        except OSError:
            names = []
        if any(name.startswith(f"{ref.name}__") and name.endswith(".png") for name in names):
            return
        shown = os.path.relpath(directory, os.path.dirname(graph.root.canonical))
        self.add(
            FlowProblem(
                file.canonical,
                edge.line,
                f'snapshot "{ref.name}" has no baseline yet (none in {shown if BASELINES_DIR in shown else directory})',
                "Record it with `argent flow run <flow> --update-baselines`, look at it, and commit it",
            )
        )

    async def uploads(self, graph: FlowGraph[FlowRef]) -> None:
        for file, edge in self.edges(graph):
            if not isinstance(edge.ref, UploadFile):
                continue
            try:
                await self.files.local_file(file.handle, edge.ref.path)
            except FlowFileError as exc:
                self.add(
                    FlowProblem(
                        file.canonical,
                        edge.line,
                        f"`upload:` file {edge.ref.path} cannot be had: {exc}",
                        "Fix the path (it is relative to this file), or create the file",
                    )
                )


async def check_flow(
    path: str,
    project_root: str,
    *,
    name: str | None = None,
    over_link: bool = False,
    baselines: bool = True,
    refusals: bool = True,
    conditional: bool = True,
    files: FlowFiles | None = None,
) -> list[FlowProblem]:
    """The problems of the flow at ``path`` (a saved flow: ``name`` in ``project_root``) and of every file it
    reaches, in the order found (see the module). ``over_link``: check as a run over a link would go;
    ``baselines``: also the snapshot steps without a baseline; ``refusals``: also what a tool-server over a
    link refuses itself before any device starts (a `script:` step, in the protocol's words);
    ``conditional``: also the references of `when:` blocks and of what only they reach (which a run may
    never meet: `flow run` leaves them to their steps)."""
    checker = _Checker(
        files or DiskFlowFiles(),
        over_link=over_link,
        baselines=baselines,
        refusals=refusals,
        conditional=conditional,
    )
    request = FlowRequest(name=name, flow_path=None if name else path, project_root=project_root)
    try:
        ref, flow_name = await resolve_source(request, checker.files)
    except (FlowError, FlowFileError) as exc:
        return [FlowProblem(path, None, str(exc), "Fix the flow's name or path")]
    flow = await checker.read(ref, path)
    if flow is None:
        return list(checker._unreadable.values())
    graph = await build_graph_async(ref, ref.canonical, flow, checker.resolve)
    checker.references(graph, flow_name)
    await checker.uploads(graph)
    try:
        await check_leading_launch(flow, [StackEntry(ref, flow_name)], GraphLookup(graph), flow_name, request)
    except FlowError as exc:
        checker.add(FlowProblem(path, _prerequisite_line(checker, ref), *_split(str(exc))))
    return checker.problems


def _split(message: str) -> tuple[str, str]:
    what, _, todo = message.partition(" — ")
    return what, todo


def _prerequisite_line(checker: _Checker, ref: FlowRef) -> int | None:
    try:
        with open(ref.canonical, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, ValueError):
        return None
    found = _PREREQUISITE.search(text)
    return text.count("\n", 0, found.start()) + 1 if found is not None else None


def problem_lines(problems: Iterable[FlowProblem], cwd: str | None = None) -> list[str]:
    """Each problem as its line, its path relative to ``cwd`` when the file lies under it."""
    base = cwd or os.getcwd()
    lines = []
    for problem in problems:
        rel = os.path.relpath(problem.path, base)
        lines.append(problem.text(problem.path if rel.startswith("..") else rel))
    return lines
