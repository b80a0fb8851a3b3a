"""A streamed run's lines built from each report's one encoding are the bytes of the plain encoders."""

from __future__ import annotations

from typing import Any

import pytest

from argent.limits import RESULT_STEPS_ENCODED_IN_PLACE
from argent.link.codec import event_to_wire
from argent.link.models import FlowRunResult, PrerequisiteNotice, ProgressEvent, StepReport
from argent.server.stream import ReportLines, encode_line, result_line


def _report(index: int, **extra: Any) -> StepReport:
    fields: dict[str, Any] = {"message": f"step {index}", **extra}
    return StepReport(index=index, kind="echo", status="pass", flow="f", **fields)


REPORTS = [
    _report(0),
    _report(1, message='ünïcødé \u2028 "quoted" \\ </script>', duration_ms=1.25),
    _report(2, tool="t", result={"list": list(range(600)), "nested": [{"a": None}]}, args={"k": [1, 2]}),
    StepReport(index=3, kind="tap", status="fail", flow="g", depth=2, target="#x", reason="no match"),
    _report(4, artifacts={"actual": "/tmp/a.png"}, snapshot_key="s", warning="w", output_hint="h"),
]


def _result(steps: list[StepReport], **extra: Any) -> FlowRunResult:
    return FlowRunResult(flow="f", device="chromium-1", steps=steps, **extra)


def _stream(lines: ReportLines, reports: list[StepReport]) -> list[bytes]:
    return [lines.progress_line(report) for report in reports]


def test_each_progress_line_is_the_plain_encoding() -> None:
    lines = ReportLines()
    for report, line in zip(REPORTS, _stream(lines, REPORTS), strict=True):
        assert line == encode_line(event_to_wire(ProgressEvent(report)))


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"aborted": True, "execution_prerequisite": "logged in ✓", "started_at": 5, "duration_ms": 9},
        {"baseline_writes": [{"steps": [1, 2]}, *range(300)]},
        # The head is encoded once and the steps spliced in for its empty list: strings and later
        # values that spell that list must not be taken for it.
        {"execution_prerequisite": ',"steps":[] \\",\\"steps\\":[]', "baseline_writes": [{"steps": []}]},
        {"baseline_writes": [{"a": ',"steps":[]', "steps": []}], "started_at": 1},
    ],
)
def test_the_result_line_splices_the_sent_reports_into_the_same_bytes(extra: dict[str, Any]) -> None:
    lines = ReportLines()
    _stream(lines, REPORTS)
    result = _result(list(REPORTS), **extra)
    assert lines.result_line(result) == result_line(result)
    assert result.steps == REPORTS  # the result itself is untouched


def test_a_flow_named_like_the_steps_key_keeps_its_bytes() -> None:
    lines = ReportLines()
    _stream(lines, REPORTS)
    result = FlowRunResult(flow=',"steps":[]', device='"steps":[]', steps=list(REPORTS))
    assert lines.result_line(result) == result_line(result)


def test_reports_never_sent_and_equal_copies_are_encoded_afresh() -> None:
    lines = ReportLines()
    _stream(lines, REPORTS[:2])
    # An equal report that is another object (its duration differs: equality ignores nothing here
    # but the text must be its own), and reports never sent as progress.
    twin = _report(0, duration_ms=7.5)
    result = _result([twin, *REPORTS])
    assert lines.result_line(result) == result_line(result)


def test_other_results_and_long_runs_take_the_plain_path() -> None:
    lines = ReportLines()
    notice = PrerequisiteNotice(flow="f", execution_prerequisite="x")
    assert lines.result_line(notice) == result_line(notice)
    assert lines.progress_line(notice) == encode_line(event_to_wire(ProgressEvent(notice)))
    many = [_report(i) for i in range(RESULT_STEPS_ENCODED_IN_PLACE + 2)]
    _stream(lines, many)
    result = _result(many)
    assert lines.result_line(result) == result_line(result)
