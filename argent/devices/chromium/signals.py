"""Page signals over CDP: when a Chromium page is quiet, where its focus is, one-move reveals.

``PageSignals`` keeps argent's isolated world in the page's main frame — ``monitor.js``,
installed once per document, where the page can neither see nor disturb it — and counts the
page's network requests in flight from CDP ``Network`` events; what makes a page quiet is
``argent.devices.web.quiet``.

The frames the page's walk cannot enter (``argent.devices.chromium.frames``) count too: their
requests (and those of the page's dedicated workers), and their monitors' quiet — a frame holds the page's quiet at most ``FRAME_READ_SECONDS``
longer than the page's own document, and a change in a frame ends a change wait as one in the page.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from argent.devices.chromium.cdp import CdpSession
from argent.devices.chromium.frames import PageFrames, focus_wait
from argent.devices.chromium.world import IsolatedWorld
from argent.devices.web.quiet import WAIT_SLACK_SECONDS, PageQuiet, wait_expression
from argent.devices.web.walker import walk_expression

#: Requests of these resource types never hold a page busy: they live as long as the page.
_LONG_LIVED_TYPES = frozenset({"EventSource", "WebSocket", "Media", "Ping", "CSPViolationReport"})


class PageSignals:
    """The signals of one page session (see module doc)."""

    def __init__(self, session: CdpSession) -> None:
        self._session = session
        self._world = IsolatedWorld(session)
        #: The page's frames that its walker cannot enter (walked beside it).
        self.frames = PageFrames(session, self._world, follow=self._follow)
        self._quiet = PageQuiet(self._wait_page)
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
        """An out-of-process frame or a dedicated worker attached: its requests count too
        (``PageFrames`` enables its ``Network`` before it runs). One request id across the sessions:
        a frame's document request starts in its parent's session and may end in its own, a worker's
        script request starts in the page's and ends in the worker's."""
        child.on("Network.requestWillBeSent", self._on_request)
        child.on("Network.loadingFinished", self._on_request_end)
        child.on("Network.loadingFailed", self._on_request_end)

    @property
    def in_flight(self) -> int:
        """Requests started and not ended yet, in the page and in its followed frames and workers
        (the quiet counts those younger than ``QUIET_REQUEST_MAX_AGE_MS``)."""
        return self._quiet.in_flight

    def touched(self) -> None:
        """Input went to the page: the next quiet needs frames of its own."""
        self._quiet.touched()
        self._inputs += 1

    # -- events --

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _on_request(self, params: dict[str, Any]) -> None:
        rid = params.get("requestId")
        if isinstance(rid, str) and params.get("type") not in _LONG_LIVED_TYPES:
            self._quiet.request_started(rid)

    def _on_request_end(self, params: dict[str, Any]) -> None:
        rid = params.get("requestId")
        if isinstance(rid, str):
            self._quiet.request_ended(rid)

    def _on_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame")
        if isinstance(frame, dict) and not frame.get("parentId"):
            self._world.reset(frame["id"] if isinstance(frame.get("id"), str) else None)
            self.frames.forget()

    # -- the world --

    async def evaluate(
        self, expression: str, *, await_promise: bool = False, timeout: float | None = None
    ) -> Any:
        """Evaluate in argent's world of the current document (made on first use)."""
        return await self._world.evaluate(expression, await_promise=await_promise, timeout=timeout)

    # -- the signals --

    async def wait_quiet(self, timeout: float, *, after: int | None = None) -> int | None:
        return await self._quiet.wait_quiet(timeout, after=after)

    async def quiet_capture(self, capture: Callable[[], Awaitable[bytes]], timeout: float) -> bytes:
        return await self._quiet.quiet_capture(capture, timeout)

    async def _wait_page(
        self, remaining: float, frames: int, after: int | None, slack: int, paint: bool
    ) -> Any:
        """The monitor's wait in the page's world and, beside it, in the frames its walk cannot enter."""
        page = self.evaluate(
            wait_expression(remaining, frames, after, slack, paint),
            await_promise=True,
            timeout=remaining + WAIT_SLACK_SECONDS,
        )
        return await self.frames.quiet(page, remaining, frames, after, paint=paint)

    async def hold_still(self, x: float, y: float, timeout: float) -> bool:
        """The monitor's ``still`` at (x, y) CSS px: True when the element there moved before it
        held its place."""
        ms = round(max(0.0, timeout) * 1000)
        value = await self.evaluate(
            f"globalThis.__argent.still({x!r}, {y!r}, {ms})",
            await_promise=True,
            timeout=max(0.0, timeout) + WAIT_SLACK_SECONDS,
        )
        return value is True

    async def walk(
        self, max_depth: int, max_nodes: int, *, keep: bool, timeout: float, css: Sequence[str] = ()
    ) -> Any:
        """The walker's payload, read in argent's world (``keep``: numbered for ``reveal``; ``css``:
        the selectors whose matches it marks), with the page's change mark taken just before it
        (``mark``) and the walks of the frames it could not enter stitched in
        (``argent.devices.chromium.frames``)."""
        expression = walk_expression(max_depth, max_nodes, keep, css)
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
            walk_expression(max_depth, max_nodes, True, css),
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
