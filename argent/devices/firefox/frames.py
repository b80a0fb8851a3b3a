"""The frames of a Firefox page that its walker cannot enter, read with the page.

A walk of the page's document descends into same-origin iframes itself; an iframe of another origin
it marks (``walker.js``). In WebDriver BiDi every frame is a browsing context of its own, which the
device reaches by id whatever process runs it: an iframe's ``contentWindow``, serialized by BiDi,
names its context. ``ContextFrames`` keeps argent's sandbox in each context it reads; one read is
the page's walk, then each marked iframe's walk as soon as the walk that marked it is in (a frame in
a frame the same way, ``MAX_FRAME_NESTING`` deep), all in parallel, bounded by
``FRAME_READ_SECONDS`` (a frame that does not answer is left out and the read marked truncated);
``argent.devices.web.stitch`` puts each under its iframe in top-level coordinates. The first read of
a new iframe asks its context once and tells the world (``__argentFrameIds``), so later walks name it
themselves.

Input needs nothing of this: the browser routes a pointer action at top-level coordinates into the
frame under it, and keys to the focused frame.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from attrs import define

from argent.devices.base import DeviceError
from argent.devices.firefox.bidi import BidiSession
from argent.devices.firefox.values import context_of
from argent.devices.firefox.world import SandboxWorld
from argent.devices.web.quiet import WAIT_SLACK_SECONDS, wait_expression
from argent.devices.web.stitch import FrameKey, Marker, Stitch, unnamed_frames
from argent.limits import (
    FRAME_READ_SECONDS,
    FRAME_WALK_TIMEOUT_SECONDS,
    MAX_FRAME_NESTING,
    MAX_FRAMES_PER_READ,
)

TOP: FrameKey = ("top",)
#: The contexts of a walk's marked iframes (``__argentFrameEls``), by index.
_WINDOWS = "() => (globalThis.__argentFrameEls || []).map((el) => el.contentWindow)"
#: Remember each iframe's context id in the world (``__argentFrameIds``), by index.
_REMEMBER = (
    "(ids) => { const els = globalThis.__argentFrameEls || []; const m = globalThis.__argentFrameIds; "
    "ids.forEach((id, i) => { if (id && els[i]) m.set(els[i], id); }); return true; }"
)
#: The context id of the iframe that holds the focus (one this world cannot enter), else null.
_FOCUSED_FRAME = (
    "(() => { const el = globalThis.__argent.active(); "
    "const id = el ? globalThis.__argentFrameIds.get(el) : undefined; "
    "return typeof id === 'string' ? id : null; })()"
)


@define
class _Place:
    """Where a frame of the last read sits on the page: its content origin and visible part (CSS px),
    and how many frames deep."""

    origin: tuple[float, float]
    clip: tuple[float, float, float, float]
    nesting: int


def _ctx(context: str) -> FrameKey:
    return ("ctx", context)


class ContextFrames:
    """The frames of one page (see module doc)."""

    def __init__(self, session: BidiSession, top: SandboxWorld) -> None:
        self._session = session
        self._top = top
        self._worlds: dict[FrameKey, SandboxWorld] = {TOP: top}
        self._refs: list[tuple[FrameKey, int]] | None = None
        self._marks: dict[FrameKey, int] = {}
        self._places: dict[FrameKey, _Place] = {}

    def forget(self) -> None:
        """The page navigated: the frames of the last read are gone with its document."""
        self._marks = {}
        self._places = {}
        self._refs = None
        self._worlds = {TOP: self._top}

    # -- one read --

    async def walk(
        self, expression: str, *, max_depth: int, max_nodes: int, keep: bool, timeout: float
    ) -> Any:
        """The page's walk with its frames' walks stitched in; the top walk's own payload when it is no tree."""
        payload = await self._top.evaluate(expression, timeout=timeout)
        return await self._stitched(payload, expression, max_depth=max_depth, max_nodes=max_nodes, keep=keep)

    async def _stitched(
        self, payload: Any, expression: str, *, max_depth: int, max_nodes: int, keep: bool
    ) -> Any:
        if not isinstance(payload, dict) or not isinstance(payload.get("tree"), dict):
            return payload
        if not payload.get("frames"):
            if keep:
                self._refs = None
            self._marks = {}
            self._places = {}
            return payload
        if payload.get("unknown"):
            with contextlib.suppress(DeviceError, TimeoutError):
                async with asyncio.timeout(FRAME_READ_SECONDS):
                    await self._identify(self._top, payload)
        stitch, markers = Stitch.start(payload, TOP, max_depth=max_depth, max_nodes=max_nodes, keep=keep)
        await self._frames(stitch, markers, expression)
        if keep:
            self._refs = stitch.refs
        return stitch.result()

    async def _frames(self, stitch: Stitch, markers: list[Marker], expression: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FRAME_READ_SECONDS
        pending: dict[asyncio.Future[Any], tuple[Marker, FrameKey]] = {}
        marks: dict[FrameKey, int] = {}
        places: dict[FrameKey, _Place] = {}
        walked = 0

        def launch(found: list[Marker]) -> None:
            nonlocal walked
            for marker in found:
                if (
                    marker.frame_id is None
                    or marker.nesting > MAX_FRAME_NESTING
                    or walked >= MAX_FRAMES_PER_READ
                ):
                    stitch.truncated = True
                    continue
                key = _ctx(marker.frame_id)
                world = self._worlds.setdefault(key, SandboxWorld(self._session, marker.frame_id))
                walked += 1
                pending[asyncio.ensure_future(self._read(world, expression))] = (marker, key)
                places[key] = _Place(marker.origin, marker.clip, marker.nesting)

        launch(markers)
        try:
            while pending:
                left = deadline - loop.time()
                if left <= 0:
                    break
                done, _ = await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    marker, key = pending.pop(task)
                    if task.cancelled() or task.exception() is not None:
                        stitch.truncated = True
                        continue
                    walk = task.result()
                    mark = walk.get("mark") if isinstance(walk, dict) else None
                    marks[key] = mark if isinstance(mark, int) and not isinstance(mark, bool) else 0
                    launch(stitch.attach(marker, walk, key))
        finally:
            for task in pending:
                task.cancel()
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
        if pending:
            stitch.truncated = True
        self._marks = marks
        self._places = places
        for key in [k for k in self._worlds if k != TOP and k not in places]:
            del self._worlds[key]

    async def _read(self, world: SandboxWorld, expression: str) -> Any:
        """One frame's walk, its own iframes named by context id."""
        payload = await world.evaluate(expression, timeout=FRAME_WALK_TIMEOUT_SECONDS)
        if isinstance(payload, dict) and payload.get("unknown"):
            with contextlib.suppress(DeviceError):
                await self._identify(world, payload)
        return payload

    async def _identify(self, world: SandboxWorld, payload: dict[str, Any]) -> None:
        """Name the context of each iframe the walk marked without one, in the payload and in the
        world for the next walks."""
        reply = await world.call(_WINDOWS, timeout=FRAME_READ_SECONDS)
        windows = reply.get("value") if reply.get("type") == "array" else None
        if not isinstance(windows, list):
            return
        ids = [context_of(window) for window in windows]
        for sub in unnamed_frames(payload.get("tree")):
            key = sub.get("key")
            if isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(ids) and ids[key]:
                sub["id"] = ids[key]
        listed = [{"type": "string", "value": i} if i else {"type": "null"} for i in ids]
        await world.call(_REMEMBER, [{"type": "array", "value": listed}], timeout=FRAME_READ_SECONDS)

    # -- quiet --

    async def quiet(self, page: Any, remaining: float, frames: int, after: int | None) -> Any:
        """The page's wait (``page``, under way) with the waits of the frames the last read walked
        beside it: quiet when all are (a frame that does not answer within ``FRAME_READ_SECONDS`` is
        left out); the page's answer."""
        waits = [
            asyncio.ensure_future(self._frame_quiet(key, world, min(remaining, FRAME_READ_SECONDS), frames))
            for key, world in self._worlds.items()
            if key != TOP and key in self._marks
        ]
        result = await page
        if not waits:
            return result
        answers = await asyncio.gather(*waits, return_exceptions=True)
        if isinstance(result, dict) and any(answer is False for answer in answers):
            return {**result, "quiet": False}
        return result

    async def _frame_quiet(
        self, key: FrameKey, world: SandboxWorld, remaining: float, frames: int
    ) -> bool | None:
        """True once the frame is quiet, False when it is not by ``remaining``; None when it did not answer."""
        try:
            async with asyncio.timeout(remaining + WAIT_SLACK_SECONDS):
                result = await world.evaluate(
                    wait_expression(remaining, frames, None, 0),
                    await_promise=True,
                    timeout=remaining + WAIT_SLACK_SECONDS,
                )
        except (DeviceError, TimeoutError):
            return None
        if not isinstance(result, dict):
            return None
        return result.get("quiet") is True

    # -- where things are --

    def at(self, x: float, y: float) -> tuple[SandboxWorld, float, float] | None:
        """The innermost frame of the last read whose visible part holds (x, y) CSS px of the page:
        its world, and the point in the frame's own CSS px."""
        found = [
            (place.nesting, key)
            for key, place in self._places.items()
            if place.clip[0] <= x < place.clip[2] and place.clip[1] <= y < place.clip[3]
        ]
        if not found:
            return None
        key = max(found)[1]
        world = self._worlds.get(key)
        if world is None:
            return None
        ox, oy = self._places[key].origin
        return world, x - ox, y - oy

    async def focused(self) -> SandboxWorld | None:
        """The world of the frame (read last) that holds the focus, when the page's focus is in an
        iframe its walk cannot enter; followed into a frame in it the same way."""
        world: SandboxWorld | None = None
        where = self._top
        for _ in range(MAX_FRAME_NESTING):
            context = await where.evaluate(_FOCUSED_FRAME, timeout=FRAME_READ_SECONDS)
            inner = self._worlds.get(_ctx(context)) if isinstance(context, str) else None
            if inner is None:
                return world
            world = where = inner
        return world

    async def wait_focus(self, context: str, x: float, y: float, timeout: float, grace: float) -> Any:
        """The focus wait of the frame ``context`` (which the last read walked), at (x, y) of the page
        moved into that frame; followed into a frame in it the same way."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        value: Any = None
        for _ in range(MAX_FRAME_NESTING):
            key = _ctx(context)
            world = self._worlds.get(key)
            place = self._places.get(key)
            if world is None or place is None:
                return None
            ox, oy = place.origin
            value = await focus_wait(world, x - ox, y - oy, deadline - loop.time(), grace)
            inner = value.get("frame") if isinstance(value, dict) else None
            if not isinstance(inner, str):
                return value
            context = inner
        return value

    # -- the elements of a kept read --

    def element(self, ref: int) -> tuple[SandboxWorld, int] | None:
        refs = self._refs
        if refs is None:
            return (self._top, ref) if ref >= 0 else None
        if not 0 <= ref < len(refs):
            return None
        frame, local = refs[ref]
        world = self._worlds.get(frame)
        return (world, local) if world is not None else None

    async def reveal(
        self, ref: int, expression: str, *, max_depth: int, max_nodes: int, timeout: float
    ) -> Any:
        """Scroll the element ``ref`` of the last kept read into view (in its frame, and its frame into
        the page's view), then a kept read; None when that element is gone."""
        found = self.element(ref)
        if found is None:
            return None
        world, local = found
        reveal = f"globalThis.__argent.reveal({int(local)})"
        if world is self._top:
            payload = await self._top.evaluate(f"{reveal} ? {expression} : null", timeout=timeout)
            if payload is None:
                return None
        else:
            try:
                async with asyncio.timeout(FRAME_READ_SECONDS):
                    shown = await world.evaluate(reveal)
            except TimeoutError:
                raise DeviceError(
                    f"Firefox ({self._session.label}): the frame did not answer within {FRAME_READ_SECONDS:g}s."
                ) from None
            if shown is not True:
                return None
            payload = await self._top.evaluate(expression, timeout=timeout)
        return await self._stitched(payload, expression, max_depth=max_depth, max_nodes=max_nodes, keep=True)


async def focus_wait(world: SandboxWorld, x: float, y: float, timeout: float, grace: float) -> Any:
    """The monitor's ``waitFocus`` in ``world`` (x, y in that frame's CSS px)."""
    ms = round(max(0.0, timeout) * 1000)
    grace_ms = round(max(0.0, grace) * 1000)
    return await world.evaluate(
        f"globalThis.__argent.waitFocus({ms}, {x!r}, {y!r}, {grace_ms})",
        await_promise=True,
        timeout=max(0.0, timeout) + WAIT_SLACK_SECONDS,
    )
