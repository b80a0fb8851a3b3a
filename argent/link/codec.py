"""The JSON wire's one cattrs converter: every model of ``argent.link.models`` in and out.

The rules, declared here once:

- **Names.** A field travels under the camelCase form of its Python name (``mtime_ms`` ->
  ``mtimeMs``); ``WIRE_NAMES`` lists the few that do not. ``MARKERS`` lists the models marked by a
  key whose value is ``true`` (``__argentFileInput``, ``__argentClientFile``).
- **Writing.** A field at its default is left out (None is the default of every optional field);
  ``ALWAYS`` lists the fields written even then. ``EVENT_TAGS`` names each NDJSON event.
- **Reading.** Scalars are never coerced (``5`` is not a string, ``true`` not a number). A
  required field that is missing or malformed fails the object with cattrs' structured
  ``ClassValidationError`` (each inner error carries an ``AttributeValidationNote`` naming the
  field); an optional field that is malformed reads as its default, and ``read`` says which
  fields did (``Read.wrong``), so a caller that must refuse one can. ``SKIPPED_ITEMS`` lists the
  lists whose unreadable items are left out instead of failing the list.
- **Answers.** A client trusts no tool-server and never fails on a report: the models in
  ``ANSWERS`` require nothing, and a missing or malformed field reads as its default, or, where
  that is computed or absent, as the empty value of its type (0, "", false, an empty list).

Anything else that is an attrs class (a tool's own result) is written with the naming rule (or
its field's ``metadata["wire"]``), its None fields left out.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Callable, Hashable, Iterable, Mapping
from types import UnionType
from typing import Any, Generic, Literal, TypeAlias, TypeVar, cast, get_args, get_origin

import attrs
import cattrs
from attrs import frozen
from cattrs.errors import AttributeValidationNote, ClassValidationError, IterableValidationError
from cattrs.fns import identity
from cattrs.gen import make_dict_unstructure_fn, override
from cattrs.strategies import configure_tagged_union

from argent.link import models
from argent.link.models import (
    CLIENT_FILE_MARKER,
    EVENT_TAGS,
    FILE_INPUT_MARKER,
    ArtifactImage,
    ClientFileDirective,
    Disabled,
    ErrorBody,
    Event,
    FileInput,
    FileInputSpec,
    FlowRunResult,
    ImageResult,
    NamedUploads,
    PrerequisiteNotice,
    ProgressEvent,
    ResultBody,
    ResultEvent,
    StepReport,
    ToolEntry,
    ToolListing,
)

T = TypeVar("T")

#: Wire names that are not the camelCase of the Python name, by (model, field).
WIRE_NAMES: dict[tuple[type, str], str] = {
    (ErrorBody, "error_code"): "error_code",
    (ErrorBody, "error_kind"): "error_kind",
}
#: Fields written even when they hold their default.
ALWAYS: frozenset[tuple[type, str]] = frozenset(
    {
        (StepReport, "duration_ms"),
        (PrerequisiteNotice, "notice"),
        (FlowRunResult, "steps"),
        (ResultBody, "data"),
        (ResultEvent, "data"),
        (ProgressEvent, "data"),
        (ImageResult, "mime_type"),
        (ArtifactImage, "mime_type"),
    }
)
#: Models marked on the wire by a key whose value is true.
MARKERS: dict[type, str] = {
    FileInput: FILE_INPUT_MARKER,
    NamedUploads: FILE_INPUT_MARKER,
    ClientFileDirective: CLIENT_FILE_MARKER,
}
#: Lists whose items that cannot be read are left out, by (model, field).
SKIPPED_ITEMS: frozenset[tuple[type, str]] = frozenset(
    {
        (ToolListing, "tools"),
        (ToolEntry, "file_inputs"),
        (FlowRunResult, "steps"),
        (FlowRunResult, "artifact_images"),
        (NamedUploads, "members"),
    }
)
#: Models a client reads whatever was sent: nothing is required, nothing malformed fails them.
ANSWERS: frozenset[type] = frozenset({StepReport, FlowRunResult})

_CAMEL = re.compile(r"_([a-z])")


def camel(name: str) -> str:
    return _CAMEL.sub(lambda m: m.group(1).upper(), name)


def wire_name(cls: type, f: attrs.Attribute[Any]) -> str:
    """The JSON key of field ``f`` of ``cls``."""
    name = WIRE_NAMES.get((cls, f.name))
    if name is not None:
        return name
    return str(f.metadata.get("wire", camel(f.name)))


def _is_model(cls: Any) -> bool:
    return isinstance(cls, type) and attrs.has(cls) and cls.__module__ == models.__name__


# --------------------------------------------------------------------------------------------
# Reading


@frozen
class Read(Generic[T]):
    """A model read from the wire, and the wire names of its optional fields that were malformed
    (each read as its default), with the error each raised."""

    value: T
    wrong: Mapping[str, BaseException] = attrs.field(factory=dict)


class NotAnObject(ValueError):
    """The wire value of a model is not a JSON object (or lacks the model's marker)."""


def json_type(value: Any) -> str:
    """The JSON type of a parsed value, as error messages name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class WrongType(ValueError):
    """A wire value of the wrong JSON type; says which types were ``expected`` and keeps the ``value``
    so a caller can report the problem from these fields instead of from the text."""

    def __init__(self, expected: tuple[type, ...], label: str, value: Any) -> None:
        super().__init__(f"expected {label}, got {json_type(value)}")
        self.expected = expected
        self.value = value


def strict(expected: type | tuple[type, ...], label: str) -> Callable[[Any, Any], Any]:
    """A structure hook that takes only values of ``expected`` (a boolean is never a number)."""
    types_ = expected if isinstance(expected, tuple) else (expected,)

    def check(value: Any, _: Any) -> Any:
        if (isinstance(value, bool) and bool not in types_) or not isinstance(value, types_):
            raise WrongType(types_, label, value)
        return value

    return check


def _empty(tp: Any) -> Any:
    """The empty value of a type, for a field of an answer the server did not send usably."""
    origin = get_origin(tp)
    if origin in (typing.Union, UnionType):
        return None
    if origin is Literal:
        return type(get_args(tp)[0])()
    if origin is list or tp is list:
        return []
    if origin is dict or tp is dict:
        return {}
    if tp in (str, int, float, bool):
        return tp()
    return None


def _plain_default(f: attrs.Attribute[Any]) -> bool:
    """Whether ``f`` has a default that needs no instance (a value, or a factory of none)."""
    default: Any = f.default
    return default is not attrs.NOTHING and not getattr(default, "takes_self", False)


def _default_of(f: attrs.Attribute[Any]) -> Any:
    default: Any = f.default
    return default.factory() if hasattr(default, "takes_self") else default


@functools.cache
def _fields(cls: Any) -> tuple[tuple[attrs.Attribute[Any], str, Any], ...]:
    """Each field of a model with its wire name and its resolved type."""
    hints = typing.get_type_hints(cls)
    return tuple((f, wire_name(cls, f), hints[f.name]) for f in attrs.fields(cls))


def _noted(exc: Exception, cls: type, f: attrs.Attribute[Any]) -> Exception:
    note = AttributeValidationNote(
        f"Structuring class {cls.__qualname__} @ attribute {f.name}", f.name, f.type
    )
    exc.__notes__ = [*getattr(exc, "__notes__", []), note]
    return exc


#: How one field is read: its key, the hook of its type, its type, its keyword (or attribute, when
#: not an ``__init__`` argument), whether it goes to ``__init__``, whether it has a plain default.
_Field: TypeAlias = "tuple[str, Callable[[Any, Any], Any], Any, str, bool, bool, attrs.Attribute[Any]]"


@functools.cache
def _plan(conv: cattrs.Converter, cls: Any) -> tuple[_Field, ...]:
    plan = []
    for f, key, tp in _fields(cls):
        hook: Callable[[Any, Any], Any]
        if (cls, f.name) in SKIPPED_ITEMS:
            hook = functools.partial(_readable_items, conv)
        else:
            hook = conv.get_structure_hook(tp)
        slot = str(f.alias) if f.init else f.name
        plan.append((key, hook, tp, slot, f.init, _plain_default(f), f))
    return tuple(plan)


def _read(conv: cattrs.Converter, raw: Any, cls: type[T]) -> Read[T]:
    """One model from its wire value under the reading rules (see the module docstring); a model
    is already read."""
    if isinstance(raw, cls):
        return Read(raw)
    marker = MARKERS.get(cls)
    if not isinstance(raw, Mapping) or (marker is not None and raw.get(marker) is not True):
        what = f"a {marker} object" if marker is not None else "an object"
        raise NotAnObject(f"expected {what}, got {json_type(raw)}")
    answer = cls in ANSWERS
    init: dict[str, Any] = {}
    late: dict[str, Any] = {}
    wrong: dict[str, BaseException] = {}
    errors: list[Exception] = []
    for key, hook, tp, slot, is_init, plain, f in _plan(conv, cast(Hashable, cls)):
        into = init if is_init else late
        if key in raw:
            try:
                into[slot] = hook(raw[key], tp)
                continue
            except Exception as exc:  # every malformed value is the wire's, and reported as such
                if answer:
                    into[slot] = _default_of(f) if plain else _empty(tp)
                elif plain:
                    wrong[key] = exc
                else:
                    errors.append(_noted(exc, cls, f))
        elif answer and not plain:
            into[slot] = _empty(tp)
        elif not plain and is_init:
            errors.append(_noted(KeyError(key), cls, f))
    if errors:
        raise ClassValidationError(f"While structuring {cls.__name__}", errors, cls)
    try:
        value = cls(**init)
    except Exception as exc:  # a model's own rule (an attrs validator)
        raise ClassValidationError(f"While structuring {cls.__name__}", [exc], cls) from None
    for name, item in late.items():
        object.__setattr__(value, name, item)
    return Read(value, wrong)


def _readable_items(conv: cattrs.Converter, raw: Any, tp: Any) -> list[Any]:
    """The items of a list that read as its item type; the others are left out (an optional list's
    too: ``list[X] | None``)."""
    if not isinstance(raw, list):
        raise ValueError(f"expected an array, got {json_type(raw)}")
    if get_origin(tp) in (typing.Union, UnionType):
        (tp,) = (arg for arg in get_args(tp) if arg is not type(None))
    (item_type,) = get_args(tp)
    out = []
    for item in raw:
        try:
            out.append(conv.structure(item, item_type))
        except Exception:
            continue
    return out


def _list_hook(conv: cattrs.Converter) -> Callable[[Any], Any]:
    def factory(tp: Any) -> Callable[[Any, Any], Any]:
        args = get_args(tp)
        item_type = args[0] if args else Any

        def structure(value: Any, _: Any) -> list[Any]:
            if not isinstance(value, list):
                raise ValueError(f"expected an array, got {json_type(value)}")
            out, errors = [], []
            for index, item in enumerate(value):
                try:
                    out.append(conv.structure(item, item_type))
                except Exception as exc:
                    note = cattrs.errors.IterableValidationNote(
                        f"Structuring {tp} @ index {index}", index, item_type
                    )
                    exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                    errors.append(exc)
            if errors:
                raise IterableValidationError(f"While structuring {tp!r}", errors, tp)
            return out

        return structure

    return factory


# --------------------------------------------------------------------------------------------
# Writing


def _model_unstructure(
    conv: cattrs.Converter, replaced: Mapping[str, Callable[[Any], Any]] | None = None
) -> Callable[[Any], Callable[[Any], dict[str, Any]]]:
    """The writer of a model; ``replaced`` writes the fields it names with its own hooks."""
    replaced = replaced or {}

    def factory(cls: type) -> Callable[[Any], dict[str, Any]]:
        overrides = {
            f.name: override(
                rename=wire_name(cls, f),
                omit_if_default=False if (cls, f.name) in ALWAYS else None,
                # JSON data of any shape (a tool's result, a step's args): by its runtime type
                unstruct_hook=replaced.get(f.name, conv.unstructure if tp is Any else _scalar_hook(conv, tp)),
            )
            for f, _, tp in _fields(cast(Hashable, cls))
        }
        fn: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(
            cls,
            conv,
            _cattrs_omit_if_default=True,
            _cattrs_include_init_false=True,
            **overrides,  # type: ignore[arg-type]
        )
        marker = MARKERS.get(cls)
        keys = ([marker] if marker is not None else []) + [wire_name(cls, f) for f in attrs.fields(cls)]
        late = _late_keys(cls)
        if marker is None and late is not None:
            if not late:
                return fn

            def moved(value: Any) -> dict[str, Any]:
                """cattrs writes the fields that are always there first: move the trailing ones back."""
                out = fn(value)
                for key in late:
                    out[key] = out.pop(key)
                return out

            return moved

        def ordered(value: Any) -> dict[str, Any]:
            """The fields in their declared order (cattrs writes the optional ones last)."""
            out = fn(value)
            if marker is not None:
                out[marker] = True
            return {key: out[key] for key in keys if key in out}

        return ordered

    return factory


def _scalar_hook(conv: cattrs.Converter, tp: Any) -> Callable[[Any], Any] | None:
    """``identity`` for an optional field of a type written as it is (``str | None``): cattrs then
    writes the value in place instead of calling its optional hook, which returns it unchanged."""
    if get_origin(tp) in (typing.Union, UnionType):
        hooks = [conv.get_unstructure_hook(arg) for arg in get_args(tp) if arg is not type(None)]
        if hooks and all(hook is identity for hook in hooks):
            return identity
    return None


def _late_keys(cls: type) -> list[str] | None:
    """The always-written fields declared after an optional one, when they end the model (moving
    them to the end restores the declared order); None when the order needs a full rebuild."""
    fields = attrs.fields(cls)
    optional = [f.default is not attrs.NOTHING and (cls, f.name) not in ALWAYS for f in fields]
    if True not in optional:
        return []
    first = optional.index(True)
    late = [i for i in range(first, len(fields)) if not optional[i]]
    if late and late != list(range(late[0], len(fields))):
        return None
    return [wire_name(cls, fields[i]) for i in late]


def _foreign_unstructure(conv: cattrs.Converter) -> Callable[[Any], Callable[[Any], dict[str, Any]]]:
    """A tool's own attrs result: renamed by the naming rule, its None fields left out."""

    def factory(cls: type) -> Callable[[Any], dict[str, Any]]:
        named = [(f.name, wire_name(cls, f)) for f in attrs.fields(cls)]

        def unstructure(value: Any) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, key in named:
                item = getattr(value, name)
                if item is not None:
                    out[key] = conv.unstructure(item)
            return out

        return unstructure

    return factory


def _disabled() -> Callable[[Any, Any], Disabled]:
    """A tool's ``disabled``: an object with its reason, or (from an older or odd tool-server) any
    other value, whose text is the reason: a tool listed as disabled always reads as disabled."""

    def structure(raw: Any, _: Any) -> Disabled:
        reason = raw.get("reason", "") if isinstance(raw, Mapping) else raw
        return Disabled(reason if isinstance(reason, str) else str(reason))

    return structure


def _is_list(tp: Any) -> bool:
    return tp is list or get_origin(tp) is list


def strict_scalars(conv: cattrs.Converter) -> None:
    """Register hooks that never coerce a JSON scalar (``5`` is not a string, ``true`` not a number)."""
    conv.register_structure_hook(str, strict(str, "a string"))
    conv.register_structure_hook(bool, strict(bool, "a boolean"))
    conv.register_structure_hook(int, strict(int, "an integer"))
    conv.register_structure_hook(float, strict((int, float), "a number"))


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter()
    strict_scalars(conv)
    conv.register_structure_hook_factory(_is_list, _list_hook(conv))
    conv.register_structure_hook_func(_is_model, lambda raw, cls: _read(conv, raw, cls).value)
    conv.register_structure_hook_func(lambda t: t is Disabled, _disabled())
    conv.register_unstructure_hook_factory(_is_model, _model_unstructure(conv))
    conv.register_unstructure_hook_factory(
        lambda t: attrs.has(t) and not _is_model(t), _foreign_unstructure(conv)
    )
    configure_tagged_union(Event, conv, tag_generator=EVENT_TAGS.__getitem__, tag_name="event")

    hooks = {cls: (tag, conv.get_unstructure_hook(cls)) for cls, tag in EVENT_TAGS.items()}

    def tag_first(event: Any) -> dict[str, Any]:
        tag, hook = hooks[type(event)]
        return {"event": tag, **hook(event)}

    conv.register_unstructure_hook(Event, tag_first)
    return conv


#: The converter of the JSON wire.
converter = _make_converter()


def to_wire(value: Any) -> Any:
    """Any model, result or report as JSON-ready data."""
    return converter.unstructure(value)


_EVENT_HOOK: Callable[[Event], dict[str, Any]] = converter.get_unstructure_hook(Event)


def event_to_wire(event: Event) -> dict[str, Any]:
    """One NDJSON line's object, ``event`` first."""
    return _EVENT_HOOK(event)


_STEP_HOOK: Callable[[StepReport], dict[str, Any]] = converter.get_unstructure_hook(StepReport)


def step_to_wire(report: StepReport) -> dict[str, Any]:
    """``to_wire(report)`` of a ``StepReport`` (its hook looked up once: a run writes many)."""
    return _STEP_HOOK(report)


#: A ``FlowRunResult`` as ``to_wire`` writes it, but for its ``steps``: an empty list in their place.
_RESULT_HEAD: Callable[[FlowRunResult], dict[str, Any]] = _model_unstructure(
    converter, {"steps": lambda _: []}
)(FlowRunResult)


def result_head_to_wire(result: FlowRunResult) -> dict[str, Any]:
    """``to_wire`` of ``result`` with no steps (``"steps": []``), in its place among the keys: for a
    writer that splices in the steps it has already encoded."""
    return _RESULT_HEAD(result)


def structure(raw: Any, cls: type[T]) -> T:
    """``cls`` from its wire value; raises ``NotAnObject`` or cattrs' ``ClassValidationError``."""
    return converter.structure(raw, cls)


def read(raw: Any, cls: type[T]) -> Read[T]:
    """As ``structure``, also saying which optional fields were malformed (see ``Read``)."""
    return _read(converter, raw, cls)


def read_or_none(raw: Any, cls: type[T]) -> T | None:
    """``cls`` from its wire value, or None when the value cannot be read as one."""
    try:
        return converter.structure(raw, cls)
    except (NotAnObject, ClassValidationError):
        return None


def read_answer(raw: Any, cls: type[T]) -> T:
    """A model of ``ANSWERS`` from any JSON object (every field may be missing or malformed)."""
    return converter.structure(raw, cls)


def read_event(raw: Any) -> Event | None:
    """One NDJSON line as an event; None for a line of another shape or an unknown event."""
    if not isinstance(raw, Mapping):
        return None
    tag = raw.get("event")
    for cls, name in EVENT_TAGS.items():
        if tag == name:
            return read_or_none(raw, cls)
    return None


def read_items(raw: Any, cls: type[T]) -> list[T]:
    """The items of a JSON array that read as ``cls`` (the others left out); none for a non-array."""
    return _readable_items(converter, raw, list[cls]) if isinstance(raw, list) else []  # type: ignore[valid-type]


def read_specs(specs: Iterable[Any] | None) -> list[FileInputSpec]:
    """File-input specs as models: models as they are, JSON ones read (unreadable ones left out)."""
    out: list[FileInputSpec] = []
    for spec in specs or ():
        if isinstance(spec, FileInputSpec):
            out.append(spec)
        elif (read := read_or_none(spec, FileInputSpec)) is not None:
            out.append(read)
    return out


def failed_fields(exc: ClassValidationError) -> list[str]:
    """The names of the fields a ``ClassValidationError`` is about, in order."""
    with_notes, _ = exc.group_exceptions()
    return [note.name for _, note in with_notes]
