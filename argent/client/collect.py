"""Client collection: the files a flow run needs, gathered before a call over a link.

The client asks the reference graph (``argent.flows.graph``) what the flow file of the call reaches,
and resolves each flow key the graph asks for into a member (the client policy, the real path, the
spelling, the bytes; ``argent.client.client_policy``):

- the `run:` targets of every step (`when:` blocks included), each resolved beside the real file that
  names it, each (directory, target) pair once, to 20 levels (the root is level 1);
- the nested flows of `tool: flow-execute` steps that name their flow with ``name`` and an absolute
  ``project_root`` without ``..`` (directory ``<project_root>/.argent/flows``, target ``<name>.yaml``),
  one level each, never a ``flow_path``;
- the file arguments of `tool:` steps (``GET /tools`` says which inputs they are), each path once;
- the files of `upload:` steps, each beside the real file that names it (role ``upload``, keyed as a
  flow member is), each key once, of any type, under the client policy as every member is;
- last, the snapshot baselines of each run (the root run and every nested run).

The members come in the order of the seed's walk: breadth first, and in each file its `run:` targets
(in step order) before its `tool:` steps' nested flows and file arguments.

A recorded step (the ``project_root`` probe of ``flow-add-step``, ``"collect": "step"``) sends the files
that one step makes the tool-server read (``collect_step_members``, below):

- a ``tool:`` step with file arguments: each file argument, as for the tool files of a run;
- ``flow-execute`` with ``name`` and an absolute ``project_root``: the recording file (by its
  directory and file name), the file with the step's flow name beside the recording's real
  file, and the named flow with its members and the baselines of its run, as a nested flow
  (whose baselines are updated only when the step sets ``updateBaselines: true``);
- ``flow-execute`` with the ``flow_path`` of a file in the recording's directory: the members of
  the row above for that file's name, and the file itself, by the recording's directory and the
  file name;
- ``flow-execute`` with another ``flow_path``: the recording file;
- anything else, or a call without a valid name, an absolute project_root or object args: none.

The recording file is ``<project_root>/.argent/flows/<name>.yaml``; the client policy applies
with it in place of the flow file. Nothing here talks to the
network: ``collect_flow_members`` returns values that the transfer step turns into wire members.
Everything blocks; async callers run it in a thread. The flow language is imported when a flow is
collected, not before: the HTTP client loads without the parser.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attrs import define, field, frozen

from argent.client.client_policy import ClientFile, ClientPolicy, read_client_file
from argent.client.fs_cache import FsCache
from argent.devices.registry import engine_of_id
from argent.flows.names import is_safe_flow_name
from argent.limits import MAX_RUN_DEPTH
from argent.link.codec import read_or_none
from argent.link.members import Member, MemberRole
from argent.link.models import FileInputSpec, ToolEntry
from argent.link.paths import canonical_path, spelling_of
from argent.link.rules import (
    FLOW_EXECUTE,
    NestedFlowRef,
    classify_file_inputs,
    file_arguments,
    has_dotdot,
    is_posix_absolute,
    nested_flow_ref,
)
from argent.link.spelling import LISTED, Spelling

if TYPE_CHECKING:
    from argent.flows.graph import Edge, FlowGraph, GraphFile, Resolve, Resolved
    from argent.flows.model import Flow

#: A ``GET /tools`` listing: its entries as read, or as JSON (read with the codec).
Listing = Iterable[ToolEntry | Mapping[str, Any]]
DANGLING_IN_UPDATE_RUN = "{path} is a link to nothing — the client writes no baseline through it"

#: The graph's handle of a flow file on the client: its member (None for the flow file of the call).
Handle = Member | None


@frozen
class Collection:
    """The flow file's ``canonical`` and ``spelling`` and the members of the run, in order.

    ``update_dirs`` are the baseline directories of the runs that update baselines (inside the
    roots of ``policy``): the only directories where the client writes the baselines of the result.
    """

    canonical: str
    spelling: Spelling
    members: tuple[Member, ...]
    policy: ClientPolicy | None = None
    update_dirs: tuple[str, ...] = ()


@frozen
class BaselineScope:
    """Which baselines a call needs: does it update them, and the platform filter of the call."""

    update: bool = False
    platform: str | None = None

    @classmethod
    def of_call(cls, args: Mapping[str, Any]) -> BaselineScope:
        device = args.get("device")
        platform = args.get("platform")
        chosen: str | None = None
        engine = engine_of_id(device) if isinstance(device, str) else None
        if engine is not None:
            chosen = engine.platform
        elif isinstance(platform, str) and platform:
            chosen = platform
        return cls(update=args.get("updateBaselines") is True, platform=chosen)


def _member(
    role: MemberRole,
    key: str,
    path: str,
    found: ClientFile,
    *,
    canonical: str | None = None,
    spelling: Spelling | None = None,
) -> Member:
    return Member(
        role=role,
        key=key,
        path=path,
        canonical=canonical,
        spelling=spelling,
        data=found.data,
        size=found.size,
        mtime_ms=found.mtime_ms,
        state=found.state,
        error=found.error,
    )


def _parse(data: bytes | None) -> Flow | None:
    """The flow of a file's bytes (through the process's cache of parsed flows); None when it is not one."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    from argent.errors import FlowError
    from argent.flows.load import PARSED_FLOWS

    try:
        return PARSED_FLOWS.parse(text)
    except (FlowError, RecursionError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# The walk: the graph asks, the collector resolves


@define
class _Collector:
    """Resolves the graph's flow keys into members, and the file arguments of `tool:` steps."""

    policy: ClientPolicy
    inputs: Mapping[str, Sequence[FileInputSpec]]
    fs: FsCache = field(factory=FsCache)
    flows: dict[str, Flow | None] = field(factory=dict)  # parsed once per real file
    by_key: dict[str, Member] = field(factory=dict)
    tool_paths: dict[str, Member] = field(factory=dict)

    def tool_files(self, tool: str, args: Any) -> list[tuple[str, str]]:
        return file_arguments(self.inputs.get(tool), args)

    def resolve(self, request: Resolve[Handle]) -> Resolved[Handle] | None:
        from argent.flows.graph import Resolved
        from argent.flows.references import Fragment

        ref = request.ref
        if isinstance(ref, Fragment):
            directory, target = os.path.dirname(request.naming.canonical), ref.target
        else:
            nested = followable_nested_flow(ref.args())
            if nested is None:
                return None
            directory, target = nested.directory, nested.target
        member, flow = self.flow_member(directory, target)
        assert member.canonical is not None
        return Resolved(member, member.canonical, flow)

    def flow_member(self, directory: str, target: str) -> tuple[Member, Flow | None]:
        """The member of one (directory, target) pair, and its flow when it could be read and parsed."""
        path = f"{directory}/{target}"
        canonical, known = self.fs.resolve(path)
        spelled_dir, _, base = path.rpartition("/")
        spelling = self.fs.spelling(spelled_dir or "/", base)
        found = read_client_file(self.policy, canonical, target=target, kind="yaml", known=known)
        member = _member(
            "flow", f"{directory}\0{target}", path, found, canonical=canonical, spelling=spelling
        )
        self.by_key[member.key] = member
        if canonical not in self.flows:
            self.flows[canonical] = _parse(found.data)
        flow = self.flows[canonical]
        return member, flow if found.data is not None else None

    def upload_member(self, key: str) -> Member | None:
        """The member of a file an `upload:` step sets (``<real dir>\\0<path>``), the first time its
        key is seen (a flow member of the same key is the same file, and stands for it)."""
        if key in self.by_key:
            return None
        directory, _, written = key.partition("\0")
        path = f"{directory}/{written}"
        canonical, known = self.fs.resolve(path)
        found = read_client_file(self.policy, canonical, target=written, kind="upload", known=known)
        member = self.by_key[key] = _member("upload", key, path, found, canonical=canonical)
        return member

    def tool_member(self, path: str) -> Member | None:
        """The member of a file argument, the first time its path is seen."""
        if path in self.tool_paths:
            return None
        found = read_client_file(self.policy, self.fs.canonical(path), target=path, kind="tool")
        member = self.tool_paths[path] = _member("tool", path, path, found)
        return member

    def graph(self, canonical: str, flow: Flow) -> FlowGraph[Handle]:
        from argent.flows.graph import build_graph

        self.flows[canonical] = flow
        return build_graph(None, canonical, flow, self.resolve, self.tool_files)

    def members(self, graph: FlowGraph[Handle]) -> list[Member]:
        """The flow, tool-file and upload members in the seed's order (see the module)."""
        from argent.flows.references import ToolFile, UploadFile

        out: list[Member] = []
        sent: set[str] = set()
        for file in graph.traverse(order=_fragments_first):
            for edge in sorted(file.edges, key=_fragments_first):
                if isinstance(edge.ref, ToolFile | UploadFile):
                    if isinstance(edge.ref, ToolFile):
                        member = self.tool_member(edge.ref.path)
                    else:
                        assert edge.key is not None
                        member = self.upload_member(edge.key)
                    if member is not None:
                        out.append(member)
                elif edge.target is not None and edge.key is not None and edge.key not in sent:
                    sent.add(edge.key)
                    handle = edge.target.handle
                    assert handle is not None
                    out.append(handle)
        return out


def _fragments_first(edge: Edge[Any]) -> tuple[bool, int]:
    from argent.flows.references import Fragment

    return (not isinstance(edge.ref, Fragment), edge.n)


# --------------------------------------------------------------------------------------------
# Baselines


@frozen
class _Run:
    canonical: str
    written_name: str
    update: bool


def _run_files(graph: FlowGraph[Handle], root: str) -> list[GraphFile[Handle]]:
    """The run's root and the fragments its `run:` chains reach (nested flows are runs of their own)."""
    from argent.flows.references import Fragment

    start = graph.files.get(root)
    if start is None:
        return []
    return graph.traverse(start=start, follow=lambda edge: isinstance(edge.ref, Fragment), depth=None)


def _snapshot_names(files: Iterable[GraphFile[Handle]]) -> list[str]:
    from argent.flows.references import Baseline

    names: list[str] = []
    for file in files:
        for edge in file.edges:
            if isinstance(edge.ref, Baseline) and edge.ref.name not in names:
                names.append(edge.ref.name)
    return names


def _runs(graph: FlowGraph[Handle], root: _Run) -> list[tuple[_Run, list[str]]]:
    """Each run of the call with the snapshot names of its files, the root run first."""
    from argent.flows.references import NestedFlow

    out: list[tuple[_Run, list[str]]] = []
    seen: set[_Run] = set()
    queue = [root]
    while queue:
        run = queue.pop(0)
        if run in seen:
            continue
        seen.add(run)
        files = _run_files(graph, run.canonical)
        out.append((run, _snapshot_names(files)))
        for file in files:
            for edge in file.edges:
                ref, reached = edge.ref, graph.reached(edge)
                if isinstance(ref, NestedFlow) and reached is not None and isinstance(ref.name, str):
                    update = ref.update_baselines
                    queue.append(
                        _Run(reached.canonical, ref.name, update if isinstance(update, bool) else run.update)
                    )
    return out


def _collect_baselines(
    collector: _Collector, graph: FlowGraph[Handle], root: _Run, scope: BaselineScope
) -> tuple[list[Member], list[str]]:
    from argent.flows.names import baseline_dir

    fs, policy = collector.fs, collector.policy
    # directory -> (files a comparing run reads, whether an updating run uses the directory)
    wanted: dict[str, tuple[set[str], bool]] = {}
    for run, names in _runs(graph, root):
        if not names:
            continue
        directory = baseline_dir(run.canonical, run.written_name)
        if not policy.allows(fs.real_dir(directory)):
            continue  # nothing sent for, and nothing written to, a directory outside the roots
        reads, updates = wanted.get(directory, (set(), False))
        if run.update:
            updates = True
        else:
            prefixes = tuple(
                f"{name}__{scope.platform}-" if scope.platform else f"{name}__" for name in names
            )
            reads = reads | {file for file in fs.pngs(directory) if file.startswith(prefixes)}
        wanted[directory] = (reads, updates)
    members: list[Member] = []
    for directory, (reads, updates) in wanted.items():
        files = fs.pngs(directory) if updates else sorted(reads)
        for file in files:
            path = f"{directory}/{file}"
            if path in collector.tool_paths:
                continue  # the tool file member stands for the baseline too
            compare = file in reads
            canonical, known = fs.resolve(path)
            found = read_client_file(policy, canonical, target=path, kind="png", read=compare, known=known)
            if found.state == "missing" and found.dangling and updates:
                found = ClientFile(state="refused", error=DANGLING_IN_UPDATE_RUN.format(path=path))
            if found.state is None and not compare:
                members.append(Member(role="baseline", key=path, path=path, state="listed"))
                continue
            members.append(_member("baseline", path, path, found))
    return members, [directory for directory, (_, updates) in wanted.items() if updates]


# --------------------------------------------------------------------------------------------


def tool_inputs(listing: Listing) -> dict[str, Sequence[FileInputSpec]]:
    """``fileInputs`` of each tool of a ``GET /tools`` listing, by tool name."""
    out: dict[str, Sequence[FileInputSpec]] = {}
    for raw in listing:
        entry = raw if isinstance(raw, ToolEntry) else read_or_none(raw, ToolEntry)
        if entry is not None:
            out[entry.name] = entry.file_inputs
    return out


def collect_flow_members(
    path: str,
    data: bytes,
    args: Mapping[str, Any],
    listing: Listing,
) -> Collection:
    """The members of a run of the flow file at ``path`` whose bytes are ``data``."""
    canonical = canonical_path(path)
    spelled_dir, base = os.path.split(path)
    spelling = spelling_of(spelled_dir, base)
    project_root = args.get("project_root")
    policy = ClientPolicy.for_call(project_root if isinstance(project_root, str) else None, path, canonical)
    flow = _parse(data)
    if flow is None:
        return Collection(canonical=canonical, spelling=spelling, members=(), policy=policy)
    collector = _Collector(policy=policy, inputs=tool_inputs(listing))
    graph = collector.graph(canonical, flow)
    members = collector.members(graph)
    scope = BaselineScope.of_call(args)
    baselines, update_dirs = _collect_baselines(
        collector, graph, _Run(canonical, _stem(base), scope.update), scope
    )
    return Collection(
        canonical=canonical,
        spelling=spelling,
        members=(*members, *baselines),
        policy=policy,
        update_dirs=tuple(update_dirs),
    )


def collect_step_files(
    policy: ClientPolicy,
    listing: Listing,
    *,
    origin: str,
    run_name: str,
    nested: Mapping[str, Any] | None = None,
    flows_by_name: Iterable[tuple[str, str]] = (),
    tool_paths: Iterable[str] = (),
) -> tuple[tuple[Member, ...], tuple[str, ...]]:
    """The members of one recorded step and the baseline directories its run updates.

    ``nested``: the args of a ``flow-execute`` step, walked as a one-step flow read beside
    ``origin`` (a real path): the flow it names, all that flow reaches, and the baselines of its
    run (named ``run_name``; updated only when the step sets ``updateBaselines: true``).
    ``flows_by_name``: (directory, target) flow files sent by name only — their own steps are not
    the step's. ``tool_paths``: file arguments, as the tool files of a run.
    """
    from argent.flows.model import Flow, ToolStep

    collector = _Collector(policy=policy, inputs=tool_inputs(listing))
    members: list[Member] = []
    baselines: list[Member] = []
    update_dirs: list[str] = []
    if nested is not None:
        synthetic = f"{origin}\0step"
        graph = collector.graph(synthetic, Flow(steps=(ToolStep(FLOW_EXECUTE, dict(nested)),)))
        members = collector.members(graph)
        baselines, update_dirs = _collect_baselines(
            collector, graph, _Run(synthetic, run_name, False), BaselineScope()
        )
    for directory, target in flows_by_name:
        if f"{directory}\0{target}" not in collector.by_key:
            members.append(collector.flow_member(directory, target)[0])
    for path in tool_paths:
        member = collector.tool_member(path)
        if member is not None:
            members.append(member)
    return (*members, *baselines), tuple(update_dirs)


def _stem(base: str) -> str:
    return base[:-5] if base.endswith(".yaml") and len(base) > 5 else base


def followable_nested_flow(args: Any) -> NestedFlowRef | None:
    """A nested flow the client sends: as ``nested_flow_ref``, with a valid flow name (an invalid
    one makes the step report ``Invalid flow name`` before any file is needed)."""
    ref = nested_flow_ref(args)
    if ref is None or not is_safe_flow_name(ref.name) or "\0" in ref.project_root:
        return None
    return ref


# --------------------------------------------------------------------------------------------
# A recorded step


YAML_EXT = ".yaml"


@frozen
class RecordedStepCall:
    """A ``flow-add-step`` call whose step the client can build."""

    name: str
    project_root: str
    command: str
    args: dict[str, Any]

    @property
    def flows_dir(self) -> str:
        return f"{self.project_root}/.argent/flows"

    @property
    def recording(self) -> str:
        return f"{self.flows_dir}/{self.name}{YAML_EXT}"


def recorded_step_call(call_args: Mapping[str, Any]) -> RecordedStepCall | None:
    """The step of a call; None without a valid name, an absolute project_root, a command or
    ``args`` that are an object or its JSON text."""
    name = call_args.get("name")
    root = call_args.get("project_root")
    command = call_args.get("command")
    text = call_args.get("args")
    if not is_safe_flow_name(name) or not isinstance(root, str) or not is_posix_absolute(root):
        return None
    if not isinstance(command, str) or not command:
        return None
    if text is None:
        args: Any = {}
    elif isinstance(text, dict):
        args = text
    elif isinstance(text, str):
        try:
            args = json.loads(text)
        except ValueError:
            return None
    else:
        return None
    if not isinstance(args, dict):
        return None
    assert isinstance(name, str)
    return RecordedStepCall(name=name, project_root=root, command=command, args=args)


def sibling_flow_path(flow_path: Any, recording_real_dir: str) -> str | None:
    """The flow name of a ``flow_path`` in the recording's (real) directory, else None."""
    if not isinstance(flow_path, str) or not is_posix_absolute(flow_path) or has_dotdot(flow_path):
        return None
    directory, base = posixpath.split(flow_path)
    if not base.endswith(YAML_EXT) or not is_safe_flow_name(base[: -len(YAML_EXT)]):
        return None
    if canonical_path(directory) != recording_real_dir:
        return None
    return base[: -len(YAML_EXT)]


def _empty() -> Collection:
    return Collection(canonical="", spelling=LISTED, members=())


def collect_step_members(call_args: Mapping[str, Any], listing: Listing) -> Collection:
    """The members of the step a ``flow-add-step`` call records (``canonical``/``spelling`` of the
    recording file; no members for a call whose step cannot be built)."""
    call = recorded_step_call(call_args)
    if call is None:
        return _empty()
    listing = list(listing)
    recording_canonical = canonical_path(call.recording)
    real_dir = os.path.dirname(recording_canonical)
    policy = ClientPolicy.for_call(call.project_root, call.recording, recording_canonical)
    nested: dict[str, Any] | None = None
    by_name: list[tuple[str, str]] = []  # flow files sent by name only
    tool_paths: list[str] = []
    if call.command == FLOW_EXECUTE:
        step_args = call.args
        also: str | None = None  # a flow_path file, sent by the recording's directory and its name
        flow_path = step_args.get("flow_path")
        if flow_path is not None and step_args.get("name") is None:
            stem = sibling_flow_path(flow_path, real_dir)
            if stem is not None:
                root = step_args.get("project_root")
                if not isinstance(root, str) or not is_posix_absolute(root) or has_dotdot(root):
                    root = call.project_root
                step_args = {**step_args, "name": stem, "project_root": root}
                step_args.pop("flow_path", None)
                also = posixpath.basename(flow_path)
            else:
                step_args = {}
        ref = followable_nested_flow(step_args)
        if ref is not None:
            nested = step_args  # the step as a one-step flow: the named flow and all it reaches
        if ref is not None or flow_path is not None:
            by_name.append((call.flows_dir, f"{call.name}{YAML_EXT}"))
        if ref is not None:
            by_name.append((real_dir, ref.target))
        if also is not None:
            by_name.append((call.flows_dir, also))
    else:
        files, _ = classify_file_inputs(tool_inputs(listing).get(call.command), call.args)
        tool_paths = [argument.path for argument in files]
    members, update_dirs = collect_step_files(
        policy,
        listing,
        origin=recording_canonical,
        run_name=call.name,
        nested=nested,
        flows_by_name=by_name,
        tool_paths=tool_paths,
    )
    return Collection(
        canonical=recording_canonical,
        spelling=spelling_of(call.flows_dir, f"{call.name}{YAML_EXT}"),
        members=members,
        policy=policy,
        update_dirs=update_dirs,
    )


__all__ = [
    "MAX_RUN_DEPTH",
    "BaselineScope",
    "Collection",
    "Listing",
    "RecordedStepCall",
    "collect_flow_members",
    "collect_step_files",
    "collect_step_members",
    "followable_nested_flow",
    "recorded_step_call",
    "sibling_flow_path",
    "tool_inputs",
]
