"""The calls of a `--workers` run that may hold a browser: a refused flow waits for another call of the
run to end; a refusal no call of the run can lift is final; refused calls free nothing (two refused flows
never keep each other retrying)."""

from __future__ import annotations

import asyncio
import time

import pytest

from argent.cli.suite import BUSY_STATUS, BrowserRoom
from argent.client.base import ToolCallError
from argent.errors import TOO_MANY_DEVICES
from argent.limits import RETRY_AFTER_SECONDS


def refusal() -> ToolCallError:
    return ToolCallError("no browser", status=500, error_code=TOO_MANY_DEVICES)


def test_a_refusal_with_nothing_of_the_run_running_is_final() -> None:
    room = BrowserRoom()
    seen = room.ended
    with pytest.raises(ToolCallError), room.calling():
        raise refusal()
    assert (room.running, room.ended) == (0, 0)
    assert not room.may_free(seen)


@pytest.mark.parametrize("error", [refusal(), ToolCallError("busy", status=BUSY_STATUS)])
def test_refused_calls_free_nothing(error: ToolCallError) -> None:
    room = BrowserRoom()
    for _ in range(3):
        with pytest.raises(ToolCallError), room.calling():
            raise error
    assert room.ended == 0 and not room.may_free(0)


def test_a_call_that_ended_since_the_refused_one_started_may_have_freed_a_browser() -> None:
    room = BrowserRoom()
    seen = room.ended
    with room.calling():
        pass
    with pytest.raises(ToolCallError), room.calling():
        raise ToolCallError("a failed flow still stopped its browser", status=500)
    assert room.ended == 2 and room.may_free(seen) and not room.may_free(room.ended)


async def test_a_waiting_flow_wakes_when_another_call_of_the_run_ends() -> None:
    room = BrowserRoom()
    release, started = asyncio.Event(), asyncio.Event()

    async def holder() -> None:
        with room.calling():
            started.set()
            await release.wait()

    held = asyncio.create_task(holder())
    await started.wait()
    seen = room.ended
    assert room.may_free(seen)
    waiting = asyncio.create_task(room.wait(seen))
    t0 = time.monotonic()
    release.set()  # the holder ends; the waiter wakes on its end, not on Retry-After
    await waiting
    assert time.monotonic() - t0 < RETRY_AFTER_SECONDS / 2
    await held
    assert (room.running, room.ended) == (0, 1)


async def test_a_wait_is_bounded_by_retry_after_when_the_browsers_are_another_clients() -> None:
    room = BrowserRoom()
    release, started = asyncio.Event(), asyncio.Event()

    async def holder() -> None:
        with room.calling():
            started.set()
            await release.wait()

    held = asyncio.create_task(holder())
    await started.wait()
    t0 = time.monotonic()
    await room.wait(room.ended)
    assert RETRY_AFTER_SECONDS * 0.9 <= time.monotonic() - t0 < RETRY_AFTER_SECONDS + 2
    release.set()
    await held
