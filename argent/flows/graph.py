"""The reference graph: every file a flow reaches, found once, from the directive table.

Starting from a parsed root flow, the graph takes each step (`when:` blocks included, in authored
order: ``walk_steps``) and asks the directive table which files it names (``Directive.files``,
``argent.flows.references``). A followed reference (a `run:` fragment, a nested flow-execute) is
resolved and read by the caller, and the flow it finds is walked in turn, breadth first:

- each flow file (by its ``canonical`` path) is walked once, at the shallowest level it is reached;
- the root is level 1, and the references of a file at level 20 (``MAX_RUN_DEPTH``, the depth of a
  `run:` chain) are not resolved: nothing a run can reach lies deeper;
- each reference key (``<real dir of the naming file>\\0<target>`` for a fragment,
  ``<project_root>/.argent/flows\\0<name>.yaml`` for a nested flow: the link protocol's member keys)
  is resolved once, and every edge that names it shares the answer.

The graph does no I/O itself: the walk asks the caller to resolve each key (``Resolve``) and carries
on with its answer (``Resolved``: the caller's handle of the file, its real path, and its flow when
the file could be read and parsed). ``build_graph`` drives it with a blocking resolver (the client,
in a worker thread), ``build_graph_async`` with an async one (the tool-server, through
``FlowFiles``). Each consumer then reads what it needs from the one graph — the members to send, the
steps a link cannot run, whether a device is needed, the `script:` steps a policy refuses — without
reading a file again; ``FlowGraph.traverse`` gives a consumer its own view (an edge filter, an
order) of the files the graph reached.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Generator, Iterator
from typing import Any, Generic, TypeVar

from attrs import define, field, frozen

from argent.flows import directives as table
from argent.flows.model import Flow, Step, walk_steps
from argent.flows.references import (
    FOLLOWED,
    NO_TOOL_FILES,
    Fragment,
    NestedFlow,
    Reference,
    ToolFiles,
    UploadFile,
)
from argent.limits import MAX_RUN_DEPTH

__all__ = [
    "Edge",
    "FlowGraph",
    "GraphFile",
    "Resolve",
    "Resolved",
    "build_graph",
    "build_graph_async",
    "step_references",
]

H = TypeVar("H")


# --------------------------------------------------------------------------------------------
# What each step names, from the table


_DECLARED: dict[type, Callable[[Any, ToolFiles], tuple[Reference, ...]] | None] = {}
_DECLARED_FOR: list[tuple[Any, ...]] = [()]


def _declaration(step_type: type) -> Callable[[Any, ToolFiles], tuple[Reference, ...]] | None:
    """The ``files`` of the directive that builds ``step_type`` (read from the table as it is now)."""
    if _DECLARED_FOR[0] is not table.DIRECTIVES:
        _DECLARED.clear()
        for directive in table.DIRECTIVES:
            for model in directive.models:
                _DECLARED[model] = directive.files
        _DECLARED_FOR[0] = table.DIRECTIVES
    return _DECLARED.get(step_type)


def step_references(step: Step, tools: ToolFiles = NO_TOOL_FILES) -> tuple[Reference, ...]:
    """The files one step names, as its directive declares them (none for a step of no directive)."""
    declared = _declaration(type(step))
    return declared(step, tools) if declared is not None else ()


# --------------------------------------------------------------------------------------------
# The graph


@frozen
class Resolved(Generic[H]):
    """A followed reference as the caller found it: its ``handle`` (a ``FlowRef``, a member...), its
    real path, and its flow (None when it is missing, refused, unreadable or not a flow)."""

    handle: H
    canonical: str
    flow: Flow | None = None


@frozen
class Edge(Generic[H]):
    """One reference of one file: its step (numbered as ``walk_steps`` orders them, from 1), and for a
    followed kind its key and what it resolved to (None: not resolved, deeper than a run goes, or a
    reference the caller does not follow); an upload has its key (beside the naming file), never a
    target: the consumer resolves it."""

    n: int
    step: Step
    ref: Reference
    key: str | None = None
    target: Resolved[H] | None = None

    @property
    def line(self) -> int:
        return int(self.step.line)


@define
class GraphFile(Generic[H]):
    """A flow file the graph walked: its handle, real path, flow, level (the root is 1), its steps in
    ``walk_steps`` order and its references."""

    handle: H
    canonical: str
    flow: Flow
    level: int
    steps: tuple[Step, ...] = ()
    edges: list[Edge[H]] = field(factory=list)


@frozen
class Resolve(Generic[H]):
    """The walk asks: resolve and read ``ref`` (key ``key``), named by the file ``naming``."""

    naming: GraphFile[H]
    ref: Fragment | NestedFlow
    key: str


def _followed(edge: Edge[Any]) -> bool:
    return True


def _by_step(edge: Edge[Any]) -> int:
    return edge.n


@define
class FlowGraph(Generic[H]):
    """The files one flow reaches: ``files`` by real path, in the order the walk reached them."""

    root: GraphFile[H]
    files: dict[str, GraphFile[H]] = field(factory=dict)

    def __iter__(self) -> Iterator[GraphFile[H]]:
        return iter(self.files.values())

    def traverse(
        self,
        *,
        start: GraphFile[H] | None = None,
        follow: Callable[[Edge[H]], bool] = _followed,
        order: Callable[[Edge[H]], Any] = _by_step,
        depth: int | None = MAX_RUN_DEPTH,
    ) -> list[GraphFile[H]]:
        """The files reached from ``start`` (the root) through the edges ``follow`` keeps, breadth
        first, each file's edges taken in ``order`` (step order by default), each file once, to
        ``depth`` levels (``start`` is level 1; None: as deep as the graph goes). Reads nothing: a
        view of what the walk found."""
        first = self.root if start is None else start
        out: list[GraphFile[H]] = []
        levels = {first.canonical: 1}
        queue = deque([first])
        while queue:
            current = queue.popleft()
            out.append(current)
            level = levels[current.canonical]
            if depth is not None and level >= depth:
                continue
            for edge in sorted(current.edges, key=order):
                reached = self._reached(edge)
                if reached is None or reached.canonical in levels or not follow(edge):
                    continue
                levels[reached.canonical] = level + 1
                queue.append(reached)
        return out

    def _reached(self, edge: Edge[H]) -> GraphFile[H] | None:
        target = edge.target
        if target is None or target.flow is None:
            return None
        return self.files.get(target.canonical)

    def reached(self, edge: Edge[H]) -> GraphFile[H] | None:
        """The walked file an edge leads to (None: it leads to no flow the graph walked)."""
        return self._reached(edge)


def _walk(root: GraphFile[H], tools: ToolFiles) -> Generator[Resolve[H], Resolved[H] | None, FlowGraph[H]]:
    graph: FlowGraph[H] = FlowGraph(root)
    answers: dict[str, Resolved[H] | None] = {}
    queued = {root.canonical}
    queue = deque([root])
    while queue:
        current = queue.popleft()
        graph.files[current.canonical] = current
        current.steps = walk_steps(current.flow.steps)
        deep = current.level >= MAX_RUN_DEPTH
        for n, step in enumerate(current.steps, start=1):
            for ref in step_references(step, tools):
                if isinstance(ref, UploadFile):
                    current.edges.append(Edge(n, step, ref, ref.key(current.canonical)))
                    continue
                if not isinstance(ref, FOLLOWED) or deep:
                    current.edges.append(Edge(n, step, ref))
                    continue
                assert isinstance(ref, Fragment | NestedFlow)
                key = ref.key(current.canonical)
                if key in answers:
                    target = answers[key]
                else:
                    target = answers[key] = yield Resolve(current, ref, key)
                current.edges.append(Edge(n, step, ref, key, target))
                if target is not None and target.flow is not None and target.canonical not in queued:
                    queued.add(target.canonical)
                    queue.append(GraphFile(target.handle, target.canonical, target.flow, current.level + 1))
    return graph


def build_graph(
    root: H,
    canonical: str,
    flow: Flow,
    resolve: Callable[[Resolve[H]], Resolved[H] | None],
    tools: ToolFiles = NO_TOOL_FILES,
) -> FlowGraph[H]:
    """The graph of ``flow`` (the root file ``root`` at ``canonical``), each key resolved by ``resolve``."""
    walk = _walk(GraphFile(root, canonical, flow, 1), tools)
    try:
        request = next(walk)
        while True:
            request = walk.send(resolve(request))
    except StopIteration as done:
        graph: FlowGraph[H] = done.value
        return graph


async def build_graph_async(
    root: H,
    canonical: str,
    flow: Flow,
    resolve: Callable[[Resolve[H]], Awaitable[Resolved[H] | None]],
    tools: ToolFiles = NO_TOOL_FILES,
) -> FlowGraph[H]:
    """``build_graph`` with a resolver that awaits (``FlowFiles``)."""
    walk = _walk(GraphFile(root, canonical, flow, 1), tools)
    try:
        request = next(walk)
        while True:
            request = walk.send(await resolve(request))
    except StopIteration as done:
        graph: FlowGraph[H] = done.value
        return graph
