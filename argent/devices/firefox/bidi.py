r"""A WebDriver BiDi session over one aiohttp websocket: the client argent drives Firefox with.

Commands carry increasing ids and resolve futures; events go to subscribers. Every command is
bounded in time, and every failure surfaces as a ``DeviceError`` with a message for a person: an
error answer names the command and BiDi's error code, a timeout names the command and its id, and
once the socket closes (the browser died, was killed, or closed) every pending and later command
fails with the one death message the owner composes — the owner knows whether its process exited,
and with which status. A death of the browser's own (not a close) is a ``DeviceGoneError``, as is
a session its owner ``abandon``\ s (it found the browser hung).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from argent.devices.base import DeviceError, DeviceGoneError

#: Default bound of one BiDi command.
COMMAND_TIMEOUT_SECONDS = 10.0
#: Websocket messages can carry full-page PNGs.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
#: How long a command that hit a closing socket waits for the death message.
DEATH_WAIT_SECONDS = 3.0

DeathMessage = Callable[[str], Awaitable[str]]
Listener = Callable[[dict[str, Any]], None]


class BidiError(DeviceError):
    """A command the browser answered with an error: ``error`` is BiDi's code (``no such frame``...)."""

    def __init__(self, message: str, error: str) -> None:
        super().__init__(message)
        self.error = error


async def connect_bidi(
    http: aiohttp.ClientSession,
    ws_url: str,
    *,
    label: str,
    describe_death: DeathMessage,
    timeout: float = COMMAND_TIMEOUT_SECONDS,
) -> BidiSession:
    """Open the websocket of a BiDi endpoint (``ws://127.0.0.1:<port>/session``). No ``Origin`` header
    is sent: Firefox's remote agent refuses upgrades that carry one it was not told to allow."""
    try:
        async with asyncio.timeout(timeout):
            ws = await http.ws_connect(ws_url, max_msg_size=MAX_MESSAGE_BYTES, autoping=True)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        detail = str(exc) or type(exc).__name__
        raise DeviceError(
            f"Could not open the WebDriver BiDi socket of Firefox ({label}) at {ws_url}: {detail}"
        ) from None
    return BidiSession(ws, label=label, describe_death=describe_death)


class BidiSession:
    """One BiDi connection (and, after ``session.new``, the one session of its browser)."""

    def __init__(
        self,
        ws: aiohttp.ClientWebSocketResponse,
        *,
        label: str,
        describe_death: DeathMessage,
        command_timeout: float = COMMAND_TIMEOUT_SECONDS,
    ) -> None:
        self.label = label
        self.command_timeout = command_timeout
        self._ws = ws
        self._describe_death = describe_death
        self._next_id = 0
        self._pending: dict[int, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._listeners: dict[str, list[Listener]] = {}
        self._expected: set[asyncio.Future[dict[str, Any]]] = set()
        #: The death message, once the session is unusable.
        self._death: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        #: Whether that death is the browser's own (gone), not a close.
        self._gone = False
        self._closing = False
        self._reader = asyncio.create_task(self._read(), name=f"bidi-reader-{label}")

    # -- state --

    @property
    def alive(self) -> bool:
        return not self._death.done() and not self._ws.closed

    @property
    def death(self) -> str | None:
        return self._death.result() if self._death.done() else None

    # -- commands --

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """One command; its ``result`` object, or a ``DeviceError`` (``BidiError`` for an error answer)."""
        if self._death.done():
            raise self._dead()
        self._next_id += 1
        cid = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[cid] = (method, future)
        try:
            await self._ws.send_str(json.dumps({"id": cid, "method": method, "params": params or {}}))
        except (ConnectionError, aiohttp.ClientError, RuntimeError) as exc:
            self._pending.pop(cid, None)
            message = await self._await_death(f"sending {method} failed: {exc}")
            raise (self._dead() if self._death.done() else DeviceError(message)) from None
        limit = self.command_timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(limit):
                return await future
        except TimeoutError:
            if self._death.done():
                raise self._dead() from None
            raise DeviceError(
                f"WebDriver BiDi command {method} (id={cid}) to Firefox ({self.label}) timed out after {limit:g}s — "
                "Firefox accepted the connection but did not answer; the page may be frozen or busy. Stop the "
                "device and boot a new one if this keeps happening."
            ) from None
        finally:
            self._pending.pop(cid, None)

    # -- events --

    def on(self, method: str, listener: Listener) -> Callable[[], None]:
        """Call ``listener(params)`` for every ``method`` event; returns the unsubscribe function."""
        self._listeners.setdefault(method, []).append(listener)

        def off() -> None:
            listeners = self._listeners.get(method)
            if listeners and listener in listeners:
                listeners.remove(listener)

        return off

    def expect(
        self, method: str, predicate: Callable[[dict[str, Any]], bool] | None = None
    ) -> asyncio.Future[dict[str, Any]]:
        """A future for the next ``method`` event (register it *before* the command that causes it);
        it fails with the death message if the session dies first. Cancel it when no longer needed."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self._death.done():
            future.set_exception(self._dead())
            return future

        def listener(params: dict[str, Any]) -> None:
            if not future.done() and (predicate is None or predicate(params)):
                future.set_result(params)

        off = self.on(method, listener)
        self._expected.add(future)

        def done(_: asyncio.Future[dict[str, Any]]) -> None:
            off()
            self._expected.discard(future)

        future.add_done_callback(done)
        return future

    # -- lifetime --

    def abandon(self, message: str) -> None:
        """Give the session up as the browser's death (its owner found it unresponsive): everything
        pending and later fails with ``message`` at once, and the socket closes."""
        self._settle(message, gone=True)
        if not self._ws.closed:
            self._closing = True
            closing = asyncio.ensure_future(self._ws.close())
            closing.add_done_callback(lambda task: None if task.cancelled() else task.exception())

    async def close(self) -> None:
        """Close the socket; pending and later commands fail with "session closed"."""
        self._closing = True
        self._settle(f"The WebDriver BiDi session of Firefox ({self.label}) is closed.")
        with contextlib.suppress(Exception):
            await self._ws.close()
        if not self._reader.done():
            self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader

    async def _read(self) -> None:
        cause = "its WebDriver BiDi socket closed"
        try:
            async for msg in self._ws:
                if msg.type == aiohttp.WSMsgType.TEXT:
                    self._dispatch(msg.data)
                elif msg.type == aiohttp.WSMsgType.ERROR:
                    cause = f"its WebDriver BiDi socket failed ({self._ws.exception()})"
                    break
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            cause = f"reading its WebDriver BiDi socket failed ({exc})"
        if self._closing or self._death.done():
            return
        try:
            message = await self._describe_death(cause)
        except Exception:
            message = f"Firefox ({self.label}) exited or crashed: {cause}."
        self._settle(message, gone=True)

    def _dispatch(self, text: str) -> None:
        try:
            data = json.loads(text)
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        kind = data.get("type")
        cid = data.get("id")
        if kind in ("success", "error") and isinstance(cid, int):
            entry = self._pending.pop(cid, None)
            if entry is None:
                return
            method, future = entry
            if future.done():
                return
            if kind == "error":
                code = str(data.get("error") or "unknown error")
                said = str(data.get("message") or "").strip()
                future.set_exception(
                    BidiError(
                        f"Firefox ({self.label}) refused {method}: {code}{': ' + said if said else ''}", code
                    )
                )
            else:
                result = data.get("result")
                future.set_result(result if isinstance(result, dict) else {})
            return
        if kind == "event":
            event = data.get("method")
            params = data.get("params")
            if isinstance(event, str):
                for listener in list(self._listeners.get(event, ())):
                    with contextlib.suppress(Exception):
                        listener(params if isinstance(params, dict) else {})

    def _dead(self) -> DeviceError:
        """The error of a command to this dead session."""
        message = self._death.result()
        return DeviceGoneError(message) if self._gone else DeviceError(message)

    def _settle(self, message: str, *, gone: bool = False) -> None:
        """Mark the session dead with ``message`` (``gone``: the browser's own death) and fail
        everything that waits on it."""
        if not self._death.done():
            self._death.set_result(message)
            self._gone = gone
        pending, self._pending = self._pending, {}
        for _, future in pending.values():
            if not future.done():
                future.set_exception(self._dead())
        for future in list(self._expected):
            if not future.done():
                future.set_exception(self._dead())

    async def _await_death(self, fallback: str) -> str:
        try:
            async with asyncio.timeout(DEATH_WAIT_SECONDS):
                return await asyncio.shield(self._death)
        except TimeoutError:
            return f"Firefox ({self.label}) is unreachable: {fallback}."
