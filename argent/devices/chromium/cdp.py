"""A Chrome DevTools Protocol session over one aiohttp websocket.

Requests carry increasing ids and resolve futures; events go to subscribers. A session can hold
child sessions on the same socket (``attach``: CDP's flat sessions, the targets that
``Target.setAutoAttach`` with ``flatten`` attaches — out-of-process frames): their messages carry
a ``sessionId``, they die with their parent or when their target detaches. Every failure
surfaces as a ``DeviceError`` with a message for a person: a CDP error names the method, a
timeout names the method and its id, and once the socket closes (or the renderer crashes, or
the owner gives the session up: ``abandon``) every pending and later request fails with the one
death message the owner composes — the owner knows whether its process exited, and with which
status. Such a death is a ``DeviceGoneError``; a session closed on purpose, or a
child session whose frame went away, fails with a plain ``DeviceError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from argent.devices.base import DeviceError, DeviceGoneError

#: Default bound of one CDP request.
REQUEST_TIMEOUT_SECONDS = 10.0
#: Websocket messages can carry full-page PNGs.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
#: How long a request that hit a closing socket waits for the death message.
DEATH_WAIT_SECONDS = 3.0

DeathMessage = Callable[[str], Awaitable[str]]
Listener = Callable[[dict[str, Any]], None]


async def connect_session(
    http: aiohttp.ClientSession,
    ws_url: str,
    *,
    label: str,
    describe_death: DeathMessage,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
) -> CdpSession:
    """Open a page session. No ``Origin`` header is sent: Chromium refuses upgrades that carry one."""
    try:
        async with asyncio.timeout(timeout):
            ws = await http.ws_connect(ws_url, max_msg_size=MAX_MESSAGE_BYTES, autoping=True)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        detail = str(exc) or type(exc).__name__
        raise DeviceError(
            f"Could not open the DevTools session of Chromium ({label}) at {ws_url}: {detail}"
        ) from None
    return CdpSession(ws, label=label, describe_death=describe_death)


class CdpSession:
    def __init__(
        self,
        ws: aiohttp.ClientWebSocketResponse,
        *,
        label: str,
        describe_death: DeathMessage,
        request_timeout: float = REQUEST_TIMEOUT_SECONDS,
        parent: CdpSession | None = None,
        session_id: str | None = None,
    ) -> None:
        self.label = label
        self.request_timeout = request_timeout
        #: The flat session id of a child session (None: the socket's own session).
        self.session_id = session_id
        self._ws = ws
        self._describe_death = describe_death
        #: The session that owns the socket (itself for the socket's own session).
        self._root: CdpSession = parent._root if parent is not None else self
        self._next_id = 0
        #: Requests in flight on the socket (root only): id -> (method, future, the session that sent it).
        self._pending: dict[int, tuple[str, asyncio.Future[dict[str, Any]], CdpSession]] = {}
        #: The live child sessions on the socket, by session id (root only).
        self._children: dict[str, CdpSession] = {}
        self._listeners: dict[str, list[Listener]] = {}
        self._expected: set[asyncio.Future[dict[str, Any]]] = set()
        loop = asyncio.get_running_loop()
        #: The death message, once the session is unusable.
        self._death: asyncio.Future[str] = loop.create_future()
        #: Whether that death is the device's own (its browser or page gone), not a close or a detach.
        self._gone = False
        self._closing = False
        self._reader: asyncio.Task[None] | None = None
        if parent is None:
            self._reader = asyncio.create_task(self._read(), name=f"cdp-reader-{label}")

    # -- state --

    @property
    def alive(self) -> bool:
        return not self._death.done() and not self._ws.closed

    def attach(self, session_id: str, label: str) -> CdpSession:
        """The child session ``session_id`` (a target attached in flat mode) on this socket."""
        root = self._root
        existing = root._children.get(session_id)
        if existing is not None:
            return existing
        child = CdpSession(
            self._ws,
            label=label,
            describe_death=self._describe_death,
            request_timeout=self.request_timeout,
            parent=self,
            session_id=session_id,
        )
        if root._death.done():
            child._settle(root._death.result(), gone=root._gone)
        else:
            root._children[session_id] = child
        return child

    @property
    def death(self) -> str | None:
        return self._death.result() if self._death.done() else None

    async def settled(self) -> str:
        """The death message, once the session died (its requests then fail with it)."""
        return await asyncio.shield(self._death)

    def _dead(self) -> DeviceError:
        """The error of a request to this dead session."""
        message = self._death.result()
        return DeviceGoneError(message) if self._gone else DeviceError(message)

    # -- requests --

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """One CDP request; its ``result`` object, or a ``DeviceError``."""
        rid, future = await self._issue(method, params)
        return await self._answer(method, rid, future, timeout)

    async def send_in_order(
        self, method: str, params: list[dict[str, Any]], *, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Several requests of one method, written in order before any answer is awaited: one
        round trip instead of one each. Chromium handles them in that order (input events reach
        the page as if each had been awaited)."""
        issued: list[tuple[int, asyncio.Future[dict[str, Any]]]] = []
        try:
            for p in params:
                issued.append(await self._issue(method, p))
        except BaseException:
            for rid, future in issued:
                self._root._pending.pop(rid, None)
                future.cancel()
            raise
        results: list[dict[str, Any]] = []
        failure: DeviceError | None = None
        for rid, future in issued:
            try:
                results.append(await self._answer(method, rid, future, timeout))
            except DeviceError as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
        return results

    async def _issue(
        self, method: str, params: dict[str, Any] | None
    ) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Register and write one request."""
        if self._death.done():
            raise self._dead()
        root = self._root
        root._next_id += 1
        rid = root._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        root._pending[rid] = (method, future, self)
        message: dict[str, Any] = {"id": rid, "method": method, "params": params or {}}
        if self.session_id is not None:
            message["sessionId"] = self.session_id
        try:
            await self._ws.send_str(json.dumps(message))
        except (ConnectionError, aiohttp.ClientError, RuntimeError) as exc:
            root._pending.pop(rid, None)
            death = await root._await_death(f"sending {method} failed: {exc}")
            raise (root._dead() if root._death.done() else DeviceError(death)) from None
        return rid, future

    async def _answer(
        self, method: str, rid: int, future: asyncio.Future[dict[str, Any]], timeout: float | None
    ) -> dict[str, Any]:
        limit = self.request_timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(limit):
                return await future
        except TimeoutError:
            self._root._pending.pop(rid, None)
            if self._death.done():
                raise self._dead() from None
            raise DeviceError(
                f"CDP request {method} (id={rid}) to Chromium ({self.label}) timed out after {limit:g}s — "
                "Chromium accepted the connection but did not answer; the page may be frozen or busy. Stop the "
                "device and boot a new one if this keeps happening."
            ) from None
        finally:
            self._root._pending.pop(rid, None)

    async def evaluate(
        self, expression: str, *, await_promise: bool = False, timeout: float | None = None
    ) -> Any:
        """``Runtime.evaluate`` by value; a thrown exception becomes a ``DeviceError``."""
        reply = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
            timeout=timeout,
        )
        details = reply.get("exceptionDetails")
        if details:
            raise DeviceError(f"Chromium ({self.label}): the page threw {exception_text(details)}")
        return (reply.get("result") or {}).get("value")

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
        """A future for the next ``method`` event (register it *before* the action that causes it).

        It fails with the death message if the session dies first; cancel it when no longer needed."""
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
        """Give the session up as the device's death (its owner found the browser unresponsive):
        everything pending and later fails with ``message`` at once, and the socket closes."""
        self._settle(message, gone=True)
        if self._reader is not None and not self._ws.closed:
            self._closing = True
            closing = asyncio.ensure_future(self._ws.close())
            closing.add_done_callback(lambda task: None if task.cancelled() else task.exception())

    async def close(self) -> None:
        """Close the socket (a child: forget it); pending and later requests fail with "session closed"."""
        self._closing = True
        self._settle(f"The DevTools session of Chromium ({self.label}) is closed.")
        if self._reader is None:
            return
        with contextlib.suppress(Exception):
            await self._ws.close()
        if not self._reader.done():
            self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader

    async def _read(self) -> None:
        cause = "its DevTools socket closed"
        try:
            async for msg in self._ws:
                if msg.type == aiohttp.WSMsgType.TEXT:
                    crash = self._dispatch(msg.data)
                    if crash is not None:
                        cause = crash
                        break
                elif msg.type == aiohttp.WSMsgType.ERROR:
                    cause = f"its DevTools socket failed ({self._ws.exception()})"
                    break
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            cause = f"reading its DevTools socket failed ({exc})"
        if self._closing or self._death.done():
            return
        try:
            message = await self._describe_death(cause)
        except Exception:
            message = f"Chromium ({self.label}) exited or crashed: {cause}."
        self._settle(message, gone=True)

    def _dispatch(self, text: str) -> str | None:
        """Route one message; returns a crash cause when the page session just became unusable."""
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        rid = data.get("id")
        if isinstance(rid, int):
            entry = self._pending.pop(rid, None)
            if entry is not None:
                method, future, sender = entry
                if not future.done():
                    error = data.get("error")
                    if isinstance(error, dict):
                        message = str(error.get("message") or "unknown error")
                        future.set_exception(
                            DeviceError(f"Chromium ({sender.label}) refused {method}: {message}")
                        )
                    else:
                        result = data.get("result")
                        future.set_result(result if isinstance(result, dict) else {})
            return None
        event = data.get("method")
        if not isinstance(event, str):
            return None
        raw = data.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        sid = data.get("sessionId")
        target: CdpSession | None = self if sid is None else self._children.get(str(sid))
        if target is None:
            return None
        for listener in list(target._listeners.get(event, ())):
            with contextlib.suppress(Exception):
                listener(params)
        if event == "Target.detachedFromTarget":
            child = self._children.get(str(params.get("sessionId")))
            if child is not None:
                child._settle(f"The frame of Chromium ({child.label}) was detached.")
        cause: str | None = None
        if event == "Inspector.targetCrashed":
            cause = "its page renderer crashed"
        elif event == "Inspector.detached":
            cause = f"its page was detached ({params.get('reason', 'no reason given')})"
        if cause is not None and target is not self:
            target._settle(f"Chromium ({target.label}): {cause}.")
            return None
        return cause

    def _settle(self, message: str, *, gone: bool = False) -> None:
        """Mark the session dead with ``message`` and fail everything that waits on it (the
        socket's own session: its children too); ``gone``: the device's own death."""
        if not self._death.done():
            self._death.set_result(message)
            self._gone = gone
        root = self._root
        if root is self:
            pending, self._pending = self._pending, {}
            children, self._children = list(self._children.values()), {}
            for child in children:
                child._settle(message, gone=gone)
        else:
            if self.session_id is not None and root._children.get(self.session_id) is self:
                del root._children[self.session_id]
            pending = {rid: entry for rid, entry in root._pending.items() if entry[2] is self}
            for rid in pending:
                del root._pending[rid]
        for _, future, _sender in pending.values():
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
            return f"Chromium ({self.label}) is unreachable: {fallback}."


def exception_text(details: dict[str, Any]) -> str:
    """The readable part of a ``Runtime.evaluate`` ``exceptionDetails``."""
    exception = details.get("exception")
    if isinstance(exception, dict):
        description = exception.get("description") or exception.get("value")
        if description:
            return str(description).splitlines()[0]
    return str(details.get("text") or "an exception")
