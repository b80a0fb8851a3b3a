"""Human rendering of flow reports, and the one place where the CLI makes text safe to print.

A tool-server's answers are untrusted: a step reason, a tool description or an error message may
hold escape sequences that recolour, retitle or clear the terminal, or bidirectional overrides that
reorder what is shown. ``terminal_safe`` shows each such character as a ``\\uXXXX`` escape (valid
inside a JSON string too, so JSON output stays valid and decodes to the same value); ``echo`` and
``LiveStatus.line`` pass everything they print through it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import click

from argent.link.codec import read_answer, read_or_none
from argent.link.models import BaselineNotWritten, FlowRunResult, StepReport

#: Characters a terminal acts on or cannot print: C0 controls but newline and tab, DEL, C1 controls,
#: lone surrogates, the bidirectional marks and overrides, and the line and paragraph separators (an
#: editor or a CI log page breaks the line there).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on shown as ``\\uXXXX``."""
    return _UNSAFE.sub(_escape, text)


#: What a flow's path may not hold raw inside its ``[...] `` prefix: what ends the line or the prefix.
_PREFIX_UNSAFE = re.compile("[\n\t\\]]")


def line_prefix(rel: str, platform: str | None = None) -> str:
    """The ``[<flow path>] `` that starts each line of one flow when several run at once
    (INTERFACE.md §7), ``[<flow path> [<platform>]] `` for one run of a suite across platforms
    (§11). A newline, tab or ``]`` in the path shows as ``\\uXXXX``, so every line is one line and
    its prefix ends at its first ``]] `` or ``] ``: no flow's name can pose as another's."""
    on = f" [{platform}]" if platform else ""
    return f"[{terminal_safe(_PREFIX_UNSAFE.sub(_escape, rel))}{on}] "


def prefixed_lines(prefix: str, line: str) -> list[str]:
    """``line`` as printed under ``prefix`` (``line_prefix``): each physical line of it prefixed,
    its indent dropped, so a reason holding a newline cannot make a line that looks like another
    flow's; no prefix leaves it whole."""
    if not prefix:
        return [line]
    return [prefix + part.removeprefix("  ") for part in line.split("\n")]


def one_line(text: str) -> str:
    """``text`` with each newline shown as ``\\u000a``: a name or an id a tool-server sends (a device,
    a flow, a tool, an argument) stays inside the line that shows it, and cannot start one of its own."""
    return text.replace("\n", "\\u000a")


def echo(text: str = "", *, err: bool = False, report: bool = False) -> None:
    """Print one line, made terminal-safe: every line the CLI prints goes through here. A ``report``
    line (a step line, a summary) on stdout gets its status mark and verdict coloured when colour is
    wanted (``colour_wanted``); its text is the same either way."""
    safe = terminal_safe(text)
    if report and not err and colour_wanted(sys.stdout):
        click.echo(paint(safe), color=True)
    else:
        click.echo(safe, err=err)


#: Environment variables of the colour convention: NO_COLOR (no-color.org) wins over FORCE_COLOR.
NO_COLOR, FORCE_COLOR = "NO_COLOR", "FORCE_COLOR"
_OFF = ("", "0", "false", "no")


def colour_wanted(stream: Any) -> bool:
    """Colour for ``stream``: never with ``NO_COLOR`` set (to anything but empty), always with
    ``FORCE_COLOR`` set (but to 0 or false), else when the stream is a terminal (not a dumb one)."""
    if os.environ.get(NO_COLOR, ""):
        return False
    if os.environ.get(FORCE_COLOR, "").strip().lower() not in _OFF:
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty()) and os.environ.get("TERM", "") != "dumb"


#: The colour of each status mark, and of each verdict.
MARK_COLOURS = {"✓": "green", "✗": "red", "·": "yellow", "⚠": "yellow"}
VERDICT_COLOURS = {"PASS": "green", "FAIL": "red"}
#: A report line's own mark or verdict: after a ``[<flow>] `` prefix and the indent, before a space.
_MARK = re.compile(r"\A((?:\[[^\]\n]*\] )?[ ]*)([✓✗·⚠])(?= )")
_VERDICT = re.compile(r"\A((?:\[[^\]\n]*\] )?[ ]*)(PASS|FAIL)(?=[ (]|\Z)")


def paint(text: str) -> str:
    """``text`` (terminal-safe already) with the status mark or the verdict at the start of each of its
    lines styled; nothing else changes (``click.unstyle`` gives ``text`` back)."""
    lines = []
    for line in text.split("\n"):
        line = _MARK.sub(lambda m: m.group(1) + click.style(m.group(2), fg=MARK_COLOURS[m.group(2)]), line, 1)
        line = _VERDICT.sub(
            lambda m: m.group(1) + click.style(m.group(2), fg=VERDICT_COLOURS[m.group(2)], bold=True), line, 1
        )
        lines.append(line)
    return "\n".join(lines)


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as JSON text; characters a terminal acts on are ``\\uXXXX`` escapes (same value)."""
    return terminal_safe(json.dumps(value, indent=indent, ensure_ascii=False))


#: A baseline of a result that the client did not write (the command then exits 1).
BASELINE_NOT_WRITTEN = "✗ baseline not written: {path}: {reason}"


def read_step(step: Any) -> StepReport | None:
    """A step line of a report as the client reads it (``argent.link.codec``: nothing in it is
    required, a malformed field reads as empty); None when it is not an object."""
    return read_or_none(step, StepReport)


def read_report(result: Any) -> FlowRunResult | None:
    """A flow-execute result as a report: an object with a ``steps`` array and ``ok``, read as the
    client reads answers; None for any other result."""
    if isinstance(result, FlowRunResult):
        return result
    if not isinstance(result, dict) or not isinstance(result.get("steps"), list) or "ok" not in result:
        return None
    return read_or_none(result, FlowRunResult)


def _as_report(result: Any) -> FlowRunResult:
    """Any result read as a report (nothing in an answer is required; a non-object reads empty)."""
    if isinstance(result, FlowRunResult):
        return result
    return read_or_none(result, FlowRunResult) or read_answer({}, FlowRunResult)


def unwritten_baseline_lines(result: Any) -> list[str]:
    """One line per baseline of ``result`` the client did not write (a ``baselineWrites`` failure)."""
    return [
        BASELINE_NOT_WRITTEN.format(path=failure.path, reason=failure.error)
        for entry in _as_report(result).baseline_writes or []
        if (failure := read_or_none(entry, BaselineNotWritten)) is not None
    ]


GLYPHS = {"pass": "✓", "fail": "✗", "error": "✗", "skip": "·"}
MAX_INDENT_DEPTH = 20


def _indent(step: StepReport) -> str:
    return "  " * min(step.depth, MAX_INDENT_DEPTH) if step.depth > 0 else ""


def hang(text: str, under: str) -> str:
    """``text`` with each line after its first indented by ``under``: a reason or message that
    spans lines (a script's stderr tail) stays under its step, and cannot pose as a summary line
    or another step."""
    return text.replace("\n", "\n" + under)


def step_lines(step: Any, root_flow: str) -> list[str]:
    """The lines of one step report (an echo without message prints nothing). A line may hold
    newlines (a reason that spans lines); its continuation lines are indented under it."""
    report = step if isinstance(step, StepReport) else read_step(step)
    if report is None:
        return [f"  ? {step!r}"]
    indent = _indent(report)
    reason = report.reason
    if report.kind == "echo":
        if report.message is None:
            return []
        if report.status == "skip":
            text = f"  · {indent}› {report.message}" + (f" — {reason}" if reason else "")
            return [hang(text, "    " + indent)]
        return [hang(f"  {indent}› {report.message}", "    " + indent)]
    number = report.index + 1
    glyph = "⚠" if report.status == "pass" and report.warning else GLYPHS.get(report.status, "?")
    label = report.tool or report.target
    line = f"  {glyph} {number:>2} {indent}{report.kind or '?'}"
    if label:
        line += f" {label}"
    if report.flow and report.flow != root_flow:
        line += f" [{report.flow}]"
    if reason:
        line += f" — {reason}"
    under = " " * (5 + max(2, len(str(number)))) + indent
    lines = [hang(line, under)]
    if report.warning:
        lines.append(hang(f"{under}⚠ {report.warning}", under))
    for role, path in (report.artifacts or {}).items():
        lines.append(f"{under}{one_line(str(role))}: {one_line(str(path))}")
    return lines


def summary_line(result: Any, *, with_device: bool = True) -> str:
    report = _as_report(result)
    counts = [report.passed, report.failed, report.skipped, report.errored]
    head = "PASS" if report.ok else "FAIL"
    if with_device and report.device:
        head += f" (started on {one_line(report.device)})"
    warnings = sum(1 for s in report.steps if s.status == "pass" and s.warning)
    text = f"{head} — {counts[0]} passed, {counts[1]} failed, {counts[2]} skipped, {counts[3]} errored"
    if warnings:
        text += f", {warnings} warning{'s' if warnings != 1 else ''}"
    if report.ok and not any(counts):
        text += " (no test steps)"
    return text


def is_report(result: Any) -> bool:
    return read_report(result) is not None
