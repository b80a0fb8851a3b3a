"""The calls of a `--workers` run that may hold a browser: a refused flow waits for another call of the
run to end; a refusal no call of the run can lift is final; refused calls free nothing (two refused flows
never keep each other retrying, and retry one at a time)."""

from __future__ import annotations

import asyncio
import time

import pytest

from argent.client.base import ToolCallError
from argent.driver import BUSY_STATUS, BrowserRoom
from argent.errors import TOO_MANY_DEVICES
from argent.limits import RETRY_AFTER_SECONDS


def refusal() -> ToolCallError:
    return ToolCallError("no browser", status=500, error_code=TOO_MANY_DEVICES)


async def hold_a_call(room: BrowserRoom) -> tuple[asyncio.Task[None], asyncio.Event]:
    """A call of the run that has started and holds on until the returned event is set."""
    release, started = asyncio.Event(), asyncio.Event()

    async def holder() -> None:
        async with room.calling(retry=False):
            started.set()
            await release.wait()

    held = asyncio.create_task(holder())
    await started.wait()
    return held, release


async def test_a_refusal_with_nothing_of_the_run_running_is_final() -> None:
    room = BrowserRoom()
    seen = room.ended
    with pytest.raises(ToolCallError):
        async with room.calling(retry=False):
            raise refusal()
    assert (room.running, room.ended) == (0, 0)
    assert not room.may_free(seen)


@pytest.mark.parametrize("error", [refusal(), ToolCallError("busy", status=BUSY_STATUS)])
async def test_refused_calls_free_nothing(error: ToolCallError) -> None:
    room = BrowserRoom()
    for _ in range(3):
        with pytest.raises(ToolCallError):
            async with room.calling(retry=True):
                raise error
    assert room.ended == 0 and not room.may_free(0)


async def test_a_call_that_ended_since_the_refused_one_started_may_have_freed_a_browser() -> None:
    room = BrowserRoom()
    seen = room.ended
    async with room.calling(retry=False):
        pass
    with pytest.raises(ToolCallError):
        async with room.calling(retry=False):
            raise ToolCallError("a failed flow still stopped its browser", status=500)
    assert room.ended == 2 and room.may_free(seen) and not room.may_free(room.ended)


async def test_a_waiting_flow_wakes_when_another_call_of_the_run_ends() -> None:
    room = BrowserRoom()
    held, release = await hold_a_call(room)
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
    held, release = await hold_a_call(room)
    t0 = time.monotonic()
    await room.wait(room.ended)
    assert RETRY_AFTER_SECONDS * 0.9 <= time.monotonic() - t0 < RETRY_AFTER_SECONDS + 2
    release.set()
    await held


async def test_retries_ask_one_at_a_time_until_the_first_step_line() -> None:
    """Two refused flows retrying at once would each see the other "running" and wait for ever."""
    room = BrowserRoom()
    first_in, second_in, booted_first = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def first() -> None:
        async with room.calling(retry=True) as booted:
            first_in.set()
            await booted_first.wait()
            booted()  # its first step line: its browser is up
            await asyncio.Event().wait()  # holds its browser until cancelled

    async def second() -> None:
        await first_in.wait()
        with pytest.raises(ToolCallError):
            async with room.calling(retry=True):
                second_in.set()
                raise refusal()

    one = asyncio.create_task(first())
    two = asyncio.create_task(second())
    await first_in.wait()
    assert room.running == 1 and not second_in.is_set()
    booted_first.set()
    await two
    assert second_in.is_set() and room.running == 1 and room.may_free(room.ended)
    one.cancel()
    with pytest.raises(asyncio.CancelledError):
        await one
    assert (room.running, room.ended) == (0, 1)
