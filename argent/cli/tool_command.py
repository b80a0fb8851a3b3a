"""A Click command built from a tool's JSON schema: `argent run <tool> --<arg> <value>...`.

Each property of the tool's ``inputSchema`` becomes an option, so Click parses the flags, checks
their types and enums, and ``argent run <tool> --help`` lists them. The flag of ``projectRoot`` or
``project_root`` is ``--project-root``; flags match whatever their case, ``-`` or ``_``
(``--projectRoot`` works too). Integers and numbers are checked as such; a boolean is a bare
``--flag`` (or ``--flag true|false``) and ``--no-flag``; an array takes the flag once per item; an
object takes JSON, and every argument also takes JSON as ``--<arg>-json``. A name that cannot be a
flag is passed in ``--args``.

A listing is untrusted: a property of an unexpected shape is read as a string, and every text
shown in the help (descriptions, choices) is terminal-safe.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from attrs import frozen
from click.core import ParameterSource

from argent.link.models import ToolEntry
from argent.reports.render import terminal_safe

if TYPE_CHECKING:
    AnyType = click.ParamType[Any, Any]
else:  # not subscriptable before Click 8.3
    AnyType = click.ParamType

#: Options every tool command has; a property whose flag would shadow one is passed in ``--args``.
RESERVED = ("args", "json", "help")
#: The property names that can be flags.
_FLAG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def flag(name: str) -> str:
    """The flag of an argument: ``updateBaselines`` and ``update_baselines`` are ``--update-baselines``."""
    return "--" + _CAMEL.sub(r"-\1", name).replace("_", "-").lower()


def normalize(token: str) -> str:
    """What Click compares flag names by: case, ``-`` and ``_`` do not matter."""
    return token.replace("-", "").replace("_", "").lower()


class JsonValue(AnyType):
    """Any JSON value."""

    name = "json"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            self.fail(f"expected JSON: {exc.msg}", param, ctx)


class Number(AnyType):
    """A JSON number: an integer unless it has a fraction or an exponent."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            number = float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            self.fail(f"{value!r} is not a number.", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


class Boolean(AnyType):
    """``true`` or ``false`` (``1`` or ``0``), in any case."""

    name = "boolean"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[true|false]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, bool):
            return value
        text = str(value).lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        self.fail(f"expected true or false, got {value!r}", param, ctx)


BOOLEAN = Boolean()
JSON_VALUE = JsonValue()
NUMBER = Number()
_SCALARS: dict[str, AnyType] = {
    "integer": click.INT,
    "number": NUMBER,
    "boolean": BOOLEAN,
    "string": click.STRING,
    "object": JSON_VALUE,
    "array": JSON_VALUE,
}


@frozen
class Field:
    """Which argument an option sets, and whether its values are a list (a repeated flag)."""

    name: str
    repeated: bool = False


def _param_type(prop: dict[str, Any]) -> AnyType:
    """The Click type of one value: a choice for a string enum that is safe to show, else by ``type``."""
    enum = prop.get("enum")
    kind = prop.get("type")
    if (
        kind in (None, "string")
        and isinstance(enum, list)
        and enum
        and all(isinstance(v, str) and terminal_safe(v) == v for v in enum)
    ):
        return click.Choice(enum)
    return _SCALARS.get(kind, click.STRING) if isinstance(kind, str) else click.STRING


def _help(prop: dict[str, Any], required: bool) -> str:
    description = prop.get("description")
    text = terminal_safe(description.strip()) if isinstance(description, str) else ""
    return f"{text}  [required]" if required else text


class ToolCommand(click.Command):
    """One tool as a command: its options come from the schema, ``fields`` maps them back."""

    def __init__(self, name: str, fields: dict[str, Field], **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self.fields = fields

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # Click consumes ``args``
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            typed = next(
                (
                    token.split("=", 1)[0]
                    for token in given
                    if token.startswith("-")
                    and "--" + normalize(token.split("=", 1)[0].lstrip("-")) == exc.option_name
                ),
                exc.option_name,
            )
            known = ", ".join(sorted({flag(f.name) for f in self.fields.values()})) or "none"
            raise click.UsageError(
                terminal_safe(f"unknown flag {typed} (this tool takes: {known})"), ctx
            ) from None

    def tool_args(self, ctx: click.Context) -> dict[str, Any]:
        """The arguments the flags gave, in the order they were given (a later flag wins)."""
        out: dict[str, Any] = {}
        for dest, value in ctx.params.items():
            field = self.fields.get(dest)
            if field is None or ctx.get_parameter_source(dest) is not ParameterSource.COMMANDLINE:
                continue
            out[field.name] = list(value) if field.repeated else value
        return out


def _options(name: str, prop: dict[str, Any], index: int, required: bool) -> list[tuple[click.Option, Field]]:
    """The options of one property: its flag (``--no-`` too for a boolean) and its ``-json`` form."""
    option = flag(name)
    dest = f"arg{index}"
    kind = prop.get("type")
    text = _help(prop, required)
    made: list[tuple[click.Option, Field]] = []
    if kind == "boolean":
        made.append(
            (
                click.Option(
                    [option, dest], type=BOOLEAN, is_flag=False, flag_value=True, default=None, help=text
                ),
                Field(name),
            )
        )
        made.append(
            (
                click.Option(
                    ["--no-" + option[2:], dest + "_no"],
                    is_flag=True,
                    flag_value=False,
                    default=None,
                    help=f"Set {option[2:]} to false.",
                ),
                Field(name),
            )
        )
    elif kind == "array":
        items = prop.get("items")
        item_type = _param_type(items) if isinstance(items, dict) else click.STRING
        made.append(
            (
                click.Option(
                    [option, dest],
                    type=item_type,
                    multiple=True,
                    help=f"{text} (repeat for each item)".strip(),
                ),
                Field(name, repeated=True),
            )
        )
    else:
        made.append(
            (click.Option([option, dest], type=_param_type(prop), default=None, help=text), Field(name))
        )
    shown = kind in ("array", "object")
    made.append(
        (
            click.Option(
                [option + "-json", dest + "_json"],
                type=JSON_VALUE,
                default=None,
                hidden=not shown,
                help=f"The whole {option[2:]} as JSON.",
            ),
            Field(name),
        )
    )
    return made


def build_tool_command(
    entry: ToolEntry,
    common: list[click.Option],
    callback: Callable[..., Any],
    *,
    example: str,
) -> ToolCommand:
    """The command of one listing entry; ``common`` are the options every tool takes (``--args``, ``--json``)."""
    schema = entry.input_schema if isinstance(entry.input_schema, dict) else {}
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = schema.get("required")
    required_names = {n for n in required if isinstance(n, str)} if isinstance(required, list) else set()
    taken = {normalize(n) for n in RESERVED}
    params: list[click.Parameter] = list(common)
    fields: dict[str, Field] = {}
    unflagged: list[str] = []
    for index, (name, prop) in enumerate(props.items()):
        made = _options(name, prop if isinstance(prop, dict) else {}, index, name in required_names)
        spellings = [normalize(opt.opts[0]) for opt, _field in made]
        if not _FLAG_NAME.match(name) or spellings[0] in taken:
            unflagged.append(name)
            continue
        for (opt, field), spelled in zip(made, spellings, strict=True):
            if spelled in taken:
                continue  # another argument's flag already: it wins, as the first listed
            taken.add(spelled)
            params.append(opt)
            fields[str(opt.name)] = field
    description = entry.description
    lines = [terminal_safe(description.strip()) if isinstance(description, str) else ""]
    lines.append("--args gives the whole argument object as JSON; flags override it.")
    if unflagged:
        lines.append("Pass these in --args: " + terminal_safe(", ".join(unflagged)))
    return ToolCommand(
        entry.name,
        fields,
        params=params,
        callback=callback,
        help="\n\n".join(line for line in lines if line),
        epilog=terminal_safe(f"Example: {example}"),
        short_help=None,
        context_settings={"token_normalize_func": normalize},
    )
