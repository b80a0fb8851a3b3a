"""flow-execute: from a request to a run report.

``execute_flow`` does what the tool does before and after the step loop, in order:

1. resolve the source — exactly one of ``name`` / ``flow_path``, a valid ``project_root``,
   the name or path rules, the on-disk spelling of the flow file;
2. read and parse the flow (a missing file raises the read error; a parse error raises the
   parser's ``FlowParseError`` unchanged, so the message still starts ``Invalid flow file:``
   or ``Unrecognized flow entry`` and stays byte-identical to what the parser says);
3. refuse a prerequisite on a flow whose leading `run:` chain reaches a launch;
4. answer a ``PrerequisiteNotice`` when the prerequisite was not acknowledged;
5. resolve the device — an explicit id (as given: looked up at the first step that acts on
   it), else a fresh chromium booted for the run's leading
   chromium launch (stopped when the run ends), else none when no step needs one, else the one
   booted device that matches;
6. run the steps and summarize.

Steps 1–3 live in ``argent.runner.load``, and 2 builds the graph of the files the run reaches
(``argent.runner.reach``): the checks of 3 and 5 read it, no file again. Nested flow-execute steps
reuse steps 1–4 (see ``argent.runner.composition``). The names callers import from here stay
importable.
"""

from __future__ import annotations

import asyncio
import contextlib

from argent.devices.base import Device, DeviceError, DeviceProvider
from argent.devices.deferred import DeferredDevice
from argent.devices.registry import DEFAULT_ENGINE, Engine, engine_named
from argent.errors import DeviceResolutionError
from argent.flows.graph import Edge, FlowGraph
from argent.flows.model import Flow, LaunchStep, ToolStep
from argent.flows.values import condition_platform
from argent.runner.budget import StepBudget
from argent.runner.engine import run_flow
from argent.runner.files import FlowFiles, FlowRef
from argent.runner.handlers import step_needs_device
from argent.runner.load import (
    EXACTLY_ONE_SOURCE,
    FlowRequest,
    check_leading_launch,
    check_project_root,
    leading_launch,
    load_root_flow,
    resolve_source,
)
from argent.runner.reach import GraphLookup, PreparedRun, prepare_run
from argent.runner.report import FlowRunResult, PrerequisiteNotice
from argent.runner.run import (
    DEVICE_LIST_KEY,
    DirectiveExecutor,
    ProgressCallback,
    StackEntry,
    ToolInvoker,
    tool_name,
)
from argent.runner.uploads import check_upload_files

__all__ = [
    "EXACTLY_ONE_SOURCE",
    "FlowRequest",
    "boot_for_leading_launch",
    "check_leading_launch",
    "check_project_root",
    "detect_device",
    "execute_flow",
    "flow_needs_device",
    "flow_scopes_device",
    "launched_engine",
    "load_root_flow",
    "prepare_run",
    "read_prerequisite",
    "resolve_device",
    "resolve_source",
]


async def execute_flow(
    req: FlowRequest,
    *,
    files: FlowFiles,
    tools: ToolInvoker,
    directives: DirectiveExecutor | None = None,
    devices: DeviceProvider | None,
    on_progress: ProgressCallback | None = None,
    abort: asyncio.Event | None = None,
    budget: StepBudget | None = None,
    prepared: PreparedRun | None = None,
) -> FlowRunResult | PrerequisiteNotice:
    """Run one flow as the flow-execute tool does; raises ``ArgentError``s for refused calls.

    ``prepared``: the request already resolved and its graph built (``prepare_run``), as a tool's
    checks before the run did; else it is done here. The checks below read the graph, not the files."""
    if prepared is None or prepared.request != req:
        prepared = await prepare_run(req, files)
    ref, name, flow, graph = prepared.ref, prepared.name, prepared.flow, prepared.graph
    lookup = GraphLookup(graph)
    await check_leading_launch(flow, [StackEntry(ref, name)], lookup, name, req)
    if flow.execution_prerequisite and req.prerequisite_acknowledged is not True:
        return PrerequisiteNotice(flow=name, execution_prerequisite=flow.execution_prerequisite)
    await check_upload_files(graph, files)
    booted = await boot_for_leading_launch(req, flow, ref, lookup, name, devices)
    try:
        device = booted or await resolve_device(req, graph, tools, devices)
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
            budget=budget,
        )
    finally:
        if booted is not None and devices is not None:
            await _stop_booted(devices, booted.id)


async def _stop_booted(devices: DeviceProvider, device_id: str) -> None:
    """The run owns what it booted: stopped however the run ends. A cancelled run still waits for
    the stop (held here, so it is never dropped half done when the server shuts down)."""
    stopping = asyncio.ensure_future(devices.stop(device_id))
    try:
        await asyncio.shield(stopping)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await stopping
        raise
    except Exception:
        return


# --------------------------------------------------------------------------------------------
# 5. The device


def _followed_by_a_run(edge: Edge[FlowRef]) -> bool:
    """A reference the run follows into its steps: not one the directory lists in another case
    (the step refuses it)."""
    target = edge.target
    return target is not None and target.handle.spelling.state != "case_folded"


def flow_needs_device(graph: FlowGraph[FlowRef], tools: ToolInvoker, *, platform_known: bool) -> bool:
    """Our device rule: directives, UI guards, platform guards of an unknown platform, device
    tools and unknown tools — also inside the flows `run:` and nested flow-execute reach (a flow
    that cannot be reached or read counts as needing none: its step reports the error)."""
    for file in graph.traverse(follow=_followed_by_a_run):
        if any(step_needs_device(step, tools, platform_known) for step in file.steps):
            return True
    return False


def flow_scopes_device(graph: FlowGraph[FlowRef], tools: ToolInvoker) -> bool:
    """A flow with a tool that takes a ``devices`` scope list (a cleanup flow)."""
    for step in graph.root.steps:
        if isinstance(step, ToolStep):
            params = tools.params(tool_name(step))
            if params is not None and DEVICE_LIST_KEY in params:
                return True
    return False


def _platform(device: Device) -> str:
    return condition_platform(device.platform)


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


def launched_engine(launch: LaunchStep, platform: str | None) -> Engine | None:
    """The browser engine a launch unambiguously targets: the run's platform when it is a browser
    engine and the launch has a target for it (its own key, the ``chromium:`` web target, a bare
    target); with no platform, the default engine when the launch names browser engines only
    (``{ chromium: … }``, ``{ chromium: …, firefox: … }``)."""
    engine = engine_named(platform)
    if engine is not None:
        return engine if launch.app_for(engine.platform) is not None else None
    only_engines = all(engine_named(key) is not None for key in launch.apps)
    if platform is None and launch.chromium is not None and only_engines:
        return DEFAULT_ENGINE
    return None


async def boot_for_leading_launch(
    req: FlowRequest, flow: Flow, ref: FlowRef, lookup: GraphLookup, name: str, devices: DeviceProvider | None
) -> Device | None:
    """A fresh browser for a run without ``device`` whose leading launch (through the leading
    `run:` chain) targets a browser engine (``launched_engine``) — also a bare web target (a URL, an
    HTML file) on the default engine when the run names no platform and no device is booted; the
    caller stops it when the run ends. The launch step then opens its target on it."""
    if req.device or devices is None:
        return None
    leading = await leading_launch(flow, [StackEntry(ref, name)], lookup, name)
    if not isinstance(leading, tuple):
        return None
    engine = launched_engine(leading[0], req.platform)
    if engine is None:
        if req.platform is not None or leading[0].web_target() is None or await devices.list_booted():
            return None
        engine = DEFAULT_ENGINE
    try:
        return await devices.boot(engine.platform)
    except DeviceError as exc:
        raise DeviceResolutionError(
            f"The flow launches a {engine.platform} page, but no device could be booted: {exc}"
        ) from None


async def resolve_device(
    req: FlowRequest,
    graph: FlowGraph[FlowRef],
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
        # Used as given: looked up at the first step that acts on it, so a flow that never
        # touches it runs even when nothing answers there (that step gets the lookup's error).
        return DeferredDevice(req.device, devices)
    if flow_needs_device(graph, tools, platform_known=req.platform is not None):
        return await detect_device(devices, req.platform)
    if flow_scopes_device(graph, tools):
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
