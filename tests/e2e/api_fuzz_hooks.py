"""Schemathesis hooks of the API fuzz (tests/e2e/test_api_fuzz.py), loaded with SCHEMATHESIS_HOOKS.

- A 5xx answer is a finding unless it is a tool that ran and failed: 500 with the ``error_code`` and
  ``error_kind`` of an anticipated failure, as upstream argent answers (INTERFACE.md section 2). The
  server's own "Internal error" (no code) and a tool's unanticipated exception (``[Tool:<name>]``,
  wrapped by the registry) are findings, and so is every other 5xx.
- Half the calls ask for the NDJSON stream (``Accept: application/x-ndjson``): the stream must be
  JSON lines, progress lines first and exactly one terminal line last; the terminal line is then
  checked against the operation's documented line schema.
- ``POST /upload`` bodies go out as bytes (``application/gzip`` is the client's media type).
- A file-input object (``__argentFileInput``) is read as the codec reads every model the server
  takes (``argent.link.codec``): an optional field of another type reads as unset, as its schema's
  description says. A schema violation inside one that the server accepted is not a finding; one
  anywhere else is.
"""

from __future__ import annotations

import json
import re
from typing import Any

import schemathesis
from hypothesis import strategies as st

NDJSON = "application/x-ndjson"
INTERNAL = "Internal error in the tool-server"
#: Where a negative case broke the schema: inside the file-input branch of a file argument.
IN_FILE_INPUT = re.compile(r"violates `[^`]+` at /properties/([^/]+)/anyOf/1/")

schemathesis.serializer.alias("application/gzip", "application/octet-stream")


@schemathesis.check
def only_tool_failures_answer_5xx(ctx: Any, response: Any, case: Any) -> bool | None:
    """No 5xx but a tool's anticipated failure (500 with its code and kind)."""
    status = response.status_code
    if status < 500:
        return None
    body = _json(response.content)
    if isinstance(body, dict) and status == 500:
        error = body.get("error")
        coded = isinstance(body.get("error_code"), str) and isinstance(body.get("error_kind"), str)
        if coded and isinstance(error, str) and not error.startswith("[Tool:") and INTERNAL not in error:
            return None
    raise AssertionError(f"{status} is not a tool's anticipated failure: {response.content[:500]!r}")


@schemathesis.check
def ndjson_stream_is_lines_then_one_terminal(ctx: Any, response: Any, case: Any) -> bool | None:
    """A streamed answer: JSON objects, one per line, progress lines, then one result or error line."""
    if not response.headers.get("content-type", [""])[0].startswith(NDJSON):
        return None
    events = [_event(line) for line in _lines(response.content)]
    if not events or events[-1] not in ("result", "error"):
        raise AssertionError(f"the stream does not end with a result or error line: {events}")
    if any(event != "progress" for event in events[:-1]):
        raise AssertionError(f"a line before the last is not a progress line: {events}")
    return True


@schemathesis.deserializer(NDJSON)
def terminal_line(ctx: Any, response: Any) -> Any:
    """The stream's terminal line, which the response schema (one line) describes."""
    lines = _lines(response.content)
    return json.loads(lines[-1]) if lines else None


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every failure but an accepted violation inside a file-input object (read leniently)."""
    if getattr(failure, "code", None) != "ST201":
        return True
    found = IN_FILE_INPUT.search(str(getattr(failure, "message", "")))
    body = case.body if isinstance(case.body, dict) else {}
    wrapper = body.get(found.group(1)) if found else None
    return not (isinstance(wrapper, dict) and wrapper.get("__argentFileInput") is True)


@schemathesis.hook
def flatmap_case(context: Any, case: Any) -> Any:
    """Half the tool calls ask for the stream."""
    if not case.path.startswith("/tools/"):
        return st.just(case)

    def accept(stream: bool) -> Any:
        if stream:
            case.headers = {**(case.headers or {}), "Accept": NDJSON}
        return case

    return st.booleans().map(accept)


def _lines(content: bytes) -> list[bytes]:
    return [line for line in content.split(b"\n") if line.strip()]


def _event(line: bytes) -> str:
    value = _json(line)
    if not isinstance(value, dict) or not isinstance(value.get("event"), str):
        raise AssertionError(f"a stream line is not an event object: {line[:300]!r}")
    return str(value["event"])


def _json(content: bytes | None) -> Any:
    try:
        return json.loads(content or b"")
    except ValueError:
        return None
