"""Human rendering of flow reports: one line per step, a summary line per flow."""

from __future__ import annotations

from typing import Any

GLYPHS = {"pass": "✓", "fail": "✗", "error": "✗", "skip": "·"}
MAX_INDENT_DEPTH = 20


def _indent(step: dict[str, Any]) -> str:
    depth = step.get("depth", 0)
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        return ""
    return "  " * min(depth, MAX_INDENT_DEPTH)


def step_lines(step: dict[str, Any], root_flow: str) -> list[str]:
    """The lines of one step report (an echo without message prints nothing)."""
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
    number = int(step.get("index", 0)) + 1
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
    for role, path in (step.get("artifacts") or {}).items():
        lines.append(f"{under}{role}: {path}")
    return lines


def summary_line(result: dict[str, Any], *, with_device: bool = True) -> str:
    ok = bool(result.get("ok"))
    counts = [int(result.get(k, 0)) for k in ("passed", "failed", "skipped", "errored")]
    head = "PASS" if ok else "FAIL"
    device = result.get("device")
    if with_device and device:
        head += f" (started on {device})"
    warnings = sum(1 for s in result.get("steps", []) if s.get("status") == "pass" and s.get("warning"))
    text = f"{head} — {counts[0]} passed, {counts[1]} failed, {counts[2]} skipped, {counts[3]} errored"
    if warnings:
        text += f", {warnings} warning{'s' if warnings != 1 else ''}"
    if ok and not any(counts):
        text += " (no test steps)"
    return text


def is_report(result: Any) -> bool:
    return isinstance(result, dict) and isinstance(result.get("steps"), list) and "ok" in result
