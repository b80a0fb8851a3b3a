"""``ChromiumDevice``: the ``Device`` protocol on one Chromium page over CDP.

Coordinates arrive as fractions of the viewport and become CSS pixels with the viewport the
device last read (on connect, after every navigation and with every UI-tree read). A device
the provider launched owns its process (``close`` kills it and removes its profile); a device
attached to an external ``chromium-cdp-<port>`` only closes its session.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from argent.devices.base import Choice, DeviceError, Focused, UiTree
from argent.devices.chromium import browser
from argent.devices.chromium.browser import fetch_json
from argent.devices.chromium.cdp import CdpSession, connect_session
from argent.devices.chromium.dialogs import DialogAnswers
from argent.devices.chromium.file_access import FileGuard
from argent.devices.chromium.file_inputs import set_input_files
from argent.devices.chromium.front import KeepInFront, bring_to_front
from argent.devices.chromium.keys import chord_events, press_events
from argent.devices.chromium.launcher import ChromiumProcess
from argent.devices.chromium.recorders import ConsoleLog, NetworkLog
from argent.devices.chromium.signals import PageSignals
from argent.devices.registry import CHROMIUM
from argent.devices.web.dialogs import BookedDialogs
from argent.devices.web.file_access import FileAccess
from argent.devices.web.forms import choice_from, focused_from
from argent.devices.web.handle import PAGE_INFO_EXPRESSION, BrowserHandle, page_info_of
from argent.devices.web.page import PointerAction, ScriptOutcome
from argent.devices.web.walker import FLOW_MAX_DEPTH, FLOW_MAX_NODES, parse_walk, walker_expression
from argent.devices.web.watchdog import BrowserWatch
from argent.limits import CDP_NETWORK_BUFFER_BYTES, CDP_NETWORK_RESOURCE_BUFFER_BYTES, MAX_LISTED_OPTIONS
from argent.utils.keys import Key, KeyNameError, char_key, parse_chord

ID_PREFIX = CHROMIUM.id_prefix
PLATFORM = CHROMIUM.platform
#: Bound of the wait for a navigation's load event (the page stays usable after it).
LOAD_TIMEOUT_SECONDS = 15.0
#: The error of a navigation that commits nothing (a download, a 204): no error page follows it.
ABORTED = "net::ERR_ABORTED"
#: Bound of finding the page target of a fresh or external Chromium.
TARGET_TIMEOUT_SECONDS = 10.0
SCREENSHOT_TIMEOUT_SECONDS = 20.0
WALK_TIMEOUT_SECONDS = 15.0
#: How much longer than a script's own time the CDP answer is awaited (V8 reports its stop).
TERMINATION_GRACE_SECONDS = 2.0
#: After a socket drop, how long to wait for an owned browser's exit status for the message.
EXIT_STATUS_WAIT_SECONDS = 1.0
#: How long a reap waits for the page session to take its death message (the exit status above, read).
DEATH_SETTLE_SECONDS = 5.0
#: The Network domain as each page session enables it, once: the quiet signals count its requests,
#: and the network recorder's request details read response bodies from these buffers.
NETWORK_BUFFERS = {
    "maxTotalBufferSize": CDP_NETWORK_BUFFER_BYTES,
    "maxResourceBufferSize": CDP_NETWORK_RESOURCE_BUFFER_BYTES,
}
#: Key events whose listeners make ``enter_text`` type key by key instead of inserting.
KEY_EVENTS = frozenset({"keydown", "keypress", "keyup"})
#: Characters typed as keys even into a plain text field (Enter submits, Tab moves the focus).
_KEYED = "\r\n\t"
_KEY_TARGETS_GROUP = "argent-key-targets"
#: The focused element (through open shadow roots), its composed ancestors, document and window:
#: where a listener that sees a typed key can sit. Evaluated in the page's own world, whose
#: listeners ``DOMDebugger.getEventListeners`` reports.
_KEY_TARGETS = """(() => {
  const out = [];
  let el = document.activeElement;
  for (let h = 0; el && h < 64; h++) {
    const sr = el.shadowRoot;
    if (sr && sr.activeElement) { el = sr.activeElement; continue; }
    break;
  }
  for (let h = 0; el && h < 4096; h++) {
    out.push(el);
    const p = el.parentNode;
    el = p && p.nodeType === 1 ? p : (p && p.host) || null;
  }
  out.push(document, window);
  return out;
})()"""


async def find_page_target(http: aiohttp.ClientSession, port: int, timeout: float) -> dict[str, Any]:
    """The primary page of the Chromium on ``port``: the first non-devtools ``page`` target."""
    url = f"http://127.0.0.1:{port}/json/list"
    deadline = time.monotonic() + timeout
    only_devtools = False
    while True:
        targets = await fetch_json(http, url, max(0.5, deadline - time.monotonic()))
        pages = [
            t
            for t in (targets if isinstance(targets, list) else [])
            if isinstance(t, dict)
            and t.get("type") == "page"
            and isinstance(t.get("webSocketDebuggerUrl"), str)
        ]
        usable = [t for t in pages if not str(t.get("url", "")).startswith("devtools://")]
        if usable:
            return usable[0]
        only_devtools = bool(pages)
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.05)
    if only_devtools:
        raise DeviceError(f"Chromium CDP on port {port} has only devtools:// pages. Open a page and retry.")
    raise DeviceError(f"Chromium CDP on port {port} reported no page targets.")


#: The CDP mouse event of each pointer action, and the buttons held after it.
_POINTER: dict[PointerAction, tuple[str, int]] = {
    "down": ("mousePressed", 1),
    "move": ("mouseMoved", 1),
    "up": ("mouseReleased", 0),
}


def _mouse_event(kind: str, px: tuple[float, float], **extra: Any) -> dict[str, Any]:
    return {"type": kind, "x": px[0], "y": px[1], **extra}


class ChromiumDevice(BrowserHandle, BookedDialogs):
    """One Chromium page driven over one CDP session."""

    def __init__(self, port: int, http: aiohttp.ClientSession, process: ChromiumProcess | None) -> None:
        self.port = port
        self._http = http
        self._process = process
        self._session: CdpSession | None = None
        #: A browser-level session held open for the device's life: it follows the browser's other page
        #: targets (the driven page stays in front, ``argent.devices.chromium.front``); for an owned
        #: browser it also holds the guards (Chromium keeps a download behaviour and a request
        #: interception only while the session that set it is attached).
        self._browser: CdpSession | None = None
        self._front = KeepInFront(lambda: (self._session, self._target_id))
        #: Whether the guards of an owned browser hold on ``_browser``.
        self._guarded = False
        #: Whether an owned browser still answers (``argent.devices.chromium.watchdog``).
        self._watch: BrowserWatch | None = None
        #: The close of a device that died on its own (its browser exited, crashed or hung).
        self._reaping: asyncio.Task[None] | None = None
        #: The DevTools ports no page of it may reach (its own, and the tool-server's other browsers').
        self._blocked_ports: frozenset[int] = frozenset()
        self._ws_url: str | None = None
        self._viewport: tuple[float, float] = (0.0, 0.0)
        self._input = asyncio.Lock()
        self._closed = False
        self._signals: PageSignals | None = None
        self._background: set[asyncio.Future[Any]] = set()
        #: The viewport argent pinned at DPR 1 (a device it launched), in pixels.
        self._pinned: tuple[int, int] | None = None
        self._target_id: str | None = None
        #: Which local files its pages may load (the rule of the call that last used it).
        self._files = FileGuard()
        #: What the page sessions of this device recorded (kept across tab switches).
        self.network = NetworkLog()
        self.console = ConsoleLog()
        #: The native dialogs of its pages, answered as they open (kept across tab switches).
        self.dialogs: DialogAnswers = DialogAnswers()

    # -- opening --

    @classmethod
    async def open(
        cls,
        port: int,
        *,
        process: ChromiumProcess | None = None,
        viewport: tuple[int, int] | None = None,
        target_timeout: float = TARGET_TIMEOUT_SECONDS,
    ) -> ChromiumDevice:
        """Connect to the page of the Chromium on ``port``; ``viewport`` pins its size (DPR 1)."""
        http = aiohttp.ClientSession()
        device = cls(port, http, process)
        try:
            target = await find_page_target(http, port, target_timeout)
            device._ws_url = str(target["webSocketDebuggerUrl"])
            device._target_id = str(target.get("id") or "")
            device._session = await connect_session(
                http, device._ws_url, label=device.id, describe_death=device._death_message
            )
            await device._connect_browser()
            if process is not None:
                await device._guard_browser()
            await device._prime(viewport)
            if process is not None and device._browser is not None:
                device._watch = BrowserWatch(
                    device._ping, lambda: device.alive, device._hung, stopped=process.stopped
                )
                device._watch.start()
        except BaseException:
            await device._disconnect()
            if process is not None:
                await process.terminate()
            raise
        return device

    async def _connect_browser(self) -> None:
        """The browser-level session (see ``_browser``), following the browser's page targets. An
        attached endpoint that names no browser endpoint (an embedder's) is driven without it."""
        try:
            version = await fetch_json(
                self._http, f"http://127.0.0.1:{self.port}/json/version", TARGET_TIMEOUT_SECONDS
            )
            ws_url = version.get("webSocketDebuggerUrl") if isinstance(version, dict) else None
            if not isinstance(ws_url, str):
                raise DeviceError(f"Chromium on port {self.port} names no browser endpoint in /json/version.")
            self._browser = await connect_session(
                self._http, ws_url, label=f"{self.id}-browser", describe_death=self._death_message
            )
            await self._front.watch(self._browser)
        except DeviceError:
            if self._process is not None:
                raise

    async def _guard_browser(self) -> None:
        """What no page of a browser the tool-server launched may do, held on its browser-level session:

        - save a download (a link, a script, a popup's): nothing a page serves lands on the server's disk
          (``$HOME/Downloads`` otherwise);
        - load anything from a DevTools port (its own, and those ``guard_ports`` adds: the other
          browsers of the tool-server): a page of that origin may open that DevTools WebSocket (Chromium
          lets its own origin in) and, speaking raw CDP, allow downloads into any directory, read any
          file or drive another token's browser, past every rule of the call. Every request to such a
          port (documents, frames, fetches, in every tab) fails as ``AccessDenied``.
        """
        browser = self._browser
        if browser is None:
            raise DeviceError(f"Chromium ({self.id}) has no browser-level DevTools session.")
        self._guarded = True
        await browser.send("Browser.setDownloadBehavior", {"behavior": "deny"})
        browser.on("Fetch.requestPaused", lambda params: self._devtools_request(browser, params))
        await self.guard_ports([self.port])

    async def guard_ports(self, ports: Iterable[int]) -> None:
        """No page of this (owned) browser loads anything from ``ports`` or its own DevTools port."""
        if self._browser is None or not self._guarded:
            return
        blocked = frozenset([self.port, *ports])
        if blocked == self._blocked_ports:
            return
        self._blocked_ports = blocked
        patterns = [{"urlPattern": f"*:{port}/*"} for port in sorted(blocked)]
        await self._browser.send("Fetch.enable", {"patterns": patterns})

    def _devtools_request(self, browser: CdpSession, params: dict[str, Any]) -> None:
        """A request the browser paused: to the DevTools port it fails, anything else goes on."""
        request_id = params.get("requestId")
        url = params.get("request", {}).get("url", "") if isinstance(params.get("request"), dict) else ""
        try:
            port = urlsplit(str(url)).port
        except ValueError:
            port = None
        if port in self._blocked_ports:
            answer = browser.send(
                "Fetch.failRequest", {"requestId": request_id, "errorReason": "AccessDenied"}
            )
        else:
            answer = browser.send("Fetch.continueRequest", {"requestId": request_id})
        task = asyncio.ensure_future(answer)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    async def _prime(self, viewport: tuple[int, int] | None) -> None:
        session = self.session
        await self._files.reapply(session)
        self.dialogs.attach(session)
        await session.send("Page.enable")
        await session.send("Inspector.enable")
        signals = PageSignals(session)
        await signals.start()
        self._signals = signals
        self.network.attach(session)
        # One Network.enable per page session, once both of its followers are subscribed.
        await session.send("Network.enable", dict(NETWORK_BUFFERS))
        await self.console.attach(session)
        with contextlib.suppress(DeviceError):
            await session.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        if viewport is not None:
            width, height = viewport
            await session.send(
                "Emulation.setDeviceMetricsOverride",
                {
                    "width": width,
                    "height": height,
                    "deviceScaleFactor": 1,
                    "mobile": False,
                    "screenWidth": width,
                    "screenHeight": height,
                },
            )
            self._pinned = (width, height)
        await self.refresh_viewport()
        await bring_to_front(session)
        await self._recheck_files()

    async def _recheck_files(self) -> None:
        """A local page this session did not watch load (a tab the page or ``Target.createTarget``
        opened, a tab that navigated while another was driven) loads again under the file rule:
        its document, frames and images are then checked like any other."""
        if self._files.rule is None:
            return
        href = await self.session.evaluate("location.href")
        if isinstance(href, str) and href[:5].lower() == "file:":
            with contextlib.suppress(DeviceError):
                await self.navigate(href)

    # -- identity --

    @property
    def id(self) -> str:
        return CHROMIUM.device_id(self.port)

    @property
    def platform(self) -> str:
        return PLATFORM

    @property
    def endpoint(self) -> str | None:
        """The page's DevTools websocket URL (``ARGENT_CDP_URL``)."""
        return self._ws_url

    @property
    def target_id(self) -> str | None:
        """The CDP target id of the page this device drives (its active tab)."""
        return self._target_id

    async def switch_target(self, target_id: str, ws_url: str) -> None:
        """Drive another page of this Chromium (a tab switch): a session on it replaces the current one."""
        async with self._input:
            fresh = await connect_session(
                self._http, ws_url, label=self.id, describe_death=self._death_message
            )
            old, self._session = self._session, fresh
            self._ws_url, self._target_id = ws_url, target_id
            if old is not None:
                await old.close()
            await self._prime(self._pinned)

    @property
    def file_access(self) -> FileAccess | None:
        """Which ``file:`` URLs its pages may load (None: any); enforced at the browser, so a page's
        own navigations, links, sub-resources and frames obey it too."""
        return self._files.rule

    async def use_file_access(self, rule: FileAccess | None) -> None:
        """Enforce ``rule`` from now on, on this page and the tabs it switches to (kept until the
        next rule); a CDP request only when interception turns on or off."""
        await self._files.apply(self.session, rule)

    @property
    def session(self) -> CdpSession:
        if self._session is None:
            raise DeviceError(f"Chromium ({self.id}) has no DevTools session.")
        return self._session

    @property
    def death(self) -> str | None:
        if self._session is None:
            return f"The DevTools session of Chromium ({self.id}) is closed."
        return self._session.death

    # -- the DevTools extras (``argent.devices.web.page.DevToolsPage``) --

    @property
    def devtools(self) -> CdpSession:
        return self.session

    async def page_targets(self) -> list[dict[str, Any]]:
        return await browser.page_targets(self.port)

    async def browser_call(
        self, method: str, params: dict[str, Any], *, destroys: str | None = None
    ) -> dict[str, Any]:
        return await browser.browser_call(self.port, method, params, destroys=destroys)

    async def _death_message(self, cause: str) -> str:
        """What the requests of a session that died on its own fail with; the device is reaped."""
        self._reap_soon()
        gone = self._gone_hint()
        if self._process is not None and "renderer" not in cause:
            deadline = time.monotonic() + EXIT_STATUS_WAIT_SECONDS
            while self._process.returncode() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            exited = self._process.exit_description()
            if exited is not None:
                return f"Chromium ({self.id}) {exited} — {cause}. {gone}"
        if "renderer" in cause:
            return f"Chromium ({self.id}) crashed — {cause}. {gone}"
        return f"Chromium ({self.id}) exited or crashed — {cause}. {gone}"

    def _gone_hint(self) -> str:
        if self._process is None:
            return "This tool-server no longer drives it: attach again, or boot a new device."
        return (
            "The device is gone (its processes killed, its profile removed): boot a new one (a flow's "
            "launch: boots one)."
        )

    async def _ping(self) -> None:
        """A question the browser process answers on its own thread, whatever its pages run."""
        if self._browser is None:
            raise DeviceError(f"Chromium ({self.id}) has no browser-level DevTools session.")
        await self._browser.send("Browser.getVersion")

    async def _hung(self, waited: float, bound: str) -> None:
        """The browser gave no answer for ``waited`` seconds, past ``bound`` (``BrowserWatch``):
        every session fails now with that message, and the device is reaped."""
        stopped = self._process is not None and self._process.stopped()
        why = " (its process is stopped)" if stopped else ""
        message = (
            f"Chromium ({self.id}) stopped answering: its browser process{why} gave no answer within "
            f"{waited:g}s ({bound}). {self._gone_hint()}"
        )
        for session in (self._session, self._browser):
            if session is not None:
                session.abandon(message)
        self._reap_soon()

    def _reap_soon(self) -> None:
        """Close the device (an owned browser: kill its group, reap it, remove its profile) in the
        background, once: nothing of a dead browser waits for someone to list or stop it."""
        if self._reaping is None and not self._closed:
            self._reaping = asyncio.ensure_future(self._reap())
            # Retrieved: a reap that fails leaves what ``close`` leaves, and the next list prunes it.
            self._reaping.add_done_callback(lambda task: None if task.cancelled() else task.exception())

    async def _reap(self) -> None:
        session = self._session
        if session is not None:  # its requests fail with the death message, not with "closed"
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(DEATH_SETTLE_SECONDS):
                    await session.settled()
        if self._process is not None:
            await self._process.terminate()  # first: a stopped browser answers no close handshake
        await self.close()

    # -- reading --

    async def refresh_viewport(self) -> tuple[float, float]:
        value = await self.session.evaluate("[window.innerWidth, window.innerHeight]")
        if isinstance(value, list) and len(value) == 2:
            width, height = (float(v) if isinstance(v, int | float) else 0.0 for v in value)
            if width <= 0 or height <= 0:
                raise DeviceError(
                    f"Chromium ({self.id}): the viewport reported zero dimensions (w={width:g}, h={height:g})."
                )
            self._viewport = (width, height)
        return self._viewport

    async def screenshot(self) -> bytes:
        reply = await self.session.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": False, "fromSurface": True},
            timeout=SCREENSHOT_TIMEOUT_SECONDS,
        )
        data = reply.get("data")
        if not isinstance(data, str) or not data:
            raise DeviceError(f"Chromium ({self.id}): Page.captureScreenshot returned no data.")
        return base64.b64decode(data)

    def capture_size(self) -> tuple[int, int] | None:
        """The pinned viewport (DPR 1: a clip shows a crop's very pixels); None when not pinned."""
        if self._pinned is None:
            return None
        return self._pinned

    async def capture(self, region: tuple[int, int, int, int] | None = None) -> bytes:
        """``Page.captureScreenshot`` encoded for speed (a snapshot compares bytes first, then
        pixels), of the whole viewport or of ``region`` (pixels = CSS px at the pinned DPR 1)."""
        params: dict[str, Any] = {
            "format": "png",
            "captureBeyondViewport": False,
            "fromSurface": True,
            "optimizeForSpeed": True,
        }
        if region is not None:
            if self._pinned is None:
                raise DeviceError(f"Chromium ({self.id}): a region capture needs the viewport argent pinned.")
            left, top, right, bottom = region
            params["clip"] = {"x": left, "y": top, "width": right - left, "height": bottom - top, "scale": 1}
        reply = await self.session.send("Page.captureScreenshot", params, timeout=SCREENSHOT_TIMEOUT_SECONDS)
        data = reply.get("data")
        if not isinstance(data, str) or not data:
            raise DeviceError(f"Chromium ({self.id}): Page.captureScreenshot returned no data.")
        return base64.b64decode(data)

    async def quiet_capture(self, region: tuple[int, int, int, int] | None, timeout: float) -> bytes:
        """``capture(region)`` of the page once quiet (at ``timeout``, as it is), one frame sooner
        than a quiet wait and a capture in turn."""
        return await self.signals.quiet_capture(lambda: self.capture(region), timeout)

    async def ui_tree(
        self, *, max_depth: int = FLOW_MAX_DEPTH, max_nodes: int = FLOW_MAX_NODES, css: Sequence[str] = ()
    ) -> UiTree:
        """One walk, in argent's isolated world (the walker compiled once per document, out of
        the page's reach); in the page's own world when that world cannot be had. ``css``: the
        selectors whose matches the walk marks."""
        payload: Any = None
        walked = False
        if self._signals is not None:
            try:
                payload = await self._signals.walk(
                    max_depth, max_nodes, keep=False, timeout=WALK_TIMEOUT_SECONDS, css=css
                )
                walked = True
            except DeviceError:
                if not self.session.alive:
                    raise
        if not walked:
            try:
                payload = await self.session.evaluate(
                    walker_expression(max_depth, max_nodes, css), timeout=WALK_TIMEOUT_SECONDS
                )
            except DeviceError as exc:
                if not self.session.alive:
                    raise
                raise DeviceError(f"Chromium ({self.id}) describe failed: {exc}") from None
        tree, viewport = parse_walk(payload, self.id, css)
        if viewport[0] > 0 and viewport[1] > 0:
            self._viewport = viewport
        return tree

    async def page_info(self) -> dict[str, str]:
        """The page's title and URL (for list-devices); empty strings when unreadable."""
        try:
            value = await self.session.evaluate(PAGE_INFO_EXPRESSION, timeout=2.0)
        except DeviceError:
            value = None
        return page_info_of(value)

    async def run_script(self, expression: str, *, timeout: float) -> ScriptOutcome:
        """``Runtime.evaluate`` in the active tab, never leaving the page busy: V8 stops a script past
        ``timeout`` (its own timeout), and a call left unanswered past that (a busy microtask chain)
        terminates the page's execution, so the device's other tools work again."""
        params = {
            "expression": expression,
            "returnByValue": True,
            "awaitPromise": True,
            "timeout": timeout * 1000,
        }
        started = time.monotonic()
        try:
            reply = await self.session.send(
                "Runtime.evaluate", params, timeout=timeout + TERMINATION_GRACE_SECONDS
            )
        except DeviceError:
            # V8's own stop answers "Internal error"; no answer at all is the CDP timeout: both come at the limit
            if not self.alive or time.monotonic() - started < timeout:
                raise
            with contextlib.suppress(DeviceError):
                await self.session.send("Runtime.terminateExecution", timeout=TERMINATION_GRACE_SECONDS)
            return ScriptOutcome(timed_out=True)
        details = reply.get("exceptionDetails")
        if isinstance(details, dict):
            exception = details.get("exception") if isinstance(details.get("exception"), dict) else {}
            assert isinstance(exception, dict)
            thrown = (
                exception.get("description") or details.get("text") or "Script evaluation threw an exception"
            )
            return ScriptOutcome(thrown=str(thrown))
        result = reply.get("result")
        return ScriptOutcome(value=result.get("value") if isinstance(result, dict) else None)

    async def response_body(self, request_id: str) -> tuple[str, bool] | None:
        """The body Chromium still holds for the request (None once evicted or never had)."""
        try:
            out = await self.session.send("Network.getResponseBody", {"requestId": request_id})
        except DeviceError:
            return None
        body = out.get("body")
        return (body, out.get("base64Encoded") is True) if isinstance(body, str) else None

    # -- input --

    async def pointer(self, action: PointerAction, x: float, y: float) -> None:
        """The left button pressed, moved (held) or released at (x, y) CSS pixels."""
        kind, buttons = _POINTER[action]
        params: dict[str, Any] = {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons}
        if kind != "mouseMoved":
            params["clickCount"] = 1
        self._touch()
        await self.session.send("Input.dispatchMouseEvent", params)

    def _px(self, x: float, y: float) -> tuple[float, float]:
        width, height = self._viewport
        return (min(max(x * width, 0.0), width), min(max(y * height, 0.0), height))

    def _touch(self) -> None:
        if self._signals is not None:
            self._signals.touched()

    async def _mouse(self, kind: str, px: tuple[float, float], **extra: Any) -> None:
        self._touch()
        await self.session.send("Input.dispatchMouseEvent", _mouse_event(kind, px, **extra))

    async def tap(self, x: float, y: float, *, click_count: int = 1) -> None:
        """Move, then press and release (``click_count`` times: the escalating clickCount makes the
        second click a dblclick), written in one go: the page gets them in order, as if each had
        been awaited, in one round trip."""
        px = self._px(x, y)
        events = [_mouse_event("mouseMoved", px, button="none", buttons=0)]
        for n in range(1, max(1, click_count) + 1):
            events.append(_mouse_event("mousePressed", px, button="left", buttons=1, clickCount=n))
            events.append(_mouse_event("mouseReleased", px, button="left", buttons=0, clickCount=n))
        async with self._input:
            self._touch()
            await self.session.send_in_order("Input.dispatchMouseEvent", events)

    async def long_press(self, x: float, y: float, duration_ms: float) -> None:
        px = self._px(x, y)
        async with self._input:
            await self._mouse("mouseMoved", px, button="none", buttons=0)
            await self._mouse("mousePressed", px, button="left", buttons=1, clickCount=1)
            try:
                await asyncio.sleep(max(0.0, duration_ms) / 1000.0)
            finally:
                if self.alive:
                    await self._mouse("mouseReleased", px, button="left", buttons=0, clickCount=1)

    async def _key(self, key: Key) -> None:
        """Key down and up in one round trip (in order, as if each had been awaited)."""
        self._touch()
        await self.session.send_in_order("Input.dispatchKeyEvent", press_events(key))

    async def type_text(self, text: str) -> None:
        """Printable ASCII as real key events (keydown/keypress/input/keyup), newline as Enter, tab
        as Tab; runs of other characters through ``Input.insertText``."""
        async with self._input:
            pending = ""
            for ch in text:
                key = char_key(ch)
                if key is None:
                    pending += ch
                    continue
                if pending:
                    await self._insert(pending)
                    pending = ""
                await self._key(key)
            if pending:
                await self._insert(pending)

    async def _insert(self, text: str) -> None:
        self._touch()
        await self.session.send("Input.insertText", {"text": text})

    async def press_key(self, key: str) -> None:
        """A key or a chord (``Shift+Enter``): the modifiers down, the key down and up, the modifiers
        up, as a person presses them, in one round trip."""
        try:
            chord = parse_chord(key)
        except KeyNameError as exc:
            raise DeviceError(str(exc)) from None
        async with self._input:
            self._touch()
            await self.session.send_in_order("Input.dispatchKeyEvent", chord_events(chord))

    async def set_input_files(self, x: float, y: float, paths: Sequence[str]) -> None:
        """``argent.devices.base.FileInputs`` (see ``argent.devices.chromium.file_inputs``)."""
        px, py = self._px(x, y)
        async with self._input:
            self._touch()
            await set_input_files(self.session, px, py, paths)

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        width, height = self._viewport
        px = self._px(x, y)
        async with self._input:
            await self._mouse("mouseMoved", px, button="none", buttons=0)
            await self._mouse(
                "mouseWheel", px, button="none", buttons=0, deltaX=dx * width, deltaY=dy * height
            )
        await self._next_frame()

    async def _next_frame(self) -> None:
        """Let the page render once (a wheel scroll lands in the next frame)."""
        with contextlib.suppress(DeviceError):
            await self.session.evaluate(
                "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))",
                await_promise=True,
                timeout=2.0,
            )

    # -- page signals (``argent.devices.base.PageSignals``) --

    @property
    def signals(self) -> PageSignals:
        if self._signals is None:
            raise DeviceError(f"Chromium ({self.id}) has no DevTools session.")
        return self._signals

    async def wait_quiet(self, timeout: float, *, after: int | None = None) -> int | None:
        return await self.signals.wait_quiet(timeout, after=after)

    async def hold_still(self, x: float, y: float, timeout: float) -> bool:
        px, py = self._px(x, y)
        return await self.signals.hold_still(px, py, timeout)

    async def wait_focus(self, x: float, y: float, timeout: float, grace: float) -> bool:
        px, py = self._px(x, y)
        return await self.signals.wait_focus(px, py, timeout, grace)

    async def kept_tree(
        self, *, max_depth: int = FLOW_MAX_DEPTH, max_nodes: int = FLOW_MAX_NODES, css: Sequence[str] = ()
    ) -> UiTree:
        payload = await self.signals.walk(
            max_depth, max_nodes, keep=True, timeout=WALK_TIMEOUT_SECONDS, css=css
        )
        return self._kept(payload, css)

    async def reveal(
        self,
        ref: int,
        *,
        max_depth: int = FLOW_MAX_DEPTH,
        max_nodes: int = FLOW_MAX_NODES,
        css: Sequence[str] = (),
    ) -> UiTree | None:
        self._touch()
        payload = await self.signals.reveal(ref, max_depth, max_nodes, timeout=WALK_TIMEOUT_SECONDS, css=css)
        return None if payload is None else self._kept(payload, css)

    def _kept(self, payload: Any, css: Sequence[str]) -> UiTree:
        tree, viewport = parse_walk(payload, self.id, css)
        if viewport[0] > 0 and viewport[1] > 0:
            self._viewport = viewport
        return tree

    # -- form controls (``argent.devices.base.FormControls``) --

    async def focus_at(self, x: float, y: float) -> Focused:
        px, py = self._px(x, y)
        async with self._input:
            self._touch()
            state, _ = await self.signals.focus_at(px, py)
        return focused_from(state)

    async def select_all(self) -> bool:
        async with self._input:
            self._touch()
            return await self.signals.select_all()

    async def choose(self, x: float, y: float, choices: tuple[str, ...], by_value: bool) -> Choice:
        px, py = self._px(x, y)
        async with self._input:
            self._touch()
            value = await self.signals.choose(px, py, choices, by_value, MAX_LISTED_OPTIONS)
        choice = choice_from(value)
        if choice is None:
            raise DeviceError(f"Chromium ({self.id}): the page gave no answer to a select.")
        return choice

    async def enter_text(self, text: str) -> None:
        """Text as one ``Input.insertText`` per run when the focused element takes text and no key
        listener would see the keys; newline and tab stay keys (Enter submits, Tab moves on).
        Otherwise key by key, as ``type_text``."""
        if not await self._insertable():
            await self.type_text(text)
            return
        async with self._input:
            pending = ""
            for ch in text:
                if ch not in _KEYED:
                    pending += ch
                    continue
                if pending:
                    await self._insert(pending)
                    pending = ""
                key = char_key(ch)
                if key is not None:
                    await self._key(key)
            if pending:
                await self._insert(pending)

    async def _insertable(self) -> bool:
        """The focused element takes text and nothing on its way listens for keys (any doubt: no)."""
        try:
            if not await self.signals.editable():
                return False
            return not await self._key_listeners()
        except DeviceError:
            if not self.session.alive:
                raise
            return False

    def _background_done(self, task: asyncio.Future[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a release that failed changes nothing

    async def _key_listeners(self) -> bool:
        session = self.session
        try:
            reply = await session.send(
                "Runtime.evaluate", {"expression": _KEY_TARGETS, "objectGroup": _KEY_TARGETS_GROUP}
            )
            array = (reply.get("result") or {}).get("objectId")
            if reply.get("exceptionDetails") or not isinstance(array, str):
                return True
            props = await session.send("Runtime.getProperties", {"objectId": array, "ownProperties": True})
            ids = [
                p["value"]["objectId"]
                for p in props.get("result") or []
                if isinstance(p, dict)
                and str(p.get("name", "")).isdigit()
                and isinstance((p.get("value") or {}).get("objectId"), str)
            ]
            found = await asyncio.gather(
                *(session.send("DOMDebugger.getEventListeners", {"objectId": oid}) for oid in ids)
            )
        finally:
            # Released in the background: nothing waits for it, the next request queues behind it.
            release = asyncio.ensure_future(
                session.send("Runtime.releaseObjectGroup", {"objectGroup": _KEY_TARGETS_GROUP})
            )
            self._background.add(release)
            release.add_done_callback(self._background_done)
        return any(
            isinstance(listener, dict) and listener.get("type") in KEY_EVENTS
            for reply in found
            for listener in reply.get("listeners") or []
        )

    # -- navigation --

    async def navigate(self, url: str, *, load_timeout: float = LOAD_TIMEOUT_SECONDS) -> None:
        """``Page.navigate`` and wait (bounded) for the load event; a failed load raises once its
        error page is in (Chromium commits one after answering: a capture before it finds the page
        between two documents, "Not attached to an active page"). An aborted load (a download, a
        204) leaves the page as it was and raises at once."""
        session = self.session
        self._touch()
        loaded = session.expect("Page.loadEventFired")
        try:
            with self.dialogs.leaving():
                reply = await session.send("Page.navigate", {"url": url})
            error = reply.get("errorText")
            aborted = bool(error) and (reply.get("isDownload") or error == ABORTED)
            # A new document, or an error page (a same-document navigation has no load event).
            if reply.get("loaderId") and not aborted:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(load_timeout):
                        await loaded
            if error:
                raise DeviceError(f'Chromium ({self.id}) could not open "{url}": {error}')
        finally:
            loaded.cancel()
            if loaded.done() and not loaded.cancelled():
                loaded.exception()  # retrieved: a death is reported by the request that hit it
        await self.refresh_viewport()

    # -- closing --

    async def close(self) -> None:
        """Disconnect; an owned Chromium is killed (whole process group) and its profile removed."""
        if self._closed:
            return
        self._closed = True
        await self._disconnect()
        if self._process is not None:
            await self._process.terminate()

    async def _disconnect(self) -> None:
        if self._watch is not None:
            self._watch.stop()
        if self._browser is not None:
            await self._browser.close()
        if self._session is not None:
            await self._session.close()
        await self._http.close()
