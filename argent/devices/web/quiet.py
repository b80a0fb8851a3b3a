"""When a browser page is quiet, whatever its engine: its requests in flight (counted from the
engine's network events) and its monitor's frames (``monitor.js``'s ``wait``, in argent's world).

A quiet page is one whose requests are done and whose monitor saw two frames without a DOM change;
no animation holds it but for a capture (``quiet_capture``, still to the pixel: no finite animation
running either) — an action waits for its own target to hold still instead; after input (``touched``) at least two more frames must pass, so the
effects of the input get their frame before anyone looks. A request still running after
``QUIET_REQUEST_MAX_AGE_MS`` stops counting: long polls, streams and slow beacons would otherwise
hold every step at the ceiling.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from argent.limits import QUIET_REQUEST_MAX_AGE_MS

#: A request older than this is forgotten (one that never reported its end).
FORGET_AFTER_SECONDS = 60.0
#: Frames a wait needs after input: the input's effects (timers, frame callbacks) get their frame.
FRAMES_AFTER_INPUT = 2
#: Slack on a page-side wait's own deadline before the protocol request gives up.
WAIT_SLACK_SECONDS = 2.0

#: The page's wait: (seconds left, frames it needs, the change mark to pass or None, slack, paint:
#: still to the pixel) -> the monitor's answer (``{quiet, mark, tick}``), across the frames the
#: engine reads with the page.
PageWait = Callable[[float, int, int | None, int, bool], Awaitable[Any]]


def wait_expression(remaining: float, frames: int, after: int | None, slack: int, paint: bool = False) -> str:
    """The monitor's wait, as an expression in argent's world (``paint``: a capture's, still to the
    pixel)."""
    mark = "null" if after is None else str(int(after))
    return f"globalThis.__argent.wait({round(remaining * 1000)}, {int(frames)}, {mark}, {int(slack)}, {int(paint)})"


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class PageQuiet:
    """The quiet of one page: its requests in flight and its monitor's wait (see module doc)."""

    def __init__(self, wait_page: PageWait) -> None:
        self._wait_page = wait_page
        self._requests: dict[str, float] = {}
        self._request_done = asyncio.Event()
        self._touched = True
        self._max_age = QUIET_REQUEST_MAX_AGE_MS / 1000

    def touched(self) -> None:
        """Input went to the page: the next quiet needs frames of its own."""
        self._touched = True

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    # -- the network --

    def request_started(self, request_id: str) -> None:
        self._requests.setdefault(request_id, self._now())

    def request_ended(self, request_id: str) -> None:
        if self._requests.pop(request_id, None) is not None:
            self._request_done.set()

    @property
    def in_flight(self) -> int:
        """Requests started and not ended yet (those younger than ``QUIET_REQUEST_MAX_AGE_MS`` count)."""
        return len(self._requests)

    def _busy_until(self) -> float | None:
        """When the youngest request in flight stops counting; None when none counts now."""
        now = self._now()
        until: float | None = None
        for rid, started in list(self._requests.items()):
            if now - started > FORGET_AFTER_SECONDS:
                del self._requests[rid]
            elif now - started < self._max_age:
                ends = started + self._max_age
                until = ends if until is None else max(until, ends)
        return until

    async def _network_quiet(self, deadline: float) -> bool:
        """Wait until no request counts (True) or ``deadline`` (False); True when none counted."""
        waited = False
        while True:
            until = self._busy_until()
            if until is None:
                return waited
            waited = True
            now = self._now()
            if now >= deadline:
                return waited
            self._request_done.clear()
            try:
                async with asyncio.timeout(min(until, deadline) - now):
                    await self._request_done.wait()
            except TimeoutError:
                pass

    # -- the signals --

    async def wait_quiet(self, timeout: float, *, after: int | None = None) -> int | None:
        deadline = self._now() + max(0.0, timeout)
        quiet = await self._quiet(deadline, after, slack=0, paint=False)
        return None if quiet is None else quiet[0]

    async def quiet_capture(self, capture: Callable[[], Awaitable[bytes]], timeout: float) -> bytes:
        """``capture()`` of the quiet page, one frame sooner than a quiet wait and a capture in
        turn: the capture is asked for one frame before the page is quiet (its own frame is then
        the last one), and kept only when the very next frame made the page quiet with no change
        in between; else the quiet page is captured again. At ``timeout``, captured as it is. Quiet
        here is still to the pixel: running finite animations are waited for too."""
        deadline = self._now() + max(0.0, timeout)
        early = await self._quiet(deadline, None, slack=1, paint=True)
        if early is None:
            return await capture()
        shot = asyncio.ensure_future(capture())
        try:
            full = await self._quiet(deadline, None, slack=0, paint=True)
        except BaseException:
            shot.cancel()
            shot.add_done_callback(_retrieve)
            raise
        taken = await shot
        if full is None or full == (early[0], early[1] + 1):
            return taken
        return await capture()

    async def _quiet(
        self, deadline: float, after: int | None, *, slack: int, paint: bool
    ) -> tuple[int, int] | None:
        """The page's (mark, frame) once quiet (``slack`` 1: one frame before; ``paint``: no
        finite animation running either); None at ``deadline``."""
        frames = FRAMES_AFTER_INPUT if self._touched else 0
        while True:
            if await self._network_quiet(deadline):
                frames = FRAMES_AFTER_INPUT  # the responses' handlers get their frames
            remaining = deadline - self._now()
            if remaining <= 0:
                return None
            result = await self._wait_page(remaining, frames, after, slack, paint)
            if not isinstance(result, dict) or result.get("quiet") is not True:
                return None
            if self._busy_until() is not None:
                continue  # a request started while the page looked quiet
            if not slack:
                self._touched = False
            return _int(result.get("mark")), _int(result.get("tick"))
