"""The parse-side vocabulary every directive's grammar uses: the step-level refusal, the
"did you mean" hints and the key checks, whose messages are the flow language's exact messages."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import regex

from argent.limits import MAX_CSS_SELECTOR_CHARS, MAX_PATTERN_REPEATS

__all__ = [
    "CONDITION_KEYS",
    "MISSING",
    "SELECTOR_FIELDS",
    "SELECTOR_KEYS",
    "TEXT_MODES",
    "PatternProblem",
    "Reject",
    "Wrap",
    "compile_pattern",
    "css_problem",
    "did_you_mean",
    "edit_distance",
    "only_keys",
    "regex_problem",
    "unknown_keys",
    "unknown_with_allowed",
]

#: Keys of a selector map.
SELECTOR_KEYS: tuple[str, ...] = ("text", "id", "identifier", "role", "css", "any", "within", "after", "next")
#: The keys of a selector that name what to find (the rest are `any` and the scopes).
SELECTOR_FIELDS: tuple[str, ...] = ("text", "id", "identifier", "role", "css")
#: The condition keys of `await`, `assert` and `when`.
CONDITION_KEYS: tuple[str, ...] = ("exists", "visible", "hidden", "text")
#: How a `text` condition compares.
TEXT_MODES: tuple[str, ...] = ("contains", "equals", "matches")


def edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance (Levenshtein plus adjacent transposition)."""
    if a == b:
        return 0
    la, lb = len(a), len(b)
    prev2: list[int] = []
    prev = list(range(lb + 1))
    for i in range(1, la + 1):
        cur = [i] + [0] * lb
        ca = a[i - 1]
        for j in range(1, lb + 1):
            cb = b[j - 1]
            cost = 0 if ca == cb else 1
            best = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, prev2[j - 2] + 1)
            cur[j] = best
        prev2, prev = prev, cur
    return prev[lb]


def did_you_mean(key: str, candidates: Sequence[str]) -> str | None:
    """The closest candidate within max(1, len(candidate) // 3) edits (lowercase), if any."""
    lowered = key.lower()
    best: str | None = None
    best_distance = 0
    for candidate in candidates:
        if abs(len(candidate) - len(lowered)) > max(1, len(candidate) // 3):
            continue
        distance = edit_distance(lowered, candidate.lower())
        if distance <= max(1, len(candidate) // 3) and (best is None or distance < best_distance):
            best, best_distance = candidate, distance
    return best


_MAX_LISTED_KEYS = 20


def unknown_keys(keys: Sequence[str], allowed: Sequence[str], *, hints: bool = True) -> str:
    parts = []
    for key in keys[:_MAX_LISTED_KEYS]:
        hint = did_you_mean(key, allowed) if hints else None
        parts.append(f"`{key}` (did you mean `{hint}`?)" if hint else f"`{key}`")
    if len(keys) > _MAX_LISTED_KEYS:
        parts.append(f"… (+{len(keys) - _MAX_LISTED_KEYS} more)")
    return ("unknown key " if len(parts) == 1 else "unknown keys ") + ", ".join(parts)


def unknown_with_allowed(subject: str, keys: Sequence[str], allowed: Sequence[str]) -> str:
    return f"{subject} has {unknown_keys(keys, allowed)} — allowed keys: {', '.join(allowed)}"


def only_keys(subject: str, mapping: Any, allowed: Sequence[str]) -> None:
    """Refuse keys of ``mapping`` outside ``allowed``, naming them (and the allowed ones)."""
    unknown = [key for key in mapping if key not in allowed]
    if unknown:
        raise Reject(unknown_with_allowed(subject, unknown, allowed))


class Reject(Exception):
    """A step-level problem: ``detail`` goes inside "Unrecognized flow entry (…)"."""

    def __init__(self, detail: str, entry: Any = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.entry = entry


class Wrap:
    """A synthetic entry ``{key: node}`` shown in a message instead of the whole step."""

    __slots__ = ("key", "node")

    def __init__(self, key: str, node: Any) -> None:
        self.key = key
        self.node = node


#: A key that is not there (``Number(undefined)`` is NaN).
MISSING: Any = object()


#: A counted repetition (``{n}``, ``{n,}``, ``{n,m}``): its smallest count is unrolled at compile. Escaped
#: braces count too (an over-estimate that never lets ``\\{9999999}`` through).
_COUNTED = re.compile(r"\{(\d+)(?:,\d*)?\}")


class PatternProblem(ValueError):
    """A text pattern the matching engine refuses; the message says why."""


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled by the engine every text pattern is matched with (the ``regex`` package,
    whose matching takes a time limit), or ``PatternProblem``: validation and matching are one
    compile, so a flow never holds a pattern that parses and then matches nothing.

    ``regex`` unrolls counted repetitions at compile (``a{10000000}`` takes gigabytes), so their
    smallest counts, multiplied, are capped first."""
    repeats = 1
    for counted in _COUNTED.finditer(pattern):
        digits = counted.group(1).lstrip("0") or "0"
        repeats *= (
            max(1, int(digits)) if len(digits) <= len(str(MAX_PATTERN_REPEATS)) else MAX_PATTERN_REPEATS + 1
        )
        if repeats > MAX_PATTERN_REPEATS:
            break
    if repeats > MAX_PATTERN_REPEATS:
        raise PatternProblem(
            f"its counted repetitions ({{n}}, {{n,m}}) repeat more than {MAX_PATTERN_REPEATS:,} times together "
            "(the engine unrolls them) — use an open repetition (+, *, {n,}) instead"
        )
    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError, ValueError, MemoryError) as exc:
        raise PatternProblem(str(exc)) from None


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid text pattern, or None.

    Upstream compiles with JavaScript's RegExp; we use the ``regex`` package (``compile_pattern``).
    They differ at the edges (``\\d`` Unicode vs ASCII, ``$`` before a trailing newline, inline
    flags, POSIX classes like ``[[:alpha:]]``), so a few patterns are judged differently.
    """
    try:
        compile_pattern(pattern)
    except PatternProblem as exc:
        return str(exc)
    return None


_CLOSERS = {")": "(", "]": "["}


def css_problem(selector: str) -> str | None:
    """What is plainly wrong with a CSS selector, as a person would say it, or None: an unclosed
    bracket or quote, a bracket that closes nothing, an empty selector in a list, a combinator with
    nothing after it. The browser judges the rest when the flow runs."""
    if len(selector) > MAX_CSS_SELECTOR_CHARS:
        return f"it is longer than {MAX_CSS_SELECTOR_CHARS} characters"
    if not selector.strip():
        return "it is empty"
    open_: list[str] = []
    quote = ""
    escaped = False
    top_level_comma_after = True  # a list item has nothing in it yet
    for ch in selector:
        if escaped:
            escaped = False
            top_level_comma_after = False
            continue
        if ch == "\\":
            escaped = True
            continue
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([":
            open_.append(ch)
        elif ch in _CLOSERS:
            if not open_ or open_[-1] != _CLOSERS[ch]:
                return f"a `{ch}` closes nothing"
            open_.pop()
        elif ch == "," and not open_:
            if top_level_comma_after:
                return "a selector in its comma-separated list is empty"
            top_level_comma_after = True
            continue
        if not ch.isspace():
            top_level_comma_after = False
    if quote:
        return f"a `{quote}` quote is never closed"
    if open_:
        return f"a `{open_[-1]}` is never closed"
    tail = selector.rstrip()
    if tail.endswith(",") and not tail.endswith("\\,"):
        return "it ends with `,`, with no selector after it"
    if tail[-1] in ">+~" and not tail.endswith("\\" + tail[-1]):
        return f"it ends with the combinator `{tail[-1]}`, with nothing after it"
    return None
