"""``Flow`` -> YAML text: the canonical minimal spelling, the recorder's append, step summaries.

``flow_to_yaml`` writes a whole flow the way upstream's serializer does (`steps` first,
`executionPrerequisite` only when set, multi-line text double-quoted with escapes — never a
``|``/``>`` block — so free text round-trips byte for byte). ``append_step`` edits an
existing file through ruamel's round-trip loader so comments and the author's formatting
elsewhere survive.
"""

from __future__ import annotations

import io
import math
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString
from ruamel.yaml.util import load_yaml_guess_indent

from argent import limits
from argent.errors import FlowError
from argent.flows.model import (
    AssertStep,
    AwaitStep,
    Condition,
    EchoStep,
    Flow,
    IdleStep,
    LaunchStep,
    LongPressStep,
    PinchStep,
    PlatformGuard,
    Point,
    RotateStep,
    RunStep,
    ScriptStep,
    ScrollToStep,
    Selector,
    SnapshotStep,
    Step,
    TapStep,
    Target,
    ToolStep,
    TypeStep,
    WaitStep,
    WhenStep,
)
from argent.flows.names import js_json, js_json_string, js_number, js_string
from argent.flows.parse import has_visible_text, js_to_number, parse_flow, plain_scalar_keeps_text

__all__ = ["append_step", "flow_to_yaml", "selector_to_data", "step_to_data", "summarize_step"]

_LINE_BREAKS = "\n\r\x85\u2028\u2029"
_LOSING = "Cannot serialize flow selector without losing constraints: "
_LOOSE = "Cannot serialize loose flow selector without changing its meaning: "


def _num(value: float | int) -> float | int:
    """A number as JavaScript would write it: integral floats lose their `.0`."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _selector_debug(sel: Selector) -> str:
    fields: dict[str, Any] = {}
    for name, value in (
        ("text", sel.text),
        ("textMatches", sel.text_matches),
        ("identifier", sel.identifier),
        ("role", sel.role),
    ):
        if value is not None:
            fields[name] = value
    if sel.any:
        fields["any"] = True
    if sel.loose:
        fields["loose"] = True
    for name, scope in (("within", sel.within), ("after", sel.after), ("next", sel.next)):
        if scope is not None:
            fields[name] = "…"
    return js_json(fields)


def selector_to_data(sel: Selector, _budget: list[int] | None = None) -> Any:
    """A selector's YAML spelling: a bare string when loose and text-only, else a map.

    The map writes `id` (never its alias `identifier`) and `text: { matches }` for a pattern.
    """
    budget = [0] if _budget is None else _budget
    debug = _selector_debug(sel)
    if sel.loose:
        extra = (
            sel.text_matches is not None
            or sel.identifier is not None
            or sel.role is not None
            or sel.any
            or sel.within is not None
            or sel.after is not None
            or sel.next is not None
        )
        if sel.text is None or extra:
            raise FlowError(f"{_LOOSE}{debug} — a loose selector is exactly one bare text")
        if not has_visible_text(sel.text):
            raise FlowError(f"{_LOSING}{debug} — its text has no visible character")
        return sel.text
    if sel.text is not None and sel.text_matches is not None:
        raise FlowError(f"{_LOSING}{debug} — it sets both text and textMatches")
    if sel.text is not None and not has_visible_text(sel.text):
        raise FlowError(f"{_LOSING}{debug} — its text has no visible character")
    for name, value in (
        ("identifier", sel.identifier),
        ("role", sel.role),
        ("textMatches", sel.text_matches),
    ):
        if value is not None and not value:
            raise FlowError(f"{_LOSING}{debug} — its {name} is empty")
    has_field = sel.text is not None or sel.text_matches is not None or sel.identifier is not None or sel.role
    has_scope = sel.within is not None or sel.after is not None or sel.next is not None
    if sel.any and (has_field or not has_scope):
        raise FlowError(f"{_LOSING}{debug} — `any: true` takes no text/id/role and needs a scope")
    if not has_field and not sel.any:
        raise FlowError(f"{_LOSING}{debug} — it names no text, id or role")
    data: dict[str, Any] = {}
    if sel.text is not None:
        data["text"] = sel.text
    if sel.text_matches is not None:
        data["text"] = {"matches": sel.text_matches}
    if sel.identifier is not None:
        data["id"] = sel.identifier
    if sel.role is not None:
        data["role"] = sel.role
    if sel.any:
        data["any"] = True
    for name, scope in (("within", sel.within), ("after", sel.after), ("next", sel.next)):
        if scope is not None:
            budget[0] += 1
            if budget[0] > limits.MAX_SELECTOR_SCOPES:
                raise FlowError(f"{_LOSING}{debug} — more than {limits.MAX_SELECTOR_SCOPES} scopes")
            data[name] = selector_to_data(scope, budget)
    return data


def _target_to_data(target: Target, where: str) -> Any:
    if isinstance(target, Point):
        if not (0 <= target.x <= 1 and 0 <= target.y <= 1):
            raise FlowError(f"{where}: coordinates are normalized 0–1 fractions of the screen, not pixels")
        return {"x": _num(target.x), "y": _num(target.y)}
    return selector_to_data(target)


def _condition_to_data(cond: Condition) -> dict[str, Any]:
    if cond.kind == "text":
        return {"text": {"in": selector_to_data(cond.selector), str(cond.mode): cond.expected}}
    return {cond.kind: selector_to_data(cond.selector)}


def _launch_to_data(step: LaunchStep) -> Any:
    if step.app is not None:
        return step.app
    data: dict[str, Any] = dict(step.apps)
    if step.chromium is not None:
        if step.chromium.args is None:
            data["chromium"] = step.chromium.path
        else:
            data["chromium"] = {"path": step.chromium.path, "args": list(step.chromium.args)}
    if not data:
        raise FlowError("Cannot serialize a launch step without an app id or a per-platform map")
    return data


def step_to_data(step: Step) -> dict[str, Any]:
    """A step's canonical minimal YAML spelling as plain data.

    One directive key (plus `steps` for `when`, `args`/`delayMs` for `tool`), options only when set.
    """
    if isinstance(step, EchoStep):
        return {"echo": step.message}
    if isinstance(step, LaunchStep):
        return {"launch": _launch_to_data(step)}
    if isinstance(step, RunStep):
        return {"run": step.target}
    if isinstance(step, WhenStep):
        guard: Any
        if isinstance(step.guard, PlatformGuard):
            guard = {"platform": step.guard.platform}
        else:
            guard = _condition_to_data(step.guard)
        return {"when": guard, "steps": [step_to_data(child) for child in step.steps]}
    if isinstance(step, ToolStep):
        data: dict[str, Any] = {"tool": step.tool}
        if step.args is not None and step.args != {}:
            data["args"] = step.args
        if step.delay_ms is not None:
            data["delayMs"] = step.delay_ms
        return data
    if isinstance(step, ScriptStep):
        if step.short and not step.args and step.timeout_ms is None:
            return {"script": step.path}
        body: dict[str, Any] = {"path": step.path}
        if step.args:
            body["args"] = list(step.args)
        if step.timeout_ms is not None:
            body["timeout"] = _num(step.timeout_ms)
        return {"script": body}
    if isinstance(step, TapStep):
        target = _target_to_data(step.target, "tap")
        if step.times is not None and step.times != 1:
            return {"tap": {"on": target, "times": step.times}}
        return {"tap": target}
    if isinstance(step, LongPressStep):
        target = _target_to_data(step.target, "long-press")
        if step.duration_ms is not None:
            return {"long-press": {"on": target, "duration": _num(step.duration_ms)}}
        return {"long-press": target}
    if isinstance(step, TypeStep):
        body = {"into": selector_to_data(step.into), "text": step.text}
        if not step.submit:
            body["submit"] = False
        return {"type": body}
    if isinstance(step, AwaitStep):
        body = _condition_to_data(step.condition)
        if step.timeout_ms is not None:
            body["timeout"] = _num(step.timeout_ms)
        return {"await": body}
    if isinstance(step, IdleStep):
        body = {"idle": True}
        if step.stable_for_ms is not None:
            body["stableFor"] = step.stable_for_ms
        if step.timeout_ms is not None:
            body["timeout"] = _num(step.timeout_ms)
        return {"await": body}
    if isinstance(step, AssertStep):
        return {"assert": _condition_to_data(step.condition)}
    if isinstance(step, WaitStep):
        return {"wait": _num(step.ms)}
    if isinstance(step, ScrollToStep):
        target_data = selector_to_data(step.target)
        if isinstance(target_data, str) and step.direction == "down" and step.within is None:
            return {"scroll-to": target_data}
        body = {"target": target_data, "direction": step.direction}
        if step.within is not None:
            body["within"] = selector_to_data(step.within)
        return {"scroll-to": body}
    if isinstance(step, PinchStep):
        body = {}
        if step.on is not None:
            body["on"] = selector_to_data(step.on)
        body["scale"] = _num(step.scale)
        return {"pinch": body}
    if isinstance(step, RotateStep):
        body = {}
        if step.on is not None:
            body["on"] = selector_to_data(step.on)
        body["by"] = _num(step.by)
        return {"rotate": body}
    if isinstance(step, SnapshotStep):
        if step.max_mismatch is None and step.crop_on is None:
            return {"snapshot": step.name}
        body = {"name": step.name}
        if step.max_mismatch is not None:
            body["maxMismatch"] = _num(step.max_mismatch)
        if step.crop_on is not None:
            body["cropOn"] = selector_to_data(step.crop_on)
        return {"snapshot": body}
    raise FlowError(f"Cannot serialize a flow step of type {type(step).__name__}")


# --------------------------------------------------------------------------------------------
# YAML text


def _yaml_ready(value: Any) -> Any:
    """Plain data with every string spelled so it reads back as the same string."""
    if isinstance(value, str):
        if any(char in value for char in _LINE_BREAKS):
            return DoubleQuotedScalarString(value)
        if not plain_scalar_keeps_text(value):
            return SingleQuotedScalarString(value)
        return value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return _num(value) if math.isfinite(value) else value
    if isinstance(value, dict):
        return {str(key): _yaml_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_yaml_ready(item) for item in value]
    return value


def _new_yaml(mapping: int = 2, sequence: int = 4, offset: int = 2) -> YAML:
    yaml = YAML(typ="rt")
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.width = 1_000_000_000
    yaml.preserve_quotes = True
    return yaml


def _dump(yaml: YAML, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


class _CanonicalRepresenter(RoundTripRepresenter):
    """Writes `null` rather than an empty value (a subclass: ruamel's registry is per class)."""

    def represent_none(self, data: Any) -> Any:
        return self.represent_scalar("tag:yaml.org,2002:null", "null")


_CanonicalRepresenter.add_representer(type(None), _CanonicalRepresenter.represent_none)


def flow_to_yaml(flow: Flow) -> str:
    """The canonical text of a flow: `steps` first, `executionPrerequisite` only when non-empty."""
    doc: dict[str, Any] = {"steps": [step_to_data(step) for step in flow.steps]}
    if flow.execution_prerequisite:
        doc["executionPrerequisite"] = flow.execution_prerequisite
    yaml = _new_yaml()
    yaml.Representer = _CanonicalRepresenter
    return _dump(yaml, _yaml_ready(doc))


def append_step(text: str, step: Step) -> str:
    """``text`` with ``step`` appended to its `steps`, comments and formatting elsewhere kept.

    The existing text must be a valid flow (else its ``FlowParseError``), and so must the
    result: appending a leading `launch` to a flow with a prerequisite raises the
    e2e-prerequisite error and nothing is returned. An empty file becomes a fresh document.
    """
    item = _yaml_ready(step_to_data(step))
    if not text.strip():
        result = flow_to_yaml(Flow(steps=(step,)))
        parse_flow(result)
        return result
    parse_flow(text)
    try:
        _, indent, block_seq_indent = load_yaml_guess_indent(text)
    except Exception:  # the guess is a convenience; parse_flow has already vouched for the text
        indent = block_seq_indent = None
    if isinstance(indent, int) and isinstance(block_seq_indent, int) and indent > block_seq_indent:
        yaml = _new_yaml(mapping=indent - block_seq_indent, sequence=indent, offset=block_seq_indent)
    else:
        yaml = _new_yaml()
    doc = yaml.load(text)
    steps = doc["steps"]
    if hasattr(steps, "fa"):
        steps.fa.set_block_style()
    steps.append(item)
    result = _dump(yaml, doc)
    if "\r\n" in text:
        result = result.replace("\r\n", "\n").replace("\n", "\r\n")
    parse_flow(result)
    return result


# --------------------------------------------------------------------------------------------
# Summaries


def _sel_json(sel: Selector) -> str:
    return js_json(selector_to_data(sel))


def _target_summary(target: Target) -> str:
    if isinstance(target, Point):
        return f"({js_number(target.x)}, {js_number(target.y)})"
    return _sel_json(target)


def _condition_summary(cond: Condition) -> str:
    sel = _sel_json(cond.selector)
    if cond.kind != "text":
        return f"{cond.kind} {sel}"
    expected = cond.expected or ""
    if cond.mode == "matches":
        return f"text {sel} matches /{expected}/"
    if cond.mode == "equals":
        return f"text {sel} == {js_json_string(expected)}"
    return f"text {sel} contains {js_json_string(expected)}"


def _js_truthy(value: Any) -> bool:
    if value is None or value is False or value == "":
        return False
    return not (isinstance(value, int | float) and (value == 0 or value != value))


def summarize_step(n: int, step: Step) -> str:
    """One line of a recording summary, e.g. ``1. tap: {"id":"add-to-cart"}``."""
    prefix = f"{n}. "
    if isinstance(step, EchoStep):
        return f"{prefix}echo: {step.message}"
    if isinstance(step, LaunchStep):
        data = _launch_to_data(step)
        return f"{prefix}launch: {data if isinstance(data, str) else js_json(data)}"
    if isinstance(step, RunStep):
        return f"{prefix}run: {step.target}"
    if isinstance(step, TapStep):
        times = f" ×{step.times}" if step.times is not None and step.times > 1 else ""
        return f"{prefix}tap: {_target_summary(step.target)}{times}"
    if isinstance(step, LongPressStep):
        duration = limits.DEFAULT_LONG_PRESS_MS if step.duration_ms is None else step.duration_ms
        return f"{prefix}long-press: {_target_summary(step.target)} for {js_number(duration)}ms"
    if isinstance(step, TypeStep):
        return f"{prefix}type: {_sel_json(step.into)} ← {js_json_string(step.text)}"
    if isinstance(step, AwaitStep):
        return f"{prefix}await: {_condition_summary(step.condition)}"
    if isinstance(step, IdleStep):
        return f"{prefix}await: screen idle"
    if isinstance(step, AssertStep):
        return f"{prefix}assert: {_condition_summary(step.condition)}"
    if isinstance(step, WaitStep):
        return f"{prefix}wait: {js_number(step.ms)}ms"
    if isinstance(step, WhenStep):
        if isinstance(step.guard, PlatformGuard):
            guard = f"platform {step.guard.platform}"
        else:
            guard = _condition_summary(step.guard)
        count = len(step.steps)
        return f"{prefix}when: {guard} ({count} step{'' if count == 1 else 's'})"
    if isinstance(step, ScrollToStep):
        return f"{prefix}scroll-to: {_sel_json(step.target)} ({step.direction})"
    if isinstance(step, PinchStep):
        on = f" on {_sel_json(step.on)}" if step.on is not None else ""
        return f"{prefix}pinch: scale {js_number(step.scale)}{on}"
    if isinstance(step, RotateStep):
        on = f" on {_sel_json(step.on)}" if step.on is not None else ""
        return f"{prefix}rotate: by {js_number(step.by)}°{on}"
    if isinstance(step, SnapshotStep):
        return f"{prefix}snapshot: {step.name}"
    if isinstance(step, ScriptStep):
        args = f" {js_json(list(step.args))}" if step.args else ""
        timeout = f" (timeout {js_number(step.timeout_ms)}ms)" if step.timeout_ms is not None else ""
        return f"{prefix}script: {step.path}{args}{timeout}"
    if isinstance(step, ToolStep):
        delay = ""
        number = js_to_number(step.delay_ms)
        if _js_truthy(step.delay_ms) and math.isfinite(number) and number >= 1:
            delay = f" (after {js_string(step.delay_ms)}ms)"
        return f"{prefix}tool: {js_string(step.tool)} {js_json(step.args)}{delay}"
    raise FlowError(f"Cannot summarize a flow step of type {type(step).__name__}")
