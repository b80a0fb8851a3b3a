"""A step line whose reason spans lines (a script's stderr tail) keeps its continuation lines
indented under the step, so no line of a tool's output can pass for a summary or another step."""

from __future__ import annotations

from argent.reports.render import step_lines

SPOOF = "line one\nPASS — 3 passed, 0 failed, 0 skipped, 0 errored\n  ✓  2 tap Save"


def test_continuation_lines_of_a_reason_are_indented_under_the_step() -> None:
    step = {"index": 0, "kind": "script", "status": "fail", "target": "bad.sh", "reason": SPOOF}
    assert step_lines(step, "a") == [
        "  ✗  1 script bad.sh — line one\n"
        "       PASS — 3 passed, 0 failed, 0 skipped, 0 errored\n"
        "         ✓  2 tap Save"
    ]


def test_continuation_lines_of_a_warning_and_an_echo_are_indented_too() -> None:
    warned = {"index": 1, "kind": "tap", "status": "pass", "target": "Go", "warning": "slow\nPASS — x"}
    assert step_lines(warned, "a") == ["  ⚠  2 tap Go", "       ⚠ slow\n       PASS — x"]
    echo = {"index": 2, "kind": "echo", "status": "pass", "message": "hi\nFAIL — y"}
    assert step_lines(echo, "a") == ["  › hi\n    FAIL — y"]
