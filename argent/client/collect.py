"""Client collection: the files a flow run needs, gathered before a call over a link.

Starting from the flow file of the call, the client walks:

- the `run:` targets of every step (`when:` blocks included), each resolved beside the real
  file that names it, each (directory, target) pair once, to 20 levels (the root is level 1);
- the nested flows of `tool: flow-execute` steps that name their flow with ``name`` and an
  absolute ``project_root`` without ``..`` (directory ``<project_root>/.argent/flows``, target
  ``<name>.yaml``), one level each, never a ``flow_path``;
- the file arguments of `tool:` steps (``GET /tools`` says which inputs they are), each path once;
- last, the snapshot baselines of each run (the root run and every nested run).

The walk is breadth first, so a file reached at several depths is expanded at the shallowest.
Nothing here talks to the network: ``collect_flow_members`` returns values that the transfer
step turns into wire members. Everything blocks; async callers run it in a thread.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from attrs import define, field, frozen

from argent.client.client_policy import ClientFile, ClientPolicy, read_client_file
from argent.client.fs_cache import FsCache
from argent.client.scan import FlowRefs, refs_of_flow, refs_of_text
from argent.flows.model import Flow, ToolStep
from argent.flows.names import baseline_dir, is_safe_flow_name
from argent.limits import MAX_RUN_DEPTH
from argent.link.codec import read_or_none, to_wire
from argent.link.models import FileInputSpec, ToolEntry, WireMember
from argent.link.paths import canonical_path, spelling_of
from argent.link.rules import FLOW_EXECUTE, NestedFlowRef, classify_file_inputs, nested_flow_ref
from argent.link.spelling import Spelling

MemberRole = Literal["flow", "baseline", "tool"]
MemberState = Literal["missing", "refused", "listed"]

#: The wire fields of a member that follow its bytes.
_TAIL = ("state", "error")
CHROMIUM_DEVICE_PREFIX = "chromium-cdp-"
#: A ``GET /tools`` listing: its entries as read, or as JSON (read with the codec).
Listing = Iterable[ToolEntry | Mapping[str, Any]]
DANGLING_IN_UPDATE_RUN = "{path} is a link to nothing — the client writes no baseline through it"


@frozen
class CollectedMember:
    """One member before transfer: its identity, and its bytes or its state."""

    role: MemberRole
    key: str
    path: str
    canonical: str | None = None
    spelling: Spelling | None = None
    data: bytes | None = field(default=None, repr=False)
    size: int | None = None
    mtime_ms: float | None = None
    state: MemberState | None = None
    error: str | None = None

    @property
    def label(self) -> str:
        """What the flow-files log calls the member: a flow by its canonical path, others by key."""
        if self.role == "flow" and self.canonical is not None:
            return self.canonical
        return self.key

    def wire(self, *, content: str | None = None, upload: tuple[str, str] | None = None) -> WireMember:
        """The member on the wire, with its bytes inline (``content``) or as an upload (id, hash);
        a member with a state carries no size or mtime."""
        stated = self.state is None
        return WireMember(
            role=self.role,
            key=self.key,
            path=self.path,
            canonical=self.canonical,
            spelling=self.spelling,
            size=self.size if stated else None,
            mtime_ms=self.mtime_ms if stated else None,
            content=content,
            upload_id=upload[0] if upload is not None else None,
            content_hash=upload[1] if upload is not None else None,
            state=self.state,
            error=self.error,
        )

    def wire_head(self) -> dict[str, Any]:
        """The JSON fields before the bytes (``content`` / ``uploadId`` are the transfer's)."""
        return {key: value for key, value in to_wire(self.wire()).items() if key not in _TAIL}

    def wire_tail(self) -> dict[str, Any]:
        """The JSON fields after the bytes: the state and the client's reason."""
        return {key: value for key, value in to_wire(self.wire()).items() if key in _TAIL}


@frozen
class Collection:
    """The flow file's ``canonical`` and ``spelling`` and the members of the run, in order.

    ``update_dirs`` are the baseline directories of the runs that update baselines (inside the
    roots of ``policy``): the only directories where the client writes the baselines of the result.
    """

    canonical: str
    spelling: Spelling
    members: tuple[CollectedMember, ...]
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
        if isinstance(device, str) and device.startswith(CHROMIUM_DEVICE_PREFIX):
            chosen = "chromium"
        elif isinstance(platform, str) and platform:
            chosen = platform
        return cls(update=args.get("updateBaselines") is True, platform=chosen)


def _member_from_file(
    role: MemberRole,
    key: str,
    path: str,
    found: ClientFile,
    *,
    canonical: str | None = None,
    spelling: Spelling | None = None,
) -> CollectedMember:
    return CollectedMember(
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


def _refs(data: bytes | None) -> FlowRefs | None:
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return refs_of_text(text)


@frozen
class _Node:
    canonical: str
    refs: FlowRefs | Flow  # a parsed Flow (a synthetic one-step flow) is read for its references
    level: int


@define
class _Edges:
    """What one flow file reaches: its fragments, and its nested flows with their steps' args."""

    fragments: list[str] = field(factory=list)
    nested: list[tuple[str, str, Any]] = field(factory=list)  # (canonical, name, updateBaselines)


@define
class _Walk:
    policy: ClientPolicy
    inputs: Mapping[str, Sequence[FileInputSpec]]
    members: list[CollectedMember] = field(factory=list)
    pairs: dict[tuple[str, str], str | None] = field(factory=dict)
    tool_paths: set[str] = field(factory=set)
    flows: dict[str, FlowRefs | None] = field(factory=dict)
    graph: dict[str, _Edges] = field(factory=dict)
    queue: deque[_Node] = field(factory=deque)
    fs: FsCache = field(factory=FsCache)

    def run(self, root: _Node) -> None:
        refs = root.refs if isinstance(root.refs, FlowRefs) else refs_of_flow(root.refs)
        self.flows[root.canonical] = refs
        self.queue.append(_Node(root.canonical, refs, root.level))
        while self.queue:
            node = self.queue.popleft()
            if node.canonical in self.graph:
                continue
            edges = self.graph[node.canonical] = _Edges()
            directory = os.path.dirname(node.canonical)
            assert isinstance(node.refs, FlowRefs)
            for target in node.refs.run_targets:
                reached = self.flow_member(directory, target, node.level + 1)
                if reached is not None:
                    edges.fragments.append(reached)
            for tool, args in node.refs.tool_steps:
                self.tool_step(tool, args, node, edges)

    def tool_step(self, tool: str, args: Any, node: _Node, edges: _Edges) -> None:
        if tool == FLOW_EXECUTE:
            ref = followable_nested_flow(args)
            if ref is None:
                return
            reached = self.flow_member(ref.directory, ref.target, node.level + 1)
            if reached is not None:
                update = args.get("updateBaselines") if isinstance(args, Mapping) else None
                edges.nested.append((reached, ref.name, update))
            return
        files, _ = classify_file_inputs(self.inputs.get(tool), args)
        for argument in files:
            self.tool_member(argument.path)

    def flow_member(self, directory: str, target: str, level: int) -> str | None:
        """Collect the member of one (directory, target) pair; the canonical path of a flow that
        parsed (to walk), else None."""
        pair = (directory, target)
        if pair in self.pairs:
            return self.pairs[pair]
        if level > MAX_RUN_DEPTH:
            return None
        path = f"{directory}/{target}"
        canonical, known = self.fs.resolve(path)
        spelled_dir, _, base = path.rpartition("/")
        spelling = self.fs.spelling(spelled_dir or "/", base)
        found = read_client_file(self.policy, canonical, target=target, kind="yaml", known=known)
        self.members.append(
            _member_from_file(
                "flow", f"{directory}\0{target}", path, found, canonical=canonical, spelling=spelling
            )
        )
        if canonical not in self.flows:
            self.flows[canonical] = _refs(found.data)
        refs = self.flows[canonical]
        reached = canonical if refs is not None and found.data is not None else None
        self.pairs[pair] = reached
        if refs is not None and reached is not None:
            self.queue.append(_Node(canonical, refs, level))
        return reached

    def tool_member(self, path: str) -> None:
        if path in self.tool_paths:
            return
        self.tool_paths.add(path)
        found = read_client_file(self.policy, self.fs.canonical(path), target=path, kind="tool")
        self.members.append(_member_from_file("tool", path, path, found))


# --------------------------------------------------------------------------------------------
# Baselines


@frozen
class _Run:
    canonical: str
    written_name: str
    update: bool


def _run_files(walk: _Walk, root: str) -> list[str]:
    """The run's root and the fragments its `run:` chains reach (nested flows are runs of their own)."""
    order = [root]
    seen = {root}
    queue = deque([root])
    while queue:
        edges = walk.graph.get(queue.popleft())
        if edges is None:
            continue
        for fragment in edges.fragments:
            if fragment not in seen:
                seen.add(fragment)
                order.append(fragment)
                queue.append(fragment)
    return order


def _snapshot_names(walk: _Walk, files: Iterable[str]) -> list[str]:
    names: list[str] = []
    for canonical in files:
        refs = walk.flows.get(canonical)
        if refs is None:
            continue
        for name in refs.snapshots:
            if name not in names:
                names.append(name)
    return names


def _runs(walk: _Walk, root: _Run) -> list[tuple[_Run, list[str]]]:
    """Each run of the call with the snapshot names of its files, the root run first."""
    out: list[tuple[_Run, list[str]]] = []
    seen: set[_Run] = set()
    queue = deque([root])
    while queue:
        run = queue.popleft()
        if run in seen:
            continue
        seen.add(run)
        files = _run_files(walk, run.canonical)
        out.append((run, _snapshot_names(walk, files)))
        for canonical in files:
            edges = walk.graph.get(canonical)
            if edges is None:
                continue
            for nested, name, update in edges.nested:
                queue.append(_Run(nested, name, update if isinstance(update, bool) else run.update))
    return out


def _collect_baselines(
    walk: _Walk, root: _Run, scope: BaselineScope
) -> tuple[list[CollectedMember], list[str]]:
    # directory -> (files a comparing run reads, whether an updating run uses the directory)
    wanted: dict[str, tuple[set[str], bool]] = {}
    for run, names in _runs(walk, root):
        if not names:
            continue
        directory = baseline_dir(run.canonical, run.written_name)
        if not walk.policy.allows(walk.fs.real_dir(directory)):
            continue  # nothing sent for, and nothing written to, a directory outside the roots
        reads, updates = wanted.get(directory, (set(), False))
        if run.update:
            updates = True
        else:
            prefixes = tuple(
                f"{name}__{scope.platform}-" if scope.platform else f"{name}__" for name in names
            )
            reads = reads | {file for file in walk.fs.pngs(directory) if file.startswith(prefixes)}
        wanted[directory] = (reads, updates)
    members: list[CollectedMember] = []
    for directory, (reads, updates) in wanted.items():
        files = walk.fs.pngs(directory) if updates else sorted(reads)
        for file in files:
            path = f"{directory}/{file}"
            if path in walk.tool_paths:
                continue  # the tool file member stands for the baseline too
            compare = file in reads
            canonical, known = walk.fs.resolve(path)
            found = read_client_file(
                walk.policy, canonical, target=path, kind="png", read=compare, known=known
            )
            if found.state == "missing" and found.dangling and updates:
                found = ClientFile(state="refused", error=DANGLING_IN_UPDATE_RUN.format(path=path))
            if found.state is None and not compare:
                members.append(CollectedMember(role="baseline", key=path, path=path, state="listed"))
                continue
            members.append(_member_from_file("baseline", path, path, found))
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
    walk = _Walk(policy=policy, inputs=tool_inputs(listing))
    refs = _refs(data)
    if refs is None:
        return Collection(canonical=canonical, spelling=spelling, members=(), policy=policy)
    walk.run(_Node(canonical, refs, 1))
    written = _stem(base)
    scope = BaselineScope.of_call(args)
    baselines, update_dirs = _collect_baselines(walk, _Run(canonical, written, scope.update), scope)
    return Collection(
        canonical=canonical,
        spelling=spelling,
        members=(*walk.members, *baselines),
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
) -> tuple[tuple[CollectedMember, ...], tuple[str, ...]]:
    """The members of one recorded step and the baseline directories its run updates.

    ``nested``: the args of a ``flow-execute`` step, walked as a one-step flow read beside
    ``origin`` (a real path): the flow it names, all that flow reaches, and the baselines of its
    run (named ``run_name``; updated only when the step sets ``updateBaselines: true``).
    ``flows_by_name``: (directory, target) flow files sent by name only — their own steps are not
    the step's. ``tool_paths``: file arguments, as the tool files of a run.
    """
    walk = _Walk(policy=policy, inputs=tool_inputs(listing))
    baselines: list[CollectedMember] = []
    update_dirs: list[str] = []
    if nested is not None:
        synthetic = f"{origin}\0step"
        walk.run(_Node(synthetic, Flow(steps=(ToolStep(FLOW_EXECUTE, dict(nested)),)), 1))
        baselines, update_dirs = _collect_baselines(walk, _Run(synthetic, run_name, False), BaselineScope())
    for directory, target in flows_by_name:
        walk.flow_member(directory, target, 1)
    walk.queue.clear()
    for path in tool_paths:
        walk.tool_member(path)
    return (*walk.members, *baselines), tuple(update_dirs)


def _stem(base: str) -> str:
    return base[:-5] if base.endswith(".yaml") and len(base) > 5 else base


def followable_nested_flow(args: Any) -> NestedFlowRef | None:
    """A nested flow the client sends: as ``nested_flow_ref``, with a valid flow name (an invalid
    one makes the step report ``Invalid flow name`` before any file is needed)."""
    ref = nested_flow_ref(args)
    if ref is None or not is_safe_flow_name(ref.name) or "\0" in ref.project_root:
        return None
    return ref
