"""One line per tool call on the tool-server's stderr (INTERFACE.md section 12).

``<time> <token name> <tool> <status> <ms>ms``: the UTC time the answer finished, the name of the
caller's named token (``-`` without named tokens, or when the token was refused), the tool the path
names, the HTTP status and the whole call's duration, a streamed run included. Never a token, an
argument or a header: a line says who called what and how it went, nothing a caller sent besides
the tool's name, which is printed only when it is a plain name (a hostile path cannot forge a line).

It is aiohttp's access log with our own writer (``access_log_class``), so the time is aiohttp's
own measure of the request and no handler has to remember to log.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import queue
import re
import sys
import time
from collections.abc import Iterator

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from argent.limits import CALL_LOG_QUEUE_LINES
from argent.server.policy_guard import TOKEN_RULE

CALL_LOGGER = logging.getLogger("argent.server.calls")
_TOOLS_PREFIX = "/tools/"
#: What a tool name printed in the log may look like (anything else prints as ``?``).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NO_NAME = "-"


def call_line(when: float, token_name: str | None, tool: str, status: int, seconds: float) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
    shown = tool if _PLAIN_NAME.fullmatch(tool) else "?"
    return f"{stamp} {token_name or NO_NAME} {shown} {status} {round(seconds * 1000)}ms"


class ToolCallLog(AbstractAccessLogger):
    """aiohttp's access logger, writing only the calls of tools (``POST /tools/<name>``)."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        path = request.path
        if request.method != "POST" or not path.startswith(_TOOLS_PREFIX):
            return
        rule = request.get(TOKEN_RULE)
        name = getattr(rule, "name", None)
        self.logger.info(call_line(_now(), name, path[len(_TOOLS_PREFIX) :], response.status, time))

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)


def _now() -> float:
    return time.time()


class _DroppingQueueHandler(logging.handlers.QueueHandler):
    """Hands a line to the writing thread, or drops it when ``CALL_LOG_QUEUE_LINES`` wait already (a
    stderr nobody reads must not stop the server: the event loop never waits on it)."""

    def enqueue(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(record)


@contextlib.contextmanager
def calls_logged_to_stderr() -> Iterator[None]:
    """While it lasts, the call lines go to stderr as they are, written by a thread of their own
    (the foreground server of ``argent server start``)."""
    lines: queue.Queue[logging.LogRecord] = queue.Queue(maxsize=CALL_LOG_QUEUE_LINES)
    writer = logging.StreamHandler(sys.stderr)
    writer.setFormatter(logging.Formatter("%(message)s"))
    listener = logging.handlers.QueueListener(lines, writer)
    handler = _DroppingQueueHandler(lines)
    CALL_LOGGER.addHandler(handler)
    CALL_LOGGER.setLevel(logging.INFO)
    CALL_LOGGER.propagate = False
    listener.start()
    try:
        yield
    finally:
        CALL_LOGGER.removeHandler(handler)
        listener.stop()
