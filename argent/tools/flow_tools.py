"""flow-execute and flow-read-prerequisite: the tools in front of the runner."""

from __future__ import annotations

from typing import Any, Literal

from attrs import frozen

from argent.runner.execute import FlowRequest, execute_flow, read_prerequisite
from argent.runner.files import DiskFlowFiles
from argent.tools.args import arg
from argent.tools.registry import FileInputSpec, ToolContext, ToolRegistry, ToolSpec

Platform = Literal["ios", "android", "chromium", "vega"]

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
    path="${project_root}/.argent/flows/${name}.yaml",
    kind="file",
    skip_when_set="flow_path",
    collect="flow",
)


@frozen
class FlowExecuteArgs:
    project_root: str = arg(doc="Absolute path of the project root (the directory holding .argent/).")
    name: str | None = arg(None, doc="Saved flow to run: <project_root>/.argent/flows/<name>.yaml.")
    flow_path: str | None = arg(
        None, doc="Absolute path of a flow YAML file kept elsewhere (instead of name)."
    )
    flow_file: str | None = arg(None, doc="Internal: derived by the client from project_root and name.")
    device: str | None = arg(None, doc="Device id to run on, e.g. chromium-cdp-9222.")
    platform: Platform | None = arg(None, doc="Platform of the run when no device is given.")
    update_baselines: bool | None = arg(
        None, wire="updateBaselines", doc="Write the current screen as each snapshot's baseline."
    )
    prerequisite_acknowledged: bool | None = arg(
        None,
        wire="prerequisiteAcknowledged",
        doc="Set true once the flow's executionPrerequisite is met.",
    )


@frozen
class FlowReadPrerequisiteArgs:
    project_root: str = arg(doc="Absolute path of the project root.")
    name: str | None = arg(None, doc="Saved flow name.")
    flow_path: str | None = arg(None, doc="Absolute path of a flow YAML file (instead of name).")
    flow_file: str | None = arg(None, doc="Internal: derived by the client from project_root and name.")


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


def flow_tools(registry: ToolRegistry) -> list[ToolSpec[Any]]:
    """The flow tools, bound to the registry that serves their `tool:` steps."""
    from argent.tools.invoker import RegistryInvoker

    invoker = RegistryInvoker(registry)

    async def run_flow(args: FlowExecuteArgs, ctx: ToolContext) -> Any:
        return await execute_flow(
            _request(args),
            files=DiskFlowFiles(),
            tools=invoker,
            devices=None,
            on_progress=ctx.emit_progress,
            abort=ctx.abort,
        )

    async def read_prereq(args: FlowReadPrerequisiteArgs, ctx: ToolContext) -> Any:
        return await read_prerequisite(_request(args), files=DiskFlowFiles())

    return [
        ToolSpec(
            name="flow-execute",
            description=(
                "Run a recorded flow (YAML) and report each step. Pass project_root and either name (a saved "
                "flow in .argent/flows) or flow_path. Progress streams one line per step."
            ),
            args_type=FlowExecuteArgs,
            execute=run_flow,
            file_inputs=(FLOW_PATH_INPUT, FLOW_FILE_INPUT),
            long_running=True,
        ),
        ToolSpec(
            name="flow-read-prerequisite",
            description="Read a flow's executionPrerequisite (the start state it assumes) without running it.",
            args_type=FlowReadPrerequisiteArgs,
            execute=read_prereq,
            file_inputs=(
                FileInputSpec(
                    target="flow_path",
                    path="${flow_path}",
                    kind="file",
                    optional=True,
                    unwrap_when_set="name",
                ),
                FileInputSpec(
                    target="flow_file",
                    path="${project_root}/.argent/flows/${name}.yaml",
                    kind="file",
                    skip_when_set="flow_path",
                ),
            ),
        ),
    ]
