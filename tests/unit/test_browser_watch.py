"""The watchdog's verdict: a stopped browser is hung at the first bound; a running one that is only
slow (a loaded machine) is not; a running one silent past the whole patience is (wedged)."""

from __future__ import annotations

import asyncio

from argent.devices.base import DeviceError
from argent.devices.web.watchdog import BrowserWatch


class Verdicts:
    def __init__(self) -> None:
        self.seen: list[tuple[float, str]] = []
        self.given = asyncio.Event()

    async def __call__(self, waited: float, bound: str) -> None:
        self.seen.append((waited, bound))
        self.given.set()


async def never() -> None:
    await asyncio.Event().wait()


async def test_a_running_browser_that_answers_late_is_not_hung() -> None:
    verdicts = Verdicts()
    late, again = asyncio.Event(), asyncio.Event()
    pings = 0

    async def ping() -> None:
        nonlocal pings
        pings += 1
        if pings == 1:
            await late.wait()  # answered only after the first bound has passed
        else:
            again.set()

    def stopped() -> bool:
        late.set()  # asked once the first bound passed: the process runs, and now it answers
        return False

    watch = BrowserWatch(ping, lambda: True, verdicts, stopped=stopped, every=0, limit=0.01, patience=60)
    watch.start()
    await asyncio.wait_for(again.wait(), 10)  # the watch went on to its next question
    watch.stop()
    assert verdicts.seen == []


async def test_a_stopped_browser_is_hung_at_the_first_bound() -> None:
    verdicts = Verdicts()
    watch = BrowserWatch(never, lambda: True, verdicts, stopped=lambda: True, limit=0.01, patience=60)
    watch.start()
    await asyncio.wait_for(verdicts.given.wait(), 10)
    assert verdicts.seen == [(0.01, "BROWSER_ANSWER_SECONDS")]


async def test_a_running_browser_silent_past_the_patience_is_hung() -> None:
    verdicts = Verdicts()
    watch = BrowserWatch(never, lambda: True, verdicts, stopped=lambda: False, limit=0.01, patience=0.05)
    watch.start()
    await asyncio.wait_for(verdicts.given.wait(), 10)
    assert verdicts.seen == [(0.05, "BROWSER_SILENT_SECONDS")]


async def test_a_browser_that_dies_is_left_to_its_death_report() -> None:
    verdicts = Verdicts()

    async def dead() -> None:
        raise DeviceError("gone")

    watch = BrowserWatch(dead, lambda: True, verdicts, stopped=lambda: False, limit=0.01, patience=0.05)
    watch.start()
    assert watch._task is not None
    await asyncio.wait_for(watch._task, 10)
    assert verdicts.seen == []
