"""Tool arguments: attrs classes in, JSON Schema and strict validation out.

A tool declares its arguments once, as an attrs class whose fields may carry
``metadata={"wire": "camelName", "doc": "..."}``. From that one declaration we derive
the JSON Schema of ``GET /tools`` and a strict cattrs structure hook: no silent
``5 -> "5"`` coercion, unknown keys refused, every problem named by its argument. A refusal
carries upstream argent's zod-shaped ``issues``, read from cattrs' exception tree (its notes name
fields and indexes; each leaf exception carries its facts), never from error text.
"""

from __future__ import annotations

import itertools
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any, Literal, TypeAlias, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import IterableValidationError, IterableValidationNote
from cattrs.gen import make_dict_structure_fn, override

from argent.errors import InvalidToolInputError
from argent.limits import MAX_ARG_ISSUES
from argent.link import issues
from argent.link.codec import WrongType, json_type, strict, strict_scalars
from argent.link.models import Issue

A = TypeVar("A")


def arg(
    default: Any = attrs.NOTHING,
    *,
    doc: str = "",
    wire: str | None = None,
    ignored: str | None = None,
    listed: bool = True,
) -> Any:
    """Declare one tool argument (``wire`` when its JSON name differs from the field).

    ``ignored``: an argument upstream argent declares that means nothing here; it is accepted, and
    this note goes in the result's ``notes`` when a call sets it. ``listed=False``: accepted but
    left out of the schema and of the tool's parameters (a device id on a tool that takes none)."""
    meta: dict[str, Any] = {"doc": doc}
    if wire:
        meta["wire"] = wire
    if ignored:
        meta["ignored"] = ignored
    if not listed:
        meta["unlisted"] = True
    return attrs.field(default=default, metadata=meta, kw_only=True)


def wire_name(f: attrs.Attribute[Any]) -> str:
    return str(f.metadata.get("wire", f.name))


def listed_fields(cls: type) -> list[attrs.Attribute[Any]]:
    """The arguments a tool advertises (its schema, its parameters), in declaration order."""
    return [f for f in attrs.fields(cls) if not f.metadata.get("unlisted")]


def ignored_notes(args: Any) -> list[str]:
    """The notes of the upstream-only arguments this call set (see ``arg(ignored=)``)."""
    return [
        f.metadata["ignored"]
        for f in attrs.fields(type(args))
        if f.metadata.get("ignored") and getattr(args, f.name) is not None
    ]


def accepted_keys(cls: type) -> str:
    """What a tool takes, for the message of a call with a key it does not."""
    names = [wire_name(f) for f in listed_fields(cls)]
    return "it takes " + ", ".join(names) if names else "it takes no arguments"


def bounded(minimum: float | None = None, maximum: float | None = None) -> Any:
    """An attrs validator for an argument's range (a number's value, a string's or list's length),
    reported as upstream's ``too_small`` / ``too_big`` issue; None (an unset optional) passes."""

    def check(_: Any, field: attrs.Attribute[Any], value: Any) -> None:
        if value is None:
            return
        origin, size = ("string", len(value)) if isinstance(value, str) else ("number", value)
        if isinstance(value, list):
            origin, size = "array", len(value)
        if minimum is not None and size < minimum:
            raise issues.IssueError(issues.too_small([wire_name(field)], origin, minimum))
        if maximum is not None and size > maximum:
            raise issues.IssueError(issues.too_big([wire_name(field)], origin, maximum))

    return check


class NotOneOf(ValueError):
    """A value outside a ``Literal`` argument's choices; its text names them."""

    def __init__(self, value: Any, allowed: tuple[Any, ...]) -> None:
        self.value = value
        self.allowed = allowed
        choices = ", ".join(str(choice) for choice in allowed)
        super().__init__(f"must be one of {choices}, got {str(value)!r}")


def _literal(value: Any, tp: Any) -> Any:
    allowed = get_args(tp)
    if value not in allowed:
        raise NotOneOf(value, allowed)
    return value


def _is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


#: The Python type of each JSON type an argument may take in a union (``str | dict[str, Any]``).
_JSON_KINDS: dict[Any, tuple[type, str]] = {
    str: (str, "a string"),
    dict: (dict, "an object"),
    list: (list, "an array"),
    bool: (bool, "a boolean"),
}


def _json_kind_of(tp: Any) -> Any:
    return get_origin(tp) or tp


def _is_json_union(tp: Any) -> bool:
    """A union of distinct JSON types (``str | dict[str, Any] | None``): the value's JSON type picks
    the member, nothing is coerced."""
    if get_origin(tp) not in (typing.Union, types.UnionType):
        return False
    kinds = [_json_kind_of(a) for a in get_args(tp) if a is not type(None)]
    return len(kinds) > 1 and len(set(kinds)) == len(kinds) and all(k in _JSON_KINDS for k in kinds)


def _structure_json_union(conv: cattrs.Converter, value: Any, tp: Any) -> Any:
    members = [a for a in get_args(tp) if a is not type(None)]
    if value is None and len(members) < len(get_args(tp)):
        return None
    for member in members:
        python, _ = _JSON_KINDS[_json_kind_of(member)]
        if isinstance(value, python) and (python is bool or not isinstance(value, bool)):
            return conv.structure(value, member)
    expected = tuple(_JSON_KINDS[_json_kind_of(m)][0] for m in members)
    label = " or ".join(_JSON_KINDS[_json_kind_of(m)][1] for m in members)
    raise WrongType(expected, label, value)


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)
    strict_scalars(conv)
    conv.register_structure_hook(dict, strict(dict, "an object"))

    def any_hook(value: Any, _: Any) -> Any:
        return value

    conv.register_structure_hook(Any, any_hook)
    conv.register_structure_hook_func(_is_literal, _literal)
    conv.register_structure_hook_func(_is_json_union, lambda v, t: _structure_json_union(conv, v, t))
    conv.register_structure_hook_func(_is_list, lambda v, t: _structure_list(conv, v, t))
    conv.register_structure_hook_func(
        lambda t: attrs.has(t),
        lambda v, t: _structure_args(conv, v, t),
    )
    return conv


def _is_list(tp: Any) -> bool:
    return tp is list or get_origin(tp) is list


def _structure_list(conv: cattrs.Converter, value: Any, tp: Any) -> list[Any]:
    """A JSON array only (cattrs' own hook would take the string "abc" as ["a", "b", "c"]); each bad
    item is reported with its index, as cattrs does."""
    if not isinstance(value, list):
        raise WrongType((list,), "an array", value)
    (item_type,) = get_args(tp) or (Any,)
    hook = conv.get_structure_hook(item_type)
    out: list[Any] = []
    errors: list[Exception] = []
    for index, item in enumerate(value):
        try:
            out.append(hook(item, item_type))
        except Exception as exc:  # each bad item is reported with its index, up to MAX_ARG_ISSUES
            note = IterableValidationNote(f"Structuring {tp!r} @ index {index}", index, item_type)
            exc.__notes__ = [*getattr(exc, "__notes__", []), note]
            errors.append(exc)
            if len(errors) >= MAX_ARG_ISSUES:
                break
    if errors:
        raise IterableValidationError(f"While structuring {tp!r}", errors, tp)
    return out


_FACTORIES: dict[type, Any] = {}


def _structure_args(conv: cattrs.Converter, value: Any, cls: type) -> Any:
    fn = _FACTORIES.get(cls)
    if fn is None:
        overrides = {f.name: override(rename=wire_name(f)) for f in attrs.fields(cls)}
        fn = make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=True, **overrides)  # type: ignore[arg-type]
        _FACTORIES[cls] = fn
    if not isinstance(value, Mapping):
        raise WrongType((dict,), "an object", value)
    return fn(value, cls)


_CONVERTER = _make_converter()


def structure_args(tool: str, raw: Any, cls: type[A], *, say_accepted: bool = False) -> A:
    """Validate ``raw`` (a JSON object) into ``cls``; raise InvalidToolInputError naming each problem,
    with upstream-shaped ``issues`` read from cattrs' structured errors (never from their text)
    (``say_accepted``: an unknown key's problem also names the keys the tool takes)."""
    if not isinstance(raw, Mapping):
        found = [issues.invalid_type([], "object", raw)]
        raise InvalidToolInputError(
            f"Arguments for {tool} must be a JSON object, got {json_type(raw)}.",
            issues=found,
            detail=issues.describe(found, raw),
        )
    try:
        return _CONVERTER.structure(raw, cls)
    except (cattrs.BaseValidationError, ValueError) as exc:
        problems = list(itertools.islice(_problems(exc, cls, raw, []), MAX_ARG_ISSUES))
        found = [issue for issue, _ in problems]
        detail = issues.describe(found, raw)
        rules = exc.exceptions if isinstance(exc, cattrs.BaseValidationError) else ()
        own = [e for e in rules if isinstance(e, InvalidToolInputError)]
        if own and len(own) == len(rules):
            # a rule of the args class itself: its own message and code
            rule = own[0]
            raise InvalidToolInputError(
                rule.message, issues=found, detail=detail, error_code=rule.error_code
            ) from None
        if say_accepted:
            problems = [_with_accepted(problem, cls) for problem in problems]
        text = "; ".join(said for _, said in problems)
        raise InvalidToolInputError(
            f"Invalid arguments for {tool}: {text}", issues=found, detail=detail
        ) from None


def _with_accepted(problem: _Problem, cls: type) -> _Problem:
    """A top-level unknown key's problem, saying what the tool takes instead."""
    issue, said = problem
    if issue.code == "unrecognized_keys" and not issue.path:
        return issue, f"{said} ({accepted_keys(cls)})"
    return problem


#: One problem: its upstream-shaped issue, and how our ``error`` text says it.
_Problem: TypeAlias = "tuple[Issue, str]"


def _problems(exc: BaseException, tp: Any, raw: Any, path: list[Any]) -> Iterator[_Problem]:
    """Walk cattrs' exception tree: each class or list error names its parts in notes (the field,
    the index); each leaf is an exception that carries its facts (the expected type, the allowed
    values, the unknown keys)."""
    if isinstance(exc, cattrs.ClassValidationError):
        cls = exc.cl
        wire = {f.name: wire_name(f) for f in attrs.fields(cls)} if attrs.has(cls) else {}
        with_notes, without = exc.group_exceptions()
        for inner, note in with_notes:
            key = wire.get(note.name, note.name)
            sub = raw.get(key, _ABSENT) if isinstance(raw, Mapping) else _ABSENT
            yield from _problems(inner, note.type, sub, [*path, key])
        for inner in without:
            yield from _problems(inner, cls, raw, path)
    elif isinstance(exc, cattrs.IterableValidationError):
        by_index, unplaced = exc.group_exceptions()
        for item_exc, item_note in by_index:
            index: Any = item_note.index
            sub = raw[index] if isinstance(raw, list) and 0 <= index < len(raw) else _ABSENT
            yield from _problems(item_exc, item_note.type, sub, [*path, index])
        for item_exc in unplaced:
            yield from _problems(item_exc, tp, raw, path)
    else:
        yield _leaf(exc, tp, raw, path)


_ABSENT = object()


def _leaf(exc: BaseException, tp: Any, raw: Any, path: list[Any]) -> _Problem:
    where = ".".join(str(p) for p in path)
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):  # its str() sorts every extra key: not used
        extra = exc.extra_fields
        in_order = (k for k in (raw if isinstance(raw, Mapping) else sorted(extra)) if k in extra)
        keys = list(itertools.islice(in_order, MAX_ARG_ISSUES))  # as sent, like zod
        cut = len(extra) > MAX_ARG_ISSUES
        prefix = f"{where}." if where else ""
        return (
            issues.unrecognized_keys(path, keys, more=cut),
            "unknown argument " + ", ".join(prefix + k for k in keys) + (", …" if cut else ""),
        )
    said = f"{where}: {exc}" if where else str(exc)
    if isinstance(exc, KeyError) and raw is _ABSENT:
        if _is_literal(tp):
            return issues.invalid_value(path, get_args(tp)), f"{where} is required"
        return issues.invalid_type(path, _zod_type(tp)), f"{where} is required"
    if isinstance(exc, WrongType):
        expected, format = _zod_expected(exc)
        return issues.invalid_type(path, expected, exc.value, format=format), said
    if isinstance(exc, NotOneOf):
        return issues.invalid_value(path, exc.allowed), said
    if isinstance(exc, issues.IssueError):
        issue = issues.at(path, exc.issue)
        where = ".".join(str(p) for p in issue.path)
        return issue, f"{where}: {issue.message}" if where else issue.message
    if isinstance(exc, InvalidToolInputError):
        return issues.custom(path, exc.message), exc.message
    return issues.custom(path, str(exc)), said


def _zod_expected(exc: WrongType) -> tuple[str, Any]:
    """The ``expected`` (and ``format``) zod reports for a value of the wrong type: an integer
    argument given a fraction is ``int``/``safeint``, given anything else not a number ``number``."""
    value = exc.value
    if exc.expected == (int,):
        if isinstance(value, float) and not isinstance(value, bool):
            return ("int", "safeint")
        return ("number", None)
    return (_zod_type(exc.expected[0]), None)


_ZOD_TYPES: dict[Any, str] = {
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    dict: "object",
    Mapping: "object",
    list: "array",
}


def _zod_type(tp: Any) -> str:
    """The zod type name of a field's type (an optional field's inner type; an args class is an object)."""
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        return _zod_type(inner[0]) if len(inner) == 1 else "union"
    if origin is not None:
        return _ZOD_TYPES.get(origin, "unknown")
    if isinstance(tp, type) and attrs.has(tp):
        return "object"
    return _ZOD_TYPES.get(tp, "unknown")


def unstructure_args(value: Any) -> dict[str, Any]:
    """The wire form of an args instance (unset optional fields left out)."""
    out: dict[str, Any] = {}
    for f in attrs.fields(type(value)):
        v = getattr(value, f.name)
        if v is None:
            continue
        out[wire_name(f)] = v
    return out


def json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema (top-level object) of an args class, for GET /tools and the CLI."""
    props: dict[str, Any] = {}
    required: list[str] = []
    hints = typing.get_type_hints(cls)
    for f in listed_fields(cls):
        schema = _type_schema(hints[f.name])
        doc = f.metadata.get("doc")
        if doc:
            schema["description"] = doc
        if _plain_default(f.default):
            schema["default"] = f.default
        name = wire_name(f)
        props[name] = schema
        if f.default is attrs.NOTHING:
            required.append(name)
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


def _plain_default(default: Any) -> bool:
    """A literal default worth advertising (not missing, not None, not a factory)."""
    return default is not attrs.NOTHING and default is not None and type(default).__name__ != "Factory"


def _type_schema(tp: Any) -> dict[str, Any]:
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        if len(inner) == 1:
            return _type_schema(inner[0])
        return {"anyOf": [_type_schema(a) for a in inner]}
    if origin is Literal:
        return {"type": "string", "enum": list(get_args(tp))}
    if origin in (list, tuple):
        (item, *_) = get_args(tp) or (Any,)
        return {"type": "array", "items": _type_schema(item)}
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        return {"type": "object"}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if tp in simple:
        return {"type": simple[tp]}
    return {}
