"""Flow names, baseline keys and the display labels of steps, selectors and conditions.

Also the few JavaScript formatting rules the flow language inherits from upstream
(``String(number)``, ``JSON.stringify``), because labels, messages and summaries must
read exactly like the original's.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from argent.errors import FlowError
from argent.flows.model import (
    AssertStep,
    AwaitStep,
    Condition,
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
    TypeStep,
    WhenStep,
)

# `\Z`, not `$`: Python's `$` also matches before a trailing newline, JavaScript's does not.
#: A flow name (also a snapshot name): letters, digits, underscore, hyphen.
FLOW_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+\Z")
#: A flow file name: a flow name plus the lowercase `.yaml` extension.
FLOW_FILE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+\.yaml\Z")

FLOW_NAME_PATTERN_TEXT = "/^[A-Za-z0-9_-]+$/"
FLOW_FILE_NAME_PATTERN_TEXT = "/^[A-Za-z0-9_-]+\\.yaml$/"

_YAML_EXT = ".yaml"


def is_safe_flow_name(name: object) -> bool:
    """True when ``name`` can name a flow file and a baseline directory."""
    return isinstance(name, str) and FLOW_NAME_RE.match(name) is not None


def assert_safe_flow_name(name: str) -> None:
    """Refuse a flow name that could escape the flows directory (``FLOW_NAME_INVALID``)."""
    if not is_safe_flow_name(name):
        raise FlowError(
            f'Invalid flow name "{name}". Flow names must match {FLOW_NAME_PATTERN_TEXT} '
            '(letters, digits, underscore, hyphen — no path separators, no "..", no spaces).',
            error_code="FLOW_NAME_INVALID",
        )


def _stem(base: str) -> str:
    """A file's name without its `.yaml` extension (a bare `.yaml` keeps its name, like node's basename)."""
    if base.endswith(_YAML_EXT) and len(base) > len(_YAML_EXT):
        return base[: -len(_YAML_EXT)]
    return base


def baseline_key(canonical_path: str, written_name: str) -> str:
    """The directory under `__baselines__/` for a root flow.

    The canonical root file's stem when it is a safe flow name, else the name as written.
    """
    stem = _stem(os.path.basename(os.fspath(canonical_path)))
    if is_safe_flow_name(stem):
        return stem
    return written_name


def fragment_display_name(target: str, root_name: str) -> str:
    """The `flow` label of a `run:` fragment: its stem, never the root's own name.

    When the fragment's stem equals the root flow's name, the as-written target minus
    `.yaml` is used (``helpers/login``), or ``./{stem}`` for a bare file name.
    """
    base = target.rsplit("/", 1)[-1]
    stem = _stem(base)
    if stem != root_name:
        return stem
    if "/" in target:
        return target[: -len(_YAML_EXT)] if target.endswith(_YAML_EXT) else target
    return f"./{stem}"


# --------------------------------------------------------------------------------------------
# JavaScript formatting


def js_number(value: float | int) -> str:
    """``String(n)`` of a JavaScript number (shortest round-trip digits, JS exponent rules)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -(2**53) < value < 2**53:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "Infinity" if value > 0 else "-Infinity"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    exp = int(exp_text) if exp_text else 0
    int_part, _, frac = mantissa.partition(".")
    digits = int_part + frac
    exp -= len(frac)
    stripped = digits.lstrip("0")
    trimmed = stripped.rstrip("0")
    exp += len(stripped) - len(trimmed)
    k = len(trimmed)
    n = exp + k
    if k <= n <= 21:
        body = trimmed + "0" * (n - k)
    elif 0 < n <= 21:
        body = trimmed[:n] + "." + trimmed[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + trimmed
    else:
        e = n - 1
        e_text = ("+" if e >= 0 else "-") + str(abs(e))
        body = trimmed + "e" + e_text if k == 1 else trimmed[0] + "." + trimmed[1:] + "e" + e_text
    return sign + body


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def js_json_string(text: str) -> str:
    """``JSON.stringify`` of a string (non-ASCII kept, lone surrogates escaped)."""
    out = json.dumps(text, ensure_ascii=False)
    if _SURROGATE_RE.search(out):
        out = _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def js_json(value: Any) -> str:
    """Compact ``JSON.stringify`` of plain data (dict/list/str/number/bool/None)."""
    parts: list[str] = []
    _js_json_into(value, parts)
    return "".join(parts)


def _js_json_into(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(js_json_string(value))
    elif isinstance(value, int | float):
        out.append(js_number(value) if math.isfinite(value) else "null")
    elif isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                out.append(",")
            out.append(js_json_string(str(key)))
            out.append(":")
            _js_json_into(item, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _js_json_into(item, out)
        out.append("]")
    else:
        out.append(js_json_string(str(value)))


def js_string(value: Any) -> str:
    """``String(value)`` of plain data (arrays join with `,`, objects are `[object Object]`)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list | tuple):
        return ",".join("" if item is None else js_string(item) for item in value)
    return str(value)


# --------------------------------------------------------------------------------------------
# Labels


def selector_label(sel: Selector) -> str:
    """The report `target` spelling of a selector: `*`, `"text"`, `/re/`, `id=…`, `role=…`, scopes."""
    parts: list[str] = []
    if sel.any:
        parts.append("*")
    if sel.text is not None:
        parts.append(js_json_string(sel.text))
    if sel.text_matches is not None:
        parts.append(f"/{sel.text_matches}/")
    if sel.identifier is not None:
        parts.append(f"id={sel.identifier}")
    if sel.role is not None:
        parts.append(f"role={sel.role}")
    for relation, scope in (("within", sel.within), ("after", sel.after), ("next", sel.next)):
        if scope is not None:
            parts.append(f"{relation} ({selector_label(scope)})")
    return " ".join(parts)


def describe_selector(sel: Selector) -> str:
    """The runtime-reason spelling: `text="…"`, `id="…"`, `role="…"`, `text=/…/`, `*`, scopes."""
    parts: list[str] = []
    if sel.any:
        parts.append("*")
    if sel.text is not None:
        parts.append(f"text={js_json_string(sel.text)}")
    if sel.text_matches is not None:
        parts.append(f"text=/{sel.text_matches}/")
    if sel.identifier is not None:
        parts.append(f"id={js_json_string(sel.identifier)}")
    if sel.role is not None:
        parts.append(f"role={js_json_string(sel.role)}")
    for relation, scope in (("within", sel.within), ("after", sel.after), ("next", sel.next)):
        if scope is not None:
            parts.append(f"{relation} ({describe_selector(scope)})")
    return " ".join(parts)


def _condition_text(cond: Condition, describe: Any) -> str:
    sel = describe(cond.selector)
    if cond.kind != "text":
        return f"{cond.kind} {sel}"
    if cond.mode == "matches":
        return f"{sel} matches /{cond.expected}/"
    return f"{sel} {cond.mode} {js_json_string(cond.expected or '')}"


def condition_label(cond: Condition | PlatformGuard) -> str:
    """A guard or condition as runtime reasons spell it: `visible text="What's new"`, `platform ios`."""
    if isinstance(cond, PlatformGuard):
        return f"platform {cond.platform}"
    return _condition_text(cond, describe_selector)


def target_label(target: Selector | Point) -> str:
    """A gesture target: a selector label or `(x, y)`."""
    if isinstance(target, Point):
        return f"({js_number(target.x)}, {js_number(target.y)})"
    return selector_label(target)


def step_target_label(step: Step) -> str | None:
    """The `target` of a step report (none for echo, tool, launch, wait and idle)."""
    if isinstance(step, TapStep | LongPressStep):
        return target_label(step.target)
    if isinstance(step, TypeStep):
        return f"into {selector_label(step.into)}"
    if isinstance(step, AwaitStep | AssertStep):
        return _condition_text(step.condition, selector_label)
    if isinstance(step, WhenStep):
        if isinstance(step.guard, PlatformGuard):
            return f"platform {step.guard.platform}"
        return _condition_text(step.guard, selector_label)
    if isinstance(step, ScrollToStep):
        label = selector_label(step.target)
        return label if step.direction == "down" else f"{label} ({step.direction})"
    if isinstance(step, PinchStep):
        scale = f"scale {js_number(step.scale)}"
        return f"{selector_label(step.on)} ({scale})" if step.on is not None else scale
    if isinstance(step, RotateStep):
        by = f"by {js_number(step.by)}°"
        return f"{selector_label(step.on)} ({by})" if step.on is not None else by
    if isinstance(step, SnapshotStep):
        name = js_json_string(step.name)
        return f"{name} cropOn {selector_label(step.crop_on)}" if step.crop_on is not None else name
    if isinstance(step, RunStep):
        return step.target
    if isinstance(step, ScriptStep):
        return step.path
    return None
