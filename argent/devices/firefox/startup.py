"""A starting Firefox's first page, ready without waiting for its idle start-up tasks.

Firefox answers ``session.new`` only once the idle tasks of its start-up have run (``browser-idle-
startup-tasks-finished``: half a second and more after its port opened, most of a device's boot),
but it registers the session at once: commands sent right behind ``session.new`` are served. So the
device sends its set-up behind it and drives the first tab as soon as that tab's first document has
loaded — the load the browser starts itself (``launcher.FIRST_PAGE`` from its command line): a navigation
sent before it would be cancelled by it (should one still be, ``FirefoxDevice.navigate`` sends it
again once start-up is over). An answered ``session.new`` means start-up is over and that
load long done (a Firefox attached after its start).
"""

from __future__ import annotations

import asyncio
from typing import Any

from argent.devices.base import DeviceError
from argent.devices.firefox.bidi import BidiSession

#: The events the boot follows (a subscription of its own, ended once the first page is found).
BOOT_EVENTS = ("browsingContext.contextCreated", "browsingContext.load")


class FirstPage:
    """Follows the top-level contexts a starting Firefox creates and loads (see module doc)."""

    def __init__(self, session: BidiSession) -> None:
        self._session = session
        #: The first top-level context seen (the tab): the only one the boot needs, so a browser
        #: that reports many keeps no more state.
        self._first: str | None = None
        self._loaded: set[str] = set()
        self._changed = asyncio.Event()
        self._offs = [
            session.on("browsingContext.contextCreated", self._created),
            session.on("browsingContext.load", self._load),
        ]

    def close(self) -> None:
        for off in self._offs:
            off()

    def _created(self, params: dict[str, Any]) -> None:
        context = params.get("context")
        if params.get("parent") is None and isinstance(context, str) and self._first is None:
            self._first = context
            self._changed.set()

    def _load(self, params: dict[str, Any]) -> None:
        # A load the browser began (it has a navigation id), not the first document of a new tab.
        context = params.get("context")
        if (
            isinstance(context, str)
            and isinstance(params.get("navigation"), str)
            and self._first in (None, context)
        ):
            self._loaded.add(context)
            self._changed.set()

    async def context(self, started: asyncio.Future[dict[str, Any]], label: str) -> str:
        """The first tab's context once its first document loaded, or once ``started`` (the pending
        ``session.new``) is answered; its error when it failed. The events say which context that is
        and when it loaded; the tree is read once, for a tab made before they were followed."""
        made = _first_context(await self._session.send("browsingContext.getTree", {"maxDepth": 0}))
        if made is not None:
            self._first = made  # a tab made before the events were followed comes first
        while True:
            self._changed.clear()
            if started.done():
                started.result()  # session.new's own error, when it failed
                if self._first is None:
                    tree = await self._session.send("browsingContext.getTree", {"maxDepth": 0})
                    self._first = _first_context(tree)
                    if self._first is None:
                        raise DeviceError(f"Firefox ({label}) has no page to drive.")
                return self._first
            if self._first is not None and self._first in self._loaded:
                return self._first
            changed: asyncio.Future[Any] = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait([changed, started], return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()


def _first_context(tree: dict[str, Any]) -> str | None:
    contexts = tree.get("contexts")
    if not isinstance(contexts, list) or not contexts or not isinstance(contexts[0], dict):
        return None
    context = contexts[0].get("context")
    return context if isinstance(context, str) else None
