"""What a run reaches, found once: the reference graph of its root flow, through ``FlowFiles``.

A flow-execute call resolves its root flow and builds its graph once (``prepare_run``); every check
before the first step reads that graph and no file again: the link preflight
(``argent.tools.link_preflight``), the script refusal of a policy (``argent.tools.call_policy``), the
leading launch and the device a run needs (``argent.runner.execute``).

Each reference the graph follows is resolved the way the run would resolve it:

- a `run:` fragment beside the real file that names it (``FlowFiles.fragment``);
- a nested flow-execute with ``name`` and an absolute ``project_root`` without ``..`` and a valid flow
  name: the saved flow (``FlowFiles.named_flow``), whatever its spelling (a case-folded one is kept:
  the preflight checks it, the device scan does not follow it, the run's step refuses it);
- any other nested flow-execute (``flow_path``) as the run's ``resolve_source`` resolves it, and only
  where files are local (over a link a run resolves no ``flow_path``).

A reference that cannot be resolved is an edge without a target; a file that cannot be read or
parsed is a target without a flow: the step that needs it reports the error when it runs.
"""

from __future__ import annotations

import posixpath

from attrs import frozen

from argent.flows.graph import FlowGraph, Resolve, Resolved, build_graph_async
from argent.flows.model import Flow
from argent.flows.names import is_safe_flow_name
from argent.flows.references import NO_TOOL_FILES, Fragment, ToolFiles
from argent.link.rules import nested_flow_ref
from argent.runner.files import FlowFiles, FlowRef
from argent.runner.load import FlowRequest, load_root_flow, read_flow_or_none, resolve_source

__all__ = ["GraphLookup", "PreparedRun", "prepare_run", "resolve_reference", "run_graph"]


async def resolve_reference(files: FlowFiles, request: Resolve[FlowRef]) -> FlowRef | None:
    """The file a followed reference names, resolved as the run resolves it (see the module); None for
    one the run refuses before reading it. Raises what the resolution raises."""
    ref = request.ref
    if isinstance(ref, Fragment):
        return await files.fragment(request.naming.handle, ref.target)
    named = nested_flow_ref(ref.args())
    if named is not None:
        if not is_safe_flow_name(named.name):
            return None
        return await files.named_flow(named.project_root, named.name)
    if ref.by_name:
        return None  # a name with a relative project_root, or one with "..": the run refuses it
    local = files.local_path(request.naming.handle, ".") is not None
    source = FlowRequest(name=ref.name, flow_path=ref.flow_path, project_root=ref.project_root)
    found, _ = await resolve_source(source, files, flow_path_allowed=local)
    return found


async def run_graph(
    files: FlowFiles, root: FlowRef, flow: Flow, tool_files: ToolFiles = NO_TOOL_FILES
) -> FlowGraph[FlowRef]:
    """The graph of the run of ``flow`` (the file ``root``), each reference resolved and read through
    ``files`` (see the module)."""

    async def resolve(request: Resolve[FlowRef]) -> Resolved[FlowRef] | None:
        try:
            target = await resolve_reference(files, request)
        except Exception:
            return None  # refused or unresolvable: the step reports it when it runs
        if target is None:
            return None
        return Resolved(target, target.canonical, await read_flow_or_none(files, target))

    return await build_graph_async(root, root.canonical, flow, resolve, tool_files)


@frozen
class PreparedRun:
    """A flow-execute request resolved once: its root flow file, its name (which keys reports and
    baselines), its flow, and the graph of the files it reaches."""

    request: FlowRequest
    ref: FlowRef
    name: str
    flow: Flow
    graph: FlowGraph[FlowRef]


async def prepare_run(
    req: FlowRequest, files: FlowFiles, tool_files: ToolFiles = NO_TOOL_FILES
) -> PreparedRun:
    """Resolve the request's flow, read it and build its graph (``resolve_source`` and
    ``load_root_flow`` raise as the run would)."""
    ref, name = await resolve_source(req, files)
    flow = await load_root_flow(files, ref)
    return PreparedRun(req, ref, name, flow, await run_graph(files, ref, flow, tool_files))


class GraphLookup:
    """The fragments of a run as its graph found them, for the checks that follow a `run:` chain
    before the first step (``argent.runner.load.leading_launch``): no file is read again."""

    def __init__(self, graph: FlowGraph[FlowRef]) -> None:
        self._targets: dict[str, Resolved[FlowRef]] = {}
        self._flows: dict[str, Flow] = {}
        for file in graph:
            for edge in file.edges:
                target = edge.target
                if isinstance(edge.ref, Fragment) and edge.key is not None and target is not None:
                    self._targets[edge.key] = target
                    if target.flow is not None:
                        self._flows[target.canonical] = target.flow

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef | None:
        resolved = self._targets.get(f"{posixpath.dirname(naming.canonical)}\0{target}")
        return None if resolved is None else resolved.handle

    async def flow(self, ref: FlowRef) -> Flow | None:
        return self._flows.get(ref.canonical)
