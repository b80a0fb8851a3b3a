"""Reading a tool-server's answers in bounded memory, whatever the server sends.

The client trusts no tool-server: one NDJSON line, one buffered body and the JSON values of one
answer each have a cap (``argent.limits``). A line is read incrementally into one buffer that
never grows past the line cap plus one chunk, and is handed over without a copy when it is the
larger part of the buffer. Before a line or a body is parsed, its JSON values are counted on the
raw bytes (an upper bound: every value but the first of a container follows a ``,``, every object
member a ``:``, and every container opens with ``[`` or ``{``), because a Python object costs up to ~100 bytes for a two-byte
``{}``; after parsing, its nesting is checked without recursion, so no later walk of it can
overflow the stack. A number JSON has no value for (``NaN``, ``Infinity``, or a literal such as
``1e999`` beyond a double) reads as null, as JavaScript's ``JSON.stringify`` writes one: nothing
the client prints (``--json``, a report) can then hold text that is not JSON.

Over a cap, ``AnswerRefused`` says what the answer did, in words that follow "the answer".
"""

from __future__ import annotations

import json
import math
from typing import Any

import aiohttp

from argent.limits import MIB
from argent.utils.json_values import count_json_values as count_values


class AnswerRefused(Exception):
    """An answer over one of the caps; ``what`` reads after "The tool-server's answer to <tool>"."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class AnswerNotJson(Exception):
    """An answer (or a line) that is not JSON text."""


def size_text(size: int) -> str:
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size} bytes"


def line_too_long(cap: int) -> AnswerRefused:
    return AnswerRefused(f"has a stream line over the {size_text(cap)} cap on one line")


def body_too_large(cap: int) -> AnswerRefused:
    return AnswerRefused(f"is over the {size_text(cap)} cap on a result")


class ProgressBudget:
    """What the progress lines of one call may take together (their bytes and JSON values): they are
    the steps of the result, so a stream of them that never ends, or whose lines a report keeps,
    stays bounded too."""

    def __init__(self, max_bytes: int, max_values: int) -> None:
        self.bytes_left = max_bytes
        self.values_left = max_values
        self._max_bytes = max_bytes
        self._max_values = max_values

    def spend(self, line: bytes | bytearray) -> None:
        """Count one progress line; ``AnswerRefused`` once the lines together pass a cap."""
        self.bytes_left -= len(line)
        self.values_left -= count_values(line)
        if self.bytes_left < 0:
            raise AnswerRefused(
                f"has progress lines over the {size_text(self._max_bytes)} cap on the progress of one call "
                "(its progress lines are the steps of its result)"
            )
        if self.values_left < 0:
            raise AnswerRefused(
                f"has progress lines holding more than {self._max_values} JSON values, the cap on the progress "
                "of one call (its progress lines are the steps of its result)"
            )


async def read_body(content: aiohttp.StreamReader, cap: int, length: int | None) -> bytearray:
    """The whole body, refused as soon as it passes ``cap`` bytes (or announces more)."""
    if length is not None and length > cap:
        raise body_too_large(cap)
    body = bytearray()
    while chunk := await content.readany():
        body.extend(chunk)
        if len(body) > cap:
            raise body_too_large(cap)
    return body


class NdjsonReader:
    """The non-blank lines of an NDJSON body as they arrive, each at most ``cap`` bytes.

    ``next_line`` keeps no reference to the line it returns, so the caller frees it by dropping it.
    """

    def __init__(self, content: aiohttp.StreamReader, cap: int) -> None:
        self._content = content
        self._cap = cap
        self._buffer = bytearray()
        self._scanned = 0
        self._eof = False

    async def next_line(self) -> bytearray | None:
        """The next non-blank line without its newline; None at the end of the body."""
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            if newline >= 0:
                if newline > self._cap:
                    raise line_too_long(self._cap)
                line = self._take(newline)
                if line and not line.isspace():
                    return line
                continue
            self._scanned = len(self._buffer)
            if self._scanned > self._cap:
                raise line_too_long(self._cap)
            if self._eof:
                line, self._buffer, self._scanned = self._buffer, bytearray(), 0
                return line if line and not line.isspace() else None
            chunk = await self._content.readany()
            if chunk:
                self._buffer.extend(chunk)
            else:
                self._eof = True

    def _take(self, newline: int) -> bytearray:
        """Split the buffer at ``newline``, copying the smaller part only."""
        buffer = self._buffer
        if newline * 2 < len(buffer):
            line = buffer[:newline]
            del buffer[: newline + 1]  # cheap: a bytearray drops its head without moving the rest
        else:
            self._buffer = buffer[newline + 1 :]
            del buffer[newline:]
            line = buffer
        self._scanned = 0
        return line


def parse_json(raw: bytes | bytearray, *, max_values: int, max_depth: int) -> Any:
    """Parse one answer or line within the caps on its values and its nesting."""
    if count_values(raw) > max_values:
        raise AnswerRefused(f"holds more than {max_values} JSON values, the cap on one answer")
    try:
        value = json.loads(raw, parse_float=_finite_or_none, parse_constant=_none)
    except RecursionError:
        raise AnswerRefused(f"nests JSON deeper than {max_depth} levels, the cap on one answer") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise AnswerNotJson(str(exc)) from exc
    if too_deep(value, max_depth):
        raise AnswerRefused(f"nests JSON deeper than {max_depth} levels, the cap on one answer")
    return value


def _finite_or_none(text: str) -> float | None:
    number = float(text)
    return number if math.isfinite(number) else None


def _none(text: str) -> None:
    """``NaN``, ``Infinity`` and ``-Infinity``: Python's reader takes them; JSON has no such value."""
    return None


def too_deep(value: Any, max_depth: int) -> bool:
    """Whether containers nest deeper than ``max_depth`` (the top value is level 1); no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
