"""argent's world in one browsing context of a Firefox page: a WebDriver BiDi sandbox realm.

A sandbox (``script.evaluate`` / ``script.callFunction`` with ``sandbox: "argent"``) is a realm of
its own in the context's document: the page can neither see nor disturb what runs there (its
globals are the sandbox's; the DOM is seen through Xray wrappers, so a page that replaces
``Element.prototype.getAttribute`` changes nothing argent reads), yet it reads the same DOM. The
device registers the world's scripts (``argent.devices.web.scripts``) as a preload script of the
sandbox, so every new document of every context has them before its own scripts run; a document
that was already there gets them on first use. Every answer comes back as JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from argent.devices.base import DeviceError
from argent.devices.firefox.bidi import BidiError, BidiSession
from argent.devices.web.scripts import world_source

SANDBOX = "argent"
#: How often one call tries again when its document keeps going away or lacks the world.
WORLD_ATTEMPTS = 3
#: What a call answers when the world's scripts are not in the document yet.
_MISSING = "\u0000argent:missing"
#: BiDi errors that mean the context or its document went away while a call ran.
GONE = ("no such frame", "no such handle", "unknown error")


def preload_function() -> str:
    """The world's scripts as a preload script's function."""
    return f"() => {{ {world_source()}; }}"


class SandboxWorld:
    """argent's sandbox in the browsing context ``context``."""

    def __init__(self, session: BidiSession, context: str) -> None:
        self.session = session
        self.context = context

    @property
    def target(self) -> dict[str, str]:
        return {"context": self.context, "sandbox": SANDBOX}

    async def evaluate(
        self, expression: str, *, await_promise: bool = False, timeout: float | None = None
    ) -> Any:
        """``expression`` in the world (a promise awaited with ``await_promise``), its value by JSON."""
        if await_promise:
            wrapped = (
                f"(async () => {{ if (globalThis.__argentWalk === undefined) return {json.dumps(_MISSING)}; "
                f"const v = await ({expression}); return JSON.stringify(v === undefined ? null : v); }})()"
            )
        else:
            wrapped = (
                f"(() => {{ if (globalThis.__argentWalk === undefined) return {json.dumps(_MISSING)}; "
                f"const v = ({expression}); return JSON.stringify(v === undefined ? null : v); }})()"
            )
        for _ in range(WORLD_ATTEMPTS):
            text = await self._run(wrapped, await_promise, timeout)
            if text == _MISSING:
                await self._run(world_source(), False, timeout)
                continue
            if not isinstance(text, str):
                return None
            try:
                return json.loads(text)
            except ValueError:
                return None
        raise DeviceError(
            f"Firefox ({self.session.label}): the page kept navigating away while argent read it."
        )

    async def call(
        self, function: str, arguments: list[dict[str, Any]] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """``function`` called in the world with BiDi ``arguments``; its raw result (``RemoteValue``)."""
        params: dict[str, Any] = {
            "functionDeclaration": function,
            "target": self.target,
            "awaitPromise": False,
            "arguments": arguments or [],
            "resultOwnership": "none",
        }
        reply = await self.session.send("script.callFunction", params, timeout=timeout)
        return self._result(reply)

    async def _run(self, expression: str, await_promise: bool, timeout: float | None) -> Any:
        params = {
            "expression": expression,
            "target": self.target,
            "awaitPromise": await_promise,
            "resultOwnership": "none",
        }
        try:
            reply = await self.session.send("script.evaluate", params, timeout=timeout)
        except BidiError as exc:
            if self.session.alive and exc.error in GONE:
                return _MISSING  # the document went away under the call: its successor gets the world
            raise
        result = self._result(reply)
        return result.get("value")

    def _result(self, reply: dict[str, Any]) -> dict[str, Any]:
        if reply.get("type") == "exception":
            details = reply.get("exceptionDetails")
            text = details.get("text") if isinstance(details, dict) else None
            raise DeviceError(
                f"Firefox ({self.session.label}): argent's page monitor failed: {text or 'an exception'}"
            )
        result = reply.get("result")
        return result if isinstance(result, dict) else {}
