"""WebDriver BiDi's serialized values (``RemoteValue``) as Python values, bounded.

Argent's own page-side calls answer JSON text, so what comes back by value is mostly strings; these
read the rest: a page's console arguments and what ``debugger-evaluate`` gets back from a script.
"""

from __future__ import annotations

import math
from typing import Any

#: Numbers BiDi spells as strings.
_SPECIAL_NUMBERS = {"NaN": math.nan, "-0": -0.0, "Infinity": math.inf, "-Infinity": -math.inf}
#: Nesting kept of a value (deeper parts become their type's name).
MAX_VALUE_DEPTH = 64


def python_value(remote: Any, depth: int = 0) -> Any:
    """``remote`` (a BiDi ``RemoteValue``) as a Python value: primitives as themselves, arrays as
    lists, objects and maps as dicts (string keys), anything else (a node, a function, a window) as
    ``[<type>]``; ``undefined`` as None."""
    if not isinstance(remote, dict):
        return None
    kind = remote.get("type")
    value = remote.get("value")
    if kind in ("undefined", "null"):
        return None
    if kind in ("string", "boolean", "bigint"):
        return value
    if kind == "number":
        return _SPECIAL_NUMBERS.get(value, value) if isinstance(value, str) else value
    if depth >= MAX_VALUE_DEPTH or not isinstance(value, list):
        return f"[{kind}]"
    if kind in ("array", "set"):
        return [python_value(item, depth + 1) for item in value]
    if kind in ("object", "map"):
        out: dict[str, Any] = {}
        for pair in value:
            if isinstance(pair, list) and len(pair) == 2:
                key = pair[0] if isinstance(pair[0], str) else str(python_value(pair[0], depth + 1))
                out[key] = python_value(pair[1], depth + 1)
        return out
    return f"[{kind}]"


def context_of(remote: Any) -> str | None:
    """The browsing context a serialized ``window`` names (an iframe's ``contentWindow``), else None."""
    if isinstance(remote, dict) and remote.get("type") == "window":
        value = remote.get("value")
        context = value.get("context") if isinstance(value, dict) else None
        return context if isinstance(context, str) else None
    return None
