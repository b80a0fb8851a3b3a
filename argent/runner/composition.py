"""Composition: `run:` fragments and nested `tool: flow-execute` runs.

Both put a flow on the run stack they share. Before a flow goes on the stack, the guards
run in order and each stops the run with an ``error`` line: a cycle (checked before the
depth, so a loop closing at the limit reads as the loop it is), the depth limit of 20 (the
root counts as one), a mis-cased reference, then the load itself.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from argent.errors import FlowError
from argent.flows.model import RunStep, ToolStep
from argent.flows.names import fragment_display_name
from argent.limits import MAX_RUN_DEPTH
from argent.runner.files import FlowFileError, FlowRef, Spelling
from argent.runner.load import (
    FilesLookup,
    FlowRequest,
    check_leading_launch,
    load_root_flow,
    read_flow,
    resolve_source,
)
from argent.runner.report import FlowRunResult, PrerequisiteNotice, StepReport, StepStatus
from argent.runner.run import (
    Run,
    StackEntry,
    StepLoop,
    ToolInvoker,
    bind_device_args,
    error_message,
    line,
    push,
    push_leaf,
)

#: The tool a `tool:` step names to run another saved flow; the runner runs it itself.
FLOW_EXECUTE_TOOL = "flow-execute"

MAX_RUN_DEPTH_EXCEEDED = "max run depth exceeded"

#: The argument names of flow-execute (device keys among them are re-bound to the run's device).
FLOW_EXECUTE_PARAMS = frozenset(
    {
        "name",
        "project_root",
        "flow_file",
        "flow_path",
        "device",
        "platform",
        "updateBaselines",
        "prerequisiteAcknowledged",
    }
)


def cycle_message(stack: list[StackEntry], display: str) -> str:
    chain = " → ".join([entry.display for entry in stack] + [display])
    return f"cyclic flow reference: {chain}"


def on_stack(stack: list[StackEntry], ref: FlowRef) -> bool:
    canonical = ref.canonical
    return any(entry.ref.canonical == canonical for entry in stack)


def miscased_fragment_message(target: str, spelling: Spelling) -> str:
    """The refusal of a `run:` target whose basename the directory lists only in another case."""
    base = target.rsplit("/", 1)[-1]
    actual = spelling.actual or base
    if spelling.addressable:
        recovery = f'reference it as "{target[: len(target) - len(base)]}{actual}"'
    else:
        recovery = f'rename "{actual}" to "{base}" to compose it — flow files must be lowercase .yaml'
    return (
        f'mis-cased fragment reference "{target}": no directory entry is named "{base}" '
        f'(this filesystem matched it case-insensitively to "{actual}"), so the fragment name keying '
        "its step reports is one nothing on disk carries and a case-sensitive checkout could not find "
        f"the file at all — {recovery}"
    )


class RunHandler:
    """`run:` — the guards, then a `run` pass marker and the fragment's steps one level deeper."""

    def needs_device(self, step: RunStep, tools: ToolInvoker, platform_known: bool) -> bool:
        return False

    async def execute(self, loop: StepLoop, run: Run, step: RunStep, depth: int, top: StackEntry) -> None:
        await exec_run_step(loop, run, step, depth)


async def exec_run_step(loop: StepLoop, run: Run, step: RunStep, depth: int) -> None:
    """`run:` — the guards, then a `run` pass marker and the fragment's steps one level deeper."""
    t0 = time.monotonic()
    target = step.target
    display = fragment_display_name(target, run.name)
    stack = run.stack

    async def refuse(reason: str) -> None:
        run.stopped = True
        await push(run, line(run, step, "error", display, depth, t0, reason=reason))

    try:
        ref = await run.files.fragment(stack[-1].ref, target)
    except FlowFileError as exc:
        await refuse(f'could not load fragment "{target}": {exc}')
        return
    if on_stack(stack, ref):
        await refuse(cycle_message(stack, display))
        return
    if len(stack) >= MAX_RUN_DEPTH:
        await refuse(MAX_RUN_DEPTH_EXCEEDED)
        return
    if ref.spelling.state == "case_folded":
        await refuse(miscased_fragment_message(target, ref.spelling))
        return
    try:
        fragment = await read_flow(run.files, ref, run.parsed)
    except Exception as exc:
        await refuse(f'could not load fragment "{target}": {error_message(exc)}')
        return
    await push(run, line(run, step, "pass", display, depth, t0))
    stack.append(StackEntry(ref, display))
    try:
        await loop.exec_steps(run, fragment.steps, depth + 1)
    finally:
        stack.pop()


# --------------------------------------------------------------------------------------------
# Nested flow-execute


def nested_flow_failure(result: FlowRunResult | PrerequisiteNotice) -> tuple[StepStatus, str] | None:
    """How a nested run's result scores its `tool: flow-execute` line (None: a pass)."""
    if isinstance(result, PrerequisiteNotice):
        prereq = f": {result.execution_prerequisite}" if result.execution_prerequisite else ""
        return (
            "error",
            f'flow "{result.flow}" did not run — its execution prerequisite was not acknowledged{prereq}. '
            "Add prerequisiteAcknowledged: true to the step's args, or compose with run: instead.",
        )
    if result.aborted:
        return "skip", f'flow "{result.flow}" was aborted'
    if not result.ok:
        detail = ""
        for report in result.steps:
            if report.status == "fail" or report.status == "error":
                what = report.tool or report.kind
                detail = f" ({what}: {report.reason or 'no reason given'})"
                break
        return (
            "fail",
            f'flow "{result.flow}" failed: {result.passed} passed, {result.failed} failed, '
            f"{result.errored} errored{detail}",
        )
    return None


def _optional_str(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FlowError(f"flow-execute: {key} must be a string, not {type(value).__name__}")
    return value


class NestedFlowHandler:
    """`tool: flow-execute` — the runner's own tool: a nested run, whose line closes it even after the
    call's step budget is spent (so every enclosing run carries a failure up to the root)."""

    def needs_device(self, step: ToolStep, tools: ToolInvoker, platform_known: bool) -> bool:
        return False

    async def execute(self, loop: StepLoop, run: Run, step: ToolStep, depth: int, top: StackEntry) -> None:
        await push_leaf(run, await exec_nested_flow(loop, run, step, depth, top))


async def exec_nested_flow(
    loop: StepLoop, run: Run, step: ToolStep, depth: int, top: StackEntry
) -> StepReport:
    """`tool: flow-execute` inside a flow: a nested run on the shared stack, scored by its result."""
    flow = top.display
    t0 = time.monotonic()
    raw = step.args if step.args is not None else {}
    if not isinstance(raw, Mapping):
        reason = f"the args of a {FLOW_EXECUTE_TOOL} tool step must be a map, not {type(raw).__name__}"
        return line(run, step, "error", flow, depth, t0, tool=FLOW_EXECUTE_TOOL, reason=reason)
    args = bind_device_args(run, FLOW_EXECUTE_PARAMS, raw)

    def report(status: StepStatus, reason: str | None, result: Any = None) -> StepReport:
        return line(
            run,
            step,
            status,
            flow,
            depth,
            t0,
            tool=FLOW_EXECUTE_TOOL,
            reason=reason,
            result=result,
            args=args,
        )

    update = raw.get("updateBaselines")
    acknowledged = raw.get("prerequisiteAcknowledged") is True
    try:
        request = FlowRequest(
            name=_optional_str(raw, "name"),
            flow_path=_optional_str(raw, "flow_path"),
            project_root=_optional_str(raw, "project_root"),
            device=run.device.id if run.device is not None else None,
            platform=run.platform,
            update_baselines=update if isinstance(update, bool) else run.update_baselines,
            prerequisite_acknowledged=acknowledged,
        )
        co_located = run.files.local_path(run.root, ".") is not None
        ref, name = await resolve_source(request, run.files, flow_path_allowed=co_located)
        if on_stack(run.stack, ref):
            return report("error", cycle_message(run.stack, name))
        if len(run.stack) >= MAX_RUN_DEPTH:
            return report("error", MAX_RUN_DEPTH_EXCEEDED)
        nested = await load_root_flow(run.files, ref)
        await check_leading_launch(
            nested, [*run.stack, StackEntry(ref, name)], FilesLookup(run.files), name, request
        )
    except Exception as exc:
        return report("error", error_message(exc))
    if nested.execution_prerequisite and not acknowledged:
        notice = PrerequisiteNotice(flow=name, execution_prerequisite=nested.execution_prerequisite)
        verdict = nested_flow_failure(notice)
        assert verdict is not None
        return report(verdict[0], verdict[1], notice)
    child = run.child(ref, name, update_baselines=request.update_baselines, project_root=request.project_root)
    result = await loop.execute_run(child, nested)
    outcome = nested_flow_failure(result)
    if outcome is None:
        return report("pass", None, result)
    return report(outcome[0], outcome[1], result)
