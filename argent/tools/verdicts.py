"""Tools' own verdicts on their results as flow steps.

A tool that reports a failure in its result rather than by raising (an unmet condition, a
sequence that stopped) declares its verdict on its ``ToolSpec``; a `tool:` step of a flow then
passes, fails or skips by it. The runner applies the verdict and knows no tool by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from argent.runner.run import ToolVerdict

__all__ = ["await_ui_element_verdict", "run_sequence_verdict"]


def await_ui_element_verdict(result: Any) -> ToolVerdict | None:
    """`await-ui-element` answers ``success: false`` (with a ``note``) when its condition was not met:
    the step fails, and its line carries the reason alone."""
    if not isinstance(result, Mapping) or result.get("success") is not False:
        return None
    note = result.get("note")
    reason = "await-ui-element condition not met" + (f": {note}" if note else "")
    return ToolVerdict("fail", reason, with_result=False)


def run_sequence_verdict(result: Any) -> ToolVerdict | None:
    """A `run-sequence` tool (upstream's: several interactions in one call) reports a stopped or
    cut-short sequence in its result, not by raising."""
    if not isinstance(result, Mapping):
        return None
    steps = result.get("steps")
    if not isinstance(steps, list):
        return None

    def count(key: str) -> Any:
        value = result.get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else 0

    for entry in steps:
        if isinstance(entry, Mapping) and isinstance(entry.get("error"), str):
            tool = entry.get("tool") if isinstance(entry.get("tool"), str) else "step"
            return ToolVerdict(
                "fail",
                f"run-sequence stopped at {tool} after {count('completed')} of {count('total')} steps: "
                f"{entry['error']}",
            )
    total = count("total")
    if total > 0 and len(steps) < total:
        return ToolVerdict("skip", f"run-sequence was aborted after {count('completed')} of {total} steps")
    return None
