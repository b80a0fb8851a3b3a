"""Tool arguments: attrs classes in, JSON Schema and strict validation out.

A tool declares its arguments once, as an attrs class whose fields may carry
``metadata={"wire": "camelName", "doc": "..."}``. From that one declaration we derive
the JSON Schema of ``GET /tools`` and a strict cattrs structure hook: no silent
``5 -> "5"`` coercion, unknown keys refused, every problem named by its argument.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override

from argent.errors import InvalidToolInputError
from argent.link.codec import json_type, strict, strict_scalars

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


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)
    strict_scalars(conv)
    conv.register_structure_hook(dict, strict(dict, "an object"))

    def any_hook(value: Any, _: Any) -> Any:
        return value

    conv.register_structure_hook(Any, any_hook)
    conv.register_structure_hook_func(_is_literal, _literal)
    conv.register_structure_hook_func(
        lambda t: attrs.has(t),
        lambda v, t: _structure_args(conv, v, t),
    )
    return conv


_FACTORIES: dict[type, Any] = {}


def _structure_args(conv: cattrs.Converter, value: Any, cls: type) -> Any:
    fn = _FACTORIES.get(cls)
    if fn is None:
        overrides = {f.name: override(rename=wire_name(f)) for f in attrs.fields(cls)}
        fn = make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=True, **overrides)  # type: ignore[arg-type]
        _FACTORIES[cls] = fn
    if not isinstance(value, Mapping):
        raise ValueError(f"expected an object, got {json_type(value)}")
    return fn(value, cls)


_CONVERTER = _make_converter()


def structure_args(tool: str, raw: Any, cls: type[A], *, say_accepted: bool = False) -> A:
    """Validate ``raw`` (a JSON object) into ``cls``; raise InvalidToolInputError naming each problem
    (``say_accepted``: an unknown key's problem also names the keys the tool takes)."""
    if not isinstance(raw, Mapping):
        raise InvalidToolInputError(f"Arguments for {tool} must be a JSON object, got {json_type(raw)}.")
    try:
        return _CONVERTER.structure(raw, cls)
    except cattrs.ClassValidationError as exc:
        if exc.exceptions and all(isinstance(e, InvalidToolInputError) for e in exc.exceptions):
            raise exc.exceptions[0] from None  # a rule of the args class itself: its own message
        problems = _problems(exc, cls, say_accepted)
        raise InvalidToolInputError(f"Invalid arguments for {tool}: " + "; ".join(problems)) from None
    except ValueError as exc:
        raise InvalidToolInputError(f"Invalid arguments for {tool}: {exc}") from None


def _problems(exc: cattrs.ClassValidationError, cls: type, say_accepted: bool = False) -> list[str]:
    wire = {f.name: wire_name(f) for f in attrs.fields(cls)}
    out: list[str] = []
    with_notes, without = exc.group_exceptions()
    pairs = [(inner, wire.get(note.name, note.name)) for inner, note in with_notes]
    pairs += [(inner, "") for inner in without]
    for inner, name in pairs:
        if isinstance(inner, cattrs.ForbiddenExtraKeysError):
            unknown = "unknown argument " + ", ".join(sorted(inner.extra_fields))
            out.append(f"{unknown} ({accepted_keys(cls)})" if say_accepted else unknown)
        elif isinstance(inner, KeyError):
            out.append(f"{name} is required")
        else:
            out.append(f"{name}: {inner}" if name else str(inner))
    return out


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
