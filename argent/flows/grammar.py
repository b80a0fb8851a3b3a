"""The parse-side vocabulary every directive's grammar uses: the step-level refusal, the
"did you mean" hints and the key checks, whose messages are the flow language's exact messages."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CONDITION_KEYS",
    "MISSING",
    "SELECTOR_FIELDS",
    "SELECTOR_KEYS",
    "TEXT_MODES",
    "Reject",
    "Wrap",
    "did_you_mean",
    "edit_distance",
    "only_keys",
    "regex_problem",
    "unknown_keys",
    "unknown_with_allowed",
]

#: Keys of a selector map.
SELECTOR_KEYS: tuple[str, ...] = ("text", "id", "identifier", "role", "any", "within", "after", "next")
#: The keys of a selector that name what to find (the rest are `any` and the scopes).
SELECTOR_FIELDS: tuple[str, ...] = ("text", "id", "identifier", "role")
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


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid regular expression, or None.

    Upstream compiles with JavaScript's RegExp; we use Python's ``re`` as the engine. They
    differ at the edges (``(?<name>…)`` vs ``(?P<name>…)``, ``\\d`` Unicode vs ASCII, ``$``
    before a trailing newline, inline flags), so a few patterns are judged differently.
    """
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError, ValueError) as exc:
        return str(exc)
    return None
