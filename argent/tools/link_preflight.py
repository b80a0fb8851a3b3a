"""The preflight of a run over a link: refuse, before the first step, what a link cannot run.

Over a link the runner has only the files the client sent with the call. Before the first
step it checks the flow and every flow member it can reach (`run:` fragments and nested
flows, breadth first, to the depth of a `run:` chain: the run's reference graph,
``argent.runner.reach``). Each of these stops the run with ``FLOW_FILE_INVALID``, and the error
lists every step that caused it:

- a `script:` step;
- a `tool:` step that records a flow;
- a `tool: flow-execute` step that does not name its flow with ``name`` and an absolute
  ``project_root`` without a ``..`` segment;
- a `tool:` step with a file input that is not a file argument (a directory, an app, an output
  directory, a path built from several arguments, a relative path, a file that is not .png/.yaml);
- a refused flow member.

A client that sent no members (older than this tool-server) sent no file but the flow file:
its `run:`, `snapshot:`, nested-flow, file-argument and `upload:` steps are rejected too, and the
error adds what this tool-server runs and that the client needs an update. (A file an `upload:` step
sets that a client with members did not send, or refused, stops the run before its first step too:
``argent.runner.uploads``.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from argent.errors import FlowError
from argent.flows.graph import Edge, FlowGraph, GraphFile
from argent.flows.model import Flow, Step, ToolStep
from argent.flows.references import Baseline, Fragment, ScriptFile, ToolFile, ToolFiles, UploadFile
from argent.flows.write import STEP_LINE, render_step
from argent.link.models import FileInputSpec
from argent.link.rules import (
    FLOW_EXECUTE,
    RECORDING_TOOLS,
    classify_file_inputs,
    file_arguments,
    nested_flow_ref,
)
from argent.runner.files import FlowFiles, FlowRef
from argent.runner.reach import run_graph

HEADER = (
    "This flow cannot run over a link: the tool-server runs a flow only from the files that the client "
    "sends with the call, and these steps need more:"
)
SCRIPT_REASON = "a replay over a link runs no script: step"
RECORDING_REASON = "a replay over a link records no flow"
NESTED_REASON = (
    "a nested flow-execute over a link must name its flow with name and an absolute project_root "
    "without a .. segment"
)
REFUSED_REASON = "the client did not send the flow: {error}"
OLDER_REASONS = {
    "run": "the client sent no fragments with the call",
    "snapshot": "the client sent no baselines with the call",
    "nested": "the client sent no nested flows with the call",
    "tool": "the client sent no file arguments with the call",
    "upload": "the client sent no files to upload with the call",
}
OLDER_WHAT = {
    "run": "run: steps for a client that sends their fragments with the call",
    "snapshot": "snapshot: steps for a client that sends their baselines with the call",
    "nested": "tool: flow-execute steps that name a flow with name, for a client that sends those flows with the call",
    "tool": "tool: steps with file arguments for a client that sends them with the call",
    "upload": "upload: steps for a client that sends their files with the call",
}
OLDER_CLIENT = "This tool-server runs {what}. Update the argent CLI or MCP adapter on the client."

#: The file-input specs (wire form) a tool declares; None for a tool this server does not have.
InputsOf = Callable[[str], Iterable[FileInputSpec | Mapping[str, Any]] | None]


class LinkFiles(FlowFiles, Protocol):
    """The files of a call over a link, as the preflight needs them."""

    @property
    def sent_members(self) -> bool:
        """False for a client that sent only the flow file (no members field)."""
        ...

    def refusal(self, ref: FlowRef) -> str | None:
        """The client's reason when the flow member of ``ref`` is refused, else None."""
        ...


# --------------------------------------------------------------------------------------------
# The check


class _Preflight:
    def __init__(self, files: LinkFiles, inputs_of: InputsOf) -> None:
        self.files = files
        self.inputs_of = inputs_of
        self.lines: list[str] = []
        self.older: list[str] = []

    def offend(self, n: int, ref: FlowRef, step: Step, reason: str) -> None:
        self.lines.append(STEP_LINE.format(n=n, path=ref.canonical, step=render_step(step), reason=reason))

    def older_client(self, n: int, ref: FlowRef, step: Step, kind: str) -> None:
        self.offend(n, ref, step, OLDER_REASONS[kind])
        if kind not in self.older:
            self.older.append(kind)

    def check_file(self, file: GraphFile[FlowRef]) -> None:
        """Each step of one reached file, in order, by the files it names (and its tool)."""
        by_step: dict[int, list[Edge[FlowRef]]] = {}
        for edge in file.edges:
            by_step.setdefault(edge.n, []).append(edge)
        for n, step in enumerate(file.steps, start=1):
            if isinstance(step, ToolStep):
                self.check_tool(n, file.handle, step, by_step.get(n, []))
                continue
            for edge in by_step.get(n, ()):
                self.check_reference(file.handle, edge)

    def check_reference(self, ref: FlowRef, edge: Edge[FlowRef]) -> None:
        members = self.files.sent_members
        kind = edge.ref
        if isinstance(kind, ScriptFile):
            self.offend(edge.n, ref, edge.step, SCRIPT_REASON)
        elif isinstance(kind, Baseline) and not members:
            self.older_client(edge.n, ref, edge.step, "snapshot")
        elif isinstance(kind, UploadFile) and not members:
            self.older_client(edge.n, ref, edge.step, "upload")
        elif isinstance(kind, Fragment):
            if not members:
                self.older_client(edge.n, ref, edge.step, "run")
            else:
                self.refused(edge, ref)

    def refused(self, edge: Edge[FlowRef], ref: FlowRef) -> None:
        if edge.target is None:
            return
        refusal = self.files.refusal(edge.target.handle)
        if refusal is not None:
            self.offend(edge.n, ref, edge.step, REFUSED_REASON.format(error=refusal))

    def check_tool(self, n: int, ref: FlowRef, step: ToolStep, edges: list[Edge[FlowRef]]) -> None:
        tool = step.tool if isinstance(step.tool, str) else str(step.tool)
        if tool in RECORDING_TOOLS:
            self.offend(n, ref, step, RECORDING_REASON)
            return
        if tool == FLOW_EXECUTE:
            if nested_flow_ref(step.args) is None:
                self.offend(n, ref, step, NESTED_REASON)
            elif not self.files.sent_members:
                self.older_client(n, ref, step, "nested")
            else:
                for edge in edges:
                    self.refused(edge, ref)
            return
        _, others = classify_file_inputs(self.inputs_of(tool), step.args)
        for other in others:
            self.offend(n, ref, step, f"a replay over a link sends only file arguments, and {other.why}")
        if any(isinstance(edge.ref, ToolFile) for edge in edges) and not self.files.sent_members:
            self.older_client(n, ref, step, "tool")

    def message(self) -> str:
        text = "\n".join([HEADER, *self.lines])
        if self.older:
            what = ", and ".join(OLDER_WHAT[kind] for kind in self.older)
            text += "\n" + OLDER_CLIENT.format(what=what)
        return text


def tool_files_of(inputs_of: InputsOf) -> ToolFiles:
    """The file arguments of a `tool:` step, as the tool-server's tools declare them (the link's rule)."""

    def tool_files(tool: str, args: Any) -> list[tuple[str, str]]:
        return file_arguments(inputs_of(tool), args)

    return tool_files


def check_linked_graph(graph: FlowGraph[FlowRef], files: LinkFiles, inputs_of: InputsOf) -> None:
    """Raise ``FlowError`` (``FLOW_FILE_INVALID``) when the run over a link must not start: the flow
    and every flow member the run can reach (the graph, breadth first, to the depth of a run)."""
    check = _Preflight(files, inputs_of)
    for file in graph.traverse():
        check.check_file(file)
    if check.lines:
        raise FlowError(check.message())


async def check_linked_flow(flow: Flow, ref: FlowRef, files: LinkFiles, inputs_of: InputsOf) -> None:
    """``check_linked_graph`` of the graph of ``flow`` (the file ``ref``) over ``files``."""
    graph = await run_graph(files, ref, flow, tool_files_of(inputs_of))
    check_linked_graph(graph, files, inputs_of)
