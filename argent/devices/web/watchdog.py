"""Whether a browser the tool-server launched still answers: one that stops (SIGSTOP, a wedged main
thread) is found within a bounded time, not at each request's own timeout.

A protocol socket that closes says the browser exited; a browser that stops answering says nothing:
its socket stays open and every request waits out its own bound, step after step. So every
``BROWSER_PING_SECONDS`` its device asks the browser process something its own thread answers
whatever the pages run (Chromium: ``Browser.getVersion`` on the browser-level session — a page in
an endless loop stalls its renderer, not the browser), and a browser that gives no answer within
``BROWSER_ANSWER_SECONDS`` is declared hung: ``on_hung`` fails the device's sessions with that
message (the request a step waits on included) and reaps it (process group killed, profile
removed). Only a browser the tool-server launched is watched: an attached one is someone else's to
judge. The engine supplies the question; this module owns the period, the bound and the verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from argent.devices.base import DeviceError
from argent.limits import BROWSER_ANSWER_SECONDS, BROWSER_PING_SECONDS

#: One question to the browser process; raises ``DeviceError`` once the browser is dead or closed.
Ping = Callable[[], Awaitable[object]]
#: Called once with how long the browser went without answering.
OnHung = Callable[[float], Awaitable[None]]


class BrowserWatch:
    """Pings one browser until it dies, is closed (``stop``), or stops answering."""

    def __init__(
        self,
        ping: Ping,
        alive: Callable[[], bool],
        on_hung: OnHung,
        *,
        every: float = BROWSER_PING_SECONDS,
        limit: float = BROWSER_ANSWER_SECONDS,
    ) -> None:
        self._ping = ping
        self._alive = alive
        self._on_hung = on_hung
        self._every = every
        self._limit = limit
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._watch())

    def stop(self) -> None:
        if self._task is not None and not self._task.done() and self._task is not asyncio.current_task():
            self._task.cancel()

    async def _watch(self) -> None:
        while self._alive():
            try:
                async with asyncio.timeout(self._limit):
                    await self._ping()
            except TimeoutError:
                if self._alive():
                    await self._on_hung(self._limit)
                return
            except DeviceError:
                return  # dead or closed: its death is reported where it happened
            await asyncio.sleep(self._every)  # a period between questions, not a wait for an event
