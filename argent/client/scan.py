"""What a flow file refers to: its `run:` targets, `tool:` steps and snapshot names.

The client reads these from every flow it collects. ``refs_of_text`` first tries a quick line
scan that accepts only a strict subset of the flow language — block-style steps, one line each,
with `run:` targets and snapshot names as plain scalars and no `tool:` step — and proves for such
a file that every `- key: value` line is a step. Anything else (a `tool:` step, a block scalar,
an anchor, a multi-line value, a tab, unbalanced quotes or brackets) falls back to the real
parser, so a file the scan accepts yields what ``parse_flow`` would.
"""

from __future__ import annotations

import re
from typing import Any

from attrs import frozen

from argent.flows.model import Flow, RunStep, SnapshotStep, ToolStep, walk_steps
from argent.flows.parse import DIRECTIVE_KEYS


@frozen
class FlowRefs:
    """The references of one flow file, in authored order (`when:` blocks included)."""

    run_targets: tuple[str, ...] = ()
    tool_steps: tuple[tuple[str, Any], ...] = ()
    snapshots: tuple[str, ...] = ()


def refs_of_flow(flow: Flow) -> FlowRefs:
    runs: list[str] = []
    tools: list[tuple[str, Any]] = []
    snapshots: list[str] = []
    for step in walk_steps(flow.steps):
        if isinstance(step, RunStep):
            runs.append(step.target)
        elif isinstance(step, ToolStep):
            tools.append((step.tool if isinstance(step.tool, str) else str(step.tool), step.args))
        elif isinstance(step, SnapshotStep):
            snapshots.append(step.name)
    return FlowRefs(tuple(runs), tuple(tools), tuple(snapshots))


def refs_of_text(text: str) -> FlowRefs | None:
    """The references of a flow file's text; None when it is not a flow."""
    quick = quick_refs(text)
    if quick is not None:
        return quick
    from argent.errors import FlowError
    from argent.flows.parse import parse_flow

    try:
        return refs_of_flow(parse_flow(text))
    except (FlowError, RecursionError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# The quick scan

#: Directives whose one-line value the scan may skip (no reference in them).
_PLAIN_DIRECTIVES = frozenset(DIRECTIVE_KEYS) - {"run", "when", "tool", "snapshot"}
_ITEM = re.compile(r"^( *)- ([A-Za-z-]+):(?: +(.*?))? *$")
_NESTED_STEPS = re.compile(r"^( +)steps: *(?:#.*)?$")
_TOP_STEPS = re.compile(r"^steps: *(?:#.*)?$")
_TOP_PREREQUISITE = re.compile(r"^executionPrerequisite:(?: +(.*?))? *$")
_RUN_TARGET = re.compile(r"^((?:(?:\.\.?|[A-Za-z0-9_.-]+)/)*[A-Za-z0-9_-]+\.yaml)(?: +#.*)?$")
_SNAPSHOT_NAME = re.compile(r"^([A-Za-z0-9_-]+)(?: +#.*)?$")
_DOUBLE = re.compile(r'^"(?:[^"\\]|\\.)*"(?: +#.*)?$')
_SINGLE = re.compile(r"^'(?:[^']|'')*'(?: +#.*)?$")
_NUMBERISH = re.compile(
    r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$|^0[xo][0-9a-fA-F]+$"
)
_UNSAFE_START = frozenset("|>&*!%@`?:-,]}#")
_RESERVED = frozenset({"null", "true", "false", "~", "yes", "no", "on", "off", "nan", "inf"})


_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _balanced_flow(value: str) -> bool:
    """A flow collection that opens and closes on this line (quotes respected), then a comment."""
    if '"' not in value and "'" not in value and "&" not in value and "*" not in value and "!" not in value:
        body = value.split(" #", 1)[0].rstrip()
        if not body.endswith(("}", "]")):
            return False
        depth = 0
        brackets = _NOT_BRACKET.sub("", body)
        for index, char in enumerate(brackets):
            depth += 1 if char in "[{" else -1
            if depth <= 0 and index != len(brackets) - 1:
                return False
        return depth == 0
    depth = 0
    i = 0
    n = len(value)
    while i < n:
        char = value[i]
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth < 0:
                return False
            if depth == 0:
                rest = value[i + 1 :].strip()
                return not rest or rest.startswith("#")
        elif char == '"':
            end = i + 1
            while end < n and value[end] != '"':
                end += 2 if value[end] == "\\" else 1
            if end >= n:
                return False
            i = end
        elif char == "'":
            end = value.find("'", i + 1)
            while end != -1 and end + 1 < n and value[end + 1] == "'":
                end = value.find("'", end + 2)
            if end == -1:
                return False
            i = end
        elif char in "&*!" and (i == 0 or value[i - 1] in " [{,"):
            return False  # anchors, aliases and tags: leave them to the parser
        i += 1
    return False


def _safe_value(value: str) -> bool:
    if not value:
        return False
    first = value[0]
    if first in _UNSAFE_START:
        return False
    if first == '"':
        return _DOUBLE.match(value) is not None
    if first == "'":
        return _SINGLE.match(value) is not None
    if first in "[{":
        return _balanced_flow(value)
    return True


_DIRECTIVE_KEYS = "|".join(sorted(_PLAIN_DIRECTIVES, key=len, reverse=True))
_TARGET = r"(?:(?:\.\.?|[A-Za-z0-9_.-]+)/)*[A-Za-z0-9_-]+\.yaml"
#: One step of the simplest files: a value without quotes, comments, anchors or nested brackets.
_SIMPLE_VALUE = r"(?:[^\s\"'#&*!|>%@`{}\[\],?:-][^\n\"'#{}\[\]]*|\{[^\n{}\[\]\"'#&*!|>]*\})"
_SIMPLE_ITEM = rf"(?:(?:{_DIRECTIVE_KEYS}): {_SIMPLE_VALUE}|run: {_TARGET}|snapshot: [A-Za-z0-9_-]+)"
_SIMPLE_FILE = re.compile(rf"steps:\n(?P<i> *)- {_SIMPLE_ITEM} *\n(?:(?P=i)- {_SIMPLE_ITEM} *\n)*")
_SIMPLE_RUN = re.compile(rf"^ *- run: ({_TARGET}) *$", re.MULTILINE)
_SIMPLE_SNAPSHOT = re.compile(r"^ *- snapshot: ([A-Za-z0-9_-]+) *$", re.MULTILINE)


def _simple_refs(text: str) -> FlowRefs | None:
    """The whole-file fast path: `steps:` and one-line items at one indent, nothing else."""
    if _SIMPLE_FILE.fullmatch(text) is None:
        return None
    snapshots = tuple(_SIMPLE_SNAPSHOT.findall(text))
    for name in snapshots:
        if name.lower() in _RESERVED or _NUMBERISH.match(name):
            return None
    return FlowRefs(tuple(_SIMPLE_RUN.findall(text)), (), snapshots)


def quick_refs(text: str) -> FlowRefs | None:
    """References of a file in the strict one-line-per-step subset; None when it is not one."""
    simple = _simple_refs(text)
    if simple is not None:
        return simple
    if "\t" in text or text.startswith("\ufeff"):
        return None
    runs: list[str] = []
    snapshots: list[str] = []
    stack: list[int] = []  # the indents of the open step lists
    first_item_min: int | None = None  # the next item opens a list at this indent or deeper
    nested_steps_at: int | None = None  # a `when:` item wants its `steps:` key here
    seen_steps = False
    for raw in text.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line or line[0] == "#" or (line[0] == " " and (not line.strip() or line.lstrip()[0] == "#")):
            continue
        if nested_steps_at is not None:
            nested = _NESTED_STEPS.match(line)
            if nested is None or len(nested.group(1)) != nested_steps_at:
                return None
            first_item_min, nested_steps_at = nested_steps_at, None
            continue
        if not line.startswith((" ", "- ")):
            if _TOP_STEPS.match(line):
                if seen_steps:
                    return None
                seen_steps = True
                stack, first_item_min = [], 0
                continue
            prerequisite = _TOP_PREREQUISITE.match(line)
            if prerequisite is None or not _safe_value(prerequisite.group(1) or "x"):
                return None
            stack, first_item_min = [], None
            continue
        item = _ITEM.match(line)
        if item is None:
            return None
        indent = len(item.group(1))
        if first_item_min is not None:
            if indent < first_item_min:
                return None
            stack.append(indent)
            first_item_min = None
        else:
            while stack and indent < stack[-1]:
                stack.pop()
            if not stack or indent != stack[-1]:
                return None
        key, value = item.group(2), item.group(3) or ""
        if key == "run":
            target = _RUN_TARGET.match(value)
            if target is None:
                return None
            runs.append(target.group(1))
        elif key == "snapshot":
            name = _SNAPSHOT_NAME.match(value)
            if name is None or name.group(1).lower() in _RESERVED or _NUMBERISH.match(name.group(1)):
                return None
            snapshots.append(name.group(1))
        elif key == "when":
            if not value.startswith("{") or not _balanced_flow(value):
                return None
            nested_steps_at = indent + 2
        elif key in _PLAIN_DIRECTIVES:
            if not _safe_value(value):
                return None
        else:
            return None  # `tool:` (its args matter) and anything unknown: the parser decides
    if nested_steps_at is not None or first_item_min not in (None, 0) or not seen_steps:
        return None
    return FlowRefs(tuple(runs), (), tuple(snapshots))
