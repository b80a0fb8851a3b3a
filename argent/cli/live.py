"""A live status line under a streaming report, on a terminal only.

Step lines arrive when a step finishes; while the next one runs, the terminal shows a
transient `… step N running (3.2s)` line that each real line replaces. Piped output
gets the plain lines alone. Every line is made terminal-safe first (``render.terminal_safe``):
the status line's own escape sequence is the only one that reaches the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from typing import TextIO

from argent.reports.render import terminal_safe

CLEAR_LINE = "\r\x1b[2K"
REDRAW_SECONDS = 0.1


def wants_live(stream: TextIO) -> bool:
    return stream.isatty() and os.environ.get("TERM", "") != "dumb"


class LiveStatus:
    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.enabled = wants_live(self.stream) if enabled is None else enabled
        self.next_step = 1
        self._since = time.monotonic()
        self._shown = False
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LiveStatus:
        if self.enabled:
            self._task = asyncio.create_task(self._redraw())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._clear()

    def line(self, text: str, *, next_step: int | None = None) -> None:
        """Print one report line above the status line."""
        self._clear()
        self.stream.write(terminal_safe(text) + "\n")
        self.stream.flush()
        if next_step is not None:
            self.next_step = next_step
            self._since = time.monotonic()

    def _clear(self) -> None:
        if self._shown:
            self.stream.write(CLEAR_LINE)
            self.stream.flush()
            self._shown = False

    async def _redraw(self) -> None:
        while True:
            await asyncio.sleep(REDRAW_SECONDS)
            elapsed = time.monotonic() - self._since
            self.stream.write(f"{CLEAR_LINE}  … step {self.next_step} running ({elapsed:.1f}s)")
            self.stream.flush()
            self._shown = True
