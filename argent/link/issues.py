"""Argument problems in the shape upstream argent's zod schemas report them.

Upstream's tool-server answers a call whose arguments do not fit with ``issues`` (zod issues:
``{code, path, message, ...}``) and a ``message`` built from them; its CLI reads ``issues`` to tell
a usage error (exit 2) from a failed call (exit 1). The builders here make the same codes, fields
and message texts from facts (the expected type, the allowed values, the bound), never from
another error's text; ``describe`` writes the ``message`` the way upstream does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from argent.link.codec import json_type
from argent.link.models import Issue

#: How many of the keys a caller sent ``describe`` names (upstream names 24, then "…").
SENT_KEYS_NAMED = 24

_MISSING = object()


class IssueError(ValueError):
    """Raised by an argument's own check (an attrs validator, a structure hook) to report an issue
    with a code of its own (``too_small``, ``too_big``, ...); its path is relative to the value checked."""

    def __init__(self, issue: Issue) -> None:
        super().__init__(issue.message)
        self.issue = issue


def js(value: Any) -> str:
    """A JSON scalar as JavaScript prints it in zod's messages (``1`` not ``1.0``, strings quoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _number(value: Any) -> Any:
    """A bound as JSON carries it: ``1`` for 1.0, so the wire matches upstream's."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def invalid_type(
    path: Sequence[Any], expected: str, value: Any = _MISSING, *, format: str | None = None
) -> Issue:
    """``value`` (absent when it was not sent) is not of the ``expected`` zod type."""
    received = "undefined" if value is _MISSING else json_type(value)
    return Issue(
        "invalid_type",
        list(path),
        f"Invalid input: expected {expected}, received {received}",
        expected=expected,
        format=format,
    )


def invalid_value(path: Sequence[Any], values: Iterable[Any]) -> Issue:
    """A value outside an enum's or a literal's ``values``."""
    allowed = list(values)
    if len(allowed) == 1:
        message = f"Invalid input: expected {js(allowed[0])}"
    else:
        message = "Invalid option: expected one of " + "|".join(js(v) for v in allowed)
    return Issue("invalid_value", list(path), message, values=allowed)


def unrecognized_keys(path: Sequence[Any], keys: Iterable[str], *, more: bool = False) -> Issue:
    """Keys the object does not declare; ``more`` when ``keys`` names only the first of them."""
    names = list(keys)
    plural = "s" if len(names) > 1 or more else ""
    return Issue(
        "unrecognized_keys",
        list(path),
        f"Unrecognized key{plural}: " + ", ".join(js(k) for k in names) + (", …" if more else ""),
        keys=names,
    )


_SIZED = {"string": "characters", "array": "items"}


def too_small(path: Sequence[Any], origin: str, minimum: float, *, inclusive: bool = True) -> Issue:
    """A number under ``minimum`` (``origin`` "number"), or a string/array shorter than it."""
    return _bound("too_small", path, origin, minimum, inclusive, "Too small", ">=" if inclusive else ">")


def too_big(path: Sequence[Any], origin: str, maximum: float, *, inclusive: bool = True) -> Issue:
    """A number over ``maximum`` (``origin`` "number"), or a string/array longer than it."""
    return _bound("too_big", path, origin, maximum, inclusive, "Too big", "<=" if inclusive else "<")


def _bound(
    code: str, path: Sequence[Any], origin: str, bound: float, inclusive: bool, head: str, op: str
) -> Issue:
    unit = _SIZED.get(origin)
    verb = f"to have {op}{js(bound)} {unit}" if unit else f"to be {op}{js(bound)}"
    bound_field = {"minimum" if code == "too_small" else "maximum": _number(bound)}
    return Issue(
        code,
        list(path),
        f"{head}: expected {origin} {verb}",
        origin=origin,
        inclusive=inclusive,
        **bound_field,
    )


def custom(path: Sequence[Any], message: str) -> Issue:
    """A rule over one argument or several (``path`` ``[]``), in the rule's own words."""
    return Issue("custom", list(path), message)


def at(prefix: Sequence[Any], issue: Issue) -> Issue:
    """``issue`` moved under ``prefix`` (an issue of a nested value, reported from its parent)."""
    if not prefix:
        return issue
    return Issue(
        issue.code,
        [*prefix, *issue.path],
        issue.message,
        expected=issue.expected,
        format=issue.format,
        keys=issue.keys,
        values=issue.values,
        origin=issue.origin,
        minimum=issue.minimum,
        maximum=issue.maximum,
        inclusive=issue.inclusive,
    )


def _value_at(root: Any, path: Sequence[Any]) -> Any:
    current = root
    for key in path:
        in_object = isinstance(current, Mapping) and isinstance(key, str) and key in current
        in_array = isinstance(current, list) and isinstance(key, int) and 0 <= key < len(current)
        if not (in_object or in_array):
            return _MISSING
        current = current[key]
    return current


def describe(issues: Sequence[Issue], sent: Any) -> str:
    """Upstream's ``message``: one sentence per issue (a missing argument is "required", unknown keys
    are "unknown parameters"), then the keys the caller sent."""
    parts = [_sentence(issue, sent) for issue in issues]
    keys = list(sent) if isinstance(sent, Mapping) else []
    named = ", ".join(f"`{k}`" for k in keys[:SENT_KEYS_NAMED])
    more = ", …" if len(keys) > SENT_KEYS_NAMED else ""
    said = "; ".join(p[:-1] if p.endswith(".") else p for p in parts)
    text = (f"{said}." if parts else "") + (f" You sent: {named}{more}." if keys else "")
    return text.strip() or "invalid parameters"


def _sentence(issue: Issue, sent: Any) -> str:
    where = ".".join(str(p) for p in issue.path) if issue.path else "(root)"
    if issue.code == "custom":
        return f"`{where}`: {issue.message}" if issue.path else issue.message
    if _value_at(sent, issue.path) is _MISSING:
        kind = f" ({issue.expected})" if issue.expected else ""
        return f"`{where}` is required{kind} and was not provided"
    if issue.code == "unrecognized_keys":
        keys = issue.keys or []
        prefix = f"{where}." if issue.path else ""
        noun = "parameter" if len(keys) == 1 else "parameters"
        return f"unknown {noun} " + ", ".join(f"`{prefix}{k}`" for k in keys)
    return f"`{where}`: {issue.message}"
