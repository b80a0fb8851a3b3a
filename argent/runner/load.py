"""Loading a run's flows: the source a flow-execute request names, its text parsed, the leading launch.

``resolve_source`` turns a request into the flow file and the flow's name (which keys reports and
baselines), ``load_root_flow`` / ``read_flow`` read and parse (in a thread, through the cache of
parsed flows), and ``check_leading_launch`` refuses a prerequisite that the run's own leading
launch would throw away. Both the root run (``argent.runner.execute``) and a nested flow-execute
step (``argent.runner.composition``) go through here.
"""

from __future__ import annotations

import os
import re
from typing import Protocol

from attrs import frozen

from argent.devices.registry import DEFAULT_ENGINE, engine_named, engine_of_id
from argent.errors import (
    FLOW_E2E_HAS_PREREQUISITE,
    FLOW_NAME_INVALID,
    FLOW_PROJECT_ROOT_INVALID,
    FlowError,
    InvalidToolInputError,
    ToolExecutionError,
)
from argent.flows.load import parse_flow_async
from argent.flows.model import EchoStep, Flow, LaunchStep, RunStep
from argent.flows.names import assert_safe_flow_name, fragment_display_name
from argent.limits import MAX_RUN_DEPTH
from argent.runner.files import FlowFileError, FlowFiles, FlowRef
from argent.runner.run import StackEntry

EXACTLY_ONE_SOURCE = "Pass exactly one flow source: name or flow_path."

_SEGMENTS = re.compile(r"[\\/]+")


@frozen
class FlowRequest:
    """The arguments of one flow-execute call (file inputs already resolved to paths)."""

    name: str | None = None
    flow_path: str | None = None
    flow_file: str | None = None
    project_root: str | None = None
    device: str | None = None
    platform: str | None = None
    update_baselines: bool = False
    prerequisite_acknowledged: bool = False


async def read_flow(files: FlowFiles, ref: FlowRef, parsed: dict[str, Flow] | None = None) -> Flow:
    """Read and parse one flow file (``FlowFileError`` or ``FlowParseError`` when it cannot); the
    parse runs in a thread, through the cache of parsed flows.

    ``parsed`` memoizes by text within one call: a fragment a call reaches many times costs one
    dict lookup per hop, not a thread hop and a hash (the file is still read each time, so a
    file that changes during the call is seen as it is)."""
    text = await files.read_text(ref)
    if parsed is not None and (flow := parsed.get(text)) is not None:
        return flow
    flow = await parse_flow_async(text)
    if parsed is not None:
        parsed[text] = flow
    return flow


async def read_flow_or_none(files: FlowFiles, ref: FlowRef) -> Flow | None:
    """``read_flow``, or None for a flow that cannot be read or parsed: a check that looks ahead
    (a preflight, a policy) leaves that error to the step that runs the flow."""
    try:
        return await read_flow(files, ref)
    except Exception:
        return None


# --------------------------------------------------------------------------------------------
# 1. The source


def check_project_root(root: str | None) -> str:
    if not isinstance(root, str) or not os.path.isabs(root):
        raise FlowError(
            f'project_root must be an absolute path (got "{root if root is not None else ""}"). Pass the '
            "absolute path to the project root directory — the same cwd the calling agent is working in.",
            error_code=FLOW_PROJECT_ROOT_INVALID,
        )
    if ".." in _SEGMENTS.split(root):
        raise FlowError(
            f'project_root must not contain ".." segments (got "{root}").',
            error_code=FLOW_PROJECT_ROOT_INVALID,
        )
    return root


def _extname(base: str) -> str:
    """The extension as Node's ``path.extname`` reads it (a leading dot alone is no extension)."""
    dot = base.rfind(".")
    if dot <= 0 or base == "..":
        return ""
    return base[dot:]


def _not_colocated(flow_path: str) -> FlowError:
    return FlowError(
        f'Invalid flow_path "{flow_path}": explicit flow paths require a co-located client and tool '
        "server with a shared filesystem — over a link, name the flow with name and project_root instead."
    )


async def resolve_source(
    req: FlowRequest, files: FlowFiles, *, flow_path_allowed: bool = True
) -> tuple[FlowRef, str]:
    """The flow file a request names and the flow's name (which keys reports and baselines)."""
    if (req.name is None) == (req.flow_path is None):
        raise InvalidToolInputError(EXACTLY_ONE_SOURCE)
    root = check_project_root(req.project_root)
    if req.flow_path is not None:
        return await _resolve_flow_path(req.flow_path, files, flow_path_allowed)
    name = req.name or ""
    assert_safe_flow_name(name)
    expected = os.path.normpath(os.path.join(root, ".argent", "flows", f"{name}.yaml"))
    flow_file = req.flow_file
    if flow_file and (
        not os.path.isabs(flow_file)
        or ".." in _SEGMENTS.split(flow_file)
        or os.path.normpath(flow_file) != expected
    ):
        raise FlowError(
            f'Invalid flow_file "{flow_file}": it must resolve to the flow\'s path under the project root '
            f'("{expected}"). flow_file is internal — leave it unset and pass project_root + name.'
        )
    ref = await files.named_flow(root, name)
    spelling = ref.spelling
    if spelling.state == "case_folded":
        actual = spelling.actual or ""
        if spelling.addressable:
            recovery = f'Pass name "{actual[:-5] if actual.endswith(".yaml") else actual}".'
        else:
            recovery = f'Rename "{actual}" to "{name}.yaml" to run it — flow files must be lowercase .yaml.'
        raise FlowError(
            f'Invalid flow name "{name}": no saved flow is named "{name}.yaml" — this filesystem matched it '
            f'case-insensitively to "{actual}", so the flow name (which keys the report and __baselines__/) '
            f"would be one no directory entry carries. {recovery}",
            error_code=FLOW_NAME_INVALID,
        )
    return ref, name


async def _resolve_flow_path(flow_path: str, files: FlowFiles, allowed: bool) -> tuple[FlowRef, str]:
    if not allowed:
        raise _not_colocated(flow_path)
    if not os.path.isabs(flow_path):
        raise FlowError(
            f'Invalid flow_path "{flow_path}": flow paths must be absolute — a relative path is resolved '
            "against the tool server's working directory, not the caller's. Pass the absolute path to the "
            "flow's YAML."
        )
    if ".." in _SEGMENTS.split(flow_path):
        raise FlowError(
            f'Invalid flow_path "{flow_path}": flow paths must not contain ".." segments — a ".." after a '
            "symlinked directory can name a different file than the spelling suggests, and the argent client "
            "always sends fully resolved paths. Pass the fully resolved absolute path to the flow's YAML."
        )
    base = os.path.basename(flow_path)
    bare = base.lower() == ".yaml"
    ext = _extname(base)
    if not bare and ext != ".yaml":
        detail = (
            f'flow files must use the lowercase .yaml extension, not "{ext}".'
            if ext.lower() == ".yaml"
            else "flow files must use the .yaml extension."
        )
        raise FlowError(f'Invalid flow_path "{flow_path}": {detail}')
    name = "" if bare else base[:-5]
    assert_safe_flow_name(name)
    ref = await files.locate(flow_path)
    spelling = ref.spelling
    if spelling.state == "absent":
        # Without the file-input boundary's stat, "absent" is most often a missing file:
        # let the read say so; a file that reads but is listed under no spelling is refused.
        await _read_or_raise(files, ref)
    if spelling.state != "listed":
        if spelling.state == "absent":
            recovery = "Pass the basename exactly as it appears on disk."
        elif spelling.addressable:
            recovery = f'Pass flow_path with the on-disk basename "{spelling.actual}".'
        else:
            recovery = (
                f'Rename "{spelling.actual}" to "{base}" to run it — flow files must be lowercase .yaml.'
            )
        matched = f' to "{spelling.actual}"' if spelling.state == "case_folded" else ""
        raise FlowError(
            f'Invalid flow_path "{flow_path}": the file must be named as it appears on disk — this '
            f'filesystem matched "{base}" case-insensitively{matched}, so the flow name (which keys the '
            f"report and __baselines__/) would be one no directory entry carries. {recovery}"
        )
    return ref, name


async def _read_or_raise(files: FlowFiles, ref: FlowRef) -> str:
    try:
        return await files.read_text(ref)
    except FlowFileError as exc:
        raise ToolExecutionError(str(exc)) from None


async def load_root_flow(files: FlowFiles, ref: FlowRef) -> Flow:
    """Read and parse a run's root flow (in a thread); the read error as a tool error, the parser's
    error as raised."""
    try:
        return await read_flow(files, ref)
    except FlowFileError as exc:
        raise ToolExecutionError(str(exc)) from None


# --------------------------------------------------------------------------------------------
# 3. A prerequisite on a flow that launches first


class _NoExecutableStep:
    pass


_NO_EXECUTABLE_STEP = _NoExecutableStep()


class FragmentLookup(Protocol):
    """How a check before the first step finds the fragments of a `run:` chain (a run's graph, or its
    files); None for one it cannot resolve or read."""

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef | None: ...

    async def flow(self, ref: FlowRef) -> Flow | None: ...


class FilesLookup:
    """The fragments of a `run:` chain read through ``FlowFiles`` (a nested run, checked as it starts)."""

    def __init__(self, files: FlowFiles) -> None:
        self.files = files

    async def fragment(self, naming: FlowRef, target: str) -> FlowRef | None:
        try:
            return await self.files.fragment(naming, target)
        except Exception:
            return None

    async def flow(self, ref: FlowRef) -> Flow | None:
        return await read_flow_or_none(self.files, ref)


async def leading_launch(
    flow: Flow,
    stack: list[StackEntry],
    lookup: FragmentLookup,
    root_name: str,
    transparent: set[str] | None = None,
) -> tuple[LaunchStep, str] | _NoExecutableStep | None:
    """The launch a run begins with through its leading `run:` chain (echo-only fragments are
    transparent); None when the run begins otherwise or the chain cannot be followed.

    ``transparent`` remembers the fragments found to hold no executable step, so a fragment the
    chain reaches many times (a fan-out of `run:` steps) is walked once, not once per path."""
    if transparent is None:
        transparent = set()
    top = stack[-1]
    for step in flow.steps:
        if isinstance(step, EchoStep):
            continue
        if isinstance(step, LaunchStep):
            return step, top.display
        if not isinstance(step, RunStep):
            return None
        ref = await lookup.fragment(top.ref, step.target)
        if ref is None:
            return None
        if ref.canonical in transparent:
            continue
        if any(entry.ref.canonical == ref.canonical for entry in stack) or len(stack) >= MAX_RUN_DEPTH:
            return None
        if ref.spelling.state == "case_folded":
            return None
        fragment = await lookup.flow(ref)
        if fragment is None:
            return None
        entry = StackEntry(ref, fragment_display_name(step.target, root_name))
        inner = await leading_launch(fragment, [*stack, entry], lookup, root_name, transparent)
        if inner is not _NO_EXECUTABLE_STEP:
            return inner
        transparent.add(ref.canonical)
    return _NO_EXECUTABLE_STEP


async def check_leading_launch(
    flow: Flow, stack: list[StackEntry], lookup: FragmentLookup, name: str, req: FlowRequest
) -> None:
    """Refuse a prerequisite that the run's own leading launch would throw away."""
    if not flow.execution_prerequisite:
        return
    if req.device and engine_of_id(req.device) is not None:
        return  # pinned to a browser instance: the leading launch only attaches
    leading = await leading_launch(flow, stack, lookup, name)
    if not isinstance(leading, tuple):
        return
    launch, where = leading
    named = engine_named(req.platform)
    engine = named or DEFAULT_ENGINE
    pinnable = named is not None if launch.app is not None else launch.app_for(engine.platform) is not None
    pin = (
        f" Or pin the run to a {engine.platform} instance you have already brought to that state "
        f"(--device {engine.id_pattern}), where the leading launch only attaches."
        if pinnable
        else ""
    )
    raise FlowError(
        "A flow whose leading run: chain reaches a launch step must not declare executionPrerequisite — it "
        f'launches its own app and controls its start state. Drop the leading launch in "{where}" to make it '
        f'a fragment, or drop executionPrerequisite from "{name}".{pin}',
        error_code=FLOW_E2E_HAS_PREREQUISITE,
    )
