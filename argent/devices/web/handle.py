"""What every browser device says of its browser, whatever the engine: whether this tool-server
launched it (and so kills it on close), its process and profile, the viewport last read, and
whether it is still alive (not closed, its protocol session open, its process running)."""

from __future__ import annotations

from typing import Any, Protocol

from argent.devices.web.launching import BrowserProcess


class ProtocolSession(Protocol):
    """An engine's session with its browser (CDP, BiDi, WebDriver): open until the browser dies."""

    @property
    def alive(self) -> bool: ...


class BrowserHandle:
    """Mixed into each engine's device, which sets these in its ``__init__``."""

    _process: BrowserProcess | None
    _session: ProtocolSession | None
    _closed: bool
    _viewport: tuple[float, float]

    @property
    def owned(self) -> bool:
        """Launched by this tool-server (``close`` kills it) rather than attached."""
        return self._process is not None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def profile_dir(self) -> str | None:
        return self._process.profile_dir if self._process is not None else None

    @property
    def viewport(self) -> tuple[float, float]:
        """The viewport in CSS pixels, as last read."""
        return self._viewport

    @property
    def alive(self) -> bool:
        if self._closed or self._session is None or not self._session.alive:
            return False
        return self._process is None or self._process.returncode() is None


#: The page's title and URL, as one expression every engine evaluates (``page_info``).
PAGE_INFO_EXPRESSION = "[document.title, location.href]"


def page_info_of(value: Any) -> dict[str, str]:
    """What ``PAGE_INFO_EXPRESSION`` answered, for list-devices; empty strings when it is unreadable
    (``value`` None: the read failed)."""
    if isinstance(value, list) and len(value) == 2:
        return {"title": str(value[0]), "url": str(value[1])}
    return {"title": "", "url": ""}
