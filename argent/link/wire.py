"""The one cattrs converter for the wire: Python names in, camelCase JSON out.

Reports and results are attrs classes with snake_case fields; the renames live
here once. Unset optional fields are left out, as the wire shapes of INTERFACE.md say.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
import cattrs

from argent.runner.report import FlowRunResult, PrerequisiteNotice, StepReport

_CAMEL = re.compile(r"_([a-z])")


def camel(name: str) -> str:
    return _CAMEL.sub(lambda m: m.group(1).upper(), name)


def _unstructure_step(step: StepReport) -> dict[str, Any]:
    out: dict[str, Any] = {"index": step.index, "kind": step.kind, "status": step.status, "flow": step.flow}
    if step.depth:
        out["depth"] = step.depth
    for name in ("target", "reason", "warning", "message", "tool"):
        value = getattr(step, name)
        if value is not None:
            out[name] = value
    if step.result is not None:
        out["result"] = converter.unstructure(step.result)
    if step.output_hint is not None:
        out["outputHint"] = step.output_hint
    if step.args is not None:
        out["args"] = step.args
    if step.snapshot_key is not None:
        out["snapshotKey"] = step.snapshot_key
    if step.artifacts is not None:
        out["artifacts"] = dict(step.artifacts)
    out["durationMs"] = step.duration_ms
    return out


def _unstructure_result(result: FlowRunResult) -> dict[str, Any]:
    out: dict[str, Any] = {"flow": result.flow, "device": result.device}
    if result.execution_prerequisite:
        out["executionPrerequisite"] = result.execution_prerequisite
    out["ok"] = result.ok
    if result.aborted:
        out["aborted"] = True
    out.update(
        passed=result.passed,
        failed=result.failed,
        skipped=result.skipped,
        errored=result.errored,
        steps=[_unstructure_step(s) for s in result.steps],
    )
    if result.baseline_writes is not None:
        out["baselineWrites"] = converter.unstructure(result.baseline_writes)
    return out


def _unstructure_notice(notice: PrerequisiteNotice) -> dict[str, Any]:
    return {
        "flow": notice.flow,
        "notice": notice.notice,
        "executionPrerequisite": notice.execution_prerequisite,
    }


def _unstructure_attrs(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in attrs.fields(type(value)):
        v = getattr(value, f.name)
        if v is None:
            continue
        out[str(f.metadata.get("wire", camel(f.name)))] = converter.unstructure(v)
    return out


converter = cattrs.Converter()
converter.register_unstructure_hook(StepReport, _unstructure_step)
converter.register_unstructure_hook(FlowRunResult, _unstructure_result)
converter.register_unstructure_hook(PrerequisiteNotice, _unstructure_notice)
converter.register_unstructure_hook_func(attrs.has, _unstructure_attrs)


def to_wire(value: Any) -> Any:
    """Any result, report or model as JSON-ready data."""
    return converter.unstructure(value)
