"""Whether a browser the tool-server launched still answers: one that stops (SIGSTOP, a wedged main
thread) is found within a bounded time, not at each request's own timeout.

A protocol socket that closes says the browser exited; a browser that stops answering says nothing:
its socket stays open and every request waits out its own bound, step after step. So every
``BROWSER_PING_SECONDS`` its device asks the browser process something its own thread answers
whatever the pages run (Chromium: ``Browser.getVersion`` on the browser-level session — a page in
an endless loop stalls its renderer, not the browser). A browser whose process is stopped and gives
no answer within ``BROWSER_ANSWER_SECONDS`` is hung; one still running may only be slow (a loaded
machine starves it and the loop that reads its answer), so it has ``BROWSER_SILENT_SECONDS`` in all
to answer the same question. A hung browser: ``on_hung`` fails the device's sessions with that
message (the request a step waits on included) and reaps it (process group killed, profile
removed). Only a browser the tool-server launched is watched: an attached one is someone else's to
judge. The engine supplies the question; this module owns the period, the bound and the verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from argent.devices.base import DeviceError
from argent.limits import BROWSER_ANSWER_SECONDS, BROWSER_PING_SECONDS, BROWSER_SILENT_SECONDS

#: One question to the browser process; raises ``DeviceError`` once the browser is dead or closed.
Ping = Callable[[], Awaitable[object]]
#: Called once with how long the browser went without answering and the name of the bound it passed.
OnHung = Callable[[float, str], Awaitable[None]]


class BrowserWatch:
    """Pings one browser until it dies, is closed (``stop``), or stops answering."""

    def __init__(
        self,
        ping: Ping,
        alive: Callable[[], bool],
        on_hung: OnHung,
        *,
        stopped: Callable[[], bool],
        every: float = BROWSER_PING_SECONDS,
        limit: float = BROWSER_ANSWER_SECONDS,
        patience: float = BROWSER_SILENT_SECONDS,
    ) -> None:
        self._ping = ping
        self._alive = alive
        self._on_hung = on_hung
        self._stopped = stopped
        self._every = every
        self._limit = limit
        self._patience = max(patience, limit)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._watch())

    def stop(self) -> None:
        if self._task is not None and not self._task.done() and self._task is not asyncio.current_task():
            self._task.cancel()

    async def _watch(self) -> None:
        while self._alive():
            question = asyncio.ensure_future(self._ping())
            try:
                verdict = await self._answer(question)
            except DeviceError:
                return  # dead or closed: its death is reported where it happened
            finally:
                question.cancel()
            if verdict is not None:
                if self._alive():
                    await self._on_hung(*verdict)
                return
            await asyncio.sleep(self._every)  # a period between questions, not a wait for an event

    async def _answer(self, question: asyncio.Future[object]) -> tuple[float, str] | None:
        """None once ``question`` is answered; else how long it went unanswered and the bound's name:
        ``BROWSER_ANSWER_SECONDS`` for a stopped process, ``BROWSER_SILENT_SECONDS`` for a running one."""
        try:
            async with asyncio.timeout(self._limit):
                await asyncio.shield(question)
            return None
        except TimeoutError:
            if self._stopped():
                return (self._limit, "BROWSER_ANSWER_SECONDS")
        try:
            async with asyncio.timeout(self._patience - self._limit):
                await asyncio.shield(question)
            return None
        except TimeoutError:
            return (self._patience, "BROWSER_SILENT_SECONDS")
