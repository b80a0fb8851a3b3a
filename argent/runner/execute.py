"""flow-execute: from a request to a run report.

``execute_flow`` does what the tool does before and after the step loop, in order:

1. resolve the source — exactly one of ``name`` / ``flow_path``, a valid ``project_root``,
   the name or path rules, the on-disk spelling of the flow file;
2. read and parse the flow (a missing file raises the read error; a parse error raises the
   parser's ``FlowParseError`` unchanged, so the message still starts ``Invalid flow file:``
   or ``Unrecognized flow entry`` and stays byte-identical to what the parser says);
3. refuse a prerequisite on a flow whose leading `run:` chain reaches a launch;
4. answer a ``PrerequisiteNotice`` when the prerequisite was not acknowledged;
5. resolve the device — an explicit id, else a fresh chromium booted for the run's leading
   chromium launch (stopped when the run ends), else none when no step needs one, else the one
   booted device that matches;
6. run the steps and summarize.

Nested flow-execute steps reuse steps 1–4 (see ``argent.runner.composition``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Mapping

from attrs import frozen

from argent.devices.base import Device, DeviceError, DeviceProvider, platform_of_id
from argent.errors import DeviceResolutionError, FlowError, InvalidToolInputError, ToolExecutionError
from argent.flows.model import EchoStep, Flow, LaunchStep, RunStep, ToolStep, walk_steps
from argent.flows.names import assert_safe_flow_name, fragment_display_name
from argent.limits import MAX_RUN_DEPTH, MAX_STEPS_PER_CALL
from argent.runner.composition import read_flow
from argent.runner.engine import (
    DEVICE_LIST_KEY,
    FLOW_EXECUTE_TOOL,
    DirectiveExecutor,
    ProgressCallback,
    StackEntry,
    ToolInvoker,
    run_flow,
    step_needs_device,
    tool_name,
)
from argent.runner.files import FlowFileError, FlowFiles, FlowRef, ScanFiles
from argent.runner.report import FlowRunResult, PrerequisiteNotice

EXACTLY_ONE_SOURCE = "Pass exactly one flow source: name or flow_path."
PROJECT_ROOT_INVALID = "FLOW_PROJECT_ROOT_INVALID"
FLOW_NAME_INVALID = "FLOW_NAME_INVALID"
FLOW_E2E_HAS_PREREQUISITE = "FLOW_E2E_HAS_PREREQUISITE"

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


async def execute_flow(
    req: FlowRequest,
    *,
    files: FlowFiles,
    tools: ToolInvoker,
    directives: DirectiveExecutor | None = None,
    devices: DeviceProvider | None,
    on_progress: ProgressCallback | None = None,
    abort: asyncio.Event | None = None,
    max_steps: int = MAX_STEPS_PER_CALL,
) -> FlowRunResult | PrerequisiteNotice:
    """Run one flow as the flow-execute tool does; raises ``ArgentError``s for refused calls."""
    ref, name = await resolve_source(req, files)
    flow = await load_root_flow(files, ref)
    await check_leading_launch(flow, [StackEntry(ref, name)], files, name, req)
    if flow.execution_prerequisite and req.prerequisite_acknowledged is not True:
        return PrerequisiteNotice(flow=name, execution_prerequisite=flow.execution_prerequisite)
    scan = ScanFiles(files)  # the two checks below walk the same chains: each file is read once
    booted = await boot_for_leading_launch(req, flow, ref, scan, name, devices)
    try:
        device = booted or await resolve_device(req, flow, ref, scan, tools, devices)
        platform = req.platform or (device.platform if device is not None else None)
        return await run_flow(
            flow,
            ref,
            name,
            files=files,
            tools=tools,
            directives=directives,
            device=device,
            device_explicit=bool(req.device),
            platform=platform,
            update_baselines=req.update_baselines,
            project_root=req.project_root,
            abort=abort,
            on_progress=on_progress,
            max_steps=max_steps,
        )
    finally:
        if booted is not None and devices is not None:
            # The run owns what it booted: stopped however the run ends (also when cancelled).
            with contextlib.suppress(Exception):
                await asyncio.shield(devices.stop(booted.id))


# --------------------------------------------------------------------------------------------
# 1. The source


def check_project_root(root: str | None) -> str:
    if not isinstance(root, str) or not os.path.isabs(root):
        raise FlowError(
            f'project_root must be an absolute path (got "{root if root is not None else ""}"). Pass the '
            "absolute path to the project root directory — the same cwd the calling agent is working in.",
            error_code=PROJECT_ROOT_INVALID,
        )
    if ".." in _SEGMENTS.split(root):
        raise FlowError(
            f'project_root must not contain ".." segments (got "{root}").', error_code=PROJECT_ROOT_INVALID
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
    """Read and parse a run's root flow (in a thread); the read error or the parser's error as raised."""
    from argent.flows.load import parse_flow_async

    return await parse_flow_async(await _read_or_raise(files, ref))


# --------------------------------------------------------------------------------------------
# 3. A prerequisite on a flow that launches first


class _NoExecutableStep:
    pass


_NO_EXECUTABLE_STEP = _NoExecutableStep()


async def _leading_launch(
    flow: Flow,
    stack: list[StackEntry],
    files: FlowFiles,
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
        try:
            ref = await files.fragment(top.ref, step.target)
            if ref.canonical in transparent:
                continue
            if any(entry.ref.canonical == ref.canonical for entry in stack) or len(stack) >= MAX_RUN_DEPTH:
                return None
            if ref.spelling.state == "case_folded":
                return None
            fragment = await read_flow(files, ref)
        except Exception:
            return None
        entry = StackEntry(ref, fragment_display_name(step.target, root_name))
        inner = await _leading_launch(fragment, [*stack, entry], files, root_name, transparent)
        if inner is not _NO_EXECUTABLE_STEP:
            return inner
        transparent.add(ref.canonical)
    return _NO_EXECUTABLE_STEP


async def check_leading_launch(
    flow: Flow, stack: list[StackEntry], files: FlowFiles, name: str, req: FlowRequest
) -> None:
    """Refuse a prerequisite that the run's own leading launch would throw away."""
    if not flow.execution_prerequisite:
        return
    if req.device and platform_of_id(req.device) == "chromium":
        return  # pinned to a chromium instance: the leading launch only attaches
    leading = await _leading_launch(flow, stack, files, name)
    if not isinstance(leading, tuple):
        return
    launch, where = leading
    pinnable = req.platform == "chromium" if launch.app is not None else launch.chromium is not None
    pin = (
        " Or pin the run to a chromium instance you have already brought to that state "
        "(--device chromium-cdp-<port>), where the leading launch only attaches."
        if pinnable
        else ""
    )
    raise FlowError(
        "A flow whose leading run: chain reaches a launch step must not declare executionPrerequisite — it "
        f'launches its own app and controls its start state. Drop the leading launch in "{where}" to make it '
        f'a fragment, or drop executionPrerequisite from "{name}".{pin}',
        error_code=FLOW_E2E_HAS_PREREQUISITE,
    )


# --------------------------------------------------------------------------------------------
# 5. The device


class _DeviceScan:
    """Whether a flow needs a device, following `run:` and nested flow-execute through FlowFiles.

    Bounded like the run itself (depth 20, no cycles); a flow that cannot be reached or read
    counts as needing none — its step will report the error when it runs."""

    def __init__(self, files: FlowFiles, tools: ToolInvoker, platform_known: bool) -> None:
        self.files = files
        self.tools = tools
        self.platform_known = platform_known
        self.path: list[str] = []
        self.known: dict[str, bool] = {}
        self.cut = 0

    async def flow(self, flow: Flow, ref: FlowRef) -> bool:
        walked = walk_steps(flow.steps)
        # This file's own steps first: most flows that need a device say so without a read.
        if any(step_needs_device(step, self.tools, self.platform_known) for step in walked):
            return True
        self.path.append(ref.canonical)
        try:
            for step in walked:
                reached: FlowRef | None = None
                if isinstance(step, RunStep):
                    reached = await self._fragment(ref, step.target)
                elif isinstance(step, ToolStep) and tool_name(step) == FLOW_EXECUTE_TOOL:
                    reached = await self._nested(step)
                if reached is not None and await self.reach(reached):
                    return True
            return False
        finally:
            self.path.pop()

    async def reach(self, ref: FlowRef) -> bool:
        canonical = ref.canonical
        if ref.spelling.state == "case_folded":
            return False
        if canonical in self.path or len(self.path) >= MAX_RUN_DEPTH:
            self.cut += 1
            return False
        if canonical in self.known:
            return self.known[canonical]
        try:
            flow = await read_flow(self.files, ref)
        except Exception:
            self.known[canonical] = False
            return False
        cut = self.cut
        needs = await self.flow(flow, ref)
        if needs or self.cut == cut:  # a verdict a cycle or the depth limit cut short depends on the path
            self.known[canonical] = needs
        return needs

    async def _fragment(self, ref: FlowRef, target: str) -> FlowRef | None:
        try:
            return await self.files.fragment(ref, target)
        except Exception:
            return None

    async def _nested(self, step: ToolStep) -> FlowRef | None:
        args = step.args
        if not isinstance(args, Mapping):
            return None
        try:
            req = FlowRequest(
                name=args.get("name"), flow_path=args.get("flow_path"), project_root=args.get("project_root")
            )
            ref, _ = await resolve_source(req, self.files)
        except Exception:
            return None
        return ref


async def flow_needs_device(
    flow: Flow, ref: FlowRef, files: FlowFiles, tools: ToolInvoker, *, platform_known: bool
) -> bool:
    """Our device rule: directives, UI guards, platform guards of an unknown platform, device
    tools and unknown tools — also inside the flows `run:` and nested flow-execute reach."""
    return await _DeviceScan(files, tools, platform_known).flow(flow, ref)


def flow_scopes_device(flow: Flow, tools: ToolInvoker) -> bool:
    """A flow with a tool that takes a ``devices`` scope list (a cleanup flow)."""
    for step in walk_steps(flow.steps):
        if isinstance(step, ToolStep):
            params = tools.params(tool_name(step))
            if params is not None and DEVICE_LIST_KEY in params:
                return True
    return False


def _platform(device: Device) -> str:
    return "ios" if device.platform == "ios-remote" else device.platform


def _listing(devices: list[Device]) -> str:
    return ", ".join(f"{d.id} ({d.platform})" for d in devices) if devices else "none"


async def detect_device(devices: DeviceProvider | None, platform: str | None) -> Device:
    """The one booted device (of ``platform``), else ``DeviceResolutionError``."""
    booted = await devices.list_booted() if devices is not None else []
    scoped = [d for d in booted if platform is None or _platform(d) == platform]
    if len(scoped) == 1:
        return scoped[0]
    if not scoped:
        what = f"No booted {platform} device found." if platform else "No booted device found."
        raise DeviceResolutionError(
            f"{what} Pass a device id or platform explicitly. Available devices: {_listing(booted)}."
        )
    raise DeviceResolutionError(
        f"{len(scoped)} booted devices matched — pass --device or --platform to disambiguate. "
        f"Available devices: {_listing(scoped)}."
    )


def launches_chromium(launch: LaunchStep, platform: str | None) -> bool:
    """A launch that unambiguously targets chromium: ``{ chromium: … }`` alone, or any chromium
    target (also a bare ``launch: <target>``) when the run's platform is chromium."""
    if platform == "chromium":
        return launch.app_for("chromium") is not None
    return platform is None and launch.chromium is not None and not launch.apps


async def boot_for_leading_launch(
    req: FlowRequest, flow: Flow, ref: FlowRef, files: FlowFiles, name: str, devices: DeviceProvider | None
) -> Device | None:
    """A fresh chromium for a run without ``device`` whose leading launch (through the leading
    `run:` chain) targets chromium; the caller stops it when the run ends. The launch step then
    opens its target on it."""
    if req.device or devices is None:
        return None
    leading = await _leading_launch(flow, [StackEntry(ref, name)], files, name)
    if not isinstance(leading, tuple) or not launches_chromium(leading[0], req.platform):
        return None
    try:
        return await devices.boot("chromium")
    except DeviceError as exc:
        raise DeviceResolutionError(
            f"The flow launches a chromium page, but no device could be booted: {exc}"
        ) from None


async def resolve_device(
    req: FlowRequest,
    flow: Flow,
    ref: FlowRef,
    files: FlowFiles,
    tools: ToolInvoker,
    devices: DeviceProvider | None,
) -> Device | None:
    """The device a run starts on; None for a device-free flow (reported as ``device: ""``)."""
    if req.device:
        if devices is None:
            raise DeviceResolutionError(
                f'No device "{req.device}" found — this tool-server has no devices. Pass a device id or '
                "platform explicitly. Available devices: none."
            )
        return await devices.get(req.device)
    if await flow_needs_device(flow, ref, files, tools, platform_known=req.platform is not None):
        return await detect_device(devices, req.platform)
    if flow_scopes_device(flow, tools):
        try:
            return await detect_device(devices, req.platform)
        except DeviceResolutionError:
            return None
    return None


async def read_prerequisite(req: FlowRequest, *, files: FlowFiles) -> dict[str, str]:
    """flow-read-prerequisite: the same source resolution, then ``{flow, executionPrerequisite}``."""
    ref, name = await resolve_source(req, files)
    flow = await load_root_flow(files, ref)
    return {"flow": name, "executionPrerequisite": flow.execution_prerequisite}
