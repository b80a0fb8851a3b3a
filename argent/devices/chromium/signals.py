"""Page signals over CDP: when a Chromium page is quiet, where its focus is, one-move reveals.

``PageSignals`` keeps argent's isolated world in the page's main frame — ``monitor.js``,
installed once per document, where the page can neither see nor disturb it — and counts the
page's network requests in flight from CDP ``Network`` events. A quiet page is one whose
requests are done and whose monitor saw two frames without a DOM change or a running finite
animation; after input (``touched``) at least two more frames must pass, so the effects of the
input get their frame before anyone looks.

The frames the page's walk cannot enter (``argent.devices.chromium.frames``) count too: their
requests, and their monitors' quiet — a frame holds the page's quiet at most ``FRAME_READ_SECONDS``
longer than the page's own document, and a change in a frame ends a change wait as one in the page.

A request still running after ``QUIET_REQUEST_MAX_AGE_MS`` stops counting: long polls, streams
and slow beacons would otherwise hold every step at the ceiling.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from argent.devices.chromium.cdp import CdpSession
from argent.devices.chromium.frames import WAIT_SLACK_SECONDS, PageFrames, focus_wait
from argent.devices.chromium.world import IsolatedWorld
from argent.devices.web.walker import walker_query
from argent.limits import QUIET_REQUEST_MAX_AGE_MS

#: Requests of these resource types never hold a page busy: they live as long as the page.
_LONG_LIVED_TYPES = frozenset({"EventSource", "WebSocket", "Media", "Ping", "CSPViolationReport"})
#: A request older than this is forgotten (one that never reported its end).
_FORGET_AFTER_SECONDS = 60.0
#: Frames a wait needs after input: the input's effects (timers, frame callbacks) get their frame.
FRAMES_AFTER_INPUT = 2


def _walk(max_depth: int, max_nodes: int, keep: bool, css: Sequence[str]) -> str:
    """One walk in argent's world, with the page's change mark taken just before it (``mark``), the
    iframes it could not enter (``frames``) and how many of them have no frame id yet (``unknown``)."""
    args = f"{int(max_depth)}, {int(max_nodes)}, {'true' if keep else 'false'}, {walker_query(css)}"
    return (
        "(() => { const mark = globalThis.__argent.mark(); "
        f"const walk = globalThis.__argentWalk({args}); "
        "if (walk) { walk.mark = mark; const els = globalThis.__argentFrameEls || []; "
        "const ids = globalThis.__argentFrameIds; walk.frames = els.length; "
        "walk.unknown = els.filter((el) => !ids.has(el)).length; } "
        "return walk; })()"
    )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class PageSignals:
    """The signals of one page session (see module doc)."""

    def __init__(self, session: CdpSession) -> None:
        self._session = session
        self._world = IsolatedWorld(session)
        #: The page's frames that its walker cannot enter (walked beside it).
        self.frames = PageFrames(session, self._world, follow=self._follow)
        self._requests: dict[str, float] = {}
        self._request_done = asyncio.Event()
        self._touched = True
        self._max_age = QUIET_REQUEST_MAX_AGE_MS / 1000
        #: Input sent so far, and whether the focus took text at the last focus wait (at that count).
        self._inputs = 0
        self._focus_editable: tuple[int, bool] | None = None

    async def start(self) -> None:
        """Subscribe to the page's requests and navigations (called once, after ``Page.enable``).
        The ``Network`` domain is the device's to enable, once per page session for these
        signals and its network recorder alike (``ChromiumDevice._prime``)."""
        session = self._session
        session.on("Network.requestWillBeSent", self._on_request)
        session.on("Network.loadingFinished", self._on_request_end)
        session.on("Network.loadingFailed", self._on_request_end)
        session.on("Page.frameNavigated", self._on_navigated)
        tree = await session.send("Page.getFrameTree")
        frame = (tree.get("frameTree") or {}).get("frame") or {}
        if isinstance(frame.get("id"), str):
            self._world.reset(frame["id"])
        await self.frames.start()

    def _follow(self, child: CdpSession) -> None:
        """An out-of-process frame attached: its requests count too (``PageFrames`` enables its
        ``Network`` before the frame runs). One request id across the sessions: a frame's document
        request starts in its parent's session and may end in its own."""
        child.on("Network.requestWillBeSent", self._on_request)
        child.on("Network.loadingFinished", self._on_request_end)
        child.on("Network.loadingFailed", self._on_request_end)

    def touched(self) -> None:
        """Input went to the page: the next quiet needs frames of its own."""
        self._touched = True
        self._inputs += 1

    # -- events --

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _on_request(self, params: dict[str, Any]) -> None:
        rid = params.get("requestId")
        if isinstance(rid, str) and params.get("type") not in _LONG_LIVED_TYPES:
            self._requests.setdefault(rid, self._now())

    def _on_request_end(self, params: dict[str, Any]) -> None:
        rid = params.get("requestId")
        if isinstance(rid, str) and self._requests.pop(rid, None) is not None:
            self._request_done.set()

    def _on_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame")
        if isinstance(frame, dict) and not frame.get("parentId"):
            self._world.reset(frame["id"] if isinstance(frame.get("id"), str) else None)
            self.frames.forget()

    # -- the network --

    def _busy_until(self) -> float | None:
        """When the youngest request in flight stops counting; None when none counts now."""
        now = self._now()
        until: float | None = None
        for rid, started in list(self._requests.items()):
            if now - started > _FORGET_AFTER_SECONDS:
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

    # -- the world --

    async def evaluate(
        self, expression: str, *, await_promise: bool = False, timeout: float | None = None
    ) -> Any:
        """Evaluate in argent's world of the current document (made on first use)."""
        return await self._world.evaluate(expression, await_promise=await_promise, timeout=timeout)

    # -- the signals --

    async def wait_quiet(self, timeout: float, *, after: int | None = None) -> int | None:
        deadline = self._now() + max(0.0, timeout)
        quiet = await self._quiet(deadline, after, slack=0)
        return None if quiet is None else quiet[0]

    async def quiet_capture(self, capture: Callable[[], Awaitable[bytes]], timeout: float) -> bytes:
        """``capture()`` of the quiet page, one frame sooner than a quiet wait and a capture in
        turn: the capture is asked for one frame before the page is quiet (its own frame is then
        the last one), and kept only when the very next frame made the page quiet with no change
        in between; else the quiet page is captured again. At ``timeout``, captured as it is."""
        deadline = self._now() + max(0.0, timeout)
        early = await self._quiet(deadline, None, slack=1)
        if early is None:
            return await capture()
        shot = asyncio.ensure_future(capture())
        try:
            full = await self._quiet(deadline, None, slack=0)
        except BaseException:
            shot.cancel()
            shot.add_done_callback(_retrieve)
            raise
        taken = await shot
        if full is None or full == (early[0], early[1] + 1):
            return taken
        return await capture()

    async def _quiet(self, deadline: float, after: int | None, *, slack: int) -> tuple[int, int] | None:
        """The page's (mark, frame) once quiet (``slack`` 1: one frame before); None at ``deadline``."""
        frames = FRAMES_AFTER_INPUT if self._touched else 0
        mark = "null" if after is None else str(int(after))
        while True:
            if await self._network_quiet(deadline):
                frames = FRAMES_AFTER_INPUT  # the responses' handlers get their frames
            remaining = deadline - self._now()
            if remaining <= 0:
                return None
            page = self.evaluate(
                f"globalThis.__argent.wait({round(remaining * 1000)}, {frames}, {mark}, {slack})",
                await_promise=True,
                timeout=remaining + WAIT_SLACK_SECONDS,
            )
            result = await self.frames.quiet(page, remaining, frames, after)
            if not isinstance(result, dict) or result.get("quiet") is not True:
                return None
            if self._busy_until() is not None:
                continue  # a request started while the page looked quiet
            if not slack:
                self._touched = False
            return _int(result.get("mark")), _int(result.get("tick"))

    async def walk(
        self, max_depth: int, max_nodes: int, *, keep: bool, timeout: float, css: Sequence[str] = ()
    ) -> Any:
        """The walker's payload, read in argent's world (``keep``: numbered for ``reveal``; ``css``:
        the selectors whose matches it marks), with the page's change mark taken just before it
        (``mark``) and the walks of the frames it could not enter stitched in
        (``argent.devices.chromium.frames``)."""
        expression = _walk(max_depth, max_nodes, keep, css)
        return await self.frames.walk(
            expression, expression, max_depth=max_depth, max_nodes=max_nodes, keep=keep, timeout=timeout
        )

    async def reveal(
        self, ref: int, max_depth: int, max_nodes: int, *, timeout: float, css: Sequence[str] = ()
    ) -> Any:
        """Scroll the element ``ref`` of the last kept walk into view, then a kept walk; None when
        that element is gone."""
        return await self.frames.reveal(
            ref,
            _walk(max_depth, max_nodes, True, css),
            max_depth=max_depth,
            max_nodes=max_nodes,
            timeout=timeout,
        )

    async def wait_focus(self, x: float, y: float, timeout: float, grace: float) -> bool:
        """The monitor's focus wait; once the focus went into a frame the page's walk cannot
        enter, that frame's (``PageFrames.wait_focus``). Text then goes key by key: the key
        listeners ``enter_text`` looks for are the page's, not the frame's."""
        deadline = self._now() + max(0.0, timeout)
        value = await focus_wait(self._world, x, y, timeout, grace)
        if isinstance(value, dict) and isinstance(value.get("frame"), str):
            value = await self.frames.wait_focus(value["frame"], x, y, deadline - self._now(), grace)
            self._focus_editable = (self._inputs, False)
            return isinstance(value, dict) and value.get("ok") is True
        if not isinstance(value, dict):
            return False
        self._focus_editable = (self._inputs, value.get("editable") is True)
        return value.get("ok") is True

    async def focus_at(self, x: float, y: float) -> tuple[str, bool]:
        """Focus the element at (x, y) CSS px without a click (``__argentForms.focusAt``; in the
        frame there when the page's walk cannot enter it): its state (``kept``, ``focused``,
        ``none``) and whether the focus then takes text (kept for ``editable``: never in such a
        frame, whose key listeners ``enter_text`` cannot see)."""
        value = await self.evaluate(f"globalThis.__argentForms.focusAt({x!r}, {y!r})")
        framed = False
        if isinstance(value, dict) and value.get("state") == "none" and (inner := self.frames.at(x, y)):
            world, fx, fy = inner
            value = await world.evaluate(f"globalThis.__argentForms.focusAt({fx!r}, {fy!r})")
            framed = True
        if not isinstance(value, dict) or value.get("state") not in ("kept", "focused", "none"):
            return "none", False
        editable = value.get("editable") is True
        if value["state"] != "none":
            self._focus_editable = (self._inputs, editable and not framed)
        return str(value["state"]), editable

    async def select_all(self) -> bool:
        """Select the focused field's whole text (in the frame that holds the focus when the page's
        walk cannot enter it); False when the focus is on no field."""
        if await self.evaluate("globalThis.__argentForms.selectAll()") is True:
            return True
        world = await self.frames.focused()
        return world is not None and await world.evaluate("globalThis.__argentForms.selectAll()") is True

    async def choose(self, x: float, y: float, choices: tuple[str, ...], by_value: bool, listed: int) -> Any:
        """``__argentForms.choose`` at (x, y) CSS px (in the frame there when the page's walk cannot
        enter it): its answer as the page gave it."""
        tail = f"{json.dumps(list(choices))}, {'true' if by_value else 'false'}, {int(listed)}"
        value = await self.evaluate(f"globalThis.__argentForms.choose({x!r}, {y!r}, {tail})")
        if (
            isinstance(value, dict)
            and value.get("problem") == "not-select"
            and (inner := self.frames.at(x, y))
        ):
            world, fx, fy = inner
            value = await world.evaluate(f"globalThis.__argentForms.choose({fx!r}, {fy!r}, {tail})")
        return value

    async def editable(self) -> bool:
        """Whether the focus takes text (as the last focus wait saw it, when no input came since)."""
        known = self._focus_editable
        if known is not None and known[0] == self._inputs:
            return known[1]
        return await self.evaluate("globalThis.__argent.editable()") is True
