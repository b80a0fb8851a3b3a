"""argent's isolated world in one frame of a Chromium page: where its monitor and walker run.

``Page.createIsolatedWorld`` gives argent a JavaScript world of its own in a frame: the page can
neither see nor disturb what runs there (its globals, prototypes, ``requestAnimationFrame`` and
``MutationObserver`` are the world's own), yet it reads the same DOM. ``monitor.js``, ``forms.js``
and the walker are installed once per document; a navigation destroys the world, and the next use makes
it again. One ``IsolatedWorld`` serves one frame of one CDP session: the page's main frame, a
cross-origin frame in the page's own process, or the main frame of an out-of-process frame's
session.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from argent.devices.base import DeviceError
from argent.devices.chromium.cdp import CdpSession
from argent.devices.web.scripts import world_source

WORLD_NAME = "argent"
#: How often one call makes the world again when its document keeps going away.
WORLD_ATTEMPTS = 3
#: CDP errors that mean the world's document (or its frame) went away: make the world again.
GONE = (
    "Cannot find context with specified id",
    "Execution context was destroyed",
    "navigated or closed",
    "No frame for given id found",
)


class WorldGone(Exception):
    """The document of argent's world went away (a navigation): make the world again."""


def gone(text: str) -> bool:
    return any(marker in text for marker in GONE)


class IsolatedWorld:
    """argent's world in the frame ``frame_id`` of ``session`` (None: the session's main frame)."""

    def __init__(self, session: CdpSession, frame_id: str | None = None) -> None:
        self.session = session
        #: The frame; for the session's main frame, read from ``Page.getFrameTree`` when needed.
        self.frame_id = frame_id
        self._main = frame_id is None
        self._context: int | None = None
        self._making: asyncio.Future[int] | None = None

    @property
    def context(self) -> int | None:
        """The world's execution context, once made (None after a navigation)."""
        return self._context

    def reset(self, frame_id: str | None = None) -> None:
        """The frame navigated: the next use makes the world again (in ``frame_id`` when given)."""
        if frame_id is not None:
            self.frame_id = frame_id
        self._context = None

    async def _make(self) -> int:
        if self._making is not None:
            return await asyncio.shield(self._making)
        self._making = asyncio.get_running_loop().create_future()
        try:
            if self.frame_id is None:
                tree = await self.session.send("Page.getFrameTree")
                self.frame_id = str(((tree.get("frameTree") or {}).get("frame") or {}).get("id") or "")
            try:
                reply = await self.session.send(
                    "Page.createIsolatedWorld", {"frameId": self.frame_id, "worldName": WORLD_NAME}
                )
            except DeviceError as exc:
                if self.session.alive and gone(str(exc)):
                    if self._main:
                        self.frame_id = None  # read the main frame again
                    raise WorldGone() from None
                raise
            context = reply.get("executionContextId")
            if not isinstance(context, int):
                raise DeviceError(f"Chromium ({self.session.label}): the page gave argent no isolated world.")
            await self._call(context, world_source(), False, None)
            self._context = context
            self._making.set_result(context)
            return context
        except BaseException as exc:
            self._making.set_exception(exc)
            self._making.exception()  # retrieved: the callers above see it raised
            raise
        finally:
            self._making = None

    async def _call(self, context: int, expression: str, await_promise: bool, timeout: float | None) -> Any:
        try:
            reply = await self.session.send(
                "Runtime.evaluate",
                {
                    "expression": expression,
                    "contextId": context,
                    "returnByValue": True,
                    "awaitPromise": await_promise,
                },
                timeout=timeout,
            )
        except DeviceError as exc:
            if self.session.alive and gone(str(exc)):
                raise WorldGone() from None
            raise
        details = reply.get("exceptionDetails")
        if details:
            text = json.dumps(details)[:400]
            if gone(text):
                raise WorldGone()
            raise DeviceError(f"Chromium ({self.session.label}): argent's page monitor failed: {text}")
        return (reply.get("result") or {}).get("value")

    async def evaluate(
        self, expression: str, *, await_promise: bool = False, timeout: float | None = None
    ) -> Any:
        """Evaluate in the world of the frame's current document (made on first use)."""
        for _ in range(WORLD_ATTEMPTS):
            context = self._context
            try:
                if context is None:
                    context = await self._make()
                return await self._call(context, expression, await_promise, timeout)
            except WorldGone:
                if self._context == context:
                    self._context = None
        raise DeviceError(
            f"Chromium ({self.session.label}): the page kept navigating away while argent read it."
        )
