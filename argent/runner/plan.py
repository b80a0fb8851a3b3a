"""The steps of a run in the order the runner numbers them, named as report lines name them: what a
terminal's status line shows while a step runs (``argent.cli.live``).

The runner numbers every line it reports: a `when:` block's line, then its steps (run or skipped);
a `run:` step's line, then the fragment's steps, expanded where the step stands. The plan follows
the reference graph (``argent.runner.reach``), read through ``DiskFlowFiles`` as a co-located run
reads it. A nested flow-execute is one entry (its own run numbers its steps); a plan longer than
``MAX_PLANNED_STEPS`` is none at all (the status line then names numbers alone).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from argent.flows.graph import FlowGraph
from argent.flows.model import RunStep, Step, ToolStep, WhenStep
from argent.flows.references import Fragment, flow_key
from argent.limits import MAX_RUN_DEPTH
from argent.runner.files import DiskFlowFiles, FlowRef
from argent.runner.load import FlowRequest, read_flow, resolve_source
from argent.runner.reach import run_graph

__all__ = ["MAX_PLANNED_STEPS", "step_name", "step_plan"]

#: The longest plan kept (a fan-out of fragments can expand far beyond what a status line needs).
MAX_PLANNED_STEPS = 10_000


class _TooLong(Exception):
    pass


def step_name(step: Step) -> str:
    """A step as its report line names it: its kind, then its tool or target."""
    label = step.tool if isinstance(step, ToolStep) else step.label()
    return f"{step.kind} {label}" if label else step.kind


async def step_plan(path: str, project_root: str, *, name: str | None = None) -> list[str] | None:
    """The plan of the flow at ``path`` (a saved flow: ``name``); None when it cannot be read."""
    files = DiskFlowFiles()
    request = FlowRequest(name=name, flow_path=None if name else path, project_root=project_root)
    try:
        ref, _ = await resolve_source(request, files)
        flow = await read_flow(files, ref)
        graph = await run_graph(files, ref, flow)
    except Exception:
        return None
    fragments = {
        edge.key: edge.target.handle
        for file in graph
        for edge in file.edges
        if isinstance(edge.ref, Fragment) and edge.key is not None and edge.target is not None
    }
    plan: list[str] = []
    try:
        _expand(graph, fragments, ref, flow.steps, 1, plan)
    except _TooLong:
        return None
    return plan


def _expand(
    graph: FlowGraph[FlowRef],
    fragments: dict[str, FlowRef],
    ref: FlowRef,
    steps: Sequence[Step],
    depth: int,
    plan: list[str],
) -> None:
    for step in steps:
        if len(plan) >= MAX_PLANNED_STEPS:
            raise _TooLong
        plan.append(step_name(step))
        if isinstance(step, WhenStep):
            _expand(graph, fragments, ref, step.steps, depth, plan)
        elif isinstance(step, RunStep) and depth < MAX_RUN_DEPTH:
            target = fragments.get(flow_key(posixpath.dirname(ref.canonical), step.target))
            walked = graph.files.get(target.canonical) if target is not None else None
            if target is not None and walked is not None:
                _expand(graph, fragments, target, walked.flow.steps, depth + 1, plan)
