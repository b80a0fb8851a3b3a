"""How a call reads a flow: UTF-8 text, parsed in a thread, through a bounded cache of parsed flows.

Parsing is pure Python and costs about 0.1 ms per YAML value, so a large flow parsed on the event
loop would stall every other client; ``parse_flow_async`` runs it on the CPU pool (``argent.cpu``).
A parsed ``Flow`` is a frozen value and a pure function of the text, so it is kept by the SHA-256
of the text: a `run:` fragment reached many times, or a root flow read by the preflight and then
by the run, is parsed once. A parse error is kept too (as its fields, raised afresh each time),
so a broken fragment in a loop costs one parse. The cache is bounded in entries and in
estimated bytes (``limits.PARSED_FLOW_CACHE_ENTRIES`` / ``PARSED_FLOW_CACHE_BYTES``).

This module stays light (no YAML import) because ``argent.runner.files`` uses ``decode_flow``.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from attrs import frozen

from argent import limits
from argent.cpu import run_cpu
from argent.errors import FlowParseError, YamlSyntax

if TYPE_CHECKING:
    from argent.flows.model import Flow

__all__ = ["PARSED_FLOWS", "ParsedFlows", "decode_flow", "parse_flow_async"]

_NOT_UTF8 = (
    "Invalid flow file: {path} is not UTF-8 text ({what}) at line {line}, column {column} — a flow file is "
    "YAML text in UTF-8; save it as UTF-8"
)
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

#: What one cached entry costs besides its text: the parsed steps and their args (a rough figure
#: per step and per args value, enough to keep an alias-expanded flow from looking small).
_ENTRY_OVERHEAD_BYTES = 512
_BYTES_PER_STEP = 512
_BYTES_PER_ARGS_VALUE = 128


def decode_flow(data: bytes, path: str) -> str:
    """A flow file's bytes as text: flow files are UTF-8 (a UTF-8 byte order mark is fine).

    Anything else — binary, another encoding, UTF-16 — is a ``FlowParseError`` (FLOW_FILE_INVALID)
    that says where the first bad byte is."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
    if data.startswith(_UTF16_BOMS):
        what, start = "a UTF-16 byte order mark", 0
    else:
        what = f"invalid byte 0x{data[start]:02x}"
    line = data.count(b"\n", 0, start) + 1
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", "replace")) + 1
    raise FlowParseError(_NOT_UTF8.format(path=path, what=what, line=line, column=column), line=line)


@frozen
class _Refusal:
    """A parse error as plain fields, raised afresh on every hit (an exception carries a traceback)."""

    message: str
    error_code: str
    line: int | None
    step: str | None
    syntax: YamlSyntax | None = None

    def error(self) -> FlowParseError:
        return FlowParseError(
            self.message, error_code=self.error_code, line=self.line, step=self.step, syntax=self.syntax
        )


class ParsedFlows:
    """Parsed flows (and parse errors) by the SHA-256 of their text, least recently used out first.

    Used from worker threads, so every access holds a lock; two threads parsing the same new text
    at once both parse it (the result is the same)."""

    def __init__(self) -> None:
        self._entries: OrderedDict[bytes, tuple[Flow | _Refusal, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.weight = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.weight = 0

    def get(self, digest: bytes) -> Flow | _Refusal | None:
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None:
                return None
            self._entries.move_to_end(digest)
            return entry[0]

    def put(self, digest: bytes, value: Flow | _Refusal, weight: int) -> None:
        if weight > limits.PARSED_FLOW_CACHE_BYTES:
            return
        with self._lock:
            old = self._entries.pop(digest, None)
            if old is not None:
                self.weight -= old[1]
            self._entries[digest] = (value, weight)
            self.weight += weight
            while self._entries and (
                len(self._entries) > limits.PARSED_FLOW_CACHE_ENTRIES
                or self.weight > limits.PARSED_FLOW_CACHE_BYTES
            ):
                _, (_, dropped) = self._entries.popitem(last=False)
                self.weight -= dropped

    def cached(self, text: str) -> Flow | None:
        """The parse of ``text`` when it is cached (a cached parse error is raised); else None."""
        known = self.get(_digest(text))
        if isinstance(known, _Refusal):
            raise known.error()
        return known

    def parse(self, text: str) -> Flow:
        """``parse_flow(text)``, from the cache when this text was parsed before."""
        from argent.flows import parse

        digest = _digest(text)
        known = self.get(digest)
        if isinstance(known, _Refusal):
            raise known.error()
        if known is not None:
            return known
        try:
            flow = parse.parse_flow(text)
        except FlowParseError as exc:
            refusal = _Refusal(exc.message, exc.error_code, exc.line, exc.step, exc.syntax)
            self.put(digest, refusal, _ENTRY_OVERHEAD_BYTES + 2 * len(exc.message))
            raise
        self.put(digest, flow, _weight(text, flow))
        return flow


#: The digests of short texts seen last, by the text object's id (the text held too, so the id stays
#: its own): a flow file kept as read (``argent.runner.read_cache``) is the same object call after call.
_DIGESTS: dict[int, tuple[str, bytes]] = {}
_DIGESTS_KEPT = 64


def _digest(text: str) -> bytes:
    known = _DIGESTS.get(id(text))
    if known is not None and known[0] is text:
        return known[1]
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    if len(text) <= limits.PARSED_FLOW_LOOKUP_ON_LOOP_CHARS:
        if len(_DIGESTS) >= _DIGESTS_KEPT:
            _DIGESTS.clear()
        _DIGESTS[id(text)] = (text, digest)
    return digest


def _weight(text: str, flow: Flow) -> int:
    """An estimate of the bytes a parsed flow holds: its text's size plus its (expanded) steps and args."""
    from argent.flows.model import ToolStep, walk_steps

    steps = 0
    values = 0
    for step in walk_steps(flow.steps):
        steps += 1
        if isinstance(step, ToolStep):
            values += _count_values(step.args)
    return _ENTRY_OVERHEAD_BYTES + len(text) + steps * _BYTES_PER_STEP + values * _BYTES_PER_ARGS_VALUE


def _count_values(value: object) -> int:
    count = 0
    stack = [value]
    while stack:
        current = stack.pop()
        count += 1
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return count


#: The process's parsed flows (pure values of their text, so one cache serves every call).
PARSED_FLOWS = ParsedFlows()


async def parse_flow_async(text: str) -> Flow:
    """Parse (and validate) a flow on the CPU pool, through ``PARSED_FLOWS``; raises ``FlowParseError``.

    A short text already parsed is looked up on the event loop: hashing it costs microseconds,
    a thread hop a hundred or more, and most calls run a flow the server has seen."""
    if len(text) <= limits.PARSED_FLOW_LOOKUP_ON_LOOP_CHARS:
        known = PARSED_FLOWS.cached(text)
        if known is not None:
            return known
    return await run_cpu(PARSED_FLOWS.parse, text)
