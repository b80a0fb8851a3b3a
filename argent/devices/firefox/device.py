"""``FirefoxDevice``: the ``Device`` protocol on one Firefox page over WebDriver BiDi.

The device holds the one BiDi session its browser allows and drives the top-level browsing context
of its first tab. Coordinates arrive as fractions of the viewport and become CSS pixels with the
viewport the device last read. Input goes through ``input.performActions`` (a mouse, a keyboard, a
wheel), reads through the shared walker in argent's sandbox (``argent.devices.firefox.world``),
screenshots through ``browsingContext.captureScreenshot``; the page's requests and console calls are
recorded from ``network.*`` and ``log.entryAdded`` events, and its native dialogs answered from
``browsingContext.userPromptOpened``. A device the provider launched owns its process (``close``
kills its whole process group and removes its profile); one attached to an outside
``firefox-bidi-<port>`` ends its session.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import Sequence
from typing import Any

import aiohttp

from argent.devices.base import Choice, DeviceError, Focused, UiTree
from argent.devices.firefox import listening
from argent.devices.firefox.bidi import BidiError, BidiSession, connect_bidi
from argent.devices.firefox.frames import ContextFrames, focus_wait
from argent.devices.firefox.launcher import FirefoxProcess
from argent.devices.firefox.recorders import LONG_LIVED, ConsoleLog, NetworkLog, request_id, resource_type
from argent.devices.firefox.startup import BOOT_EVENTS, FirstPage
from argent.devices.firefox.values import python_value
from argent.devices.firefox.world import SANDBOX, SandboxWorld, preload_function
from argent.devices.registry import FIREFOX
from argent.devices.web.dialogs import BookedDialogs, DialogBook
from argent.devices.web.file_access import FileAccess
from argent.devices.web.file_inputs import (
    AT_POINT,
    DISABLED,
    FIND_INPUT,
    NOT_A_FILE_INPUT,
    NOTHING_THERE,
    ONE_FILE_ONLY,
)
from argent.devices.web.forms import choice_from, focused_from
from argent.devices.web.handle import PAGE_INFO_EXPRESSION, BrowserHandle, page_info_of
from argent.devices.web.page import PointerAction, ScriptOutcome
from argent.devices.web.quiet import WAIT_SLACK_SECONDS, PageQuiet, wait_expression
from argent.devices.web.walker import FLOW_MAX_DEPTH, FLOW_MAX_NODES, parse_walk, walk_expression
from argent.devices.web.watchdog import BrowserWatch
from argent.devices.web.webdriver_keys import keyboard, press_actions, text_actions
from argent.limits import CDP_NETWORK_RESOURCE_BUFFER_BYTES, FIREFOX_FOCUS_WAIT_SECONDS, MAX_LISTED_OPTIONS

#: Bound of the first ``session.new`` (Firefox answers it once its start-up tasks are done).
SESSION_TIMEOUT_SECONDS = 30.0
#: How long a failed set-up waits for ``session.new``'s own answer (its error names the cause).
SETTLE_SECONDS = 1.0
#: Bound of the wait for a navigation's load (the page stays usable after it).
LOAD_TIMEOUT_SECONDS = 15.0
SCREENSHOT_TIMEOUT_SECONDS = 20.0
WALK_TIMEOUT_SECONDS = 15.0
#: How much longer than a script's own time its answer is awaited.
SCRIPT_GRACE_SECONDS = 2.0
#: After a socket drop, how long to wait for an owned browser's exit status for the message.
EXIT_STATUS_WAIT_SECONDS = 1.0
#: The events the device follows.
EVENTS = (
    "network.beforeRequestSent",
    "network.responseCompleted",
    "network.fetchError",
    "log.entryAdded",
    "browsingContext.userPromptOpened",
    "browsingContext.navigationStarted",
)
#: Characters typed as keys even into a plain text field (Enter submits, Tab moves the focus).
_KEYED = "\r\n\t"
_MOUSE = {"type": "pointer", "id": "argent-mouse", "parameters": {"pointerType": "mouse"}}
_WHEEL = {"type": "wheel", "id": "argent-wheel"}
_NEXT_FRAME = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
#: True once the page has the focus (at once, or at the window's ``focus`` event).
_HAS_FOCUS = (
    "document.hasFocus() || new Promise(r => addEventListener('focus', () => r(true), { once: true }))"
)


def _mouse(actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {**_MOUSE, "actions": actions}


def _move(px: tuple[float, float]) -> dict[str, Any]:
    return {"type": "pointerMove", "x": round(px[0]), "y": round(px[1]), "origin": "viewport", "duration": 0}


class FirefoxDevice(BrowserHandle, BookedDialogs):
    """One Firefox page driven over one WebDriver BiDi session."""

    def __init__(self, port: int, http: aiohttp.ClientSession, process: FirefoxProcess | None) -> None:
        self.port = port
        self._http = http
        self._process = process
        self._session: BidiSession | None = None
        self._context = ""
        self._viewport: tuple[float, float] = (0.0, 0.0)
        self._pinned: tuple[int, int] | None = None
        self._input = asyncio.Lock()
        self._closed = False
        self._world: SandboxWorld | None = None
        self._frames: ContextFrames | None = None
        self._quiet = PageQuiet(self._wait_page)
        self._inputs = 0
        self._focus_editable: tuple[int, bool] | None = None
        self._files: FileAccess | None = None
        self._background: set[asyncio.Future[Any]] = set()
        self._started: asyncio.Future[dict[str, Any]] | None = None
        #: Whether an owned browser still answers (``argent.devices.web.watchdog``).
        self._watch: BrowserWatch | None = None
        self._reaping = False
        self._first_focus: asyncio.Future[bool] | None = None
        #: What the pages of this device recorded.
        self.network = NetworkLog()
        self.console = ConsoleLog()
        #: The native dialogs of its pages, answered as they open.
        self.dialogs = DialogBook()

    # -- opening --

    @classmethod
    async def open(
        cls, port: int, *, process: FirefoxProcess | None = None, viewport: tuple[int, int] | None = None
    ) -> FirefoxDevice:
        """Make the one BiDi session of the Firefox on ``port`` and drive its first tab; ``viewport``
        pins its size (DPR 1). The set-up is sent behind ``session.new`` and the device is ready once
        the first tab has loaded (``argent.devices.firefox.startup``)."""
        http = aiohttp.ClientSession()
        device = cls(port, http, process)
        started: asyncio.Future[dict[str, Any]] | None = None
        try:
            device._session = await connect_bidi(
                http, device.endpoint, label=device.id, describe_death=device._death_message
            )
            capabilities = {"alwaysMatch": {"unhandledPromptBehavior": {"default": "ignore"}}}
            started = asyncio.ensure_future(
                device.session.send(
                    "session.new", {"capabilities": capabilities}, timeout=SESSION_TIMEOUT_SECONDS
                )
            )
            device._later(started)
            device._started = started
            await device._prime(started, viewport, owned=process is not None)
            if process is not None:
                device._watch = BrowserWatch(
                    device._ping, lambda: device.alive, device._hung, stopped=process.stopped
                )
                device._watch.start()
        except BaseException:
            if started is not None:
                started.cancel()
            await device._disconnect()
            if process is not None:
                await process.terminate()
            raise
        return device

    async def _prime(
        self, started: asyncio.Future[dict[str, Any]], viewport: tuple[int, int] | None, *, owned: bool
    ) -> None:
        session = self.session
        session.on("network.beforeRequestSent", self._on_request)
        session.on("network.responseCompleted", self._on_response)
        session.on("network.fetchError", self._on_failure)
        session.on("log.entryAdded", self.console.entry)
        session.on("browsingContext.userPromptOpened", self._on_prompt)
        session.on("browsingContext.navigationStarted", self._on_navigation)
        first = FirstPage(session)
        try:
            # Independent of each other: sent at once (start-up is the sum of the round trips otherwise).
            setup = [
                session.send("session.subscribe", {"events": list(EVENTS)}),
                session.send("session.subscribe", {"events": list(BOOT_EVENTS)}),
                session.send(
                    "script.addPreloadScript", {"functionDeclaration": preload_function(), "sandbox": SANDBOX}
                ),
                session.send(
                    "script.addPreloadScript", {"functionDeclaration": listening.preload_function()}
                ),
                self._collect_bodies(),
            ]
            if viewport is not None:
                # For the user context, so the first tab has it however early it is made.
                width, height = viewport
                setup.append(
                    session.send(
                        "browsingContext.setViewport",
                        {
                            "userContexts": ["default"],
                            "viewport": {"width": width, "height": height},
                            "devicePixelRatio": 1,
                        },
                    )
                )
                self._pinned = (width, height)
            if owned:
                # No page saves a download on the server's disk.
                setup.append(
                    session.send("browser.setDownloadBehavior", {"downloadBehavior": {"type": "denied"}})
                )
            results = await asyncio.gather(*setup, return_exceptions=True)
            failed = next((r for r in results if isinstance(r, BaseException)), None)
            if failed is not None:
                if started.done() or await _settles(started):
                    started.result()  # session.new's own error (no session: every other command failed)
                raise failed
            try:
                async with asyncio.timeout(SESSION_TIMEOUT_SECONDS):
                    self._context = await first.context(started, self.id)
            except TimeoutError:
                raise DeviceError(
                    f"Firefox ({self.id}) did not open its first page within {SESSION_TIMEOUT_SECONDS:g}s."
                ) from None
        finally:
            first.close()
        if owned:
            # Not awaited: the page takes the focus once it has painted (``_focused``).
            self._first_focus = asyncio.ensure_future(self._takes_focus({"context": self._context}))
            self._later(self._first_focus)
        boot = results[1]
        if isinstance(boot, dict) and isinstance(boot.get("subscription"), str):
            self._later(session.send("session.unsubscribe", {"subscriptions": [boot["subscription"]]}))
        self._world = SandboxWorld(session, self._context)
        self._frames = ContextFrames(session, self._world)
        if self._pinned is not None:
            self._viewport = (float(self._pinned[0]), float(self._pinned[1]))  # every walk reads it again
        else:
            await self.refresh_viewport()

    async def _takes_focus(self, target: dict[str, str]) -> bool:
        """Whether the page of ``target`` (a realm) has the focus, or takes it within
        ``FIREFOX_FOCUS_WAIT_SECONDS``; False when it does not or its document went away meanwhile."""
        try:
            reply = await self.session.send(
                "script.evaluate",
                {"expression": _HAS_FOCUS, "target": target, "awaitPromise": True, "resultOwnership": "none"},
                timeout=FIREFOX_FOCUS_WAIT_SECONDS,
            )
        except DeviceError:
            if not self.alive:
                raise
            return False
        return reply.get("result") == {"type": "boolean", "value": True}

    async def _focused(self) -> None:
        """After the first navigation of a launched Firefox: its page has the focus (see
        ``launcher.FIRST_PAGE``), or takes it within a bound. The first page takes it once it has
        painted, a moment after the device is ready; when the navigation replaced that page first, the
        focus comes to the new one once it has painted."""
        first, self._first_focus = self._first_focus, None
        if first is None or await first:
            return
        await self._takes_focus(self.world.target)

    async def _collect_bodies(self) -> None:
        """Keep response bodies for view-network-request-details, where this Firefox can."""
        with contextlib.suppress(BidiError):
            await self.session.send(
                "network.addDataCollector",
                {"dataTypes": ["response"], "maxEncodedDataSize": CDP_NETWORK_RESOURCE_BUFFER_BYTES},
            )

    # -- identity --

    @property
    def id(self) -> str:
        return FIREFOX.device_id(self.port)

    @property
    def platform(self) -> str:
        return FIREFOX.platform

    @property
    def endpoint(self) -> str:
        """The BiDi websocket URL (``ARGENT_BIDI_URL``); the browser holds one session, argent's."""
        return f"ws://127.0.0.1:{self.port}/session"

    @property
    def started(self) -> asyncio.Future[dict[str, Any]] | None:
        """``session.new``'s answer, which Firefox gives once its start-up is over (the device is
        ready before: ``argent.devices.firefox.startup``); None before ``open``."""
        return self._started

    @property
    def death(self) -> str | None:
        if self._session is None:
            return f"The WebDriver BiDi session of Firefox ({self.id}) is closed."
        return self._session.death

    @property
    def session(self) -> BidiSession:
        if self._session is None:
            raise DeviceError(f"Firefox ({self.id}) has no WebDriver BiDi session.")
        return self._session

    @property
    def world(self) -> SandboxWorld:
        if self._world is None:
            raise DeviceError(f"Firefox ({self.id}) has no WebDriver BiDi session.")
        return self._world

    @property
    def frames(self) -> ContextFrames:
        if self._frames is None:
            raise DeviceError(f"Firefox ({self.id}) has no WebDriver BiDi session.")
        return self._frames

    async def _death_message(self, cause: str) -> str:
        """What the commands of a session whose browser died fail with; the device is reaped."""
        gone = self._gone_hint()
        message = f"Firefox ({self.id}) exited or crashed — {cause}. {gone}"
        if self._process is not None:
            deadline = time.monotonic() + EXIT_STATUS_WAIT_SECONDS
            while self._process.returncode() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            exited = self._process.exit_description()
            if exited is not None:
                message = f"Firefox ({self.id}) {exited} — {cause}. {gone}"
        self._reap_soon()  # last: it runs once the session holds this message
        return message

    def _gone_hint(self) -> str:
        if self._process is None:
            return "This tool-server no longer drives it: attach again, or boot a new device."
        return (
            "The device is gone (its processes killed, its profile removed): boot a new one (a flow's "
            "launch: boots one)."
        )

    async def _ping(self) -> None:
        """A question the browser process answers itself, whatever its pages run."""
        await self.session.send("session.status")

    async def _hung(self, waited: float, bound: str) -> None:
        """The browser gave no answer for ``waited`` seconds, past ``bound`` (``BrowserWatch``): every
        command fails now with that message, and the device is reaped."""
        stopped = self._process is not None and self._process.stopped()
        why = " (its process is stopped)" if stopped else ""
        self.session.abandon(
            f"Firefox ({self.id}) stopped answering: its browser process{why} gave no answer within "
            f"{waited:g}s ({bound}). {self._gone_hint()}"
        )
        self._reap_soon()

    def _reap_soon(self) -> None:
        """Close the device (an owned browser: kill its group, remove its profile) in the background,
        once: nothing of a dead browser waits for someone to list or stop it."""
        if not self._closed and not self._reaping:
            self._reaping = True
            self._later(self.close())

    # -- events --

    def _on_request(self, params: dict[str, Any]) -> None:
        self.network.sent(params)
        rid = request_id(params)
        request = params.get("request")
        if rid is not None and isinstance(request, dict) and resource_type(request) not in LONG_LIVED:
            self._quiet.request_started(rid)

    def _on_response(self, params: dict[str, Any]) -> None:
        self.network.completed(params)
        self._ended(params)

    def _on_failure(self, params: dict[str, Any]) -> None:
        self.network.failed(params)
        self._ended(params)

    def _ended(self, params: dict[str, Any]) -> None:
        rid = request_id(params)
        if rid is not None:
            self._quiet.request_ended(rid)

    def _on_prompt(self, params: dict[str, Any]) -> None:
        reply = self.dialogs.opening(
            str(params.get("type") or ""), params.get("message"), params.get("defaultValue")
        )
        answer: dict[str, Any] = {"context": params.get("context") or self._context, "accept": reply.accept}
        if reply.text is not None:
            answer["userText"] = reply.text
        # Sent at once, from the event: the page moves no further until the dialog is gone.
        self._later(self.session.send("browsingContext.handleUserPrompt", answer))

    def _on_navigation(self, params: dict[str, Any]) -> None:
        if params.get("context") == self._context and self._frames is not None:
            self._frames.forget()
        url = params.get("url")
        context = params.get("context")
        if isinstance(url, str) and url[:5].lower() == "file:" and isinstance(context, str):
            self._later(self._check_file_load(context, url))

    async def _check_file_load(self, context: str, url: str) -> None:
        """A local page the file rule refuses, opened by a page (a link, a script, a frame): it is left
        for ``about:blank`` at once (argent's own navigations are checked before they start)."""
        rule = self._files
        if rule is None:
            return
        try:
            allowed = await asyncio.to_thread(rule, url)
        except Exception:
            allowed = False
        if not allowed:
            await self.session.send("browsingContext.navigate", {"context": context, "url": "about:blank"})

    def _later(self, call: Any) -> None:
        task = asyncio.ensure_future(call)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Future[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a prompt another client answered first, a session gone

    # -- the file rule --

    @property
    def file_access(self) -> FileAccess | None:
        return self._files

    async def use_file_access(self, rule: FileAccess | None) -> None:
        """Enforce ``rule`` from now on: a ``file:`` page it refuses is never opened by argent, and one a
        page opens is left at once (Firefox's BiDi cannot hold a ``file:`` request; each local file is
        its own origin, so a page reads no other local file)."""
        self._files = rule

    # -- reading --

    async def refresh_viewport(self) -> tuple[float, float]:
        value = await self.world.evaluate("[window.innerWidth, window.innerHeight]")
        if isinstance(value, list) and len(value) == 2:
            width, height = (float(v) if isinstance(v, int | float) else 0.0 for v in value)
            if width <= 0 or height <= 0:
                raise DeviceError(
                    f"Firefox ({self.id}): the viewport reported zero dimensions (w={width:g}, h={height:g})."
                )
            self._viewport = (width, height)
        return self._viewport

    async def screenshot(self) -> bytes:
        return await self.capture()

    def capture_size(self) -> tuple[int, int] | None:
        """The pinned viewport (DPR 1: a clip shows a crop's very pixels); None when not pinned."""
        return self._pinned

    async def capture(self, region: tuple[int, int, int, int] | None = None) -> bytes:
        """``browsingContext.captureScreenshot`` of the viewport, or of ``region`` (pixels = CSS px)."""
        params: dict[str, Any] = {"context": self._context, "origin": "viewport"}
        if region is not None:
            left, top, right, bottom = region
            params["clip"] = {
                "type": "box",
                "x": left,
                "y": top,
                "width": right - left,
                "height": bottom - top,
            }
        reply = await self.session.send(
            "browsingContext.captureScreenshot", params, timeout=SCREENSHOT_TIMEOUT_SECONDS
        )
        data = reply.get("data")
        if not isinstance(data, str) or not data:
            raise DeviceError(f"Firefox ({self.id}): browsingContext.captureScreenshot returned no data.")
        return base64.b64decode(data)

    async def quiet_capture(self, region: tuple[int, int, int, int] | None, timeout: float) -> bytes:
        return await self._quiet.quiet_capture(lambda: self.capture(region), timeout)

    async def ui_tree(
        self, *, max_depth: int = FLOW_MAX_DEPTH, max_nodes: int = FLOW_MAX_NODES, css: Sequence[str] = ()
    ) -> UiTree:
        """One walk in argent's sandbox, the frames it cannot enter walked beside it."""
        return await self._walk(max_depth, max_nodes, False, css)

    async def kept_tree(
        self, *, max_depth: int = FLOW_MAX_DEPTH, max_nodes: int = FLOW_MAX_NODES, css: Sequence[str] = ()
    ) -> UiTree:
        return await self._walk(max_depth, max_nodes, True, css)

    async def _walk(self, max_depth: int, max_nodes: int, keep: bool, css: Sequence[str]) -> UiTree:
        payload = await self.frames.walk(
            walk_expression(max_depth, max_nodes, keep, css),
            max_depth=max_depth,
            max_nodes=max_nodes,
            keep=keep,
            timeout=WALK_TIMEOUT_SECONDS,
        )
        return self._tree(payload, css)

    async def reveal(
        self,
        ref: int,
        *,
        max_depth: int = FLOW_MAX_DEPTH,
        max_nodes: int = FLOW_MAX_NODES,
        css: Sequence[str] = (),
    ) -> UiTree | None:
        self._touch()
        payload = await self.frames.reveal(
            ref,
            walk_expression(max_depth, max_nodes, True, css),
            max_depth=max_depth,
            max_nodes=max_nodes,
            timeout=WALK_TIMEOUT_SECONDS,
        )
        return None if payload is None else self._tree(payload, css)

    def _tree(self, payload: Any, css: Sequence[str]) -> UiTree:
        tree, viewport = parse_walk(payload, self.id, css)
        if viewport[0] > 0 and viewport[1] > 0:
            self._viewport = viewport
        return tree

    async def page_info(self) -> dict[str, str]:
        """The page's title and URL (for list-devices); empty strings when unreadable."""
        try:
            value = await self.world.evaluate(PAGE_INFO_EXPRESSION, timeout=2.0)
        except DeviceError:
            value = None
        return page_info_of(value)

    async def run_script(self, expression: str, *, timeout: float) -> ScriptOutcome:
        """``script.evaluate`` in the page's own realm of the active tab, promises awaited. WebDriver
        BiDi cannot stop a script: one past ``timeout`` is reported timed out and left to finish."""
        params = {
            "expression": expression,
            "target": {"context": self._context},
            "awaitPromise": True,
            "resultOwnership": "none",
        }
        started = time.monotonic()
        try:
            reply = await self.session.send("script.evaluate", params, timeout=timeout + SCRIPT_GRACE_SECONDS)
        except BidiError:
            raise
        except DeviceError:
            if not self.alive or time.monotonic() - started < timeout:
                raise
            return ScriptOutcome(timed_out=True)
        if reply.get("type") == "exception":
            details = reply.get("exceptionDetails")
            text = details.get("text") if isinstance(details, dict) else None
            return ScriptOutcome(thrown=str(text or "Script evaluation threw an exception"))
        return ScriptOutcome(value=python_value(reply.get("result")))

    async def response_body(self, request_id: str) -> tuple[str, bool] | None:
        """The body Firefox still holds for the request (``network.getData``), else None."""
        try:
            reply = await self.session.send(
                "network.getData", {"dataType": "response", "request": request_id}
            )
        except DeviceError:
            return None
        data = reply.get("bytes")
        if not isinstance(data, dict) or not isinstance(data.get("value"), str):
            return None
        return data["value"], data.get("type") == "base64"

    # -- input --

    def _px(self, x: float, y: float) -> tuple[float, float]:
        width, height = self._viewport
        return (
            min(max(x * width, 0.0), max(width - 1, 0.0)),
            min(max(y * height, 0.0), max(height - 1, 0.0)),
        )

    def _touch(self) -> None:
        self._quiet.touched()
        self._inputs += 1

    async def _perform(self, *sources: dict[str, Any]) -> None:
        self._touch()
        await self.session.send("input.performActions", {"context": self._context, "actions": list(sources)})

    async def tap(self, x: float, y: float, *, click_count: int = 1) -> None:
        """Move, then press and release (``click_count`` times: the browser makes the second a dblclick)."""
        actions = [_move(self._px(x, y))]
        for _ in range(max(1, click_count)):
            actions += [{"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]
        async with self._input:
            await self._perform(_mouse(actions))

    async def long_press(self, x: float, y: float, duration_ms: float) -> None:
        actions = [
            _move(self._px(x, y)),
            {"type": "pointerDown", "button": 0},
            {"type": "pause", "duration": max(0, round(duration_ms))},
            {"type": "pointerUp", "button": 0},
        ]
        async with self._input:
            await self._perform(_mouse(actions))

    async def pointer(self, action: PointerAction, x: float, y: float) -> None:
        """The left button pressed, moved (held) or released at (x, y) CSS pixels."""
        moves = [_move((x, y))]
        if action == "down":
            moves.append({"type": "pointerDown", "button": 0})
        elif action == "up":
            moves.append({"type": "pointerUp", "button": 0})
        await self._perform(_mouse(moves))

    async def type_text(self, text: str) -> None:
        """Every character as a key down and up (newline as Enter, tab as Tab), in one command."""
        if not text:
            return
        async with self._input:
            await self._perform(keyboard(text_actions(text)))

    async def enter_text(self, text: str) -> None:
        """Text into the focused element: one edit per run (``insertText``, which fires the trusted
        ``beforeinput`` and ``input`` a typed text fires) when the focus takes text and no key listener
        would see the keys (``argent.devices.firefox.listening``); newline and tab stay keys (Enter
        submits, Tab moves on). Otherwise key by key, as ``type_text``."""
        if not text:
            return
        if not await self._insertable():
            await self.type_text(text)
            return
        async with self._input:
            pending = ""
            for ch in text:
                if ch not in _KEYED:
                    pending += ch
                    continue
                await self._insert(pending)
                pending = ""
                await self._perform(keyboard(text_actions(ch)))
            await self._insert(pending)

    async def _insert(self, text: str) -> None:
        """``text`` in one edit where the editor takes it, else key by key."""
        if not text:
            return
        self._touch()
        inserted = await self.world.evaluate(f"document.execCommand('insertText', false, {json.dumps(text)})")
        if inserted is not True:
            await self._perform(keyboard(text_actions(text)))

    async def _insertable(self) -> bool:
        """The focus takes text and the page surely hears no key (any doubt: no)."""
        try:
            known = self._focus_editable
            if known is not None and known[0] == self._inputs:
                editable = known[1]
            else:
                editable = await self.world.evaluate("globalThis.__argent.editable()") is True
            if not editable:
                return False
            reply = await self.session.send(
                "script.evaluate",
                {
                    "expression": listening.QUERY,
                    "target": {"context": self._context},
                    "awaitPromise": False,
                    "resultOwnership": "none",
                },
            )
        except DeviceError:
            if not self.alive:
                raise
            return False
        return reply.get("result") == {"type": "boolean", "value": False}

    async def press_key(self, key: str) -> None:
        """A key or a chord (``Shift+Enter``): the modifiers down, the key down and up, the modifiers up."""
        actions = press_actions(key, f"Firefox ({self.id})")
        async with self._input:
            await self._perform(keyboard(actions))

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        width, height = self._viewport
        px, py = self._px(x, y)
        wheel = {
            "type": "scroll",
            "x": round(px),
            "y": round(py),
            "deltaX": round(dx * width),
            "deltaY": round(dy * height),
            "origin": "viewport",
        }
        async with self._input:
            await self._perform({**_WHEEL, "actions": [wheel]})
        with contextlib.suppress(DeviceError):
            await self.world.evaluate(_NEXT_FRAME, await_promise=True, timeout=2.0)

    async def set_input_files(self, x: float, y: float, paths: Sequence[str]) -> None:
        """``argent.devices.base.FileInputs``: the input at (x, y) found in argent's sandbox, its files
        set with ``input.setFiles`` (``input`` and ``change`` fire)."""
        px, py = self._px(x, y)
        find = (
            f"(x, y) => {{ const el = {AT_POINT}(x, y); if (!el) return null; "
            f"const found = ({FIND_INPUT}).call(el); "
            "return typeof found === 'string' ? found : [found, found.multiple, found.disabled]; }"
        )
        args = [{"type": "number", "value": px}, {"type": "number", "value": py}]
        async with self._input:
            self._touch()
            result = await self.world.call(find, args)
            kind, value = result.get("type"), result.get("value")
            if kind == "null":
                raise DeviceError(NOTHING_THERE)
            if kind == "string" or not isinstance(value, list) or len(value) != 3:
                raise DeviceError(
                    NOT_A_FILE_INPUT.format(what=value if kind == "string" else "an unknown node")
                )
            node, multiple, disabled = value
            if python_value(disabled) is True:
                raise DeviceError(DISABLED)
            if len(paths) > 1 and python_value(multiple) is not True:
                raise DeviceError(ONE_FILE_ONLY.format(count=len(paths)))
            shared = node.get("sharedId") if isinstance(node, dict) else None
            if not isinstance(shared, str):
                raise DeviceError(NOT_A_FILE_INPUT.format(what="an unknown node"))
            await self.session.send(
                "input.setFiles",
                {"context": self._context, "element": {"sharedId": shared}, "files": list(paths)},
            )

    # -- page signals (``argent.devices.base.PageSignals``) --

    async def wait_quiet(self, timeout: float, *, after: int | None = None) -> int | None:
        return await self._quiet.wait_quiet(timeout, after=after)

    async def _wait_page(
        self, remaining: float, frames: int, after: int | None, slack: int, paint: bool
    ) -> Any:
        page = self.world.evaluate(
            wait_expression(remaining, frames, after, slack, paint),
            await_promise=True,
            timeout=remaining + WAIT_SLACK_SECONDS,
        )
        return await self.frames.quiet(page, remaining, frames, after)

    async def hold_still(self, x: float, y: float, timeout: float) -> bool:
        px, py = self._px(x, y)
        ms = round(max(0.0, timeout) * 1000)
        value = await self.world.evaluate(
            f"globalThis.__argent.still({px!r}, {py!r}, {ms})",
            await_promise=True,
            timeout=max(0.0, timeout) + WAIT_SLACK_SECONDS,
        )
        return value is True

    async def wait_focus(self, x: float, y: float, timeout: float, grace: float) -> bool:
        px, py = self._px(x, y)
        deadline = time.monotonic() + max(0.0, timeout)
        value = await focus_wait(self.world, px, py, timeout, grace)
        if isinstance(value, dict) and isinstance(value.get("frame"), str):
            value = await self.frames.wait_focus(value["frame"], px, py, deadline - time.monotonic(), grace)
            self._focus_editable = (self._inputs, False)
            return isinstance(value, dict) and value.get("ok") is True
        if not isinstance(value, dict):
            return False
        self._focus_editable = (self._inputs, value.get("editable") is True)
        return value.get("ok") is True

    # -- form controls (``argent.devices.base.FormControls``) --

    async def focus_at(self, x: float, y: float) -> Focused:
        px, py = self._px(x, y)
        async with self._input:
            self._touch()
            value = await self.world.evaluate(f"globalThis.__argentForms.focusAt({px!r}, {py!r})")
            if isinstance(value, dict) and value.get("state") == "none" and (inner := self.frames.at(px, py)):
                world, fx, fy = inner
                value = await world.evaluate(f"globalThis.__argentForms.focusAt({fx!r}, {fy!r})")
        state = value.get("state") if isinstance(value, dict) else None
        return focused_from(state if isinstance(state, str) else "none")

    async def select_all(self) -> bool:
        async with self._input:
            self._touch()
            if await self.world.evaluate("globalThis.__argentForms.selectAll()") is True:
                return True
            world = await self.frames.focused()
            return world is not None and await world.evaluate("globalThis.__argentForms.selectAll()") is True

    async def choose(self, x: float, y: float, choices: tuple[str, ...], by_value: bool) -> Choice:
        px, py = self._px(x, y)
        tail = f"{json.dumps(list(choices))}, {'true' if by_value else 'false'}, {int(MAX_LISTED_OPTIONS)}"
        async with self._input:
            self._touch()
            value = await self.world.evaluate(f"globalThis.__argentForms.choose({px!r}, {py!r}, {tail})")
            if (
                isinstance(value, dict)
                and value.get("problem") == "not-select"
                and (inner := self.frames.at(px, py))
            ):
                world, fx, fy = inner
                value = await world.evaluate(f"globalThis.__argentForms.choose({fx!r}, {fy!r}, {tail})")
        choice = choice_from(value)
        if choice is None:
            raise DeviceError(f"Firefox ({self.id}): the page gave no answer to a select.")
        return choice

    # -- navigation --

    async def navigate(self, url: str, *, load_timeout: float = LOAD_TIMEOUT_SECONDS) -> None:
        """``browsingContext.navigate`` and wait (bounded) for the load; a failed load raises. The first
        navigation of a launched Firefox also waits (bounded) for the page to have the focus (``_focused``)."""
        if url[:5].lower() == "file:" and self._files is not None:
            try:
                allowed = await asyncio.to_thread(self._files, url)
            except Exception:
                allowed = False
            if not allowed:
                raise DeviceError(
                    f'Firefox ({self.id}) may not open "{url}": the file rule of this call refuses it.'
                )
        self._touch()
        params = {"context": self._context, "url": url, "wait": "complete"}
        try:
            try:
                await self._load(params, load_timeout)
            except BidiError as exc:
                if not await self._aborted_by_start_up(exc):
                    raise
                await self._load(params, load_timeout)
        except BidiError as exc:
            raise DeviceError(
                f'Firefox ({self.id}) could not open "{url}": {exc.error}: {_said(exc)}'
            ) from None
        self.frames.forget()
        await self._focused()
        await self.refresh_viewport()

    async def _load(self, params: dict[str, Any], timeout: float) -> None:
        try:
            with self.dialogs.leaving():
                await self.session.send("browsingContext.navigate", params, timeout=timeout)
        except BidiError:
            raise
        except DeviceError:
            if not self.alive:
                raise
            # The load took longer than its bound: the page is usable as it is.

    async def _aborted_by_start_up(self, exc: BidiError) -> bool:
        """Whether a navigation was cancelled by the browser's own first load (``startup``), now over:
        while Firefox still starts, a load it begins itself cancels one the device sent."""
        started = self._started
        if "NS_BINDING_ABORTED" not in str(exc) or started is None or started.done():
            return False
        with contextlib.suppress(DeviceError, TimeoutError):
            async with asyncio.timeout(SESSION_TIMEOUT_SECONDS):
                await asyncio.shield(started)
        return started.done() and not started.cancelled() and started.exception() is None

    # -- closing --

    async def close(self) -> None:
        """Disconnect; an owned Firefox is killed (whole process group) and its profile removed; an
        attached one's session ends (so another client may make one)."""
        if self._closed:
            return
        self._closed = True
        if self._watch is not None:
            self._watch.stop()
        if self._process is None and self._session is not None and self._session.alive:
            with contextlib.suppress(DeviceError):
                await self._session.send("session.end", timeout=2.0)
        await self._disconnect()
        if self._process is not None:
            await self._process.terminate()

    async def _disconnect(self) -> None:
        if self._session is not None:
            await self._session.close()
        await self._http.close()


async def _settles(future: asyncio.Future[Any]) -> bool:
    """Whether ``future`` is done within a moment (an answer already on its way)."""
    with contextlib.suppress(TimeoutError, asyncio.CancelledError, DeviceError):
        async with asyncio.timeout(SETTLE_SECONDS):
            await asyncio.shield(future)
    return future.done()


def _said(exc: BidiError) -> str:
    text = str(exc)
    return text.split(f"{exc.error}: ", 1)[1] if f"{exc.error}: " in text else text
