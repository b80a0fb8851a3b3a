"""The JavaScript value rules the flow language inherits from upstream.

``String(value)``, ``Number(value)``, ``JSON.stringify`` and ``Number.isInteger``: labels, messages,
summaries and the parser's coercions must read exactly like the original's.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any, TypeGuard

__all__ = [
    "JS_WS",
    "has_visible_text",
    "is_integer",
    "is_number",
    "js_integer",
    "js_json",
    "js_json_string",
    "js_number",
    "js_string",
    "js_to_number",
    "js_to_number_text",
    "tidy",
]


def js_number(value: float | int) -> str:
    """``String(n)`` of a JavaScript number (shortest round-trip digits, JS exponent rules)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -(2**53) < value < 2**53:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "Infinity" if value > 0 else "-Infinity"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    exp = int(exp_text) if exp_text else 0
    int_part, _, frac = mantissa.partition(".")
    digits = int_part + frac
    exp -= len(frac)
    stripped = digits.lstrip("0")
    trimmed = stripped.rstrip("0")
    exp += len(stripped) - len(trimmed)
    k = len(trimmed)
    n = exp + k
    if k <= n <= 21:
        body = trimmed + "0" * (n - k)
    elif 0 < n <= 21:
        body = trimmed[:n] + "." + trimmed[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + trimmed
    else:
        e = n - 1
        e_text = ("+" if e >= 0 else "-") + str(abs(e))
        body = trimmed + "e" + e_text if k == 1 else trimmed[0] + "." + trimmed[1:] + "e" + e_text
    return sign + body


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def js_json_string(text: str) -> str:
    """``JSON.stringify`` of a string (non-ASCII kept, lone surrogates escaped)."""
    out = json.dumps(text, ensure_ascii=False)
    if _SURROGATE_RE.search(out):
        out = _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def js_json(value: Any) -> str:
    """Compact ``JSON.stringify`` of plain data (dict/list/str/number/bool/None)."""
    parts: list[str] = []
    _js_json_into(value, parts)
    return "".join(parts)


def _js_json_into(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(js_json_string(value))
    elif isinstance(value, int | float):
        out.append(js_number(value) if math.isfinite(value) else "null")
    elif isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                out.append(",")
            out.append(js_json_string(str(key)))
            out.append(":")
            _js_json_into(item, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _js_json_into(item, out)
        out.append("]")
    else:
        out.append(js_json_string(str(value)))


def js_string(value: Any) -> str:
    """``String(value)`` of plain data (arrays join with `,`, objects are `[object Object]`)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list | tuple):
        return ",".join("" if item is None else js_string(item) for item in value)
    return str(value)


def js_integer(value: int) -> float | int:
    """An integer as a JavaScript number: exact while a double can hold its magnitude, else ±Infinity."""
    if -(2**53) < value < 2**53:
        return value
    try:
        float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    return value


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_integer(value: Any) -> TypeGuard[float | int]:
    """``Number.isInteger(value)``."""
    return is_number(value) and math.isfinite(value) and value == int(value)


def tidy(value: float | int) -> float | int:
    """An integral float as an int (JavaScript has one number type; this keeps `1.0` writing as `1`)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


#: JavaScript's whitespace (what `trim()` and `Number()` strip).
JS_WS = (
    " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JS_RADIX_RE = re.compile(r"0([xXoObB])([0-9a-fA-F]+)")


def js_to_number_text(text: str) -> float | int:
    """``Number(string)``."""
    text = text.strip(JS_WS)
    if not text:
        return 0
    if text in ("Infinity", "+Infinity"):
        return math.inf
    if text == "-Infinity":
        return -math.inf
    if _JS_DECIMAL_RE.fullmatch(text):
        return tidy(float(text))
    radix = _JS_RADIX_RE.fullmatch(text)
    if radix:
        base = {"x": 16, "o": 8, "b": 2}[radix.group(1).lower()]
        try:
            return js_integer(int(radix.group(2), base))
        except ValueError:
            return math.nan
    return math.nan


def js_to_number(value: Any) -> float | int:
    """``Number(value)`` of plain data."""
    if value is None:
        return 0
    if value is True or value is False:
        return 1 if value else 0
    if isinstance(value, str):
        return js_to_number_text(value)
    if is_number(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, list):
        if not value:
            return 0
        if len(value) == 1 and not isinstance(value[0], list | dict):
            return js_to_number("" if value[0] is None else value[0])
    return math.nan


def has_visible_text(text: str) -> bool:
    """True when ``text`` has a character that renders (not whitespace, format, private-use or control)."""
    for char in text:
        if char.isalnum():
            return True
        if char.isspace() or char in JS_WS:
            continue
        if unicodedata.category(char) in ("Cf", "Co", "Cc"):
            continue
        return True
    return False
