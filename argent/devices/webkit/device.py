"""``WebKitDevice``: the ``Device`` protocol on one MiniBrowser window over classic W3C WebDriver.

Reads go through ``execute/sync`` with argent's scripts in the page (``argent.devices.webkit.world``),
input through the Actions API (a tap, a chord, a wheel turn: one ``POST /actions`` each), pictures
through ``GET /screenshot`` (the viewport). Coordinates arrive as fractions of the viewport and
become CSS pixels with the viewport the device last read. A device the provider launched owns its
driver (``close`` ends the session and kills the driver's process group, MiniBrowser and WebKit's
helpers with it); one attached to an outside ``webkit-wd-<port>`` only ends the session it opened.

What WebDriver cannot tell argent: the page's requests (a quiet page is one whose DOM and frames
are still; no network log), its console, and whether an open dialog is an ``alert`` or a
``confirm`` (both are reported as ``confirm`` and dismissed unless a flow's ``dialogs:`` says
otherwise — for an alert, its only button).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any

import aiohttp

from argent.devices.base import Choice, DeviceError, Focused, UiTree
from argent.devices.registry import WEBKIT
from argent.devices.web.dialogs import BookedDialogs, DialogBook
from argent.devices.web.file_access import FileAccess
from argent.devices.web.file_inputs import (
    AT_POINT,
    DISABLED,
    FIND_INPUT,
    NOT_A_FILE_INPUT,
    NOTHING_THERE,
    ONE_FILE_ONLY,
    STATE,
)
from argent.devices.web.forms import choice_from, focused_from
from argent.devices.web.handle import PAGE_INFO_EXPRESSION, BrowserHandle, page_info_of
from argent.devices.web.launching import VIEWPORT_HEIGHT, VIEWPORT_WIDTH
from argent.devices.web.page import PointerAction, ScriptOutcome
from argent.devices.web.quiet import WAIT_SLACK_SECONDS, PageQuiet, wait_expression
from argent.devices.web.recorders import ConsoleRing, NetworkRing
from argent.devices.web.walker import FLOW_MAX_DEPTH, FLOW_MAX_NODES, parse_walk, walk_expression
from argent.devices.web.webdriver_keys import keyboard, press_actions, text_actions
from argent.devices.webkit import pointers
from argent.devices.webkit.launcher import WebKitProcess, find_minibrowser
from argent.devices.webkit.webdriver import (
    ALERT_OPEN,
    ELEMENT_KEY,
    LOAD_TIMEOUT,
    SCRIPT_TIMEOUT,
    WebDriverError,
    WebDriverSession,
    new_session,
)
from argent.devices.webkit.world import PageWorld
from argent.limits import (
    MAX_LISTED_OPTIONS,
    WEBDRIVER_COMMAND_TIMEOUT_SECONDS,
    WEBKIT_PAGE_LOAD_TIMEOUT_SECONDS,
    WEBKIT_RESIZE_WAIT_SECONDS,
)

PLATFORM = WEBKIT.platform
#: Bound of one walk of the page.
WALK_TIMEOUT_SECONDS = 15.0
#: How many times the window is resized until its viewport is exactly the wanted size.
SIZE_ATTEMPTS = 4
#: The viewport's size once it differs from (arguments 0, 1) — a resize event, a frame after it —
#: or as it is after (argument 2) ms.
_RESIZED = """
const [w, h, ms] = arguments;
return new Promise((done) => {
  const read = () => done([window.innerWidth, window.innerHeight]);
  if (window.innerWidth !== w || window.innerHeight !== h) return read();
  const late = setTimeout(read, ms);
  window.addEventListener("resize", () => { clearTimeout(late); requestAnimationFrame(read); }, { once: true });
});
"""
#: What WebKit's ``execute/sync`` may run before WebDriver stops waiting for it (argent's own
#: waits are bounded below it; ``run_script`` sets its own).
SCRIPT_TIMEOUT_MS = 120_000
#: Dialogs a navigation answers (a page asking before it unloads) before it goes on regardless.
NAVIGATE_DIALOGS = 3
#: How long a dying session's driver gets to report its exit status for the message.
EXIT_STATUS_WAIT_SECONDS = 1.0


def capabilities() -> dict[str, Any]:
    """What a new session asks for: MiniBrowser in automation mode; dialogs left open for argent to
    answer (``ignore``), so a dialog is never answered behind a flow's back."""
    options: dict[str, Any] = {"args": ["--automation"]}
    binary = find_minibrowser()
    if binary is not None:
        options["binary"] = binary
    return {"webkitgtk:browserOptions": options, "unhandledPromptBehavior": "ignore"}


class WebKitDevice(BrowserHandle, BookedDialogs):
    """One MiniBrowser window driven over one WebDriver session."""

    def __init__(self, port: int, http: aiohttp.ClientSession, process: WebKitProcess | None) -> None:
        self.port = port
        self._http = http
        self._process: WebKitProcess | None = process
        self._session: WebDriverSession | None = None
        self._world: PageWorld | None = None
        self._viewport: tuple[float, float] = (0.0, 0.0)
        self._pinned: tuple[int, int] | None = None
        self._input = asyncio.Lock()
        self._closed = False
        self._quiet = PageQuiet(self._wait_page)
        self._files: FileAccess | None = None
        self.dialogs = DialogBook()
        #: Classic WebDriver reports neither: these stay empty (the tools that read them refuse WebKit).
        self.network = NetworkRing()
        self.console = ConsoleRing()

    # -- opening --

    @classmethod
    async def open(
        cls,
        port: int,
        *,
        process: WebKitProcess | None = None,
        viewport: tuple[int, int] | None = (VIEWPORT_WIDTH, VIEWPORT_HEIGHT),
    ) -> WebKitDevice:
        """A new session on the driver at ``port`` (MiniBrowser starts), its viewport sized."""
        http = aiohttp.ClientSession()
        device = cls(port, http, process)
        try:
            session = await new_session(
                http,
                f"http://127.0.0.1:{port}",
                capabilities(),
                label=device.id,
                describe_death=device._death_message,
                stalled=device._stalled,
            )
            session.on_alert = device._on_alert
            device._session = session
            device._world = PageWorld(session)
            await session.set_timeouts(
                script_ms=SCRIPT_TIMEOUT_MS, page_load_ms=round(WEBKIT_PAGE_LOAD_TIMEOUT_SECONDS * 1000)
            )
            if viewport is not None:
                await device._size_window(*viewport)
            await device.refresh_viewport()
        except BaseException:
            await device._disconnect()
            if process is not None:
                await process.terminate()
            raise
        return device

    async def _size_window(self, width: int, height: int) -> None:
        """Resize the window until its viewport is ``width`` x ``height`` CSS px (MiniBrowser's
        toolbar takes some of the window's height)."""
        outer = (width, height)
        inner = await self._inner_size()
        for _ in range(SIZE_ATTEMPTS):
            await self.session.set_window_size(*outer)
            inner = await self._inner_size(changed_from=inner)
            if inner == (width, height):
                self._pinned = (width, height)
                return
            outer = (outer[0] + width - inner[0], outer[1] + height - inner[1])
        raise DeviceError(
            f"WebKit ({self.id}): the viewport could not be sized to {width}x{height} (it is "
            f"{inner[0]}x{inner[1]} in a {outer[0]}x{outer[1]} window) — the X screen may be too small."
        )

    async def _inner_size(self, changed_from: tuple[int, int] | None = None) -> tuple[int, int]:
        """The viewport's size; with ``changed_from`` (the size before a window resize), once the
        resize reached the page: GTK applies it after the command returns, so a read at once can
        still see the old size (seen on a loaded machine). Bounded by WEBKIT_RESIZE_WAIT_SECONDS
        (a resize to the size the window already has fires no event)."""
        if changed_from is None:
            value = await self.session.execute("return [window.innerWidth, window.innerHeight];")
        else:
            value = await self.session.execute(
                _RESIZED, [changed_from[0], changed_from[1], round(WEBKIT_RESIZE_WAIT_SECONDS * 1000)]
            )
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
            return int(value[0]), int(value[1])
        return 0, 0

    async def _stalled(self) -> str | None:
        """Why a new session will never come: the driver exited."""
        if self._process is None:
            return None
        exited = self._process.exit_description()
        if exited is None:
            return None
        return f"WebKitWebDriver {exited}.{_stderr(self._process)}"

    # -- identity --

    @property
    def id(self) -> str:
        return WEBKIT.device_id(self.port)

    @property
    def platform(self) -> str:
        return PLATFORM

    @property
    def endpoint(self) -> str | None:
        """The driver's URL (``ARGENT_WEBDRIVER_URL``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def endpoint_session(self) -> str | None:
        """The session's id on the driver (``ARGENT_WEBDRIVER_SESSION``)."""
        return self._session.session_id if self._session is not None else None

    @property
    def profile_dir(self) -> str | None:
        return self._process.home if self._process is not None else None

    @property
    def death(self) -> str | None:
        if self._session is None:
            return f"The WebDriver session of WebKit ({self.id}) is closed."
        if self._session.death is None and self._process is not None:
            exited = self._process.exit_description()
            if exited is not None:
                return f"WebKit ({self.id}): WebKitWebDriver {exited}. Stop the device and boot a new one."
        return self._session.death

    @property
    def session(self) -> WebDriverSession:
        if self._session is None:
            raise DeviceError(f"WebKit ({self.id}) has no WebDriver session.")
        if self._process is not None and self._session.alive and self._process.returncode() is not None:
            exited = self._process.exit_description()
            raise DeviceError(
                f"WebKit ({self.id}): WebKitWebDriver {exited}. Stop the device and boot a new one."
            )
        return self._session

    @property
    def world(self) -> PageWorld:
        if self._world is None:
            raise DeviceError(f"WebKit ({self.id}) has no WebDriver session.")
        return self._world

    async def _death_message(self, cause: str) -> str:
        if self._process is not None:
            deadline = asyncio.get_running_loop().time() + EXIT_STATUS_WAIT_SECONDS
            while self._process.returncode() is None and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.02)
            exited = self._process.exit_description()
            if exited is not None:
                said = f" — {cause}" if cause else ""
                return (
                    f"WebKit ({self.id}): WebKitWebDriver {exited}{said}. The device is gone: stop it and boot a "
                    f"new one.{_stderr(self._process)}"
                )
        said = f" — {cause}" if cause else ""
        return f"WebKit ({self.id}): the WebDriver session ended (MiniBrowser closed or crashed){said}. Stop the device and boot a new one."

    # -- files --

    @property
    def file_access(self) -> FileAccess | None:
        return self._files

    async def use_file_access(self, rule: FileAccess | None) -> None:
        """Which ``file:`` URLs argent opens (``navigate``); WebDriver cannot stop a page's own
        loads, so a page's links and frames are not checked (the docs say so)."""
        self._files = rule

    # -- dialogs (``argent.devices.base.NativeDialogs``) --

    async def _on_alert(self, message: str, *, leaving: bool = False) -> None:
        """A dialog refused a command (or input opened it): answer it as the book says. WebDriver
        names no kind and cannot read a prompt's proposed text: one that opened as argent navigated
        away is a ``beforeunload``; one that takes the text a flow's ``dialogs:`` gives is a prompt;
        any other is reported as a confirm (dismissing an alert is what accepting it does, and a
        prompt accepted without a text keeps the one it proposes)."""
        session = self.session
        answer = self.dialogs.current
        kind = "confirm"
        if leaving:
            kind = "beforeunload"
        elif answer is not None and answer.accept and answer.text is not None:
            kind = "prompt" if await session.send_alert_text(answer.text) else "confirm"
        reply = self.dialogs.opening(kind, message, None)
        await session.answer_alert(reply.accept)

    # -- reading --

    async def refresh_viewport(self) -> tuple[float, float]:
        width, height = await self._inner_size()
        if width <= 0 or height <= 0:
            raise DeviceError(
                f"WebKit ({self.id}): the viewport reported zero dimensions (w={width}, h={height})."
            )
        self._viewport = (float(width), float(height))
        return self._viewport

    async def screenshot(self) -> bytes:
        return await self.session.screenshot()

    def capture_size(self) -> tuple[int, int] | None:
        """None: WebDriver captures the viewport or one element, never a region (crop a capture)."""
        return None

    async def capture(self, region: tuple[int, int, int, int] | None = None) -> bytes:
        if region is not None:
            raise DeviceError(f"WebKit ({self.id}): a region capture is not supported; crop a whole capture.")
        return await self.session.screenshot()

    async def quiet_capture(self, region: tuple[int, int, int, int] | None, timeout: float) -> bytes:
        return await self._quiet.quiet_capture(lambda: self.capture(region), timeout)

    async def _walk(self, max_depth: int, max_nodes: int, keep: bool, css: Sequence[str]) -> Any:
        return await self.world.evaluate(
            walk_expression(max_depth, max_nodes, keep, css), timeout=WALK_TIMEOUT_SECONDS
        )

    def _tree(self, payload: Any, css: Sequence[str]) -> UiTree:
        tree, viewport = parse_walk(payload, self.id, css)
        if viewport[0] > 0 and viewport[1] > 0:
            self._viewport = viewport
        return tree

    async def ui_tree(
        self, *, max_depth: int = FLOW_MAX_DEPTH, max_nodes: int = FLOW_MAX_NODES, css: Sequence[str] = ()
    ) -> UiTree:
        return self._tree(await self._walk(max_depth, max_nodes, False, css), css)

    async def kept_tree(
        self, *, max_depth: int = FLOW_MAX_DEPTH, max_nodes: int = FLOW_MAX_NODES, css: Sequence[str] = ()
    ) -> UiTree:
        return self._tree(await self._walk(max_depth, max_nodes, True, css), css)

    async def reveal(
        self,
        ref: int,
        *,
        max_depth: int = FLOW_MAX_DEPTH,
        max_nodes: int = FLOW_MAX_NODES,
        css: Sequence[str] = (),
    ) -> UiTree | None:
        self._touch()
        walk = walk_expression(max_depth, max_nodes, True, css)
        payload = await self.world.evaluate(
            f"globalThis.__argent.reveal({int(ref)}) ? {walk} : null", timeout=WALK_TIMEOUT_SECONDS
        )
        return None if payload is None else self._tree(payload, css)

    async def page_info(self) -> dict[str, str]:
        try:
            value = await self.session.execute(f"return {PAGE_INFO_EXPRESSION};", timeout=2.0)
        except DeviceError:
            value = None
        return page_info_of(value)

    async def run_script(self, expression: str, *, timeout: float) -> ScriptOutcome:
        """``expression`` in the page's global scope (indirect eval; a promise awaited), its value by
        value. WebKit stops waiting at ``timeout`` (the page's script may run on: WebDriver cannot
        stop it)."""
        session = self.session
        body = "return Promise.resolve((0, eval)(arguments[0]));"
        try:
            await session.set_timeouts(script_ms=max(1, round(timeout * 1000)), page_load_ms=_page_load_ms())
            try:
                value = await session.command(
                    "POST",
                    "/execute/sync",
                    {"script": body, "args": [expression]},
                    timeout=timeout + WAIT_SLACK_SECONDS,
                    what="execute",
                )
            finally:
                if session.alive:
                    with contextlib.suppress(DeviceError):
                        await session.set_timeouts(script_ms=SCRIPT_TIMEOUT_MS, page_load_ms=_page_load_ms())
        except WebDriverError as exc:
            if exc.error in (SCRIPT_TIMEOUT, "timeout"):
                return ScriptOutcome(timed_out=True)
            if exc.error == "javascript error":
                said = str(exc).split("javascript error: ", 1)[-1]
                return ScriptOutcome(thrown=said or "the script threw an exception")
            raise
        return ScriptOutcome(value=value)

    async def response_body(self, request_id: str) -> tuple[str, bool] | None:
        return None

    # -- input --

    def _px(self, x: float, y: float) -> tuple[int, int]:
        width, height = self._viewport
        px = min(max(x * width, 0.0), max(0.0, width - 1))
        py = min(max(y * height, 0.0), max(0.0, height - 1))
        return round(px), round(py)

    def _touch(self) -> None:
        self._quiet.touched()

    async def _perform(self, sources: list[dict[str, Any]], *, timeout: float | None = None) -> None:
        self._touch()
        await self.session.perform(sources, timeout=timeout)
        await self._answer_open_dialog()

    async def _answer_open_dialog(self) -> None:
        """Answer a dialog the input just opened (WebDriver says nothing of it until a command
        meets it), so the step that opened it is the one that reports it."""
        text = await self.session.alert_text()
        if text is not None:
            await self._on_alert(text)

    async def pointer(self, action: PointerAction, x: float, y: float) -> None:
        """The left button pressed, moved (held) or released at (x, y) CSS pixels (WebDriver keeps
        the button held between calls)."""
        px, py = round(x), round(y)
        steps: list[dict[str, Any]] = [pointers.move_to(px, py)]
        if action == "down":
            steps.append({"type": "pointerDown", "button": 0})
        elif action == "up":
            steps.append({"type": "pointerUp", "button": 0})
        async with self._input:
            await self._perform([pointers.mouse(steps)])

    async def tap(self, x: float, y: float, *, click_count: int = 1) -> None:
        px, py = self._px(x, y)
        async with self._input:
            await self._perform([pointers.mouse(pointers.clicks(px, py, click_count))])

    async def long_press(self, x: float, y: float, duration_ms: float) -> None:
        px, py = self._px(x, y)
        async with self._input:
            await self._perform(
                [pointers.mouse(pointers.hold(px, py, duration_ms))],
                timeout=max(0.0, duration_ms) / 1000 + WEBDRIVER_COMMAND_TIMEOUT_SECONDS,
            )

    async def type_text(self, text: str) -> None:
        if not text:
            return
        async with self._input:
            await self._perform([keyboard(text_actions(text))])

    async def enter_text(self, text: str) -> None:
        """Key by key: WebDriver has no insert, and key actions are one request for the whole text."""
        await self.type_text(text)

    async def press_key(self, key: str) -> None:
        actions = press_actions(key, f"WebKit ({self.id})")
        async with self._input:
            await self._perform([keyboard(actions)])

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        width, height = self._viewport
        px, py = self._px(x, y)
        async with self._input:
            await self._perform(
                [pointers.wheel(pointers.scroll_by(px, py, round(dx * width), round(dy * height)))]
            )
        await self._next_frame()

    async def _next_frame(self) -> None:
        """Let the page render (a wheel scroll lands a frame or two later)."""
        with contextlib.suppress(DeviceError):
            await self.session.execute(
                "return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))));",
                timeout=2.0,
            )

    # -- page signals (``argent.devices.base.PageSignals``) --

    async def _wait_page(
        self, remaining: float, frames: int, after: int | None, slack: int, paint: bool
    ) -> Any:
        return await self.world.evaluate(
            wait_expression(remaining, frames, after, slack, paint),
            await_promise=True,
            timeout=remaining + WAIT_SLACK_SECONDS,
        )

    async def hold_still(self, x: float, y: float, timeout: float) -> bool:
        px, py = self._px(x, y)
        ms = round(max(0.0, timeout) * 1000)
        value = await self.world.evaluate(
            f"globalThis.__argent.still({px!r}, {py!r}, {ms})",
            await_promise=True,
            timeout=max(0.0, timeout) + WAIT_SLACK_SECONDS,
        )
        return value is True

    async def wait_quiet(self, timeout: float, *, after: int | None = None) -> int | None:
        return await self._quiet.wait_quiet(timeout, after=after)

    async def wait_focus(self, x: float, y: float, timeout: float, grace: float) -> bool:
        px, py = self._px(x, y)
        ms = round(max(0.0, timeout) * 1000)
        grace_ms = round(max(0.0, grace) * 1000)
        value = await self.world.evaluate(
            f"globalThis.__argent.waitFocus({ms}, {px}, {py}, {grace_ms})",
            await_promise=True,
            timeout=max(0.0, timeout) + WAIT_SLACK_SECONDS,
        )
        return isinstance(value, dict) and value.get("ok") is True

    # -- form controls (``argent.devices.base.FormControls``) --

    async def focus_at(self, x: float, y: float) -> Focused:
        px, py = self._px(x, y)
        async with self._input:
            self._touch()
            value = await self.world.evaluate(f"globalThis.__argentForms.focusAt({px}, {py})")
        state = value.get("state") if isinstance(value, dict) else None
        return focused_from(state if isinstance(state, str) else "none")

    async def select_all(self) -> bool:
        async with self._input:
            self._touch()
            return await self.world.evaluate("globalThis.__argentForms.selectAll()") is True

    async def choose(self, x: float, y: float, choices: tuple[str, ...], by_value: bool) -> Choice:
        px, py = self._px(x, y)
        tail = f"{json.dumps(list(choices))}, {'true' if by_value else 'false'}, {int(MAX_LISTED_OPTIONS)}"
        async with self._input:
            self._touch()
            value = await self.world.evaluate(f"globalThis.__argentForms.choose({px}, {py}, {tail})")
        choice = choice_from(value)
        if choice is None:
            raise DeviceError(f"WebKit ({self.id}): the page gave no answer to a select.")
        return choice

    # -- files (``argent.devices.base.FileInputs``) --

    async def set_input_files(self, x: float, y: float, paths: Sequence[str]) -> None:
        """The file input the element at (x, y) stands for (``argent.devices.web.file_inputs``) gets
        ``paths`` through WebDriver's Element Send Keys, which sets a file input's files (one path a
        line) and fires ``input`` and ``change`` as a pick in the file dialog does."""
        px, py = self._px(x, y)
        async with self._input:
            self._touch()
            found = await self.session.execute(
                f"const el = ({AT_POINT})(arguments[0], arguments[1]); if (!el) return null; "
                f"const input = ({FIND_INPUT}).call(el); if (typeof input === 'string') return input; "
                f"return [input, ({STATE}).call(input)];",
                [px, py],
            )
            if found is None:
                raise DeviceError(NOTHING_THERE)
            if isinstance(found, str):
                raise DeviceError(NOT_A_FILE_INPUT.format(what=found))
            element = (
                found[0].get(ELEMENT_KEY) if isinstance(found, list) and isinstance(found[0], dict) else None
            )
            state = found[1] if isinstance(found, list) and isinstance(found[1], dict) else {}
            if not isinstance(element, str):
                raise DeviceError(NOT_A_FILE_INPUT.format(what="an unknown node"))
            if state.get("disabled") is True:
                raise DeviceError(DISABLED)
            if len(paths) > 1 and state.get("multiple") is not True:
                raise DeviceError(ONE_FILE_ONLY.format(count=len(paths)))
            await self.session.element_send_keys(element, "\n".join(paths))

    # -- navigation --

    async def navigate(self, url: str) -> None:
        """``POST /url`` (WebKit waits for the load, bounded: past it the page is used as it is)."""
        rule = self._files
        if rule is not None and url[:5].lower() == "file:" and not await asyncio.to_thread(rule, url):
            raise DeviceError(
                f'WebKit ({self.id}) may not open "{url}": the file is outside what this call may load.'
            )
        session = self.session
        self._touch()
        await self._answer_open_dialog()  # one the page opened before: not the leaving's
        with self.dialogs.leaving():
            for _ in range(NAVIGATE_DIALOGS + 1):
                try:
                    await session.command(
                        "POST",
                        "/url",
                        {"url": url},
                        timeout=WEBKIT_PAGE_LOAD_TIMEOUT_SECONDS + WEBDRIVER_COMMAND_TIMEOUT_SECONDS,
                        what="navigate",
                        answer_alerts=False,
                    )
                except WebDriverError as exc:
                    if exc.error == ALERT_OPEN:  # the page asks before unloading: leaving, argent says yes
                        text = exc.data.get("text") if isinstance(exc.data, dict) else None
                        await self._on_alert(text if isinstance(text, str) else "", leaving=True)
                        continue
                    if exc.error != LOAD_TIMEOUT:
                        raise DeviceError(f'WebKit ({self.id}) could not open "{url}": {exc}') from None
                break
        await self.refresh_viewport()

    # -- closing --

    async def close(self) -> None:
        """End the session; an owned driver is killed (its whole process group) and its home removed."""
        if self._closed:
            return
        self._closed = True
        await self._disconnect()
        if self._process is not None:
            await self._process.terminate()

    async def _disconnect(self) -> None:
        if self._session is not None and self._session.alive:
            await self._session.delete(timeout=5.0)
        await self._http.close()


def _page_load_ms() -> int:
    return round(WEBKIT_PAGE_LOAD_TIMEOUT_SECONDS * 1000)


def _stderr(process: WebKitProcess) -> str:
    tail = process.stderr_tail()
    return f" Its stderr ended with:\n{tail}" if tail else ""
