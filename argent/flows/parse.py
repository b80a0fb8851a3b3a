"""Flow YAML text -> ``Flow``: the grammar of the flow language and its exact messages.

The text is read by ruamel.yaml's round-trip loader in YAML 1.2 mode, but only up to the
*node graph* (``compose``): aliases stay shared nodes there (cycles included) and every node
keeps its line. The validator walks that graph once, building the step classes of
``argent.flows.model`` directly, so

* a cyclic alias reaches the structured `when:`-depth (20) and selector-scope (6) limits
  instead of a recursion crash (ruamel's own constructor would silently turn the cycle into
  ``null``);
* an alias bomb is counted as it expands (steps against ``MAX_STEPS_PER_FILE``, `tool:` args
  against ``MAX_ARGS_NODES``) and never materialized;
* plain scalars are resolved with the YAML 1.2 *core* schema of the upstream library
  (``yes``/``on`` are strings; ``1_000``, ``0b1`` and ``2001-01-01`` are strings too), and an
  integer beyond a double is ±Infinity, as JavaScript's ``Number`` reads it.

The composer itself refuses, as it reads, what no flow has: a mapping, a list or a file far
larger than any flow (``MAX_YAML_MAPPING_KEYS`` / ``MAX_YAML_SEQUENCE_ITEMS`` / ``MAX_YAML_NODES``:
it costs about 0.1 ms per value, so the refusal must come before the rest of the file is read),
a tag outside the YAML 1.2 core schema, and an integer of more than ``MAX_INTEGER_DIGITS`` digits.
Callers on the event loop parse through ``argent.flows.load.parse_flow_async`` (a thread).

With ``ruamel.yaml.clib`` installed the events come from libyaml (``_CComposer``): the same composer
and graph, without the pure-Python scanner; a text it reads otherwise, or any error, goes through
the pure path, so every refusal keeps its words.

The step grammar comes from the directive table (``argent.flows.directives``): the validator
finds the entry's one directive key and hands the value to that directive's grammar, which builds
the step through the validator's node access and shared pieces (selectors, targets, conditions).

Every failure is one ``FlowParseError``: file-level problems carry ``FLOW_FILE_INVALID``,
problems of one step ``FLOW_ENTRY_UNRECOGNIZED`` and end in `` (step {n}, line {L})``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

from attrs import frozen
from ruamel.yaml import YAML
from ruamel.yaml import main as _ruamel_main
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
)
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.tag import Tag

from argent import limits
from argent.errors import (
    FLOW_E2E_HAS_PREREQUISITE,
    FLOW_ENTRY_UNRECOGNIZED,
    FLOW_FILE_INVALID,
    FlowParseError,
    YamlSyntax,
)
from argent.flows.directives import BY_KEY, DIRECTIVE_KEYS, EntryAt
from argent.flows.grammar import (
    CONDITION_KEYS,
    MISSING,
    SELECTOR_FIELDS,
    SELECTOR_KEYS,
    TEXT_MODES,
    Reject,
    Wrap,
    css_problem,
    did_you_mean,
    edit_distance,
    only_keys,
    regex_problem,
    unknown_keys,
    unknown_with_allowed,
)
from argent.flows.js import (
    JS_WS,
    has_visible_text,
    is_number,
    js_integer,
    js_string,
    js_to_number,
    js_to_number_text,
    tidy,
)
from argent.flows.model import Flow, Step
from argent.flows.names import js_json, js_json_string
from argent.flows.values import Condition, Point, Selector, Target

__all__ = [
    "DIRECTIVE_KEYS",
    "SELECTOR_KEYS",
    "ParseStats",
    "did_you_mean",
    "edit_distance",
    "has_visible_text",
    "js_to_number",
    "nests_compactly",
    "nests_too_deeply",
    "parse_flow",
    "parse_flow_counted",
    "plain_scalar_keeps_text",
    "regex_problem",
    "validate_flow",
]

_SCOPES: tuple[str, ...] = ("within", "after", "next")
_TOP_LEVEL_KEYS: tuple[str, ...] = ("executionPrerequisite", "steps")

_E2E_PREREQUISITE_MESSAGE = (
    "A flow that starts with a launch step must not declare executionPrerequisite — it launches its own "
    "app and controls its start state. Drop the leading launch to make it a fragment, or drop "
    "executionPrerequisite."
)
_NOT_A_FLOW = "Invalid flow file: expected an object with a steps array"
_TOO_DEEP = (
    "Invalid flow file: the YAML nests too deeply — a flow needs only a few levels of nesting; "
    "check for runaway brackets or an ever-growing indentation"
)

# --------------------------------------------------------------------------------------------
# Scalars: the YAML 1.2 core schema of the upstream library

_CORE_CONSTANTS: dict[str, Any] = {
    "~": None,
    "null": None,
    "Null": None,
    "NULL": None,
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
}
_CORE_INT_RE = re.compile(r"[-+]?[0-9]+")
_CORE_OCT_RE = re.compile(r"0o[0-7]+")
_CORE_HEX_RE = re.compile(r"0x[0-9a-fA-F]+")
_CORE_FLOAT_RE = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_CORE_INF_RE = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_CORE_NAN_RE = re.compile(r"\.(?:nan|NaN|NAN)")
_TAG_PREFIX = "tag:yaml.org,2002:"


class _HugeInteger(Exception):
    """An integer literal of more than ``MAX_INTEGER_DIGITS`` digits (``node`` once known)."""

    def __init__(self, digits: int, node: Any = None) -> None:
        super().__init__(digits)
        self.digits = digits
        self.node = node


def _core_int(digits: str, base: int) -> float | int:
    count = len(digits.lstrip("+-"))
    if count > limits.MAX_INTEGER_DIGITS:
        raise _HugeInteger(count)
    return js_integer(int(digits, base))


def _core_number(text: str) -> Any:
    if _CORE_INT_RE.fullmatch(text):
        return _core_int(text, 10)
    if _CORE_FLOAT_RE.fullmatch(text):
        return float(text)
    if _CORE_HEX_RE.fullmatch(text):
        return _core_int(text[2:], 16)
    if _CORE_OCT_RE.fullmatch(text):
        return _core_int(text[2:], 8)
    if _CORE_INF_RE.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _CORE_NAN_RE.fullmatch(text):
        return math.nan
    return text


def _scalar_value(node: Any) -> Any:
    """The value of a scalar node: plain scalars resolve by the core schema, quoted ones are strings."""
    try:
        return _resolve_scalar(node)
    except _HugeInteger as exc:
        raise _HugeInteger(exc.digits, node) from None


def _resolve_scalar(node: Any) -> Any:
    text: str = node.value
    ctag = node.ctag
    if getattr(ctag, "handle", None) is None:
        if node.style is not None:
            return text
        if not text:
            return None
        if text[0] in "0123456789+-.":
            return _core_number(text)
        return _CORE_CONSTANTS.get(text, text)
    tag = str(node.tag)
    if not tag.startswith(_TAG_PREFIX):
        return text
    kind = tag[len(_TAG_PREFIX) :]
    if kind == "null":
        return None
    if kind == "bool":
        return _CORE_CONSTANTS.get(text, text)
    if kind in ("int", "float"):
        value = _core_number(text)
        return float(value) if kind == "float" and isinstance(value, int) else value
    return text


def plain_scalar_keeps_text(text: str) -> bool:
    """True when ``text`` written as a plain (unquoted) scalar reads back as that same string."""
    if not text:
        return False
    if text[0] in "0123456789+-.":
        try:
            return _core_number(text) is text
        except _HugeInteger:
            return False
    return text not in _CORE_CONSTANTS


# --------------------------------------------------------------------------------------------
# Guards that run before the YAML library sees the text

_SCAN_RE = re.compile(r"""[\[\]{}"'#|>]""")
_BLOCK_HEADER_RE = re.compile(r"[|>][-+0-9]*[ \t]*(?:#[^\n]*)?(?:\r?\n|\Z)")
#: ``(?:[-?][ \t]+){MAX_YAML_NESTING}`` as four patterns that each start with a literal (``- ``,
#: ``-\t``, ``? ``, ``?\t``): the regex engine then jumps between occurrences of the literal instead of
#: trying every position (0.35 s on an 8 MiB flow, now milliseconds).
_COMPACT_NESTING_RES = tuple(
    re.compile(re.escape(first) + r"[ \t]*(?:[-?][ \t]+){" + str(limits.MAX_YAML_NESTING - 1) + "}")
    for first in ("- ", "-\t", "? ", "?\t")
)


def _skip_quoted(text: str, start: int, quote: str) -> int:
    """The index after the quoted scalar opening at ``start`` (or -1 when it never closes)."""
    j = start + 1
    while True:
        j = text.find(quote, j)
        if j < 0:
            return -1
        if quote == "'":
            if text.startswith("''", j):
                j += 2
                continue
            return j + 1
        backslashes = 0
        k = j - 1
        while text[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2 == 0:
            return j + 1
        j += 1


def _skip_block_scalar(text: str, start: int) -> int:
    """The index after the content lines of the block scalar whose header is at ``start``."""
    line_start = text.rfind("\n", 0, start) + 1
    indent = 0
    while text.startswith(" ", line_start + indent):
        indent += 1
    end = text.find("\n", start)
    while end >= 0:
        k = end + 1
        spaces = 0
        while text.startswith(" ", k + spaces):
            spaces += 1
        nxt = text[k + spaces : k + spaces + 1]
        if nxt in ("", "\n", "\r") or spaces > indent:
            end = text.find("\n", k)
            continue
        return k
    return len(text)


def _nests_too_deeply(text: str) -> bool:
    """A linear estimate of flow-collection / compact block nesting beyond ``MAX_YAML_NESTING``.

    The YAML scanner spends time proportional to the flow depth on every token, and its
    composer recurses once per level; refusing absurd nesting up front keeps both bounded.
    The estimate skips quoted scalars, comments and block scalars; in block context a bracket
    only counts when it starts a node (after whitespace or at a line start).
    """
    limit = limits.MAX_YAML_NESTING
    if text.count("- ") + text.count("? ") > limit and any(r.search(text) for r in _COMPACT_NESTING_RES):
        return True
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    pos = 0
    search = _SCAN_RE.search
    while True:
        match = search(text, pos)
        if match is None:
            return False
        i = match.start()
        char = text[i]
        prev = text[i - 1] if i else "\n"
        pos = i + 1
        if char in "[{":
            if depth or prev in " \t\n":
                depth += 1
                if depth > limit:
                    return True
        elif char in "]}":
            if depth:
                depth -= 1
        elif char == "#":
            if prev in " \t\n":
                end = text.find("\n", i)
                if end < 0:
                    return False
                pos = end + 1
        elif char in "\"'":
            if prev in " \t\n" or (depth and prev in "[{,:"):
                pos = _skip_quoted(text, i, char)
                if pos < 0:
                    return False
        elif not depth and prev in " \t\n" and _BLOCK_HEADER_RE.match(text, i):
            pos = _skip_block_scalar(text, i)


def _file_error(message: str, *, line: int | None = None, syntax: YamlSyntax | None = None) -> FlowParseError:
    return FlowParseError(message, error_code=FLOW_FILE_INVALID, line=line, syntax=syntax)


def _yaml_error(exc: YAMLError, text: str) -> FlowParseError:
    if isinstance(exc, ReaderError):
        position = exc.position if isinstance(exc.position, int) else 0
        line = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        character = exc.character
        code = f"#x{character:04x}" if isinstance(character, int) else repr(character)
        return _file_error(
            f"Invalid flow file: unacceptable character {code} (control characters and other special "
            f"characters are not allowed in YAML) at line {line}, column {column}",
            line=line,
        )
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        pieces = [str(piece) for piece in (exc.context, exc.problem) if piece]
        problem = " ".join(", ".join(pieces).split()) or "the YAML could not be read"
        if mark is not None:
            line = mark.line + 1
            context_mark = exc.context_mark
            syntax = YamlSyntax(
                str(exc.context) if exc.context else None,
                str(exc.problem) if exc.problem else None,
                line,
                mark.column + 1,
                context_mark.line + 1 if context_mark is not None else None,
            )
            return _file_error(
                f"Invalid flow file: {problem} at line {line}, column {mark.column + 1}",
                line=line,
                syntax=syntax,
            )
        return _file_error(f"Invalid flow file: {problem}")
    message = " ".join(str(exc).split()) or type(exc).__name__
    return _file_error(f"Invalid flow file: {message}")


#: The YAML 1.2 core schema's tags, by the kind of node they may tag.
_CORE_TAGS: dict[str, frozenset[str]] = {
    "scalar": frozenset(_TAG_PREFIX + kind for kind in ("str", "int", "float", "bool", "null")),
    "list": frozenset({_TAG_PREFIX + "seq"}),
    "mapping": frozenset({_TAG_PREFIX + "map"}),
}
_UNSUPPORTED_TAG = (
    "Invalid flow file: unsupported YAML tag `{tag}` on a {kind} at line {line}, column {column} — a flow takes "
    "only the YAML 1.2 core tags: !!str, !!int, !!float, !!bool and !!null on a scalar, !!seq on a list, "
    "!!map on a mapping; drop the tag"
)
_TOO_MANY_KEYS = (
    "Invalid flow file: a mapping with more than {limit} keys at line {line}, column {column} — far more than "
    "any flow needs; check that this is the flow file you meant"
)
_TOO_MANY_ITEMS = (
    "Invalid flow file: a list with more than {limit} items at line {line}, column {column} — far more than "
    "any flow needs; split a long flow into `run:` fragments"
)
_TOO_MANY_NODES = (
    "Invalid flow file: more than {limit} YAML values in one file, the one past the limit at line {line}, "
    "column {column} — far more than any flow needs; split a long flow into `run:` fragments"
)


def _at_mark(template: str, mark: Any, **fields: Any) -> FlowParseError:
    line = mark.line + 1
    return _file_error(template.format(line=line, column=mark.column + 1, **fields), line=line)


def _written_tag(tag: Any) -> str:
    """A tag as the file spells it: ``!foo``, ``!!binary``, ``!e!x`` or verbatim ``!<uri>``."""
    if tag.handle is None:
        return f"!<{tag.suffix}>"
    return f"{tag.handle}{tag.suffix}"


class _GuardedComposer(Composer):
    """ruamel's composer, refusing while it reads what no flow has: a mapping, a list or a file far
    larger than any flow (the composer costs about 0.1 ms per value, so a 2 MB file of 100k keys
    would take a minute), and a tag outside the YAML 1.2 core schema (upstream would ignore it)."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self.node_count = 0

    def compose_scalar_node(self, anchor: Any) -> Any:
        node = super().compose_scalar_node(anchor)
        if node.style == ">" and "\a" in node.value:
            # ruamel's round-trip scanner marks each folded line break with a BEL (to write the fold
            # back); a folded scalar holds no BEL of its own (the reader refuses the character).
            node.value = node.value.replace("\a", "")
        return node

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        self._guard(event, parent, index)
        return super().compose_node(parent, index)

    def _guard(self, event: Any, parent: Any, index: Any) -> None:
        """The refusals made before a node is composed (see the class)."""
        self.node_count += 1
        if self.node_count > limits.MAX_YAML_NODES:
            raise _at_mark(_TOO_MANY_NODES, event.start_mark, limit=limits.MAX_YAML_NODES)
        if isinstance(parent, MappingNode):
            if index is None and len(parent.value) >= limits.MAX_YAML_MAPPING_KEYS:
                raise _at_mark(_TOO_MANY_KEYS, parent.start_mark, limit=limits.MAX_YAML_MAPPING_KEYS)
        elif isinstance(parent, SequenceNode) and index >= limits.MAX_YAML_SEQUENCE_ITEMS:
            raise _at_mark(_TOO_MANY_ITEMS, parent.start_mark, limit=limits.MAX_YAML_SEQUENCE_ITEMS)
        if not isinstance(event, AliasEvent) and event.ctag is not None:
            self._check_tag(event)

    @staticmethod
    def _check_tag(event: Any) -> None:
        tag = event.ctag
        full = str(tag)
        if full == "!":  # the non-specific tag: the node resolves as it would untagged
            return
        if isinstance(event, ScalarEvent):
            kind = "scalar"
        else:
            kind = "mapping" if isinstance(event, MappingStartEvent) else "list"
        if full not in _CORE_TAGS[kind]:
            raise _at_mark(_UNSUPPORTED_TAG, event.start_mark, tag=_written_tag(tag), kind=kind)


#: libyaml's parser (``ruamel.yaml.clib``), None when that package is not installed.
CParser: Any = getattr(_ruamel_main, "CParser", None)


class _PurePathOnly(Exception):
    """A text that libyaml reads otherwise than the pure-Python path, so the pure path reads it:
    an explicit tag (libyaml hands tags over expanded, ``!!str`` and ``!<tag:yaml.org,2002:str>``
    alike, and the validator tells them apart), an empty plain scalar (libyaml marks it at the next
    token, the pure path where the value would start) and a byte-order mark (libyaml counts it in
    the marks' offsets)."""


class _CComposer(_GuardedComposer):
    """The guarded composer over libyaml's events (``ruamel.yaml.clib``): the same nodes, marks and
    refusals, without the pure-Python scanner (which reads a plain scalar character by character:
    an 8 MiB flow took 24x ruamel's C safe loader). libyaml spells a plain scalar's style ``""``
    where ruamel's parser says None; the validator reads None as plain."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        """ruamel's ``compose_node`` without the resolver: the validator resolves an untagged
        scalar itself (the YAML 1.2 core schema), and a tagged node sends the text to the pure path."""
        parser = self.parser
        event = parser.peek_event()
        if isinstance(event, AliasEvent):
            self._guard(event, parent, index)
            parser.get_event()
            if event.anchor not in self.anchors:
                raise _PurePathOnly  # an undefined alias: the pure path words the error
            return self.anchors[event.anchor]
        if event.ctag is not None:
            raise _PurePathOnly
        self._guard(event, parent, index)
        parser.get_event()
        anchor = event.anchor
        node: Any
        if isinstance(event, ScalarEvent):
            if event.style == "" and not event.value:
                raise _PurePathOnly
            node = ScalarNode(
                _UNTAGGED,
                event.value,
                event.start_mark,
                event.end_mark,
                style=event.style or None,
                anchor=anchor,
            )
            if anchor is not None:
                self.anchors[anchor] = node
            return node
        if isinstance(event, MappingStartEvent):
            node = MappingNode(
                _UNTAGGED, [], event.start_mark, None, flow_style=event.flow_style, anchor=anchor
            )
            if anchor is not None:
                self.anchors[anchor] = node
            while not isinstance(parser.peek_event(), MappingEndEvent):
                key = self.compose_node(node, None)
                node.value.append((key, self.compose_node(node, key)))
        else:
            node = SequenceNode(
                _UNTAGGED, [], event.start_mark, None, flow_style=event.flow_style, anchor=anchor
            )
            if anchor is not None:
                self.anchors[anchor] = node
            index = 0
            while not isinstance(parser.peek_event(), SequenceEndEvent):
                node.value.append(self.compose_node(node, index))
                index += 1
        node.end_mark = parser.get_event().end_mark
        return node


#: The tag of every node the C path composes (only untagged nodes reach it; the validator reads an
#: untagged scalar by the core schema, not by this tag).
_UNTAGGED = Tag(suffix="tag:yaml.org,2002:str")


class _CLoader:
    """What ruamel's composer asks of its loader, with libyaml as the event source."""

    max_depth = None
    comment_handling = None

    def __init__(self, text: str) -> None:
        self._composer: Any = None
        self._parser = CParser(text)
        self._resolver = VersionedResolver(version=(1, 2), loader=self)
        self.composer = _CComposer(self)


def _compose(text: str) -> tuple[Any, int]:
    """The node graph of ``text`` and how many YAML values the composer read.

    Read through libyaml when ``ruamel.yaml.clib`` is installed; a text it does not compose cleanly
    (any error, a refusal included) is read again by the pure-Python path, so every message, mark
    and refusal is the one that path gives."""
    if CParser is not None:
        try:
            return _compose_c(text)
        except Exception:
            pass  # the pure path below says what is wrong, in its words
    return _compose_pure(text)


def _compose_c(text: str) -> tuple[Any, int]:
    if text.startswith("\ufeff"):
        raise _PurePathOnly
    loader = _CLoader(text)
    try:
        return loader.composer.get_single_node(), loader.composer.node_count
    finally:
        loader._parser.dispose()


def _compose_pure(text: str) -> tuple[Any, int]:
    yaml = YAML(typ="rt")
    yaml.version = (1, 2)
    yaml.Composer = _GuardedComposer
    try:
        return yaml.compose(text), yaml.composer.node_count
    except RecursionError:
        raise _file_error(_TOO_DEEP) from None
    except YAMLError as exc:
        raise _yaml_error(exc, text) from None
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, AssertionError) as exc:
        # Defensive: the library's own bugs on hostile input still become one parse error.
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise _file_error(f"Invalid flow file: the YAML could not be read ({message})") from None


def _leading_trim(text: str) -> str:
    """Upstream trims the text before parsing; trim the first line but keep the line count."""
    body = text.lstrip(JS_WS)
    removed = text[: len(text) - len(body)]
    return "\n" * removed.count("\n") + body


# --------------------------------------------------------------------------------------------
# The validator


class _Cyclic(Exception):
    pass


class _Validator:
    def __init__(self) -> None:
        self.values: dict[int, Any] = {}
        self.maps: dict[int, dict[str, Any]] = {}
        self.step_count = 0
        self.args_total = 0
        self._json_lengths: dict[int, int] = {}

    # -- the one pass over the node graph: scalar values, mapping keys, duplicate keys --

    def index(self, root: Any) -> None:
        values = self.values
        maps = self.maps
        stack = [root]
        while stack:
            node = stack.pop()
            nid = id(node)
            if nid in values or nid in maps:
                continue
            if isinstance(node, ScalarNode):
                values[nid] = _scalar_value(node)
            elif isinstance(node, SequenceNode):
                values[nid] = None
                stack.extend(node.value)
            elif isinstance(node, MappingNode):
                mapping: dict[str, Any] = {}
                maps[nid] = mapping
                reorder = False
                for key_node, value_node in node.value:
                    key = self._key(key_node)
                    if key in mapping:
                        mark = key_node.start_mark
                        raise _file_error(
                            f"Invalid flow file: duplicate key `{key}` at line {mark.line + 1}, column "
                            f"{mark.column + 1} — a key may appear only once in a mapping",
                            line=mark.line + 1,
                        )
                    mapping[key] = value_node
                    if key[:1].isdigit() and _is_array_index(key):
                        reorder = True
                    stack.append(value_node)
                if reorder:
                    maps[nid] = _js_key_order(mapping)

    def _key(self, node: Any) -> str:
        if isinstance(node, ScalarNode):
            return js_string(_scalar_value(node))
        try:
            self.index(node)
            return self.render_json(node, limit=limits.ENTRY_RENDER_CHARS)[0]
        except _Cyclic:
            return "[object]"

    # -- node access --

    def scalar(self, node: Any) -> Any:
        """The scalar value of a node, or ``MISSING`` for a collection."""
        if isinstance(node, ScalarNode):
            return self.values[id(node)]
        return MISSING

    def mapping(self, node: Any) -> dict[str, Any] | None:
        if isinstance(node, MappingNode):
            return self.maps[id(node)]
        return None

    def string(self, node: Any) -> str | None:
        if isinstance(node, ScalarNode):
            value = self.values[id(node)]
            if isinstance(value, str):
                return value
        return None

    def number(self, node: Any) -> float | int | None:
        """The value when it is a JavaScript number (``typeof value === "number"``), else None."""
        if isinstance(node, ScalarNode):
            value = self.values[id(node)]
            if is_number(value):
                return value  # type: ignore[no-any-return]
        return None

    def to_number(self, node: Any) -> float | int:
        """``Number(value)``."""
        if node is MISSING:
            return math.nan
        if isinstance(node, MappingNode):
            return math.nan
        if isinstance(node, SequenceNode):
            return js_to_number_text(self.js_string(node))
        return js_to_number(self.values[id(node)])

    # -- JavaScript renderings of a node --

    def js_string(self, node: Any) -> str:
        """``String(value)``, bounded (an alias bomb in an array would join to gigabytes)."""
        budget = limits.MAX_COERCED_TEXT_CHARS
        memo: dict[int, str] = {}

        def render(current: Any, active: set[int]) -> str:
            if isinstance(current, ScalarNode):
                return js_string(self.values[id(current)])
            if isinstance(current, MappingNode):
                return "[object Object]"
            nid = id(current)
            if nid in active:
                return ""  # Array.prototype.join skips an array it is already joining
            if nid in memo:
                return memo[nid]
            active.add(nid)
            parts: list[str] = []
            size = 0
            for item in current.value:
                if isinstance(item, ScalarNode) and self.values[id(item)] is None:
                    part = ""
                else:
                    part = render(item, active)
                size += len(part) + 1
                if size > budget:
                    raise Reject(
                        f"the value joins to more than {budget} characters — check for a YAML alias that "
                        "repeats a large block"
                    )
                parts.append(part)
            active.discard(nid)
            memo[nid] = ",".join(parts)
            return memo[nid]

        return render(node, set())

    def json_length(self, node: Any, active: set[int]) -> int:
        nid = id(node)
        known = self._json_lengths.get(nid)
        if known is not None:
            return known
        if isinstance(node, ScalarNode):
            length = len(js_json(self.values[nid]))
        else:
            if nid in active:
                raise _Cyclic
            active.add(nid)
            if isinstance(node, SequenceNode):
                length = 2 + max(0, len(node.value) - 1)
                for item in node.value:
                    length += self.json_length(item, active)
            else:
                mapping = self.maps[nid]
                length = 2 + max(0, len(mapping) - 1)
                for key, item in mapping.items():
                    length += len(js_json_string(key)) + 1 + self.json_length(item, active)
            active.discard(nid)
        self._json_lengths[nid] = length
        return length

    def json_chunks(self, node: Any) -> Iterator[str]:
        if isinstance(node, ScalarNode):
            yield js_json(self.values[id(node)])
        elif isinstance(node, SequenceNode):
            yield "["
            for i, item in enumerate(node.value):
                if i:
                    yield ","
                yield from self.json_chunks(item)
            yield "]"
        else:
            yield "{"
            for i, (key, item) in enumerate(self.maps[id(node)].items()):
                yield ("," if i else "") + js_json_string(key) + ":"
                yield from self.json_chunks(item)
            yield "}"

    def render_json(self, entry: Any, *, limit: int) -> tuple[str, int]:
        """``JSON.stringify(entry)`` cut to ``limit`` characters, and its full length (raises ``_Cyclic``)."""
        if isinstance(entry, Wrap):
            head = "{" + js_json_string(entry.key) + ":"
            total = len(head) + self.json_length(entry.node, set()) + 1
            chunks: Iterator[str] = _chain(head, self.json_chunks(entry.node), "}")
        elif entry is MISSING:
            return "undefined", len("undefined")
        else:
            total = self.json_length(entry, set())
            chunks = self.json_chunks(entry)
        out: list[str] = []
        size = 0
        for chunk in chunks:
            out.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
        return "".join(out)[:limit], total

    def render_entry(self, entry: Any) -> str:
        limit = limits.ENTRY_RENDER_CHARS
        try:
            text, total = self.render_json(entry, limit=limit)
        except _Cyclic:
            return "[cyclic entry]"
        if total > limit:
            return f"{text}…(+{total - limit} chars)"
        return text

    # -- plain data (tool args) --

    def plain(self, node: Any, counter: list[int]) -> Any:
        """JSON-able Python data for a node, aliases expanded, bounded and cycle-checked."""
        active: set[int] = set()

        def convert(current: Any) -> Any:
            counter[0] += 1
            if counter[0] > limits.MAX_ARGS_NODES:
                raise Reject(
                    f"tool args expand to more than {limits.MAX_ARGS_NODES} values — check for a YAML "
                    "alias that repeats a large block inside `args:`"
                )
            if isinstance(current, ScalarNode):
                value = self.values[id(current)]
                if isinstance(value, float) and not math.isfinite(value):
                    return None  # what JSON.stringify sends
                return value
            nid = id(current)
            if nid in active:
                raise Reject(
                    "tool args contain a cyclic YAML alias (an anchor `&a` used as `*a` inside itself) — "
                    "tool arguments must be plain JSON data"
                )
            active.add(nid)
            if isinstance(current, SequenceNode):
                result: Any = [convert(item) for item in current.value]
            else:
                result = {key: convert(item) for key, item in self.maps[nid].items()}
            active.discard(nid)
            return result

        return convert(node)

    # -- the file --

    def flow(self, root: Any) -> Flow:
        top = self.mapping(root)
        if top is None or "steps" not in top or not isinstance(top["steps"], SequenceNode):
            raise _file_error(_NOT_A_FLOW)
        unknown = [key for key in top if key not in _TOP_LEVEL_KEYS]
        if unknown:
            first = next(
                (k for k, _ in root.value if isinstance(k, ScalarNode) and self._key(k) == unknown[0]), root
            )
            raise _file_error(
                f"Invalid flow file: {unknown_keys(unknown, _TOP_LEVEL_KEYS)} — allowed top-level keys: "
                f"{', '.join(_TOP_LEVEL_KEYS)}",
                line=first.start_mark.line + 1,
            )
        steps = self.steps(top["steps"].value, depth=0, prefix="")
        prerequisite = ""
        pre_node = top.get("executionPrerequisite")
        if pre_node is not None:
            value = self.scalar(pre_node)
            if isinstance(value, str):
                prerequisite = value
            elif value is not None:
                try:
                    prerequisite = self.js_string(pre_node)
                except Reject as exc:
                    raise _file_error(f"Invalid flow file: executionPrerequisite {exc.detail}") from None
        return Flow(steps=steps, execution_prerequisite=prerequisite)

    def steps(self, nodes: Sequence[Any], *, depth: int, prefix: str) -> tuple[Step, ...]:
        out: list[Step] = []
        for position, node in enumerate(nodes, 1):
            path = f"{prefix}{position}"
            line = node.start_mark.line + 1
            self.step_count += 1
            try:
                if self.step_count > limits.MAX_STEPS_PER_FILE:
                    raise Reject(
                        f"the flow expands to more than {limits.MAX_STEPS_PER_FILE} steps (counting `when:` "
                        "children) — check for a YAML alias that repeats a block of steps",
                        node,
                    )
                out.append(self.step(node, depth=depth, path=path, line=line))
            except Reject as exc:
                entry = node if exc.entry is None else exc.entry
                message = (
                    f"Unrecognized flow entry ({exc.detail}): {self.render_entry(entry)} "
                    f"(step {path}, line {line})"
                )
                raise FlowParseError(
                    message, error_code=FLOW_ENTRY_UNRECOGNIZED, line=line, step=path
                ) from None
        return tuple(out)

    def step(self, node: Any, *, depth: int, path: str, line: int) -> Step:
        entry = self.mapping(node)
        if entry is None:
            raise Reject("step must be an object")
        if "optional" in entry:
            raise Reject(
                "optional is not supported — guard the step with a when: block instead "
                "(`when: { visible: <target> }` + `steps:`)"
            )
        kinds = [key for key in DIRECTIVE_KEYS if key in entry]
        if not kinds:
            if "idle" in entry:
                raise Reject("idle is a condition, not a step kind — write it as `await: { idle: true }`")
            for key in entry:
                hint = did_you_mean(key, DIRECTIVE_KEYS)
                if hint:
                    raise Reject(f"unrecognized step kind (did you mean `{hint}`?)")
            raise Reject("unrecognized step kind")
        if len(kinds) > 1:
            found = ", ".join(f"`{kind}`" for kind in kinds)
            raise Reject(f"a step takes exactly one directive key, found {found}")
        kind = kinds[0]
        directive = BY_KEY[kind]
        if directive.parse_entry is not None:
            return directive.parse_entry(
                self, EntryAt(node=node, entry=entry, depth=depth, path=path, line=line)
            )
        extra = [key for key in entry if key != kind]
        if extra:
            raise Reject(
                f"a `{kind}` step has {unknown_keys(extra, (), hints=False)} — step options go inside the "
                f"`{kind}:` value, not beside it"
            )
        body = entry[kind]
        assert directive.parse is not None
        try:
            return directive.parse(self, body, line)
        except Reject as exc:
            if exc.entry is None:
                exc.entry = Wrap(kind, body)
            raise

    # -- what the directives share --

    def spend_args(self, count: int) -> None:
        """Count a `tool:` step's args values against the file's total."""
        self.args_total += count
        if self.args_total > limits.MAX_ARGS_NODES_PER_FILE:
            raise Reject(
                f"the tool steps' args expand to more than {limits.MAX_ARGS_NODES_PER_FILE} values in total "
                "— check for a YAML alias that repeats a large block inside `args:`"
            )

    def string_list(self, node: Any) -> tuple[str, ...] | None:
        if not isinstance(node, SequenceNode):
            return None
        out: list[str] = []
        for item in node.value:
            value = self.string(item)
            if value is None:
                return None
            out.append(value)
        return tuple(out)

    # -- selectors and gesture targets --

    def selector(self, node: Any, where: str, budget: list[int] | None = None) -> Selector:
        if budget is None:
            budget = [0]
        root_where = where
        return self._selector(node, where, budget, root_where)

    def _selector(self, node: Any, where: str, budget: list[int], root_where: str) -> Selector:
        text = self.string(node)
        if text is not None:
            if not has_visible_text(text):
                raise Reject(f"{where}: {_INVISIBLE_TEXT}")
            return Selector(text=text, loose=True)
        mapping = self.mapping(node)
        if mapping is None:
            raise Reject(
                f"{where}: a selector is a bare string or a map of {', '.join(SELECTOR_KEYS)} — e.g. "
                '"Save" or { id: save-button }'
            )
        unknown = [key for key in mapping if key not in SELECTOR_KEYS]
        if unknown:
            raise Reject(f"{where}: {unknown_with_allowed('selector', unknown, SELECTOR_KEYS)}")
        if "id" in mapping and "identifier" in mapping:
            raise Reject(f"{where}: selector takes `id` or `identifier` (its alias), not both")
        has_scope = any(scope in mapping for scope in _SCOPES)
        any_flag = self._selector_any(mapping, where, has_scope)
        text_value, text_matches = self._selector_text(mapping, where)
        identifier: str | None = None
        for id_key in ("id", "identifier"):
            if id_key in mapping:
                identifier = self._selector_name(mapping, id_key, where)
        role = self._selector_name(mapping, "role", where) if "role" in mapping else None
        css = self._selector_css(mapping, where) if "css" in mapping else None
        has_field = (
            text_value is not None or text_matches is not None or identifier is not None or role or css
        )
        if not has_field and not any_flag:
            if has_scope:
                raise Reject(
                    f"{where}: a selector's `within` only scopes where to look — the selector still needs "
                    "its own text/id/role/css naming what to find there (or `any: true` for any element)"
                )
            raise Reject(f"{where}: selector needs at least one of text, identifier, role, or css")
        scopes = self._selector_scopes(mapping, where, budget, root_where)
        return Selector(
            text=text_value,
            text_matches=text_matches,
            identifier=identifier,
            role=role,
            css=css,
            any=any_flag,
            within=scopes.get("within"),
            after=scopes.get("after"),
            next=scopes.get("next"),
        )

    def _selector_any(self, mapping: dict[str, Any], where: str, has_scope: bool) -> bool:
        """``any: true`` (the CSS ``*``): only ``true``, with no field, and only inside a scope."""
        if "any" not in mapping:
            return False
        if self.scalar(mapping["any"]) is not True:
            raise Reject(
                f"{where}: `any` takes only `true` — it is the CSS `*` universal selector (drop the key "
                "to select by text/id/role instead)"
            )
        for field_key in SELECTOR_FIELDS:
            if field_key in mapping:
                raise Reject(
                    f"{where}: `any: true` already matches every element — drop it, or drop the "
                    f"`{field_key}` it makes redundant"
                )
        if not has_scope:
            raise Reject(
                f"{where}: `any: true` matches every element on screen — pair it with a scope "
                "(within/after/next) so it selects something specific"
            )
        return True

    def _selector_text(self, mapping: dict[str, Any], where: str) -> tuple[str | None, str | None]:
        """``text``: visible text, or ``{ matches: <regex> }``; (text, pattern), at most one set."""
        if "text" not in mapping:
            return None, None
        text_node = mapping["text"]
        text_mapping = self.mapping(text_node)
        if text_mapping is not None:
            return None, self.text_matcher(text_mapping, where)
        text_value = self.string(text_node)
        if text_value is None:
            raise Reject(f"{where}: `text` must be a string, or {{ matches: '<regex>' }} for a pattern")
        if not has_visible_text(text_value):
            raise Reject(f"{where}: {_INVISIBLE_TEXT}")
        return text_value, None

    def _selector_name(self, mapping: dict[str, Any], key: str, where: str) -> str:
        """``id``/``identifier``/``role``: a non-empty string."""
        value = self.string(mapping[key])
        if not value:
            raise Reject(f"{where}: `{key}` must be a non-empty string")
        return value

    def _selector_css(self, mapping: dict[str, Any], where: str) -> str:
        """``css``: a CSS selector, matched as written (strict: never loose); plain mistakes refused
        here, the rest by the browser when the flow runs."""
        value = self.string(mapping["css"])
        if value is None:
            raise Reject(f'{where}: `css` must be a string holding a CSS selector — e.g. css: "form .save"')
        problem = css_problem(value)
        if problem is not None:
            raise Reject(f"{where}: css {js_json_string(value)} is not a valid CSS selector: {problem}")
        return value

    def _selector_scopes(
        self, mapping: dict[str, Any], where: str, budget: list[int], root_where: str
    ) -> dict[str, Selector]:
        """within/after/next, each a selector; all the scopes of one root selector count against one cap."""
        scopes: dict[str, Selector] = {}
        for relation in _SCOPES:
            if relation in mapping:
                budget[0] += 1
                if budget[0] > limits.MAX_SELECTOR_SCOPES:
                    raise Reject(
                        f"{root_where}: a selector carries more than {limits.MAX_SELECTOR_SCOPES} "
                        "scopes (within/after/next) in total — check for a cyclic YAML alias "
                        "(`&s { …, within: *s }`)"
                    )
                scopes[relation] = self._selector(
                    mapping[relation], f"{where}.{relation}", budget, root_where
                )
        return scopes

    def text_matcher(self, mapping: dict[str, Any], where: str) -> str:
        unknown = [key for key in mapping if key != "matches"]
        if unknown:
            raise Reject(f"{where}: {unknown_with_allowed('text matcher', unknown, ('matches',))}")
        if "matches" not in mapping:
            raise Reject(
                f"{where}: a text matcher takes exactly {{ matches: '<regex>' }} — for a substring, use the "
                'plain-string form (text: "…")'
            )
        pattern = self.string(mapping["matches"])
        if not pattern:
            raise Reject(f"{where}: text matcher needs a non-empty `matches` pattern")
        problem = regex_problem(pattern)
        if problem is not None:
            raise Reject(f"{where}: text `matches` is not a valid regular expression: {problem}")
        return pattern

    def point(self, mapping: dict[str, Any], where: str) -> Point:
        if any(key in mapping for key in SELECTOR_KEYS):
            raise Reject(f"{where} takes a selector or x/y coordinates, not both")
        x = self.number(mapping["x"]) if "x" in mapping else None
        y = self.number(mapping["y"]) if "y" in mapping else None
        if x is None or y is None:
            raise Reject(f"{where}: a coordinate target needs numeric x and y")
        if not (0 <= x <= 1 and 0 <= y <= 1):
            raise Reject(f"{where}: coordinates are normalized 0–1 fractions of the screen, not pixels")
        if any(key not in ("x", "y") for key in mapping):
            raise Reject(f"{where}: a coordinate target takes only {{ x, y }}")
        return Point(x=tidy(x), y=tidy(y))

    def target(self, node: Any, where: str) -> Target:
        mapping = self.mapping(node)
        if mapping is not None and ("x" in mapping or "y" in mapping):
            return self.point(mapping, where)
        return self.selector(node, where)

    # -- conditions --

    def condition(self, body: Any, kind: str) -> Condition:
        """An `assert` body (also the UI part of `await` and `when`)."""
        legal = CONDITION_KEYS
        mapping = self.mapping(body)
        if kind == "assert":
            if mapping is None:
                raise Reject(f"assert needs a condition ({', '.join(legal)})")
            if "idle" in mapping:
                others = [key for key in mapping if key in CONDITION_KEYS]
                detail = (
                    "idle has no assert form — it waits for the screen to stop changing, which is an `await`"
                )
                if others:
                    keys = "`, `".join(others)
                    detail += (
                        f". Give it its own step as `await: {{ idle: true }}` and leave `{keys}` in the "
                        "assert — a step checks exactly one condition"
                    )
                raise Reject(detail)
            if "timeout" in mapping:
                raise Reject("assert has no timeout — it is an immediate check; use `await` for a timed wait")
        assert mapping is not None
        present = [key for key in mapping if key in legal]
        if len(present) != 1:
            listed = legal + (("idle",) if kind == "await" else ("platform",) if kind == "when" else ())
            raise Reject(f"{kind} needs exactly one condition key ({', '.join(listed)})")
        allowed = legal + (("timeout",) if kind == "await" else ())
        only_keys(kind, mapping, allowed)
        cond_key = present[0]
        value = mapping[cond_key]
        if cond_key != "text":
            selector = self.selector(value, f"{kind}.{cond_key}")
            return Condition(kind=cond_key, selector=selector)  # type: ignore[arg-type]
        text_map = self.mapping(value)
        if text_map is None:
            raise Reject(f"{kind} text needs {{ in: <selector>, contains|equals|matches: <string> }}")
        text_allowed = ("in", *TEXT_MODES)
        only_keys(f"{kind}.text", text_map, text_allowed)
        modes = [mode for mode in TEXT_MODES if mode in text_map]
        if len(modes) != 1:
            raise Reject(f"{kind} text needs exactly one of `contains`, `equals`, or `matches`")
        mode = modes[0]
        expected = self.string(text_map[mode])
        if not expected:
            raise Reject(f"{kind} text needs a non-empty `{mode}`")
        if mode == "matches":
            problem = regex_problem(expected)
            if problem is not None:
                raise Reject(f"{kind} text `matches` is not a valid regular expression: {problem}")
        selector = self.selector(text_map.get("in", MISSING), f"{kind}.text.in")
        return Condition(kind="text", selector=selector, mode=mode, expected=expected)  # type: ignore[arg-type]


_INVISIBLE_TEXT = (
    "text must contain at least one visible character (icon-font/private-use and zero-width characters "
    "render as nothing) — select by identifier or role instead"
)


def _chain(head: str, middle: Iterator[str], tail: str) -> Iterator[str]:
    yield head
    yield from middle
    yield tail


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


def _js_key_order(mapping: dict[str, Any]) -> dict[str, Any]:
    """JavaScript object key order: array-index keys ascending first, then the rest as written."""
    indexes = sorted((key for key in mapping if _is_array_index(key)), key=int)
    ordered = {key: mapping[key] for key in indexes}
    ordered.update((key, value) for key, value in mapping.items() if key not in ordered)
    return ordered


# --------------------------------------------------------------------------------------------
# Entry points


def validate_flow(flow: Flow) -> None:
    """The whole-flow rules: an e2e flow (first non-echo step is `launch`) declares no prerequisite."""
    if flow.execution_prerequisite and flow.is_e2e:
        raise FlowParseError(_E2E_PREREQUISITE_MESSAGE, error_code=FLOW_E2E_HAS_PREREQUISITE)


def _steps_of(node: Any) -> Any:
    """The list under a `steps` key of a mapping node as written, if any."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == "steps" and isinstance(value, SequenceNode):
                return value
    return None


def _has_key(node: Any, name: str) -> bool:
    return any(isinstance(key, ScalarNode) and key.value == name for key, _ in node.value)


def _step_at(root: Any, mark: Any) -> str | None:
    """The step (``2``, ``2.1``…) whose text holds ``mark``; None outside every step."""
    steps = _steps_of(root)
    path: str | None = None
    while steps is not None:
        for position, item in enumerate(steps.value, 1):
            if item.start_mark.index <= mark.index < item.end_mark.index:
                path = f"{path}.{position}" if path else str(position)
                steps = _steps_of(item) if isinstance(item, MappingNode) and _has_key(item, "when") else None
                break
        else:
            break
    return path


def _huge_integer_error(root: Any, exc: _HugeInteger) -> FlowParseError:
    mark = exc.node.start_mark
    line = mark.line + 1
    step = _step_at(root, mark)
    where = f" (step {step})" if step else ""
    return FlowParseError(
        f"Invalid flow file: an integer of {exc.digits} digits at line {line}, column {mark.column + 1}{where} — "
        f"a flow's numbers have at most {limits.MAX_INTEGER_DIGITS} digits; quote the value to keep it as text",
        line=line,
        step=step,
    )


@frozen
class ParseStats:
    """What a valid flow text spends of the file-level limits, so a document that grows by one
    step (``argent.flows.write.FlowDocument``) can check them without reading the text again."""

    #: YAML values the composer read (``MAX_YAML_NODES``).
    nodes: int = 0
    #: Entries of the top-level `steps` list (``MAX_YAML_SEQUENCE_ITEMS``).
    items: int = 0
    #: Steps counting `when:` children (``MAX_STEPS_PER_FILE``).
    steps: int = 0
    #: Values of `tool:` args (``MAX_ARGS_NODES_PER_FILE``).
    args: int = 0
    #: ``[`` and ``{`` characters, and ``- `` / ``? `` pairs: the cheap first tests of the nesting guard.
    brackets: int = 0
    dashes: int = 0


def parse_flow(text: str) -> Flow:
    """Parse and validate a flow file; every problem is one ``FlowParseError``."""
    return parse_flow_counted(text)[0]


def parse_flow_counted(text: str) -> tuple[Flow, ParseStats]:
    """``parse_flow``, and what the text spends of the file-level limits."""
    if not isinstance(text, str):
        raise _file_error("Invalid flow file: expected text")
    if not text.strip(JS_WS):
        return Flow(), ParseStats()
    if (
        len(text) > limits.MAX_FILE_BYTES
        and len(text.encode("utf-8", "surrogatepass")) > limits.MAX_FILE_BYTES
    ):
        raise _file_error(f"Invalid flow file: the file is larger than {limits.MAX_FILE_BYTES} bytes")
    text = _leading_trim(text)
    if _nests_too_deeply(text):
        raise _file_error(_TOO_DEEP)
    root, nodes = _compose(text)
    validator = _Validator()
    try:
        validator.index(root)
        flow = validator.flow(root)
    except RecursionError:
        raise _file_error(_TOO_DEEP) from None
    except _HugeInteger as exc:
        raise _huge_integer_error(root, exc) from None
    validate_flow(flow)
    stats = ParseStats(
        nodes=nodes,
        items=len(flow.steps),
        steps=validator.step_count,
        args=validator.args_total,
        brackets=text.count("[") + text.count("{"),
        dashes=text.count("- ") + text.count("? "),
    )
    return flow, stats


def nests_too_deeply(text: str) -> bool:
    """The nesting guard of ``parse_flow`` (see ``_nests_too_deeply``)."""
    return _nests_too_deeply(text)


def nests_compactly(lines: str) -> bool:
    """The compact-nesting part of the guard, which is line-local (a run of ``- ``/``? `` on one line)."""
    return any(r.search(lines) for r in _COMPACT_NESTING_RES)
