"""Event-driven settle: the page says when it is quiet, then the screen is read once.

A device with ``PageSignals`` (Chromium: a monitor in the page sees DOM mutations, animation
frames and finite animations; CDP Network events count the requests in flight) answers
``wait_quiet`` as soon as its page is quiet — right away when nothing happened since the last
look, two frames after input — with the settle's ceiling (``settle_max``) as the bound. The
settle is then one wait and one read. Between polls, ``changed`` waits for the page to change
and be quiet again (at most the poll interval) instead of sleeping the interval out.

A device without it (or whose signals fail) gets the settle by reading: re-read the tree every
``settle_interval`` until two reads agree, at most ``settle_max``.

A read marks the CSS selectors of what the directive resolves (``Waiter(css=...)``); a selector
the device refuses (``SelectorRefusedError``) ends the wait at once: reading again cannot help; so
does a device that is gone (``DeviceGoneError``: its browser exited, crashed or stopped answering).

This module also holds the abort-aware waiting every directive shares: a device call raced
against the run's abort and a deadline, an abortable sleep, one bounded read of the tree.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, Protocol, TypeVar

from argent.devices.base import Device, DeviceError, DeviceGoneError, PageSignals, SelectorRefusedError
from argent.runner.run import RUN_ABORTED, error_message, sleep_or_abort
from argent.runner.selectors import Screen, flatten

T = TypeVar("T")


class Aborted(Exception):
    """The run's abort event fired while waiting: the step is skipped with ``reason``."""

    def __init__(self, reason: str = RUN_ABORTED) -> None:
        super().__init__(reason)
        self.reason = reason


#: What ends a wait at once: the run's abort, and device answers that reading again cannot change.
FINAL = (Aborted, SelectorRefusedError, DeviceGoneError)


class Outage(Exception):
    """Every read of the UI tree failed: the step errors with this message."""


class ReadTimeout(Exception):
    """A raced device call did not answer within its time."""


class SettleTimings(Protocol):
    """The waits a ``Waiter`` needs, in seconds (``argent.runner.directives.Timings`` has them)."""

    @property
    def settle_interval(self) -> float: ...

    @property
    def settle_max(self) -> float: ...

    @property
    def read_floor(self) -> float: ...

    def ms(self, seconds: float) -> int: ...


def signals_of(device: Device) -> PageSignals | None:
    """The device's page signals, when it has them."""
    return device if isinstance(device, PageSignals) else None


class Waiter:
    """The waits of one directive on one device, cut short by the run's ``abort``."""

    def __init__(
        self, device: Device, abort: asyncio.Event, timings: SettleTimings, *, css: tuple[str, ...] = ()
    ) -> None:
        self.device = device
        self.abort = abort
        self.t = timings
        #: The CSS selectors each read marks (those the directive's selectors name).
        self.css = css
        self.signals = signals_of(device)
        #: The page's change mark at the last quiet or read (None: not known).
        self.mark: int | None = None

    # -- primitives --

    @staticmethod
    def now() -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        if await sleep_or_abort(self.abort, seconds):
            raise Aborted()

    def live(self) -> None:
        """Called right before a gesture or keystroke: none goes out after the abort."""
        if self.abort.is_set():
            raise Aborted()

    async def race(self, call: Awaitable[T], timeout: float | None) -> T:
        """Await a device call, cut short by the abort (``Aborted``) or ``timeout`` (``ReadTimeout``)."""
        return await race(self.abort, call, timeout)

    async def read(self, budget: float) -> Screen:
        """One read of the tree, given at least ``read_floor`` seconds."""
        limit = max(budget, self.t.read_floor)
        read = self.device.ui_tree(css=self.css) if self.css else self.device.ui_tree()
        try:
            tree = await self.race(read, limit)
        except ReadTimeout:
            raise DeviceError(f"the UI tree read did not answer within {self.t.ms(limit)}ms") from None
        if self.signals is not None and tree.mark >= 0:
            self.mark = tree.mark  # ``changed`` then wakes on any change since this read
        return flatten(tree)

    # -- the settle --

    def _limit(self, budget: float | None) -> float:
        t = self.t
        return t.settle_max if budget is None else max(0.0, min(t.settle_max, budget))

    async def _wait_quiet(self, signals: PageSignals, timeout: float, after: int | None = None) -> bool:
        """The page's quiet (True) or the time ran out (False); ``DeviceError`` when it cannot tell."""
        try:
            mark = await self.race(signals.wait_quiet(timeout, after=after), timeout + self.t.read_floor)
        except ReadTimeout:
            return False
        if mark is None:
            return False
        self.mark = mark
        return True

    async def quiet(self, budget: float | None = None) -> None:
        """Wait for a quiet page without reading it (a whole-screen snapshot needs no tree).

        Without signals this is the settle by reading; an unreadable tree is not an error here."""
        limit = self._limit(budget)
        if self.signals is not None:
            try:
                await self._wait_quiet(self.signals, limit)
                return
            except DeviceGoneError:
                raise
            except DeviceError:
                pass
        with contextlib.suppress(Outage):
            await self._settle_by_reading(limit)

    async def settle(self, budget: float | None = None) -> Screen:
        """A quiet screen, read; the last read when time runs out. ``Outage`` when no read worked."""
        limit = self._limit(budget)
        signals = self.signals
        if signals is None:
            return await self._settle_by_reading(limit)
        deadline = self.now() + limit
        err: BaseException | None = None
        while True:
            try:
                await self._wait_quiet(signals, max(0.0, deadline - self.now()))
            except DeviceGoneError:
                raise
            except DeviceError:
                return await self._settle_by_reading(max(0.0, deadline - self.now()))
            try:
                return await self.read(deadline - self.now())
            except FINAL:
                raise
            except Exception as exc:
                err = exc  # a document between two lives (a navigation): look again
            if self.now() + self.t.settle_interval > deadline:
                break
            await self.sleep(self.t.settle_interval)
        raise Outage(f"could not read the UI tree: {error_message(err) if err else 'no read'}")

    async def _settle_by_reading(self, limit: float) -> Screen:
        """Re-read the tree until two reads agree; the last read when time runs out."""
        t = self.t
        deadline = self.now() + limit
        prev: Screen | None = None
        err: BaseException | None = None
        while True:
            try:
                screen = await self.read(deadline - self.now())
            except FINAL:
                raise
            except Exception as exc:
                err = exc
            else:
                if prev is not None and screen.fingerprint == prev.fingerprint:
                    return screen
                prev = screen
            if self.now() + t.settle_interval > deadline:
                break
            await self.sleep(t.settle_interval)
        if prev is None:
            raise Outage(f"could not read the UI tree: {error_message(err) if err else 'no read'}")
        return prev

    # -- the target --

    async def moved(self, x: float, y: float) -> bool:
        """Wait (at most ``settle_max``) until the element at (x, y) holds its place; True when it
        moved meanwhile (read it again). False without signals: the settle by reading already saw
        two reads agree."""
        signals = self.signals
        if signals is None:
            return False
        limit = self.t.settle_max
        try:
            return await self.race(signals.hold_still(x, y, limit), limit + self.t.read_floor)
        except (DeviceError, ReadTimeout):
            return False

    # -- between polls --

    async def changed(self, timeout: float) -> None:
        """Wait until the page changed past the mark and is quiet again, at most ``timeout``
        (without signals or a mark: sleep ``timeout``)."""
        if timeout <= 0:
            return
        signals = self.signals
        if signals is None or self.mark is None:
            await self.sleep(timeout)
            return
        start = self.now()
        try:
            await self._wait_quiet(signals, timeout, after=self.mark)
        except DeviceGoneError:
            raise
        except DeviceError:
            self.mark = None
            await self.sleep(max(0.0, timeout - (self.now() - start)))


async def race(abort: asyncio.Event, call: Awaitable[T], timeout: float | None) -> T:
    """Await ``call``, cut short by ``abort`` (``Aborted``) or ``timeout`` (``ReadTimeout``)."""
    task: asyncio.Future[T] = asyncio.ensure_future(call)
    if abort.is_set():
        task.cancel()
        task.add_done_callback(_swallow)
        raise Aborted()
    waiter: asyncio.Future[Any] = asyncio.ensure_future(abort.wait())
    racing: set[asyncio.Future[Any]] = {task, waiter}
    try:
        done, _ = await asyncio.wait(racing, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if task in done:
        return task.result()
    task.cancel()
    task.add_done_callback(_swallow)
    if abort.is_set():
        raise Aborted()
    raise ReadTimeout()


def _swallow(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
