"""flow-execute and flow-read-prerequisite: the tools in front of the runner."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from argent.devices.base import DeviceProvider
from argent.devices.registry import ID_EXAMPLES, Platform
from argent.errors import FlowError, InvalidToolInputError, PolicyRefusal
from argent.flows.names import is_safe_flow_name
from argent.flows.references import NO_TOOL_FILES, ToolFiles
from argent.limits import MAX_ARTIFACT_IMAGE_BYTES
from argent.link.models import ArtifactImage, FileInputSpec
from argent.link.png import failure_image_paths, read_png
from argent.link.rules import FLOW_FILE_TEMPLATE, file_arguments
from argent.runner.directives import DeviceDirectives
from argent.runner.execute import (
    EXACTLY_ONE_SOURCE,
    FlowRequest,
    check_project_root,
    execute_flow,
    read_prerequisite,
)
from argent.runner.files import LISTED, DiskFlowFiles, FlowFiles
from argent.runner.member_files import MemberFlowFiles
from argent.runner.reach import PreparedRun, prepare_run
from argent.runner.report import FlowRunResult, PrerequisiteNotice
from argent.runner.run import ToolInvoker
from argent.tools.args import arg
from argent.tools.call_policy import CallPolicy, PolicyDiskFlowFiles, refuse_script_steps
from argent.tools.link_preflight import check_linked_graph
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from argent.tools.member_invoker import FileInputDirs

FLOW_PATH_INPUT = FileInputSpec(
    target="flow_path",
    path="${flow_path}",
    kind="file",
    optional=True,
    unwrap_when_set="name",
    collect="flow",
)
FLOW_FILE_INPUT = FileInputSpec(
    target="flow_file",
    path=FLOW_FILE_TEMPLATE,
    kind="file",
    skip_when_set="flow_path",
    collect="flow",
)


NOT_CO_LOCATED = (
    'Invalid flow_path "{flow_path}": explicit flow paths require a co-located client and tool server with a '
    "shared filesystem — over a link, name the flow with name and project_root instead."
)


@frozen
class FlowExecuteArgs:
    project_root: str = arg(doc="Absolute path of the project root (the directory holding .argent/).")
    name: str | None = arg(None, doc="Saved flow to run: <project_root>/.argent/flows/<name>.yaml.")
    flow_path: str | None = arg(
        None, doc="Absolute path of a flow YAML file kept elsewhere (instead of name)."
    )
    flow_file: str | None = arg(None, doc="Internal: derived by the client from project_root and name.")
    device: str | None = arg(None, doc=f"Device id to run on, e.g. {ID_EXAMPLES}.")
    platform: Platform | None = arg(None, doc="Platform of the run when no device is given.")
    update_baselines: bool | None = arg(
        None, wire="updateBaselines", doc="Write the current screen as each snapshot's baseline."
    )
    prerequisite_acknowledged: bool | None = arg(
        None,
        wire="prerequisiteAcknowledged",
        doc="Set true once the flow's executionPrerequisite is met.",
    )

    def __attrs_post_init__(self) -> None:
        _check_one_source(self.name, self.flow_path)


@frozen
class FlowReadPrerequisiteArgs:
    project_root: str = arg(doc="Absolute path of the project root.")
    name: str | None = arg(None, doc="Saved flow name.")
    flow_path: str | None = arg(None, doc="Absolute path of a flow YAML file (instead of name).")
    flow_file: str | None = arg(None, doc="Internal: derived by the client from project_root and name.")

    def __attrs_post_init__(self) -> None:
        _check_one_source(self.name, self.flow_path)


def _check_one_source(name: str | None, flow_path: str | None) -> None:
    """The exactly-one-source rule is part of argument validation: a 400 before the tool starts
    (plain JSON, also when the call asked for a stream)."""
    if (name is None) == (flow_path is None):
        raise InvalidToolInputError(EXACTLY_ONE_SOURCE)


def _request(args: FlowExecuteArgs | FlowReadPrerequisiteArgs) -> FlowRequest:
    if isinstance(args, FlowReadPrerequisiteArgs):
        return FlowRequest(
            name=args.name, flow_path=args.flow_path, flow_file=args.flow_file, project_root=args.project_root
        )
    return FlowRequest(
        name=args.name,
        flow_path=args.flow_path,
        flow_file=args.flow_file,
        project_root=args.project_root,
        device=args.device,
        platform=args.platform,
        update_baselines=bool(args.update_baselines),
        prerequisite_acknowledged=bool(args.prerequisite_acknowledged),
    )


def check_flow_path_boundary(args: FlowExecuteArgs | FlowReadPrerequisiteArgs, ctx: ToolContext) -> None:
    """An explicit flow_path must come through the file-input boundary, verified in place.

    The client wraps flow_path with its size and mtime; only a wrapper that resolved to the same
    file on this host proves client and tool-server share the file. A bare string could name any
    file on the server, and an uploaded copy has no directory to resolve `run:` targets in.
    """
    if args.flow_path is None or args.name is not None:
        return
    check_project_root(args.project_root)
    meta = ctx.file_inputs.get("flow_path")
    if meta is not None and meta.via_upload:
        raise FlowError(NOT_CO_LOCATED.format(flow_path=args.flow_path))
    if (
        meta is None
        or not meta.present_on_host
        or not meta.stat_verified
        or meta.client_path != args.flow_path
    ):
        raise FlowError(
            f'Invalid flow_path "{args.flow_path}": explicit flow paths must be supplied through the flow_path '
            "file-input boundary. Pass the client-local path and let the argent client resolve it."
        )


def linked_flow_files(args: FlowExecuteArgs, ctx: ToolContext) -> MemberFlowFiles | None:
    """The files of a run whose flow came over a link (the input that names the flow), else None."""
    target = "flow_path" if args.flow_path is not None and args.name is None else "flow_file"
    return ctx.flow_files.get(target)


def disk_files(ctx: ToolContext) -> DiskFlowFiles:
    """This host's flow files, as the call's policy lets it reach them."""
    return ctx.policy.disk_files() if ctx.policy is not None else DiskFlowFiles()


def directives_for(ctx: ToolContext, artifacts_dir: str | None) -> DeviceDirectives:
    """The device directives of a run; its launches open only pages the call may read here."""
    gate = ctx.policy.check_page if ctx.policy is not None else None
    return DeviceDirectives(scratch_dir=artifacts_dir, page_gate=gate, failure_screenshots=True)


async def failure_images(result: FlowRunResult) -> list[ArtifactImage] | None:
    """The images of the result's failing steps (``failure_image_paths``), for a client over a link:
    it cannot read this host's paths. An image that cannot be read, or is too large, stays a path."""
    images: list[ArtifactImage] = []
    for path in failure_image_paths(result.steps):
        data = await asyncio.to_thread(read_png, path, MAX_ARTIFACT_IMAGE_BYTES)
        if data is not None:
            images.append(ArtifactImage(path=path, data=base64.b64encode(data).decode("ascii")))
    return images or None


def _prerequisite_sent(args: FlowReadPrerequisiteArgs, ctx: ToolContext) -> bool:
    """The client sent the flow file with the call (flow-read-prerequisite reads no disk then)."""
    meta = ctx.file_inputs.get("flow_file")
    return args.name is not None and meta is not None and meta.via_upload


def _valid_root(project_root: str) -> bool:
    try:
        check_project_root(project_root)
    except FlowError:
        return False
    return True


async def check_disk_run(
    args: FlowExecuteArgs | FlowReadPrerequisiteArgs,
    policy: CallPolicy,
    tool: str,
    *,
    scripts: bool,
    tool_files: ToolFiles = NO_TOOL_FILES,
) -> None:
    """Before a call reads a flow from this host's disk: flows from disk are allowed, the project
    is a safe workspace, and (``scripts``, with scripts off) no reachable flow has a `script:` step.
    The run that follows takes the flow and its graph as checked here (``PolicyDiskFlowFiles.prepared``)."""
    policy.check_local_flows(tool)
    files = policy.disk_files()
    if args.flow_path is None and is_safe_flow_name(args.name) and _valid_root(args.project_root):
        # The workspace check, and the saved flow resolved and read for the run, in one thread hop.
        assert args.name is not None
        await files.prefetch_named_flow(args.project_root, args.name)
    else:  # the run refuses the source with its own words
        await policy.check_workspace(args.project_root)
    if not scripts or policy.scripts:
        return
    try:
        prepared = await prepare_run(_request(args), files, tool_files)
    except PolicyRefusal:
        raise
    except Exception:
        return  # the run reports a source it cannot resolve or read with its own words
    files.prepared = prepared
    refuse_script_steps(prepared.graph)


#: flow-read-prerequisite reads the same files as flow-execute, without collecting a run's members.
PREREQUISITE_INPUTS = tuple(attrs.evolve(spec, collect=None) for spec in (FLOW_PATH_INPUT, FLOW_FILE_INPUT))


def flow_tools(
    registry: ToolRegistry,
    devices: DeviceProvider | None = None,
    artifacts_dir: str | None = None,
    file_input_dirs: FileInputDirs | None = None,
) -> list[ToolSpec[Any]]:
    """The flow tools, bound to the registry that serves their `tool:` steps and to the devices runs use.

    Failed snapshots leave their images under ``artifacts_dir`` (the tool-server removes it when
    it stops); None puts them in the system temp directory. ``file_input_dirs`` makes the
    directories of a linked run's `tool:` steps' file arguments (None: the system temp dir)."""
    return _FlowTools(registry, devices, artifacts_dir, file_input_dirs).specs()


@attrs.define
class _FlowTools:
    registry: ToolRegistry
    devices: DeviceProvider | None
    artifacts_dir: str | None
    file_input_dirs: FileInputDirs | None

    def inputs_of(self, tool: str) -> Sequence[FileInputSpec] | None:
        spec = self.registry.find(tool)
        return spec.file_inputs if spec is not None else None

    def tool_files(self, tool: str, args: Any) -> list[tuple[str, str]]:
        """The file arguments of a `tool:` step, as this tool-server's tools declare them."""
        return file_arguments(self.inputs_of(tool), args)

    async def run_flow(self, args: FlowExecuteArgs, ctx: ToolContext) -> Any:
        from argent.tools.invoker import RegistryInvoker

        linked = linked_flow_files(args, ctx)
        if linked is None:
            check_flow_path_boundary(args, ctx)
            files = disk_files(ctx)
            prepared = files.take_prepared() if isinstance(files, PolicyDiskFlowFiles) else None
            tools = RegistryInvoker(self.registry, ctx.policy)
            result = await self._execute(args, ctx, files, tools, prepared)
        else:
            result = await self._run_linked(args, ctx, linked)
        if ctx.linked and isinstance(result, FlowRunResult):
            result.artifact_images = await failure_images(result)
        return result

    async def _run_linked(self, args: FlowExecuteArgs, ctx: ToolContext, linked: MemberFlowFiles) -> Any:
        """Over a link: the run reads only the files of the call; check them before the first step."""
        from argent.tools.member_invoker import MemberToolInvoker, system_file_input_dir

        if args.flow_path is not None and args.name is None and not linked.sent_members:
            check_project_root(args.project_root)
            raise FlowError(NOT_CO_LOCATED.format(flow_path=args.flow_path))
        prepared = await prepare_run(_request(args), linked, self.tool_files)
        check_linked_graph(prepared.graph, linked, self.inputs_of)
        tools = MemberToolInvoker(
            self.registry, linked, policy=ctx.policy, file_input_dirs=self.file_input_dirs
        )
        # The files upload: steps set are copies in a directory of this server's, gone with the run.
        linked.upload_dirs = self.file_input_dirs or system_file_input_dir
        try:
            result = await self._execute(args, ctx, linked, tools, prepared)
        finally:
            await linked.close()
        if isinstance(result, FlowRunResult) and linked.written:
            # The client writes these when the result arrives (its nested runs' baselines included).
            result.baseline_writes = linked.baseline_writes()
        return result

    async def _execute(
        self,
        args: FlowExecuteArgs,
        ctx: ToolContext,
        files: FlowFiles,
        tools: ToolInvoker,
        prepared: PreparedRun | None = None,
    ) -> Any:
        if prepared is None:
            prepared = await prepare_run(_request(args), files, self.tool_files)
        return await execute_flow(
            _request(args),
            files=files,
            tools=tools,
            directives=directives_for(ctx, self.artifacts_dir),
            devices=self.devices,
            on_progress=ctx.emit_progress,
            abort=ctx.abort,
            budget=ctx.budget,
            prepared=prepared,
        )

    async def read_prereq(self, args: FlowReadPrerequisiteArgs, ctx: ToolContext) -> Any:
        check_flow_path_boundary(args, ctx)
        meta = ctx.file_inputs.get("flow_file")
        if _prerequisite_sent(args, ctx) and meta is not None and args.flow_file is not None:
            # The client sent the flow file with the call: read it from there, under its client path.
            data = await asyncio.to_thread(Path(args.flow_file).read_bytes)
            client = meta.client_path
            files = MemberFlowFiles.for_root(client, os.path.normpath(client), LISTED, data, None)
            request = attrs.evolve(_request(args), flow_file=client)
            return await read_prerequisite(request, files=files)
        return await read_prerequisite(_request(args), files=disk_files(ctx))

    async def precheck_run(self, args: FlowExecuteArgs, ctx: ToolContext) -> None:
        if ctx.policy is not None and linked_flow_files(args, ctx) is None:
            await check_disk_run(args, ctx.policy, "flow-execute", scripts=True, tool_files=self.tool_files)

    async def precheck_prereq(self, args: FlowReadPrerequisiteArgs, ctx: ToolContext) -> None:
        if ctx.policy is not None and not _prerequisite_sent(args, ctx):
            await check_disk_run(args, ctx.policy, "flow-read-prerequisite", scripts=False)

    def specs(self) -> list[ToolSpec[Any]]:
        return [
            ToolSpec(
                name="flow-execute",
                description=(
                    "Run a recorded flow (YAML) and report each step. Pass project_root and either name (a saved "
                    "flow in .argent/flows) or flow_path. Progress streams one line per step."
                ),
                args_type=FlowExecuteArgs,
                execute=self.run_flow,
                precheck=self.precheck_run,
                file_inputs=(FLOW_PATH_INPUT, FLOW_FILE_INPUT),
                long_running=True,
                result_type=FlowRunResult | PrerequisiteNotice,
            ),
            ToolSpec(
                name="flow-read-prerequisite",
                description="Read a flow's executionPrerequisite (the start state it assumes) without running it.",
                args_type=FlowReadPrerequisiteArgs,
                execute=self.read_prereq,
                precheck=self.precheck_prereq,
                file_inputs=PREREQUISITE_INPUTS,
            ),
        ]
