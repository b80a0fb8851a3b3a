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

from argent.errors import FlowError
from argent.flows.canonical import num, selector_to_data
from argent.flows.directives.base import Step
from argent.flows.model import Flow
from argent.flows.parse import parse_flow, plain_scalar_keeps_text

__all__ = ["append_step", "flow_to_yaml", "selector_to_data", "step_to_data", "summarize_step"]

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


def summarize_step(n: int, step: Step) -> str:
    """One line of a recording summary, e.g. ``1. tap: {"id":"add-to-cart"}`` (the directive's own)."""
    summary = getattr(step, "summary", None)
    if summary is None:
        raise FlowError(f"Cannot summarize a flow step of type {type(step).__name__}")
    text: str = summary()
    return f"{n}. {text}"
