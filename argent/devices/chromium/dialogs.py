"""Native dialogs on a Chromium device: answered the moment they open, so none ever freezes it.

While an ``alert``, ``confirm``, ``prompt`` or ``beforeunload`` dialog is open the page runs no
script and takes no input: every CDP request that needs it (a click, an evaluation) waits, and
times out. ``DialogAnswers`` listens for ``Page.javascriptDialogOpening`` on each page session of
the device and answers with ``Page.handleJavaScriptDialog`` right away — alert accepted, the others
dismissed, unless a flow's `dialogs:` set another answer (``answer_dialogs``) — and remembers the
last ones it answered, numbered, for the reports of the steps and tool calls that opened them.

A page argent itself navigates away from (a `launch:`, ``open-url``) is left: its ``beforeunload``
dialog is accepted, whatever the answer, or the navigation asked for would not happen.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from argent.devices.base import DialogAnswer, DialogSeen
from argent.devices.chromium.cdp import CdpSession
from argent.limits import MAX_KEPT_DIALOGS

#: Dialog kinds accepted when no answer was set (the others are dismissed).
ACCEPTED_BY_DEFAULT = frozenset({"alert"})
KINDS = ("alert", "confirm", "prompt", "beforeunload")


class DialogAnswers:
    """The dialogs of one device (every page session it drives, one after another)."""

    def __init__(self) -> None:
        self._answer: DialogAnswer | None = None
        self._seen: collections.deque[DialogSeen] = collections.deque(maxlen=MAX_KEPT_DIALOGS)
        self._count = 0
        self._pending: set[asyncio.Future[Any]] = set()
        self._leaving = 0

    def attach(self, session: CdpSession) -> None:
        """Answer the dialogs of ``session`` (its ``Page`` domain enabled by the device)."""
        session.on("Page.javascriptDialogOpening", lambda params: self._opening(session, params))

    def _opening(self, session: CdpSession, params: dict[str, Any]) -> None:
        kind = str(params.get("type") or "")
        if kind not in KINDS:
            kind = "alert"
        message = params.get("message")
        proposed = params.get("defaultPrompt")
        answer = self._answer
        accept = kind in ACCEPTED_BY_DEFAULT if answer is None else answer.accept
        if kind == "beforeunload" and self._leaving:
            accept = True
        reply: dict[str, Any] = {"accept": accept}
        text: str | None = None
        if accept and kind == "prompt":
            text = answer.text if answer is not None and answer.text is not None else None
            if text is None:
                text = proposed if isinstance(proposed, str) else ""
            reply["promptText"] = text
        self._count += 1
        self._seen.append(
            DialogSeen(self._count, kind, message if isinstance(message, str) else "", accept, text)
        )
        # Sent at once, from the event: nothing else on this session moves until the dialog is gone.
        task = asyncio.ensure_future(session.send("Page.handleJavaScriptDialog", reply))
        self._pending.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a dialog another client closed first, a session gone

    @contextlib.contextmanager
    def leaving(self) -> Iterator[None]:
        """While argent navigates the page itself: a ``beforeunload`` dialog lets it go."""
        self._leaving += 1
        try:
            yield
        finally:
            self._leaving -= 1

    def mark(self) -> int:
        return self._count

    def since(self, mark: int) -> list[DialogSeen]:
        return [seen for seen in self._seen if seen.number > mark]

    def answer(self, answer: DialogAnswer | None) -> Callable[[], None]:
        before, self._answer = self._answer, answer
        token = answer

        def undo() -> None:
            if self._answer is token:
                self._answer = before

        return undo
