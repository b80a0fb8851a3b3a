"""The file rule (``argent.devices.web.file_access``) held at a Chromium device.

The device intercepts every ``file://`` request of its page (CDP ``Fetch``, request stage) and lets
through only what the rule allows; the rest fails as ``AccessDenied``. Without a rule nothing is
intercepted. The rule may touch the disk (real paths): it runs in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from argent.devices.base import DeviceError
from argent.devices.chromium.cdp import CdpSession
from argent.devices.web.file_access import FileAccess

FILE_PATTERNS = [{"urlPattern": "file://*", "requestStage": "Request"}]
DENIED = "AccessDenied"


class FileGuard:
    """The file rule of one device, enforced on its current page session."""

    def __init__(self) -> None:
        self.rule: FileAccess | None = None
        self._session: CdpSession | None = None
        self._off: Callable[[], None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    async def apply(self, session: CdpSession, rule: FileAccess | None) -> None:
        """Enforce ``rule`` on ``session``: one CDP request only when interception turns on or off
        (or the session changed); swapping one rule for another is free."""
        self.rule = rule
        enabled = self._session is session and self._off is not None
        if rule is None:
            if enabled:
                self._detach()
                with contextlib.suppress(DeviceError):
                    await session.send("Fetch.disable")
            return
        if enabled:
            return
        self._detach()
        self._session = session
        self._off = session.on("Fetch.requestPaused", lambda params: self._paused(session, params))
        try:
            await session.send("Fetch.enable", {"patterns": FILE_PATTERNS})
        except BaseException:
            self._detach()
            raise

    async def reapply(self, session: CdpSession) -> None:
        """The rule on a new page session (a tab switch)."""
        self._detach()
        await self.apply(session, self.rule)

    def _detach(self) -> None:
        if self._off is not None:
            self._off()
        self._off = None
        self._session = None

    def _paused(self, session: CdpSession, params: dict[str, Any]) -> None:
        task = asyncio.ensure_future(self._decide(session, params))
        self._pending.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a page that went away needs no answer

    async def _decide(self, session: CdpSession, params: dict[str, Any]) -> None:
        request_id = params.get("requestId")
        if not isinstance(request_id, str):
            return
        url = str((params.get("request") or {}).get("url") or "")
        rule = self.rule
        allowed = True
        if rule is not None:
            try:
                allowed = await asyncio.to_thread(rule, url)
            except Exception:
                allowed = False
        if allowed:
            await session.send("Fetch.continueRequest", {"requestId": request_id})
        else:
            await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": DENIED})
