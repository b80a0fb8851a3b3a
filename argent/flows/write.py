"""``Flow`` -> YAML text: the canonical minimal spelling, the recorder's append, step summaries.

``flow_to_yaml`` writes a whole flow the way upstream's serializer does (`steps` first,
`executionPrerequisite` only when set, multi-line text double-quoted with escapes — never a
``|``/``>`` block — so free text round-trips byte for byte). ``append_step`` edits an
existing file through ruamel's round-trip loader so comments and the author's formatting
elsewhere survive.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from attrs import evolve, frozen
from ruamel.yaml import YAML
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString
from ruamel.yaml.util import load_yaml_guess_indent

from argent import limits
from argent.errors import FlowError, FlowParseError
from argent.flows.canonical import num, selector_to_data
from argent.flows.directives.base import Step
from argent.flows.js import js_string
from argent.flows.model import Flow, ScriptStep, leading_step
from argent.flows.parse import (
    ParseStats,
    nests_compactly,
    nests_too_deeply,
    parse_flow_counted,
    plain_scalar_keeps_text,
    validate_flow,
)

__all__ = [
    "FlowDocument",
    "append_step",
    "flow_to_yaml",
    "selector_to_data",
    "step_to_data",
    "summarize_step",
]

_LINE_BREAKS = "\n\r\x85\u2028\u2029"


def step_to_data(step: Step) -> dict[str, Any]:
    """A step's canonical minimal YAML spelling as plain data (the directive's own writer).

    One directive key (plus `steps` for `when`, `args`/`delayMs` for `tool`), options only when set.
    """
    to_data = getattr(step, "to_data", None)
    if to_data is None:
        raise FlowError(f"Cannot serialize a flow step of type {type(step).__name__}")
    data: dict[str, Any] = to_data()
    return data


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
        return num(value) if math.isfinite(value) else value
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
    return FlowDocument.parse(text).append(step).text


# --------------------------------------------------------------------------------------------
# The recording document

#: The ruamel indentation of a document: (mapping, sequence, offset).
_Indent = tuple[int, int, int]
_DEFAULT_INDENT: _Indent = (2, 4, 2)


def _guess_indent(text: str) -> _Indent:
    try:
        _, indent, block_seq_indent = load_yaml_guess_indent(text)
    except Exception:  # the guess is a convenience; the text was parsed already
        indent = block_seq_indent = None
    if isinstance(indent, int) and isinstance(block_seq_indent, int) and indent > block_seq_indent:
        return (indent - block_seq_indent, indent, block_seq_indent)
    return _DEFAULT_INDENT


def _round_trip_append(text: str, item: Any) -> tuple[str, _Indent]:
    """``text`` with ``item`` appended through ruamel's round-trip loader, in the file's indentation
    and line breaks; and that indentation."""
    indent = _guess_indent(text)
    yaml = _new_yaml(*indent)
    doc = yaml.load(text)
    steps = doc["steps"]
    if hasattr(steps, "fa"):
        steps.fa.set_block_style()
    steps.append(item)
    result = _dump(yaml, doc)
    if "\r\n" in text:
        result = result.replace("\r\n", "\n").replace("\n", "\r\n")
    return result, indent


def _item_text(item: Any, indent: _Indent, crlf: bool) -> str | None:
    """The lines one `steps` item takes in a document of ``indent`` (as ruamel writes it there)."""
    out = _dump(_new_yaml(*indent), {"steps": [item]})
    if not out.startswith(_STEPS_LINE):
        return None
    piece = out[len(_STEPS_LINE) :]
    return piece.replace("\n", "\r\n") if crlf else piece


_STEPS_LINE = "steps:\n"


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (slice comparisons: the work stays in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _insertion_point(before: str, after: str, piece: str) -> int | None:
    """Where ``after`` is ``before`` with ``piece`` inserted at a line start (the latest such place),
    else None."""
    if len(after) != len(before) + len(piece):
        return None
    low = len(before) - _common_suffix(before, after)
    for at in range(min(_common_prefix(before, after), len(before)), low - 1, -1):
        if after[at : at + len(piece)] == piece and (at == 0 or before[at - 1] == "\n"):
            return at
    return None


@frozen
class _Splice:
    """Where the next step's lines go in a document whose appends ruamel would only insert."""

    at: int
    indent: _Indent
    crlf: bool


@frozen
class FlowDocument:
    """A flow file being recorded, kept in memory so that appending a step costs that step.

    ``parse`` validates the whole text once. The first appends go through ruamel's round trip, as
    editing a file by hand would (comments and formatting elsewhere kept); once an append is seen
    to be a pure insertion of the step's lines — the text is in ruamel's own layout — the document
    remembers where, and every later step is written alone and spliced in there. Only the new step
    is parsed then; what the whole file spends of the file-level limits (``ParseStats``) is kept
    and checked, and the e2e-prerequisite rule looks at the first non-echo step. Near a limit, or
    when the step alone does not parse, the whole new text is parsed, so every error is exactly the
    one ``parse_flow`` gives for the file. A document is a value: ``append`` returns a new one.
    """

    text: str
    #: The steps of the `steps` list (`when:` children not counted).
    steps: int = 0
    prerequisite: str = ""
    #: The first step that is not an echo (None: none yet).
    lead: Step | None = None
    stats: ParseStats = ParseStats()
    splice: _Splice | None = None

    @classmethod
    def parse(cls, text: str) -> FlowDocument:
        """The document of ``text``; its ``FlowParseError`` when it is not a valid flow."""
        if not text.strip():
            return cls(text=text)
        return cls._of(text, None)

    @classmethod
    def _of(cls, text: str, splice: _Splice | None) -> FlowDocument:
        flow, stats = parse_flow_counted(text)
        return cls(
            text=text,
            steps=len(flow.steps),
            prerequisite=flow.execution_prerequisite,
            lead=leading_step(flow.steps),
            stats=stats,
            splice=splice,
        )

    def append(self, step: Step) -> FlowDocument:
        """This document with ``step`` appended (see the class doc); raises what ``append_step`` raises."""
        item = _yaml_ready(step_to_data(step))
        if not self.text.strip():
            return FlowDocument._of(flow_to_yaml(Flow(steps=(step,))), None)
        if self.splice is None:
            return self._round_trip(item)
        return self._spliced(item)

    def _round_trip(self, item: Any) -> FlowDocument:
        result, indent = _round_trip_append(self.text, item)
        crlf = "\r\n" in self.text
        piece = _item_text(item, indent, crlf)
        document = FlowDocument._of(result, None)
        at = None if piece is None else _insertion_point(self.text, result, piece)
        if piece is None or at is None or _guess_indent(result) != indent:
            return document  # not yet in ruamel's own layout: the next append goes round again
        return evolve(document, splice=_Splice(at + len(piece), indent, crlf))

    def _spliced(self, item: Any) -> FlowDocument:
        splice = self.splice
        assert splice is not None
        piece = _item_text(item, splice.indent, splice.crlf)
        if piece is None:
            return self._round_trip(item)
        text = self.text[: splice.at] + piece + self.text[splice.at :]
        moved = _Splice(splice.at + len(piece), splice.indent, splice.crlf)
        checked = self._check_alone(piece, text)
        if checked is None:  # the whole file decides: its exact error, or the file as it is
            return FlowDocument._of(text, moved)
        new, stats = checked
        lead = self.lead
        if lead is None:
            lead = leading_step((new,))
            if lead is not None:  # the flow's first non-echo step: the e2e-prerequisite rule
                validate_flow(Flow(steps=(lead,), execution_prerequisite=self.prerequisite))
        return FlowDocument(
            text=text,
            steps=self.steps + 1,
            prerequisite=self.prerequisite,
            lead=lead,
            stats=stats,
            splice=moved,
        )

    def _check_alone(self, piece: str, text: str) -> tuple[Step, ParseStats] | None:
        """The new step parsed alone and the file's new totals, or None when only the whole file can
        say (the step alone does not parse, or a file-level limit is near)."""
        try:
            flow, alone = parse_flow_counted(_STEPS_LINE + piece.replace("\r\n", "\n"))
        except FlowParseError:
            return None
        if len(flow.steps) != 1:
            return None
        total = self.stats
        stats = ParseStats(
            nodes=total.nodes + alone.nodes - _MINI_DOCUMENT_NODES,
            items=total.items + 1,
            steps=total.steps + alone.steps,
            args=total.args + alone.args,
            brackets=total.brackets + piece.count("[") + piece.count("{"),
            dashes=total.dashes + piece.count("- ") + piece.count("? "),
        )
        if (
            len(text) > limits.MAX_FILE_BYTES
            or stats.nodes > limits.MAX_YAML_NODES
            or stats.items > limits.MAX_YAML_SEQUENCE_ITEMS
            or stats.steps > limits.MAX_STEPS_PER_FILE
            or stats.args > limits.MAX_ARGS_NODES_PER_FILE
            or (stats.brackets > limits.MAX_YAML_NESTING and nests_too_deeply(text))
            or (
                stats.dashes > limits.MAX_YAML_NESTING
                and nests_compactly(piece if total.dashes > limits.MAX_YAML_NESTING else text)
            )
        ):
            return None
        return flow.steps[0], stats


#: The values of ``steps:`` + one item besides the item's own: the root mapping, its key, the list.
_MINI_DOCUMENT_NODES = 3


# --------------------------------------------------------------------------------------------
# Summaries


def summarize_step(n: int, step: Step) -> str:
    """One line of a recording summary, e.g. ``1. tap: {"id":"add-to-cart"}`` (the directive's own)."""
    summary = getattr(step, "summary", None)
    if summary is None:
        raise FlowError(f"Cannot summarize a flow step of type {type(step).__name__}")
    text: str = summary()
    return f"{n}. {text}"


# --------------------------------------------------------------------------------------------
# A step on one line, as flow-style YAML (what a refusal of a step names)

#: How a check before the first step names a step it refuses (the link preflight, a policy, uploads).
STEP_LINE = "step {n} in {path}: {step} — {reason}"


_PLAIN = re.compile(r"^[A-Za-z0-9_./~@+$-](?:[A-Za-z0-9_./~@+$ :-]*[A-Za-z0-9_./~@+$-])?$")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "~"})


def _inline(value: Any) -> str:
    if value is None or isinstance(value, bool | int | float):
        return js_string(value)
    if isinstance(value, str):
        plain = (
            _PLAIN.match(value) is not None
            and ": " not in value
            and value.lower() not in _RESERVED
            and not re.fullmatch(r"[-+]?[0-9.]+(e[-+]?[0-9]+)?", value, re.IGNORECASE)
        )
        return value if plain else json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_inline(str(k))}: {_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_inline(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def render_step(step: Step) -> str:
    """A step as one line of flow-style YAML: ``script: { path: ../x.mjs }``, ``run: a.yaml``."""
    data = step_to_data(step)
    if isinstance(step, ScriptStep) and not isinstance(data.get("script"), Mapping):
        data = {"script": {"path": step.path}}
    return ", ".join(f"{key}: {_inline(value)}" for key, value in data.items() if key != "steps")
