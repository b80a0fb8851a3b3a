"""The page a device drives stays the browser's front tab.

Headless Chromium (``--headless=new``) is the whole browser without a screen: a link with
``target=_blank`` or a ``window.open`` opens a new *foreground tab* in the same window, and the tab
it came from goes to the background. A background tab commits no compositor frame of its own
(focus emulation keeps its document visible and its animation frames running), so
``Page.captureScreenshot`` of it waits for a frame that comes only now and then: one capture
answers, the next runs into its bound, until the other tab closes. What the other tab shows (a
denied ``file://`` on its ``chrome-error://`` page, an http page, ``about:blank``) and which
renderer it shares make no difference; a popup *window* (``window.open`` with a size) is a window
of its own and hides nothing.

So the driven page is brought to the front (``Page.bringToFront``) when a device starts driving it,
and again whenever another page target of its browser appears or changes (``Target.targetCreated``
/ ``targetInfoChanged`` with a new URL, on a browser-level session): the new tab's activation comes
with it; a change of its title, or a session attaching to it, shows no tab and is let be. The
other tabs stay open behind it; the tab tools list them, and selecting one brings that one to the
front in turn. One ``Page.bringToFront`` is in flight at a time, however fast another tab changes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from argent.devices.base import DeviceError
from argent.devices.chromium.cdp import CdpSession

#: The page a device drives now: its session and target id (either None when it has none).
DrivenPage = Callable[[], tuple[CdpSession | None, str | None]]


async def bring_to_front(session: CdpSession) -> None:
    """Make the page of ``session`` the browser's front tab."""
    await session.send("Page.bringToFront")


class KeepInFront:
    """Brings a device's driven page back to the front when another page target shows up."""

    def __init__(self, driven: DrivenPage) -> None:
        self._driven = driven
        self._running: asyncio.Task[None] | None = None
        self._again = False
        #: The last URL of each page target seen (a change of anything else shows no tab).
        self._urls: dict[str, str] = {}

    async def watch(self, browser: CdpSession) -> None:
        """Follow the page targets of the browser of ``browser`` (a browser-level session)."""
        browser.on("Target.targetCreated", self._seen)
        browser.on("Target.targetInfoChanged", self._seen)
        browser.on("Target.targetDestroyed", self._gone)
        await browser.send("Target.setDiscoverTargets", {"discover": True})

    def _seen(self, params: dict[str, Any]) -> None:
        info = params.get("targetInfo")
        if not isinstance(info, dict) or info.get("type") != "page":
            return
        target_id = str(info.get("targetId") or "")
        url = str(info.get("url") or "")
        if self._urls.get(target_id) == url:
            return  # its title, or a session attaching to it (the tab tools'): no tab was shown
        self._urls[target_id] = url
        if target_id == self._driven()[1]:
            return
        if self._running is not None:
            self._again = True
            return
        self._running = asyncio.ensure_future(self._bring())
        self._running.add_done_callback(self._done)

    def _gone(self, params: dict[str, Any]) -> None:
        self._urls.pop(str(params.get("targetId") or ""), None)

    async def _bring(self) -> None:
        while True:
            self._again = False
            session, _ = self._driven()
            if session is None or not session.alive:
                return
            with contextlib.suppress(DeviceError):
                await bring_to_front(session)
            if not self._again:
                return

    def _done(self, task: asyncio.Task[None]) -> None:
        self._running = None
        if not task.cancelled():
            task.exception()  # retrieved (none is expected: a failed bring is let go)
