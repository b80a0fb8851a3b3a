"""Native dialogs on a Chromium device (``argent.devices.web.dialogs`` decides the answers): each page
session's ``Page.javascriptDialogOpening`` is answered with ``Page.handleJavaScriptDialog`` at once."""

from __future__ import annotations

import asyncio
from typing import Any

from argent.devices.chromium.cdp import CdpSession
from argent.devices.web.dialogs import DialogBook


class DialogAnswers(DialogBook):
    """The dialogs of one Chromium device (every page session it drives, one after another)."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: set[asyncio.Future[Any]] = set()

    def attach(self, session: CdpSession) -> None:
        """Answer the dialogs of ``session`` (its ``Page`` domain enabled by the device)."""
        session.on("Page.javascriptDialogOpening", lambda params: self._opening(session, params))

    def _opening(self, session: CdpSession, params: dict[str, Any]) -> None:
        reply = self.opening(
            str(params.get("type") or ""), params.get("message"), params.get("defaultPrompt")
        )
        answer: dict[str, Any] = {"accept": reply.accept}
        if reply.text is not None:
            answer["promptText"] = reply.text
        # Sent at once, from the event: nothing else on this session moves until the dialog is gone.
        task = asyncio.ensure_future(session.send("Page.handleJavaScriptDialog", answer))
        self._pending.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a dialog another client closed first, a session gone
