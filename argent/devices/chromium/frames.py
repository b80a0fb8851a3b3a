"""The frames of a Chromium page that its walker cannot enter, read with the page.

A walk of the page's document descends into same-origin iframes itself; an iframe of another
origin it marks (see ``walker.js``). Chromium's site isolation puts a page of another site in
another renderer process, which a walk in the page's process cannot read at all: ``PageFrames``
has the browser attach each such out-of-process frame to the page's socket
(``Target.setAutoAttach``, flat sessions) and keeps argent's isolated world (monitor and walker)
in every frame it reads — in the frame's own session, or, for a cross-origin frame in the page's
process, in that frame of the page's session.

One read: the page's walk, and at once (in parallel) the walks of the out-of-process frames
known; then each marked iframe's walk as soon as the walk that marked it is in (a frame in a
frame the same way, ``MAX_FRAME_NESTING`` deep), every walk in parallel, none serial per node;
``Stitch`` puts each under its iframe in top-level coordinates. The read waits for its frames at
most ``FRAME_READ_SECONDS``: a frame that did not answer (its renderer spins) is left out and the
read marked truncated, and while that walk is pending the reads after it leave the frame out at
once. The first read of a new iframe asks its frame id once (``DOM.describeNode``) and tells the
world (a WeakMap there), so later walks name it themselves.

Input needs nothing of this: the browser routes a mouse event sent to the page at top-level
coordinates into the frame under it, and keys to the focused frame.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from itertools import islice
from typing import Any

from attrs import define

from argent.devices.base import DeviceError
from argent.devices.chromium.cdp import CdpSession
from argent.devices.chromium.world import IsolatedWorld
from argent.devices.web.quiet import WAIT_SLACK_SECONDS, wait_expression
from argent.devices.web.stitch import FrameKey, Marker, Stitch, unnamed_frames
from argent.limits import (
    FRAME_READ_SECONDS,
    FRAME_WALK_TIMEOUT_SECONDS,
    MAX_FRAME_NESTING,
    MAX_FRAME_SESSIONS,
    MAX_FRAMES_PER_READ,
)

#: The page's own frame (its document, and the same-origin documents its walk enters).
TOP: FrameKey = ("top",)
#: Every out-of-process frame attaches to the session of its parent, flat, and waits until its
#: session is set up (its requests then all reach the page signals). Dedicated workers attach too
#: and wait the same way: a worker's script request is announced in the page's session but ends in
#: the worker's own, as do the worker's requests (a page's search index, an editor's language
#: server), so the page signals follow it. (With ``waitForDebuggerOnStart``, Chromium holds a worker
#: the filter left out at its start for good: a page's search, editor or PDF worker never ran.)
AUTO_ATTACH = {
    "autoAttach": True,
    "waitForDebuggerOnStart": True,
    "flatten": True,
    "filter": [{"type": "iframe"}, {"type": "worker"}],
}
#: Bound of a frame session's own setup requests (sent in the background: a busy frame never answers).
SETUP_TIMEOUT_SECONDS = 10.0
_GROUP = "argent-frames"
#: Run on the array of a walk's iframes (``__argentFrameEls``) with their frame ids by index: the
#: world remembers them, so the next walk names each frame itself.
_REMEMBER = (
    "function (ids) { const m = globalThis.__argentFrameIds; "
    "for (const k in ids) { const el = this[+k]; if (el) m.set(el, ids[k]); } return true; }"
)


#: The frame id of the iframe that holds the focus (one this world cannot enter), else null.
_FOCUSED_FRAME = (
    "(() => { const el = globalThis.__argent.active(); "
    "const id = el ? globalThis.__argentFrameIds.get(el) : undefined; "
    "return typeof id === 'string' ? id : null; })()"
)


@define
class _Place:
    """Where a frame of the last read sits on the page: its content origin and visible part (CSS
    px), and how many frames deep."""

    origin: tuple[float, float]
    clip: tuple[float, float, float, float]
    nesting: int


def _oopif(target_id: str) -> FrameKey:
    return ("oopif", target_id)


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


@define
class _Flight:
    """A frame's walk under way; once older than ``FRAME_READ_SECONDS`` the reads leave the frame
    out (it does not answer) until it ends."""

    task: asyncio.Future[Any]
    started: float


class PageFrames:
    """The frames of one page session (see module doc)."""

    def __init__(
        self, session: CdpSession, top: IsolatedWorld, follow: Callable[[CdpSession], None] | None = None
    ) -> None:
        self._session = session
        self._top = top
        #: Told of every frame session attached (the page signals count its requests).
        self._follow = follow
        #: The out-of-process frames: frame (= target) id -> its session.
        self._targets: dict[str, CdpSession] = {}
        self._worlds: dict[FrameKey, IsolatedWorld] = {TOP: top}
        self._flights: dict[FrameKey, _Flight] = {}
        #: The frame and local ref of each ref of the last kept read; None: that read was the
        #: page's document alone (its refs are the top world's own).
        self._refs: list[tuple[FrameKey, int]] | None = None
        #: The frames the last read walked, with the change mark of each (from its walk or a wait)
        #: and where its content box starts on the page.
        self._marks: dict[FrameKey, int] = {}
        self._places: dict[FrameKey, _Place] = {}
        self._background: set[asyncio.Future[Any]] = set()

    async def start(self) -> None:
        """Attach the page's out-of-process frames, now and as they come."""
        self._watch(self._session)
        await self._session.send("Target.setAutoAttach", AUTO_ATTACH)

    def forget(self) -> None:
        """The page navigated: the frames of the last read are gone with its document."""
        self._marks = {}
        self._places = {}
        self._refs = None
        for key in [k for k in self._worlds if k[0] == "frame"]:
            del self._worlds[key]

    @property
    def sessions(self) -> list[CdpSession]:
        """The sessions of the out-of-process frames attached now."""
        return list(self._targets.values())

    # -- the frame sessions --

    def _watch(self, session: CdpSession) -> None:
        session.on("Target.attachedToTarget", lambda params: self._attached(session, params))
        session.on("Target.detachedFromTarget", self._detached)

    def _attached(self, parent: CdpSession, params: dict[str, Any]) -> None:
        """A frame or a worker attached, waiting for its session to be set up: follow a frame
        (within ``MAX_FRAME_SESSIONS``) and a worker's requests, and let it run in every case."""
        sid = params.get("sessionId")
        if not isinstance(sid, str):
            return
        info = params.get("targetInfo")
        tid = info.get("targetId") if isinstance(info, dict) else None
        kind = info.get("type") if isinstance(info, dict) else None
        child = parent.attach(
            sid, f"{parent.label} {'worker' if kind == 'worker' else 'frame'} {str(tid)[:8]}"
        )
        setup: list[tuple[str, dict[str, Any]]] = []
        try:
            if kind == "worker":
                if self._follow is not None:
                    self._follow(child)
                    setup.append(("Network.enable", {}))
                return
            if kind != "iframe" or not isinstance(tid, str):
                return
            if tid not in self._targets and len(self._targets) >= MAX_FRAME_SESSIONS:
                return
            self._targets[tid] = child
            self._worlds[_oopif(tid)] = IsolatedWorld(child)
            self._flights.pop(_oopif(tid), None)
            self._watch(child)
            if self._follow is not None:
                self._follow(child)
                setup.append(("Network.enable", {}))
            setup.append(("Target.setAutoAttach", AUTO_ATTACH))
        finally:
            self._later(self._setup(child, setup))

    @staticmethod
    async def _setup(child: CdpSession, requests: list[tuple[str, dict[str, Any]]]) -> None:
        """Set a frame's session up, then let the frame run (all written before any answer, in
        order: Chromium handles them in that order)."""
        calls = [child.send(method, params, timeout=SETUP_TIMEOUT_SECONDS) for method, params in requests]
        calls.append(child.send("Runtime.runIfWaitingForDebugger", timeout=SETUP_TIMEOUT_SECONDS))
        await asyncio.gather(*calls, return_exceptions=True)

    def _detached(self, params: dict[str, Any]) -> None:
        sid, tid = params.get("sessionId"), params.get("targetId")
        for target, child in list(self._targets.items()):
            if child.session_id == sid or target == tid:
                del self._targets[target]
                self._worlds.pop(_oopif(target), None)
                self._flights.pop(_oopif(target), None)

    def _later(self, call: Any) -> None:
        """A request nobody waits for (its failure changes nothing)."""
        task = asyncio.ensure_future(call)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_retrieve)

    # -- one read --

    async def walk(
        self,
        top_expression: str,
        frame_expression: str,
        *,
        max_depth: int,
        max_nodes: int,
        keep: bool,
        timeout: float,
    ) -> Any:
        """The page's walk (``top_expression`` in its world) with its frames' walks
        (``frame_expression``) stitched in; the top walk's own payload when it is no tree."""
        early = [
            (tid, self._flight(_oopif(tid), frame_expression))
            for tid in islice(self._targets, MAX_FRAMES_PER_READ)
        ]
        payload = await self._top.evaluate(top_expression, timeout=timeout)
        if not isinstance(payload, dict) or not isinstance(payload.get("tree"), dict):
            return payload
        if not payload.get("frames"):
            if keep:
                self._refs = None
            self._marks = {}
            return payload
        if payload.get("unknown"):
            with contextlib.suppress(DeviceError, TimeoutError):
                async with asyncio.timeout(FRAME_READ_SECONDS):
                    await self._identify(self._top, payload)
        stitch, markers = Stitch.start(payload, TOP, max_depth=max_depth, max_nodes=max_nodes, keep=keep)
        await self._frames(stitch, markers, dict(early), frame_expression)
        if keep:
            self._refs = stitch.refs
        return stitch.result()

    async def _frames(
        self,
        stitch: Stitch,
        markers: list[Marker],
        early: dict[str, asyncio.Future[Any] | None],
        expression: str,
    ) -> None:
        """Walk the marked frames, each as soon as the walk that marked it is in, and stitch them."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FRAME_READ_SECONDS
        pending: dict[asyncio.Future[Any], tuple[Marker, FrameKey]] = {}
        used: set[FrameKey] = {TOP}
        marks: dict[FrameKey, int] = {}
        places: dict[FrameKey, _Place] = {}
        walked = 0

        def launch(found: list[Marker]) -> None:
            nonlocal walked
            for marker in found:
                frame = self._frame_of(marker) if marker.frame_id is not None else None
                if frame is None or marker.nesting > MAX_FRAME_NESTING or walked >= MAX_FRAMES_PER_READ:
                    stitch.truncated = True
                    continue
                used.add(frame)
                frame_id = str(marker.frame_id)
                task = early.pop(frame_id, None) if frame == _oopif(frame_id) else None
                task = task or self._flight(frame, expression)
                if task is None:  # its walk is still pending from an earlier read: it does not answer
                    stitch.truncated = True
                    continue
                walked += 1
                pending[task] = (marker, frame)
                places[frame] = _Place(marker.origin, marker.clip, marker.nesting)

        launch(markers)
        while pending:
            left = deadline - loop.time()
            if left <= 0:
                break
            done, _ = await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                marker, frame = pending.pop(task)
                if task.cancelled() or task.exception() is not None:
                    stitch.truncated = True
                    continue
                walk = task.result()
                mark = walk.get("mark") if isinstance(walk, dict) else None
                marks[frame] = mark if isinstance(mark, int) and not isinstance(mark, bool) else 0
                launch(stitch.attach(marker, walk, frame))
        if pending:
            stitch.truncated = True
        self._marks = marks
        self._places = places
        for key in [k for k in self._worlds if k[0] == "frame" and k not in used]:
            del self._worlds[key]

    def _frame_of(self, marker: Marker) -> FrameKey | None:
        """The frame a marked iframe shows (its world made ready for use): an out-of-process
        frame's own session, else that frame in the session of the walk that marked it."""
        frame_id = str(marker.frame_id)
        if frame_id in self._targets:
            return _oopif(frame_id)
        source = self._worlds.get(marker.source)
        if source is None:
            return None
        session = source.session
        key: FrameKey = ("frame", session.session_id or "", frame_id)
        if key not in self._worlds:
            self._worlds[key] = IsolatedWorld(session, frame_id)
        return key

    def _flight(self, frame: FrameKey, expression: str) -> asyncio.Future[Any] | None:
        """A new walk of the frame (each read stitches its own); None while an earlier walk of it is
        pending past ``FRAME_READ_SECONDS`` (the frame does not answer)."""
        world = self._worlds.get(frame)
        if world is None:
            return None
        now = asyncio.get_running_loop().time()
        if self._hung(frame, now):
            return None
        task = asyncio.ensure_future(self._read(world, expression))
        flight = _Flight(task, now)
        self._flights[frame] = flight

        def done(_: asyncio.Future[Any]) -> None:
            if self._flights.get(frame) is flight:
                del self._flights[frame]

        task.add_done_callback(done)
        task.add_done_callback(_retrieve)
        return task

    async def _read(self, world: IsolatedWorld, expression: str) -> Any:
        """One frame's walk, its own iframes named by frame id."""
        payload = await world.evaluate(expression, timeout=FRAME_WALK_TIMEOUT_SECONDS)
        if isinstance(payload, dict) and payload.get("unknown"):
            with contextlib.suppress(DeviceError):
                await self._identify(world, payload)
        return payload

    async def _identify(self, world: IsolatedWorld, payload: dict[str, Any]) -> None:
        """Name the frame of each iframe the walk marked without a frame id (``DOM.describeNode``
        of the element the walk kept), in the payload and in the world for the next walks."""
        subs = unnamed_frames(payload.get("tree"))
        context = world.context
        if not subs or context is None:
            return
        session = world.session
        try:
            reply = await session.send(
                "Runtime.evaluate",
                {"expression": "globalThis.__argentFrameEls", "contextId": context, "objectGroup": _GROUP},
            )
            array = (reply.get("result") or {}).get("objectId")
            if not isinstance(array, str):
                return
            props = await session.send("Runtime.getProperties", {"objectId": array, "ownProperties": True})
            elements = {
                int(p["name"]): p["value"]["objectId"]
                for p in props.get("result") or []
                if isinstance(p, dict)
                and str(p.get("name", "")).isdigit()
                and isinstance((p.get("value") or {}).get("objectId"), str)
            }
            keys = sorted(
                {k for k in (sub.get("key") for sub in subs) if isinstance(k, int) and k in elements}
            )
            answers = await asyncio.gather(
                *(session.send("DOM.describeNode", {"objectId": elements[k]}) for k in keys),
                return_exceptions=True,
            )
            ids: dict[str, str] = {}
            for k, answer in zip(keys, answers, strict=True):
                frame_id = (answer.get("node") or {}).get("frameId") if isinstance(answer, dict) else None
                if isinstance(frame_id, str) and frame_id:
                    ids[str(k)] = frame_id
            for sub in subs:
                found = ids.get(str(sub.get("key")))
                if found is not None:
                    sub["id"] = found
            if ids:
                self._later(
                    session.send(
                        "Runtime.callFunctionOn",
                        {"objectId": array, "functionDeclaration": _REMEMBER, "arguments": [{"value": ids}]},
                    )
                )
        finally:
            self._later(session.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP}))

    # -- quiet --

    async def quiet(
        self,
        main: Awaitable[Any],
        remaining: float,
        min_frames: int,
        after: int | None,
        *,
        paint: bool = False,
    ) -> Any:
        """The page's quiet wait (``main``, the monitor's answer) with its frames' (those the last
        read walked, but one whose walk does not answer): with ``after`` (a change wait), the first
        of them that changed past its mark and is quiet answers (a frame's: the page's ``after``
        again); else the page's answer, once its frames are quiet too — a frame holds it at most
        ``FRAME_READ_SECONDS`` longer (a frame whose own page never rests holds no step for long).
        ``paint``: the frames' finite animations count too (a capture's wait)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        frames = [
            (key, world)
            for key in self._marks
            if (world := self._worlds.get(key)) is not None and not self._hung(key, now)
        ]
        first = asyncio.ensure_future(main)
        if not frames:
            return await first
        waits = {
            asyncio.ensure_future(
                self._wait(world, remaining, min_frames, key, after is not None, paint)
            ): key
            for key, world in frames
        }
        try:
            if after is None:
                result = await first
                if isinstance(result, dict) and result.get("quiet") is True:
                    cap = min(now + remaining, loop.time() + FRAME_READ_SECONDS)
                    await asyncio.wait(waits, timeout=max(0.0, cap - loop.time()))
                return result
            pending: set[asyncio.Future[Any]] = {first, *waits}
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if first in done:
                    return first.result()
                if any(not t.cancelled() and t.exception() is None and t.result() is True for t in done):
                    return {"quiet": True, "mark": after, "tick": 0}
            return await first
        finally:
            for task in (first, *waits):
                if not task.done():
                    task.cancel()
                task.add_done_callback(_retrieve)

    async def _wait(
        self,
        world: IsolatedWorld,
        remaining: float,
        min_frames: int,
        key: FrameKey,
        changed: bool,
        paint: bool,
    ) -> bool:
        """One frame's monitor wait (``changed``: past its mark; ``paint``: still to the pixel); True
        once quiet, its mark noted."""
        after = self._marks.get(key) if changed else None
        expression = wait_expression(remaining, min_frames, after, 0, paint)
        result = await world.evaluate(expression, await_promise=True, timeout=remaining + WAIT_SLACK_SECONDS)
        if not isinstance(result, dict) or result.get("quiet") is not True:
            return False
        mark = result.get("mark")
        if key in self._marks and isinstance(mark, int) and not isinstance(mark, bool):
            self._marks[key] = mark
        return True

    def _hung(self, frame: FrameKey, now: float) -> bool:
        """The frame's walk is pending past ``FRAME_READ_SECONDS``: it does not answer."""
        flight = self._flights.get(frame)
        return flight is not None and not flight.task.done() and now - flight.started >= FRAME_READ_SECONDS

    # -- focus --

    async def wait_focus(self, frame_id: str, x: float, y: float, timeout: float, grace: float) -> Any:
        """The focus wait of the frame ``frame_id`` (which the last read walked), at (x, y) of the
        page moved into that frame; followed into a frame in it the same way."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        value: Any = None
        for _ in range(MAX_FRAME_NESTING):
            key = self._key_of(frame_id)
            world = self._worlds.get(key) if key is not None else None
            if key is None or world is None:
                return None
            ox, oy = self._places[key].origin
            value = await focus_wait(world, x - ox, y - oy, deadline - loop.time(), grace)
            inner = value.get("frame") if isinstance(value, dict) else None
            if not isinstance(inner, str):
                return value
            frame_id = inner
        return value

    def _key_of(self, frame_id: str) -> FrameKey | None:
        """The frame of the last read with this frame id."""
        return next((k for k in self._places if k[-1] == frame_id), None)

    def at(self, x: float, y: float) -> tuple[IsolatedWorld, float, float] | None:
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

    async def focused(self) -> IsolatedWorld | None:
        """The world of the frame (read last) that holds the focus, when the page's focus is in an
        iframe its walk cannot enter; followed into a frame in it the same way."""
        world: IsolatedWorld | None = None
        where = self._top
        for _ in range(MAX_FRAME_NESTING):
            frame_id = await where.evaluate(_FOCUSED_FRAME, timeout=FRAME_READ_SECONDS)
            key = self._key_of(frame_id) if isinstance(frame_id, str) else None
            inner = self._worlds.get(key) if key is not None else None
            if inner is None:
                return world
            world = where = inner
        return world

    # -- the elements of a kept read --

    def element(self, ref: int) -> tuple[IsolatedWorld, int] | None:
        """Where the element ``ref`` of the last kept read lives: the world of its frame and its
        number there (``globalThis.__argentRefs`` of that world); None when no such ref."""
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
        """Scroll the element ``ref`` of the last kept read into view (in its frame, and its frame
        into the page's view), then a kept read; None when that element is gone."""
        found = self.element(ref)
        if found is None:
            return None
        world, local = found
        reveal = f"globalThis.__argent.reveal({int(local)})"
        if world is self._top:
            top = f"{reveal} ? {expression} : null"
        else:
            try:
                async with asyncio.timeout(FRAME_READ_SECONDS):
                    shown = await world.evaluate(reveal)
            except TimeoutError:
                raise DeviceError(
                    f"Chromium ({world.session.label}): the frame did not answer within {FRAME_READ_SECONDS:g}s."
                ) from None
            if shown is not True:
                return None
            top = expression
        return await self.walk(
            top, expression, max_depth=max_depth, max_nodes=max_nodes, keep=True, timeout=timeout
        )


async def focus_wait(world: IsolatedWorld, x: float, y: float, timeout: float, grace: float) -> Any:
    """The monitor's ``waitFocus`` in ``world`` (x, y in that frame's CSS px)."""
    ms = round(max(0.0, timeout) * 1000)
    grace_ms = round(max(0.0, grace) * 1000)
    return await world.evaluate(
        f"globalThis.__argent.waitFocus({ms}, {x!r}, {y!r}, {grace_ms})",
        await_promise=True,
        timeout=max(0.0, timeout) + WAIT_SLACK_SECONDS,
    )
