"""A live status line under a streaming report, on a terminal only.

Step lines arrive when a step finishes; while the next one runs, the terminal shows a transient
`… step 3 tap "Save" (1.2s)` line that each real line replaces: the running step's number, its
name when the flow's plan knows it (``argent.runner.plan``: the order the runner numbers steps in),
and how long that step has run (the clock restarts at each step line). Past the last planned step
it says the run is finishing, never a step that does not exist. Piped output gets the plain lines
alone. Every line is made terminal-safe first (``render.terminal_safe``): the status line's own
escape sequence is the only one that reaches the terminal; marks are coloured as ``render.echo``
colours them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from argent.reports.render import colour_wanted, paint, terminal_safe

CLEAR_LINE = "\r\x1b[2K"
REDRAW_SECONDS = 0.1
#: Characters of a planned step's name the status line shows (a terminal line is short).
LIVE_NAME_CHARS = 60


def wants_live(stream: TextIO) -> bool:
    return stream.isatty() and os.environ.get("TERM", "") != "dumb"


class LiveStatus:
    """The status line. ``plan``: the names of the steps in the order the runner numbers them (None:
    unknown, the line then names the step's number alone); ``clock``: seconds, for the timing."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        plan: Sequence[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stdout
        self.enabled = wants_live(self.stream) if enabled is None else enabled
        self.plan = plan
        self.clock = clock
        self._next = 1
        self._since = clock()
        self._shown = False
        self._task: asyncio.Task[None] | None = None

    @property
    def next_step(self) -> int:
        """The 1-based number of the step running now."""
        return self._next

    @next_step.setter
    def next_step(self, number: int) -> None:
        self.start(number)

    def start(self, number: int, plan: Sequence[str] | None = None) -> None:
        """Step ``number`` (1-based) runs from now (its clock restarts); ``plan`` replaces the plan
        (a directory run's next flow)."""
        self._next = number
        self._since = self.clock()
        if plan is not None:
            self.plan = plan

    def reported(self, index: int, kind: str | None = None) -> None:
        """The line of step ``index`` (0-based, as reports number them) arrived: the next one runs. A
        line the plan did not foresee there (a nested run numbers steps of its own) ends the plan:
        the status line then names numbers alone, never a wrong step."""
        plan = self.plan
        if plan is not None and kind and (index >= len(plan) or plan[index].split(" ", 1)[0] != kind):
            self.plan = None
        self.start(index + 2)

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
        safe = terminal_safe(text)
        self.stream.write((paint(safe) if colour_wanted(self.stream) else safe) + "\n")
        self.stream.flush()
        if next_step is not None:
            self.start(next_step)

    def status(self) -> str:
        """The status line's text now."""
        elapsed = f"({self.clock() - self._since:.1f}s)"
        plan, number = self.plan, self._next
        if plan is None:
            return f"  … step {number} running {elapsed}"
        if number > len(plan):
            return f"  … finishing {elapsed}"
        name = plan[number - 1]
        if len(name) > LIVE_NAME_CHARS:
            name = name[: LIVE_NAME_CHARS - 1] + "…"
        return f"  … step {number} {name} {elapsed}"

    def _clear(self) -> None:
        if self._shown:
            self.stream.write(CLEAR_LINE)
            self.stream.flush()
            self._shown = False

    async def _redraw(self) -> None:
        while True:
            await asyncio.sleep(REDRAW_SECONDS)
            self.stream.write(CLEAR_LINE + terminal_safe(self.status()))
            self.stream.flush()
            self._shown = True
