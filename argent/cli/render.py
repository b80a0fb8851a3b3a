"""Human rendering of flow reports, and the one place where the CLI makes text safe to print.

A tool-server's answers are untrusted: a step reason, a tool description or an error message may
hold escape sequences that recolour, retitle or clear the terminal, or bidirectional overrides that
reorder what is shown. ``terminal_safe`` shows each such character as a ``\\uXXXX`` escape (valid
inside a JSON string too, so JSON output stays valid and decodes to the same value); ``echo`` and
``LiveStatus.line`` pass everything they print through it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click

#: Characters a terminal acts on or cannot print: C0 controls but newline and tab, DEL, C1 controls,
#: lone surrogates, and the bidirectional marks and overrides.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on shown as ``\\uXXXX``."""
    return _UNSAFE.sub(_escape, text)


def echo(text: str = "", *, err: bool = False) -> None:
    """Print one line, made terminal-safe: every line the CLI prints goes through here."""
    click.echo(terminal_safe(text), err=err)


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as JSON text; characters a terminal acts on are ``\\uXXXX`` escapes (same value)."""
    return terminal_safe(json.dumps(value, indent=indent, ensure_ascii=False))


def _int(value: Any, default: int = 0) -> int:
    """A count or an index from a report; anything that is not an integer counts as ``default``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


#: A baseline of a result that the client did not write (the command then exits 1).
BASELINE_NOT_WRITTEN = "✗ baseline not written: {path}: {reason}"


def unwritten_baseline_lines(result: Any) -> list[str]:
    """One line per baseline of ``result`` the client did not write (a ``baselineWrites`` error)."""
    entries = result.get("baselineWrites") if isinstance(result, dict) else None
    return [
        BASELINE_NOT_WRITTEN.format(path=entry.get("path"), reason=entry["error"])
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict) and isinstance(entry.get("error"), str)
    ]


GLYPHS = {"pass": "✓", "fail": "✗", "error": "✗", "skip": "·"}
MAX_INDENT_DEPTH = 20


def _indent(step: dict[str, Any]) -> str:
    depth = step.get("depth", 0)
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        return ""
    return "  " * min(depth, MAX_INDENT_DEPTH)


def step_lines(step: Any, root_flow: str) -> list[str]:
    """The lines of one step report (an echo without message prints nothing)."""
    if not isinstance(step, dict):
        return [f"  ? {step!r}"]
    indent = _indent(step)
    status = step.get("status", "")
    reason = step.get("reason")
    if step.get("kind") == "echo":
        message = step.get("message")
        if message is None:
            return []
        if status == "skip":
            return [f"  · {indent}› {message}" + (f" — {reason}" if reason else "")]
        return [f"  {indent}› {message}"]
    number = _int(step.get("index")) + 1
    glyph = "⚠" if status == "pass" and step.get("warning") else GLYPHS.get(status, "?")
    label = step.get("tool") or step.get("target")
    line = f"  {glyph} {number:>2} {indent}{step.get('kind', '?')}"
    if label:
        line += f" {label}"
    flow = step.get("flow")
    if flow and flow != root_flow:
        line += f" [{flow}]"
    if reason:
        line += f" — {reason}"
    lines = [line]
    under = " " * (5 + max(2, len(str(number)))) + indent
    if step.get("warning"):
        lines.append(f"{under}⚠ {step['warning']}")
    artifacts = step.get("artifacts")
    for role, path in (artifacts if isinstance(artifacts, dict) else {}).items():
        lines.append(f"{under}{role}: {path}")
    return lines


def summary_line(result: dict[str, Any], *, with_device: bool = True) -> str:
    ok = bool(result.get("ok"))
    counts = [_int(result.get(k)) for k in ("passed", "failed", "skipped", "errored")]
    head = "PASS" if ok else "FAIL"
    device = result.get("device")
    if with_device and device:
        head += f" (started on {device})"
    steps = [s for s in result.get("steps") or [] if isinstance(s, dict)]
    warnings = sum(1 for s in steps if s.get("status") == "pass" and s.get("warning"))
    text = f"{head} — {counts[0]} passed, {counts[1]} failed, {counts[2]} skipped, {counts[3]} errored"
    if warnings:
        text += f", {warnings} warning{'s' if warnings != 1 else ''}"
    if ok and not any(counts):
        text += " (no test steps)"
    return text


def is_report(result: Any) -> bool:
    return isinstance(result, dict) and isinstance(result.get("steps"), list) and "ok" in result
