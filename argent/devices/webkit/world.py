"""argent's scripts in a WebKit page, through ``execute/sync``.

Classic WebDriver runs scripts in the page's own world (it has no isolated world and no sandbox):
the world's scripts (``argent.devices.web.scripts``: the monitor, the form controls, the walker)
are installed as page globals on first use in each document, and every read asks for them again
when the document changed under it (a navigation, a reload). A page that redefines the built-ins
they use (``JSON``, ``MutationObserver``, prototypes) can disturb them — unlike on Chromium and
Firefox, whose worlds the page cannot reach. Every answer comes back as JSON text (WebDriver would
turn an element in it into a reference).
"""

from __future__ import annotations

import json
from typing import Any

from argent.devices.base import DeviceError
from argent.devices.web.scripts import world_source
from argent.devices.webkit.webdriver import JAVASCRIPT_ERROR, WebDriverError, WebDriverSession

#: How often one read tries again when its document keeps going away or lacks the world.
WORLD_ATTEMPTS = 3
#: What a read answers when the world's scripts are not in the document yet.
MISSING = "\u0000argent:missing"


def _body(expression: str, await_promise: bool) -> str:
    guard = f"if (globalThis.__argentWalk === undefined) return {json.dumps(MISSING)};"
    if await_promise:
        return (
            f"{guard} return Promise.resolve({expression}).then("
            "(v) => JSON.stringify(v === undefined ? null : v));"
        )
    return f"{guard} const v = ({expression}); return JSON.stringify(v === undefined ? null : v);"


class PageWorld:
    """argent's scripts in the page a WebDriver session shows."""

    def __init__(self, session: WebDriverSession) -> None:
        self.session = session

    async def install(self, timeout: float | None = None) -> None:
        await self.session.execute(f"{world_source()};\nreturn true;", timeout=timeout)

    async def evaluate(
        self, expression: str, *, await_promise: bool = False, timeout: float | None = None
    ) -> Any:
        """``expression`` in the page with argent's scripts (installed when missing), its value by JSON."""
        body = _body(expression, await_promise)
        for _ in range(WORLD_ATTEMPTS):
            try:
                text = await self.session.execute(body, timeout=timeout)
            except WebDriverError as exc:
                if exc.error != JAVASCRIPT_ERROR or not self.session.alive:
                    raise
                raise DeviceError(
                    f"WebKit ({self.session.label}): argent's page script failed: {exc}"
                ) from None
            if text == MISSING:
                await self.install(timeout)
                continue
            if not isinstance(text, str):
                return None
            try:
                return json.loads(text)
            except ValueError:
                return None
        raise DeviceError(
            f"WebKit ({self.session.label}): the page kept navigating away while argent read it."
        )
