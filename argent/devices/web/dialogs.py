"""Native dialogs on a browser device: answered the moment they open, so none ever freezes it.

While an ``alert``, ``confirm``, ``prompt`` or ``beforeunload`` dialog is open the page runs no
script and takes no input: every protocol request that needs it (a click, an evaluation) waits, and
times out. Each engine hears a dialog open from its protocol and answers it right away with what
``DialogBook.opening`` decides — alert accepted, the others dismissed, unless a flow's `dialogs:`
set another answer (``answer``) — and the book remembers the last ones it answered, numbered, for
the reports of the steps and tool calls that opened them.

A page argent itself navigates away from (a `launch:`, ``open-url``) is left: its ``beforeunload``
dialog is accepted, whatever the answer, or the navigation asked for would not happen.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable, Iterator

from attrs import frozen

from argent.devices.base import DialogAnswer, DialogSeen
from argent.limits import MAX_KEPT_DIALOGS

#: Dialog kinds accepted when no answer was set (the others are dismissed).
ACCEPTED_BY_DEFAULT = frozenset({"alert"})
KINDS = ("alert", "confirm", "prompt", "beforeunload")


@frozen
class Reply:
    """How to answer a dialog that opened: accept or dismiss, and a prompt's text when accepted."""

    accept: bool
    text: str | None = None


class DialogBook:
    """The dialogs of one device (every page it drives, one after another)."""

    def __init__(self) -> None:
        self._answer: DialogAnswer | None = None
        self._seen: collections.deque[DialogSeen] = collections.deque(maxlen=MAX_KEPT_DIALOGS)
        self._count = 0
        self._leaving = 0

    def opening(self, kind: str, message: object, proposed: object) -> Reply:
        """A dialog opened: how to answer it (remembered as seen)."""
        if kind not in KINDS:
            kind = "alert"
        answer = self._answer
        accept = kind in ACCEPTED_BY_DEFAULT if answer is None else answer.accept
        if kind == "beforeunload" and self._leaving:
            accept = True
        text: str | None = None
        if accept and kind == "prompt":
            text = answer.text if answer is not None and answer.text is not None else None
            if text is None:
                text = proposed if isinstance(proposed, str) else ""
        self._count += 1
        self._seen.append(
            DialogSeen(self._count, kind, message if isinstance(message, str) else "", accept, text)
        )
        return Reply(accept, text)

    @contextlib.contextmanager
    def leaving(self) -> Iterator[None]:
        """While argent navigates the page itself: a ``beforeunload`` dialog lets it go."""
        self._leaving += 1
        try:
            yield
        finally:
            self._leaving -= 1

    @property
    def current(self) -> DialogAnswer | None:
        """The answer set now (None: the defaults)."""
        return self._answer

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


class BookedDialogs:
    """``NativeDialogs`` of a browser device, kept in its ``dialogs`` book (mixed into each engine's
    device, which makes the book and answers each dialog from its protocol's event)."""

    dialogs: DialogBook

    def dialog_mark(self) -> int:
        return self.dialogs.mark()

    def dialogs_since(self, mark: int) -> list[DialogSeen]:
        return self.dialogs.since(mark)

    def answer_dialogs(self, answer: DialogAnswer | None) -> Callable[[], None]:
        return self.dialogs.answer(answer)
