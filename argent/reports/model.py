"""One flow of a suite as the reports see it: a ``FlowOutcome`` built from what the CLI got.

The CLI gets, per flow, either a ``FlowRunResult`` (its wire form) or the error of a call that
could not start the flow. ``outcome_of`` turns that into the four statuses of INTERFACE.md §7
(``passed``, ``failed``, ``error``, ``skipped``) with the step lines exactly as the CLI prints
them, so every report says what the terminal said.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias

from attrs import frozen

from argent.reports.render import is_report, step_lines, summary_line, unwritten_baseline_lines

FlowStatus: TypeAlias = Literal["passed", "failed", "error", "skipped"]
STATUSES: tuple[FlowStatus, ...] = ("passed", "failed", "error", "skipped")

RUN_ABORTED = "run aborted"
NOT_RUN = "not run (batch stopped)"
NO_REPORT = '"{stem}" did not produce a run report.'


@frozen
class FlowTarget:
    """One flow to run: by saved ``name`` or by absolute ``path``; with ``platform``, one run of it on
    that platform (a suite across engines runs each flow once per platform)."""

    path: str
    name: str | None = None
    platform: str | None = None

    @property
    def stem(self) -> str:
        return self.name or Path(self.path).stem


@frozen
class FlowOutcome:
    """What one flow of the run came to. ``rel`` is its path relative to the project root (``/``
    separators): the test name in JUnit and the label of every report."""

    position: int
    path: str
    rel: str
    status: FlowStatus
    seconds: float
    #: The FlowRunResult (wire form) when the flow ran; None when it could not start.
    result: dict[str, Any] | None = None
    #: Why the flow could not start (status ``error``), or why it was skipped.
    message: str | None = None
    #: The first step line that failed or errored, as the CLI prints it (status ``failed``).
    problem: str | None = None
    #: Every line the CLI prints for this flow's steps, then its summary line.
    lines: tuple[str, ...] = ()
    #: The platform of this run when the suite runs every flow once per platform.
    platform: str | None = None

    @property
    def steps(self) -> list[dict[str, Any]]:
        steps = self.result.get("steps") if self.result is not None else None
        return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def outcome_of(
    position: int,
    path: str,
    rel: str,
    seconds: float,
    *,
    stem: str,
    result: Any = None,
    error: str | None = None,
    refused: Sequence[str] = (),
    skipped: str | None = None,
    arrived: Sequence[Any] = (),
) -> FlowOutcome:
    """The outcome of one flow from the CLI's view of it: the call's ``result``, or the ``error``
    that kept the flow from starting, or ``skipped`` (the flow never ran, or was cut off after the
    steps ``arrived``); ``refused`` are the lines of client files the client would not write (they
    fail the flow, as they fail the command)."""
    seconds = max(0.0, seconds)
    if skipped is not None:
        cut = tuple(line for step in arrived for line in step_lines(step, stem))
        return FlowOutcome(position, path, rel, "skipped", seconds, message=skipped, lines=cut)
    if error is not None:
        return FlowOutcome(position, path, rel, "error", seconds, message=error)
    if not is_report(result):
        notice = result.get("notice") if isinstance(result, dict) else None
        why = notice if isinstance(notice, str) and notice else NO_REPORT.format(stem=stem)
        return FlowOutcome(position, path, rel, "error", seconds, message=why)
    flow = result.get("flow") if isinstance(result.get("flow"), str) else stem
    lines: list[str] = []
    problem: str | None = None
    for step in result["steps"]:
        shown = step_lines(step, flow)
        lines.extend(shown)
        if problem is None and isinstance(step, dict) and step.get("status") in ("fail", "error") and shown:
            problem = shown[0]
    extra = [*unwritten_baseline_lines(result), *refused]
    lines.extend(extra)
    lines.append(summary_line(result))
    if problem is None and extra:
        problem = extra[0]
    if result.get("aborted") is True:
        status: FlowStatus = "skipped"
        message: str | None = RUN_ABORTED
    else:
        status = "passed" if result.get("ok") is True and problem is None else "failed"
        message = None
        if status == "failed" and problem is None:
            problem = summary_line(result)
    return FlowOutcome(
        position,
        path,
        rel,
        status,
        seconds,
        result=result,
        message=message,
        problem=problem,
        lines=tuple(lines),
    )


def counts(outcomes: Sequence[FlowOutcome]) -> dict[FlowStatus, int]:
    """How many outcomes have each status."""
    tally: dict[FlowStatus, int] = dict.fromkeys(STATUSES, 0)
    for outcome in outcomes:
        tally[outcome.status] += 1
    return tally


#: The heading of the list a directory run that did not all pass ends with.
NOT_PASSED_HEADING = "Flows that did not pass:"


def first_problem(outcome: FlowOutcome) -> str:
    """The first line that says why a flow did not pass: its first failing step line as the CLI prints
    it; for a flow that could not start, its error (a check's heading joined with its first problem)."""
    if outcome.status == "failed":
        return (outcome.problem or "").strip().split("\n")[0]
    lines = [line.strip() for line in (outcome.message or "").split("\n") if line.strip()]
    if not lines:
        return ""
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def failed_flow_lines(outcomes: Sequence[FlowOutcome]) -> list[str]:
    """The flows that failed or errored, one line each with its first failing line (nothing when all
    passed): how a directory run ends, so the failures need no scrolling back."""
    bad = [outcome for outcome in outcomes if outcome.status in ("failed", "error")]
    if not bad:
        return []
    return [NOT_PASSED_HEADING] + [
        f"  ✗ {outcome.rel} ({outcome.status}): {first_problem(outcome)}" for outcome in bad
    ]
