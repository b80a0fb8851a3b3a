"""The words of a selector's miss: which of the texts, names or roles on the screen come nearest to
what a selector asked for, and how a message lists them.

Pure and deterministic: candidates are ranked by closeness (containing or contained in what was
asked, then sharing a word with it, then the edit distance of their first ``MISS_CANDIDATE_CHARS``
characters), ties in the order given (reading order); at most ``MISS_CANDIDATES_EXAMINED`` are compared and ``MISS_CANDIDATES_SHOWN``
named, so a miss on a screen of thousands of elements costs little.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from argent.flows.grammar import edit_distance
from argent.flows.js import js_json_string
from argent.limits import MISS_CANDIDATE_CHARS, MISS_CANDIDATES_EXAMINED, MISS_CANDIDATES_SHOWN

__all__ = ["listed", "nearest", "plural", "quoted"]


def quoted(text: str) -> str:
    """A candidate's text as a message quotes it: JSON-quoted, cut at ``MISS_CANDIDATE_CHARS``."""
    if len(text) > MISS_CANDIDATE_CHARS:
        text = text[: MISS_CANDIDATE_CHARS - 1].rstrip() + "…"
    return js_json_string(text)


def nearest(
    wanted: str, candidates: Iterable[tuple[str, str]], *, close_only: bool = False
) -> tuple[list[str], int]:
    """The shown forms of the candidates nearest to ``wanted``, best first, and how many there were
    to show. ``candidates``: (text compared, form shown), in reading order; a text seen before is
    skipped. ``close_only``: only those that come close — containing or contained in ``wanted``,
    sharing a word of three letters or more with it, or a few edits away (a typo)."""
    seen: set[str] = set()
    pool: list[tuple[str, str]] = []
    for text, shown in candidates:
        key = text.lower()
        if not key or key in seen:
            continue
        seen.add(key)
        pool.append((key, shown))
        if len(pool) >= MISS_CANDIDATES_EXAMINED:
            break
    want = wanted.lower()
    cut = want[:MISS_CANDIDATE_CHARS]
    words = {w for w in want.split() if len(w) >= 3}
    ranked: list[tuple[tuple[int, int, int], str]] = []
    for order, (key, shown) in enumerate(pool):
        related = bool(want) and (want in key or key in want)
        shared = bool(words.intersection(key.split()))
        distance = edit_distance(cut, key[:MISS_CANDIDATE_CHARS])
        if close_only and not (related or shared or distance <= max(1, len(cut) // 3)):
            continue
        ranked.append(((0 if related else 1 if shared else 2, distance, order), shown))
    ranked.sort(key=lambda item: item[0])
    return [shown for _, shown in ranked[:MISS_CANDIDATES_SHOWN]], len(ranked)


def listed(shown: Sequence[str], total: int) -> str:
    """``"A", "B" and 3 more``: the shown forms joined, with the count of those left out."""
    text = ", ".join(shown)
    if total > len(shown):
        text += f" and {total - len(shown)} more"
    return text


def plural(word: str) -> str:
    """The plural of a role or tag name (``button`` → ``buttons``, ``textbox`` → ``textboxes``)."""
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"
