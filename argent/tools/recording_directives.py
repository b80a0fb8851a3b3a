"""flow-add-step with a flow directive as its command (INTERFACE.md section 15).

``command`` names a directive of the flow language (``tap``, ``type``, ``press``, ...) and ``args`` is
its value as JSON: its map form as an object, or the JSON text of any of its forms (``"Enter"`` for
``press``). The value is read by the flow parser, as the entry ``<command>: <value>`` of a flow file
would be (the same grammar and the same messages), then run by the runner as a one-step flow on the
recording's device — the code path of a replay's step — and recorded as that directive when it passed.

A step that fails or errors is not recorded: a replay would stop there. Its line says why (the
miss, the candidates, the screenshot's path), and the device stays as the step left it.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from attrs import frozen

from argent.devices.base import Device
from argent.errors import FlowParseError, InvalidToolInputError
from argent.flows.directives import BY_KEY
from argent.flows.load import parse_flow_async
from argent.flows.model import Flow, Step
from argent.runner.budget import StepBudget
from argent.runner.engine import execute_run
from argent.runner.files import FlowFiles, FlowRef
from argent.runner.report import StepReport
from argent.runner.run import DirectiveExecutor, Run, ToolInvoker

#: The directives flow-add-step runs and records, with an example of each one's value (as JSON):
#: INTERFACE.md section 15's list, those this flow language has (``upload`` once it exists).
DIRECTIVE_EXAMPLES: dict[str, str] = {
    key: example
    for key, example in (
        ("tap", '{"text": "Sign in", "role": "button"}'),
        ("type", '{"into": {"id": "email"}, "text": "ada@example.com"}'),
        ("press", '"Enter"'),
        ("select", '{"in": {"id": "country"}, "option": "France"}'),
        ("scroll-to", '{"target": {"text": "Terms"}}'),
        ("long-press", '{"text": "Photo"}'),
        ("await", '{"visible": {"text": "Welcome"}}'),
        ("assert", '{"visible": {"text": "Welcome"}}'),
        ("snapshot", '"home"'),
        ("upload", '{"into": {"id": "avatar"}, "files": ["fixtures/me.png"]}'),
        ("launch", '{"chromium": "pages/index.html"}'),
    )
    if key in BY_KEY
}
RECORDABLE_DIRECTIVES: tuple[str, ...] = tuple(DIRECTIVE_EXAMPLES)

#: A directive runs as a replay's step runs: a token may run one when it may run flows.
DIRECTIVE_PERMISSION = "flow-execute"

VALUE_MISSING = (
    "a {command} step needs args: the directive's value as JSON, e.g. {example}. Nothing was run or recorded."
)
VALUE_NOT_JSON = (
    "args of a {command} step must be the directive's value as JSON — an object, or the JSON text of any of "
    "its forms, e.g. {example} ({detail}). Nothing was run or recorded."
)
VALUE_INVALID = "flow-add-step cannot run this {command} step: {reason}. Nothing was run or recorded."
STEP_DID_NOT_PASS = (
    "{summary} {status}: {reason}. Nothing was recorded — a replay would stop at this step.{evidence} The "
    "device is as the step left it: look at it (describe, screenshot), then add the step that works."
)
UNKNOWN_COMMAND = (
    'No tool or flow directive "{command}"{hint} flow-add-step runs a tool of this tool-server or a flow '
    "directive. Directives: {directives}. Tools: {tools}. Nothing was run or recorded."
)

NOT_RECORDED = "flow-add-step does not record {command}: steps: {why}. Nothing was run or recorded."
#: Why a directive of the flow language is not one flow-add-step records, and what to do instead.
NOT_RECORDED_WHY: dict[str, str] = {
    "wait": "a fixed wait makes a flow slow and flaky — record an await step, which waits for what the app does",
    "echo": "call flow-add-echo",
    "script": "call flow-add-script",
    "run": "call flow-add-step with command flow-execute and the flow's name: a flow beside the recording is "
    "recorded as run:",
}
NOT_RECORDED_BY_HAND = "add it to the flow file by hand (each step runs on its own while recording)"

_POSITION = re.compile(r" \(step 1, line 1\)$")
_FILE_LEVEL = "Invalid flow file: "
_ENTRY = re.compile(r"^Unrecognized flow entry \((.*)\): .*$", re.S)


def is_directive(command: str) -> bool:
    return command in DIRECTIVE_EXAMPLES


def directive_value(command: str, args: str | dict[str, Any] | None) -> Any:
    """The directive's value: an object as given, or the value of the JSON text."""
    example = DIRECTIVE_EXAMPLES[command]
    if args is None:
        raise InvalidToolInputError(VALUE_MISSING.format(command=command, example=example))
    if isinstance(args, dict):
        return args
    try:
        return json.loads(args)
    except json.JSONDecodeError as exc:
        detail = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    except RecursionError:
        detail = "it nests arrays or objects too deeply to read"
    raise InvalidToolInputError(VALUE_NOT_JSON.format(command=command, example=example, detail=detail))


async def parse_directive(command: str, value: Any) -> Step:
    """The step ``<command>: <value>`` as a flow file's entry reads: the parser's grammar and words."""
    try:
        flow = await parse_flow_async(json.dumps({"steps": [{command: value}]}, ensure_ascii=False))
    except FlowParseError as exc:
        message = _POSITION.sub("", exc.message).removeprefix(_FILE_LEVEL)
        found = _ENTRY.match(message)
        reason = found.group(1) if found else message
        raise InvalidToolInputError(VALUE_INVALID.format(command=command, reason=reason)) from None
    (step,) = flow.steps
    return step


def not_recorded(command: str) -> InvalidToolInputError | None:
    """The refusal of a directive of the flow language that flow-add-step does not record; None for
    anything else."""
    if command not in BY_KEY or command in DIRECTIVE_EXAMPLES:
        return None
    why = NOT_RECORDED_WHY.get(command, NOT_RECORDED_BY_HAND)
    return InvalidToolInputError(NOT_RECORDED.format(command=command, why=why))


def unknown_command(command: str, tools: list[str], hint: str | None) -> InvalidToolInputError:
    return InvalidToolInputError(
        UNKNOWN_COMMAND.format(
            command=command,
            hint=f' — did you mean "{hint}"?' if hint else ".",
            directives=", ".join(RECORDABLE_DIRECTIVES),
            tools=", ".join(tools),
        )
    )


@frozen
class DirectiveRun:
    """Where one recorded directive runs: the recording's files (its file is the run's root), its
    device, the device directives and tools of the call."""

    files: FlowFiles
    root: FlowRef
    name: str
    project_root: str
    tools: ToolInvoker
    directives: DirectiveExecutor
    budget: StepBudget


@frozen
class DirectiveOutcome:
    """The step's line, as a replay reports it, and the device the run ended on (a launch may move it)."""

    report: StepReport
    device: Device | None


async def run_directive(
    step: Step, where: DirectiveRun, device: Device | None, abort: asyncio.Event
) -> DirectiveOutcome:
    """Run ``step`` as the one step of a flow read from the recording's file (the runner's step loop,
    the handler and executor of a replay), with baselines written: recording a snapshot adopts the
    screen as its baseline, as ``--update-baselines`` does."""
    run = Run(
        files=where.files,
        tools=where.tools,
        root=where.root,
        name=where.name,
        directives=where.directives,
        device=device,
        device_explicit=device is not None,
        platform=device.platform if device is not None else None,
        update_baselines=True,
        project_root=where.project_root,
        abort=abort,
        budget=where.budget,
    )
    result = await execute_run(run, Flow(steps=(step,)))
    return DirectiveOutcome(report=result.steps[-1], device=run.device)


def did_not_pass(summary: str, report: StepReport) -> str:
    """Why a directive was not recorded: its line's status and reason, and where its screenshot is."""
    evidence = "".join(f" Its {role}: {path}." for role, path in (report.artifacts or {}).items())
    status = {"fail": "failed", "error": "errored", "skip": "was skipped"}.get(report.status, report.status)
    return STEP_DID_NOT_PASS.format(
        summary=summary, status=status, reason=report.reason or report.status, evidence=evidence
    )
