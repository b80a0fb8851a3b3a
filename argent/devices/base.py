"""The ``Device`` protocol that the runner's directives and the device tools drive.

Backends (headless Chromium over CDP first) implement it; the runner never imports a
backend. Coordinates are normalized 0–1 fractions of the screen everywhere, so flows
are independent of the viewport's pixel size.
"""

from __future__ import annotations

import re
from typing import Protocol

from attrs import field, frozen


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
    """One element of the screen's UI tree (one read of it, nested as on screen)."""

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
    children: tuple[UiNode, ...] = field(default=(), repr=False)


@frozen
class UiTree:
    root: UiNode
    #: The walker hit its node budget: some on-screen content is missing.
    truncated: bool = False
    #: The scroll offsets of the screen's scrollable parts, opaque; two reads with different
    #: offsets are different screens even when every visible node looks the same (blank space).
    scroll: str = ""


class DeviceError(Exception):
    """A device that cannot do what was asked (crashed, disconnected, refused); message for a person."""


class Device(Protocol):
    """A booted device the runner and the device tools act on."""

    @property
    def id(self) -> str: ...

    @property
    def platform(self) -> str: ...

    @property
    def cdp_url(self) -> str | None:
        """The DevTools websocket URL for scripts (``ARGENT_CDP_URL``), when the device has one."""
        ...

    async def screenshot(self) -> bytes:
        """A full-resolution PNG of the screen."""
        ...

    async def ui_tree(self) -> UiTree:
        """One read of the UI tree (one page-side walk)."""
        ...

    async def tap(self, x: float, y: float, *, click_count: int = 1) -> None: ...

    async def long_press(self, x: float, y: float, duration_ms: float) -> None: ...

    async def type_text(self, text: str) -> None: ...

    async def press_key(self, key: str) -> None:
        """A named key: enter, tab, escape, backspace, arrowup, ..."""
        ...

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        """Scroll at (x, y) by (dx, dy) fractions of the screen (positive dy scrolls content up)."""
        ...

    async def navigate(self, url: str) -> None: ...

    async def close(self) -> None: ...


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


_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def platform_of_id(device_id: str) -> str:
    """Classify a device by the shape of its id, as the upstream registry does."""
    if device_id.startswith("remote:"):
        return "ios"
    if device_id.startswith("amazon-"):
        return "vega"
    if device_id.startswith("chromium-cdp-"):
        return "chromium"
    if _UUID.fullmatch(device_id):
        return "ios"
    return "android"
