"""JSON Schema (2020-12, the dialect of OpenAPI 3.1) of the wire models, under the codec's rules.

The schema of a model is read from the same declarations the codec reads and writes it by: each
field under its wire name (``codec.wire_name``), the marker key of a marked model, and as required
the fields a writer always writes (those without a default, and ``codec.ALWAYS``). A model the
tool-server writes is closed (it writes no other key); one it reads (``READ``) is open, since the
reader ignores keys it does not know. An optional field may be ``null`` (the reader takes it as
unset; a writer leaves it out).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from types import UnionType
from typing import Any, Literal, get_args, get_origin

import attrs

from argent.link import codec, models

#: The models the tool-server reads from a request (inside a tool's arguments): open objects.
READ: frozenset[type] = frozenset({models.FileInput, models.WireMember, models.Spelling})
#: What the description of a model the server reads adds (the codec's reading rule).
LENIENT = (
    "The tool-server ignores a key it does not know, and reads an optional field of another type as unset."
)
#: Where a schema names another model.
REF_PREFIX = "#/components/schemas/"

_SCALARS: dict[Any, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": REF_PREFIX + name}


class SchemaSet:
    """The schemas of the models reached so far, by class name (``components.schemas``)."""

    def __init__(self) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}

    def model(self, cls: type) -> dict[str, Any]:
        """A reference to ``cls``'s schema, adding it (and every model it reaches) on first use."""
        name = cls.__name__
        if name not in self.schemas:
            self.schemas[name] = {}  # reserved first: a model may reach itself
            self.schemas[name] = self._object(cls)
        return ref(name)

    def of_type(self, tp: Any) -> dict[str, Any]:
        """The schema of a field's type (its resolved hint)."""
        origin = get_origin(tp)
        if origin in (typing.Union, UnionType):
            return self._union(get_args(tp))
        if origin is Literal:
            choices = list(get_args(tp))
            kinds = sorted({_SCALARS[type(c)] for c in choices})
            return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": choices}
        if origin in (list, tuple) or tp in (list, tuple):
            items = [a for a in get_args(tp) if a is not Ellipsis]
            return {"type": "array", "items": self.of_type(items[0]) if items else {}}
        if origin in (dict, Mapping) or tp in (dict, Mapping):
            pair = get_args(tp)
            return {"type": "object", "additionalProperties": self.of_type(pair[1]) if pair else {}}
        if tp in _SCALARS:
            return {"type": _SCALARS[tp]}
        if isinstance(tp, type) and attrs.has(tp):
            return self.model(tp)
        return {}  # Any: any JSON value

    def _union(self, members: tuple[Any, ...]) -> dict[str, Any]:
        parts = [self.of_type(a) for a in members if a is not type(None)]
        if type(None) in members:
            if len(parts) == 1 and set(parts[0]) == {"type"} and isinstance(parts[0]["type"], str):
                return {"type": [parts[0]["type"], "null"]}
            parts.append({"type": "null"})
        return parts[0] if len(parts) == 1 else {"anyOf": parts}

    def tagged(self, cls: type, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """One NDJSON line: the event model's schema with its ``event`` tag first
        (``models.EVENT_TAGS``), ``data`` narrowed to ``data`` when given (what the progress or
        result lines of one tool carry)."""
        base = self._object(cls)
        props = {"event": {"const": models.EVENT_TAGS[cls]}, **base["properties"]}
        if data is not None and "data" in props:
            props["data"] = data
        return {**base, "properties": props, "required": ["event", *base.get("required", [])]}

    def _object(self, cls: type) -> dict[str, Any]:
        hints = typing.get_type_hints(cls)
        props: dict[str, Any] = {}
        required: list[str] = []
        marker = codec.MARKERS.get(cls)
        if marker is not None:
            props[marker] = {"const": True}
            required.append(marker)
        for f in attrs.fields(cls):
            key = codec.wire_name(cls, f)
            props[key] = self.of_type(hints[f.name])
            if f.default is attrs.NOTHING or (cls, f.name) in codec.ALWAYS:
                required.append(key)
        out: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        doc = " ".join((cls.__doc__ or "").split()).replace("``", "`")
        if cls in READ:
            doc += " " + LENIENT
        else:
            out["additionalProperties"] = False
        if doc.strip():
            out["description"] = doc.strip()
        return out
