"""The ``Device`` protocol that the runner's directives and the device tools drive.

Backends (headless Chromium over CDP first) implement it; the runner never imports a
backend. Coordinates are normalized 0–1 fractions of the screen everywhere, so flows
are independent of the viewport's pixel size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Literal, Protocol, runtime_checkable

from attrs import field, frozen

from argent.limits import MAX_DIALOG_MESSAGE_CHARS, MAX_REPORTED_DIALOGS


@frozen
class Frame:
    """A node's box as fractions of the screen: left, top, width, height."""

    x: float
    y: float
    width: float
    height: float

    @property
    def visible(self) -> bool:
        return self.width > 0 and self.height > 0

    @property
    def center(self) -> tuple[float, float]:
        return (self.x + self.width / 2, self.y + self.height / 2)


@frozen
class UiNode:
    """One element of the screen's UI tree (one read of it, nested as on screen).

    ``role`` is what the platform calls the element: on the web its ARIA role (its own ``role``, else
    the implicit one of its tag: ``button``, ``link``, ``textbox``, ``heading``, ...), "" where it has
    none. ``kind`` is what upstream's flows called a web element: its ``role`` attribute, else its tag
    name ("" off the web); ``label`` is its accessible name."""

    role: str
    frame: Frame
    label: str = ""
    value: str = ""
    identifier: str = ""
    clickable: bool = False
    disabled: bool = False
    checked: bool | None = None
    password: bool = False
    scrollable: bool = False
    focused: bool = False
    kind: str = ""
    #: A placeholder or title that is not the element's name (its accessible description).
    description: str = ""
    #: The CSS selectors of the read (``Device.ui_tree(css=...)``) this element matches.
    css: frozenset[str] = frozenset()
    #: Its text as a person reads it, where that is not its label and value followed by its
    #: children's text (text between highlighted spans: a code editor's line); else "".
    text: str = ""
    children: tuple[UiNode, ...] = field(default=(), repr=False)
    #: The element's number in a kept read (``RevealSignal.kept_tree``), else -1.
    ref: int = field(default=-1, repr=False, eq=False)


@frozen
class UiTree:
    root: UiNode
    #: The walker hit its node budget: some on-screen content is missing.
    truncated: bool = False
    #: The scroll offsets of the screen's scrollable parts, opaque; two reads with different
    #: offsets are different screens even when every visible node looks the same (blank space).
    scroll: str = ""
    #: The page's change mark when this read began (``PageSignals``), else -1: a later
    #: ``wait_quiet(after=mark)`` wakes on any change since this read.
    mark: int = field(default=-1, eq=False)
    #: Why nothing on the screen is visible, when that is so (the page is blank, every element is
    #: hidden by ..., ...); "" otherwise, or when the device cannot tell.
    blank: str = ""


class Capability(Enum):
    """Something a device may be unable to do; an engine declares what it lacks (``argent.devices.registry``)
    and a step or tool that needs it answers an error naming the engine and the capability."""

    TWO_FINGER = "two-finger gestures (pinch, rotate)"
    DEVTOOLS = "the DevTools extras (tabs, cookies and storage over CDP)"
    EVENT_LOGS = "network and console logs (its protocol reports no requests and no console calls)"


class DeviceError(Exception):
    """A device that cannot do what was asked (crashed, disconnected, refused); message for a person."""


class DeviceGoneError(DeviceError):
    """The device itself is gone (its browser exited, crashed or stopped answering): nothing asked of
    it can succeed any more, so a wait that reads it again ends at once with this message."""


class SelectorRefusedError(DeviceError):
    """A read refused what a selector asks of it (a CSS selector): reading again cannot help, the
    flow must change."""


class CssSelectorError(SelectorRefusedError):
    """A CSS selector the device's engine refused as invalid."""

    def __init__(self, selector: str, problem: str) -> None:
        super().__init__(f"css selector {json.dumps(selector, ensure_ascii=False)} is not valid: {problem}")
        self.selector = selector
        self.problem = problem


def css_unsupported(platform: str) -> SelectorRefusedError:
    """What a device without CSS answers a read that asks for CSS selectors."""
    return SelectorRefusedError(
        f"css selectors are unsupported on {platform} — its screen is no web page; select by text, id or "
        "role instead"
    )


class Device(Protocol):
    """A booted device the runner and the device tools act on."""

    @property
    def id(self) -> str: ...

    @property
    def platform(self) -> str: ...

    @property
    def endpoint(self) -> str | None:
        """The URL of the protocol endpoint a ``script:`` step may drive the device through (its
        engine's variable: ``ARGENT_CDP_URL`` on Chromium, ``ARGENT_BIDI_URL`` on Firefox), when it has one."""
        ...

    async def screenshot(self) -> bytes:
        """A full-resolution PNG of the screen."""
        ...

    async def ui_tree(self, *, css: Sequence[str] = ()) -> UiTree:
        """One read of the UI tree (one page-side walk). ``css``: CSS selectors whose matches the
        read marks (``UiNode.css``); the runner passes them only when a selector names one. A device
        without CSS raises ``css_unsupported(platform)``; a selector its engine refuses,
        ``CssSelectorError``."""
        ...

    async def tap(self, x: float, y: float, *, click_count: int = 1) -> None: ...

    async def long_press(self, x: float, y: float, duration_ms: float) -> None: ...

    async def type_text(self, text: str) -> None: ...

    async def press_key(self, key: str) -> None:
        """A key or a chord: W3C key names (any case) or one character, modifiers joined by ``+``
        (``Enter``, ``Shift+Enter``, ``Control+S``; see ``argent.utils.keys``)."""
        ...

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        """Scroll at (x, y) by (dx, dy) fractions of the screen (positive dy scrolls content up)."""
        ...

    async def navigate(self, url: str) -> None: ...

    async def close(self) -> None: ...


@runtime_checkable
class PageSignals(Protocol):
    """Optional, beside ``Device``: a device whose page says when it is quiet and where its focus
    is, takes text in one insert, and brings an element into view in one move. The runner's
    event-driven settle (``argent.runner.idle``) uses it when a device has it; without it the
    runner re-reads the tree until two reads agree."""

    async def wait_quiet(self, timeout: float, *, after: int | None = None) -> int | None:
        """Wait at most ``timeout`` s until the page is quiet (no DOM change for two frames, no
        request in flight; after input, at least two frames more). No animation holds it: a person
        does not wait for a tab's indicator to slide before acting elsewhere; an action waits for
        its own target to hold still (``hold_still``).
        With ``after`` (a mark), also until the page changed past it. The page's change mark
        once quiet; None when the time ran out."""
        ...

    async def hold_still(self, x: float, y: float, timeout: float) -> bool:
        """Wait at most ``timeout`` s until the element at (x, y) holds its place (the same box two
        frames in a row; at once when nothing on the page moves); True when it moved meanwhile (or
        another element came there): a read made before is stale."""
        ...

    async def wait_focus(self, x: float, y: float, timeout: float, grace: float) -> bool:
        """Wait at most ``timeout`` s for focus on a text field, or (after ``grace`` s, time for
        it to hand the focus on) on the element at (x, y)."""
        ...

    async def enter_text(self, text: str) -> None:
        """Type ``text`` into the focused element: one insert where nothing listens for keys,
        key events where the page needs them."""
        ...

    def capture_size(self) -> tuple[int, int] | None:
        """The whole screen's capture size in pixels when ``capture`` of a region shows exactly
        those pixels of a whole-screen capture; None when it may not (then crop a capture)."""
        ...

    async def capture(self, region: tuple[int, int, int, int] | None = None) -> bytes:
        """A PNG for a snapshot compare: the whole screen, or the pixels ``left, top, right,
        bottom`` of it. The same pixels always give the same bytes."""
        ...

    async def quiet_capture(self, region: tuple[int, int, int, int] | None, timeout: float) -> bytes:
        """``capture(region)`` of the page once it is quiet (as ``wait_quiet``, and still to the
        pixel: no finite animation running either; at ``timeout``, as it is), sooner than a wait
        and a capture in turn where the device can overlap them."""
        ...

    async def kept_tree(self, *, css: Sequence[str] = ()) -> UiTree:
        """One read of the UI tree whose nodes carry ``ref`` (for ``reveal``); ``css`` as ``ui_tree``'s."""
        ...

    async def reveal(self, ref: int, *, css: Sequence[str] = ()) -> UiTree | None:
        """Scroll the element ``ref`` of the last kept read into view, then a kept read; None
        when that element is gone."""
        ...


#: What ``FormControls.focus_at`` did: the field already had the focus (or held it), it took the
#: focus now, or no field there takes it (tap it instead).
Focused = Literal["kept", "focused", "none"]


@frozen
class Choice:
    """What ``FormControls.choose`` did. ``problem`` None: the options are chosen (``changed``: the
    choice differs from before, and ``input`` and ``change`` fired). Else what stood in the way:
    ``not-select`` (``tag`` names the element there), ``disabled`` (the select itself), ``not-multiple``,
    ``missing`` or ``disabled-option`` (``wanted`` names it); ``options`` lists the labels (or values)
    the select offers, ``more`` how many it has past those."""

    problem: str | None = None
    changed: bool = False
    tag: str = ""
    wanted: str = ""
    options: tuple[str, ...] = ()
    more: int = 0


@runtime_checkable
class FormControls(Protocol):
    """Optional, beside ``Device``: a device that can focus an element and choose the options of a
    native select in the page itself, as a person's choice does, without a pointer."""

    async def focus_at(self, x: float, y: float) -> Focused:
        """Focus the text field at (x, y) — the element there, its nearest ancestor that takes the
        focus, or the control of the label there, when that takes text — without a click: the caret
        and the selection stay where the page put them. ``kept`` when a field there had the focus
        already (or the element there holds it); ``none`` for anything else (tap it instead)."""
        ...

    async def select_all(self) -> bool:
        """Select the whole text of the focused field (input, textarea, editable element), so typed
        text replaces it; False when the focus is on no field."""
        ...

    async def choose(self, x: float, y: float, choices: tuple[str, ...], by_value: bool) -> Choice:
        """Choose ``choices`` (labels, or values with ``by_value``) in the select at (x, y): exactly
        those selected, then ``input`` and ``change`` fired when that changed the choice."""
        ...


@frozen
class DialogAnswer:
    """How native dialogs are answered: ``accept`` (a prompt with ``text``, or the text it proposes
    when None), else dismissed."""

    accept: bool
    text: str | None = None


@frozen
class DialogSeen:
    """A native dialog a device answered: its ``number`` (counting every dialog the device saw),
    kind (``alert``, ``confirm``, ``prompt``, ``beforeunload``), message, whether it was accepted and
    the text a prompt got."""

    number: int
    kind: str
    message: str
    accepted: bool
    text: str | None = None

    def note(self) -> str:
        """``dialog confirm "Delete all?" dismissed`` — how a report names it (a long message cut)."""
        most = MAX_DIALOG_MESSAGE_CHARS
        message = self.message if len(self.message) <= most else self.message[: most - 1] + "…"
        shown = f" {json.dumps(message, ensure_ascii=False)}" if message else ""
        answer = "accepted" if self.accepted else "dismissed"
        if self.accepted and self.text is not None and self.kind == "prompt":
            answer += f" with {json.dumps(self.text, ensure_ascii=False)}"
        return f"dialog {self.kind}{shown} {answer}"


def dialog_notes(seen: list[DialogSeen]) -> list[str]:
    """How a step line or a tool's result names the dialogs a call saw (the first few; the rest
    counted)."""
    notes = [dialog.note() for dialog in seen[:MAX_REPORTED_DIALOGS]]
    if len(seen) > MAX_REPORTED_DIALOGS:
        notes.append(f"{len(seen) - MAX_REPORTED_DIALOGS} more dialogs")
    return notes


@runtime_checkable
class NativeDialogs(Protocol):
    """Optional, beside ``Device``: a device that answers the page's native dialogs itself (none is
    ever left open to freeze it) and remembers the last ones for the reports that ask."""

    def dialog_mark(self) -> int:
        """The number of dialogs seen so far: ``dialogs_since`` it names those that open later."""
        ...

    def dialogs_since(self, mark: int) -> list[DialogSeen]:
        """The dialogs answered since ``mark`` (those still remembered), oldest first."""
        ...

    def answer_dialogs(self, answer: DialogAnswer | None) -> Callable[[], None]:
        """Answer the dialogs that open from now on with ``answer`` (None: the defaults — alert
        accepted, confirm, prompt and beforeunload dismissed); returns the undo, which puts back the
        answer before it unless another was set since."""
        ...


@runtime_checkable
class FileInputs(Protocol):
    """Optional, beside ``Device``: a device whose pages take files the way a person picks them."""

    async def set_input_files(self, x: float, y: float, paths: Sequence[str]) -> None:
        """Set ``paths`` (files on the device's host) into the file input the element at (x, y)
        stands for (the input, its label, or an element holding just one), as a pick in the file
        dialog does (``input`` and ``change`` fire). Raises ``DeviceError`` saying what is there
        when it is not one, or why it takes none of these files."""
        ...


class DeviceProvider(Protocol):
    """Finds, boots and stops devices for runs and tools (the tool-server owns their lifetimes)."""

    async def get(self, device_id: str) -> Device:
        """The device with this id; raises ``DeviceResolutionError`` when there is none."""
        ...

    async def list_booted(self) -> list[Device]: ...

    async def boot(self, platform: str, target: str | None = None) -> Device:
        """Boot a fresh device of ``platform`` (optionally opening ``target``)."""
        ...

    async def stop(self, device_id: str) -> None: ...
