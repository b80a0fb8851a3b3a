"""A W3C WebDriver (classic, HTTP) session on aiohttp: the one protocol WebKitGTK's driver speaks.

Each command is one HTTP request to ``<driver>/session/<id>/...`` with a JSON body, answered with
``{"value": ...}``; an error answers ``{"value": {"error", "message", "data"?}}`` with a 4xx/5xx
status. Every command and the new-session request are bounded in time (``argent.limits``): a hung
MiniBrowser (a page script that never yields, a browser that lost its display) never hangs a step.

Every failure is a ``DeviceError`` with a message for a person. Once the driver is gone (refused,
disconnected) or WebKit deleted the session (its page crashed), every later command fails with the
one death message the owner composes — the owner knows whether the driver exited, and how.

A native dialog open in the page (``alert``, ``confirm``, ``prompt``) refuses every command that
needs the page with ``unexpected alert open``; the session hands it to ``on_alert`` (the device's
dialog answers), then sends the command again.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp

from argent.devices.base import DeviceError
from argent.limits import (
    MAX_DIALOGS_PER_COMMAND,
    WEBDRIVER_ANSWER_BYTES,
    WEBDRIVER_COMMAND_TIMEOUT_SECONDS,
    WEBDRIVER_SESSION_TIMEOUT_SECONDS,
)

#: The key W3C WebDriver names a web element by in a JSON value.
ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"
#: WebDriver error codes (the ``error`` field) this client acts on.
ALERT_OPEN = "unexpected alert open"
NO_SUCH_ALERT = "no such alert"
INVALID_SESSION = "invalid session id"
JAVASCRIPT_ERROR = "javascript error"
SCRIPT_TIMEOUT = "script timeout"
LOAD_TIMEOUT = "timeout"
NOT_INTERACTABLE = "element not interactable"

DeathMessage = Callable[[str], Awaitable[str]]
AlertHandler = Callable[[str], Awaitable[None]]


class WebDriverError(DeviceError):
    """A command WebKit refused: ``error`` is the WebDriver error code, ``data`` its extra data."""

    def __init__(self, message: str, *, error: str = "", data: Any = None) -> None:
        super().__init__(message)
        self.error = error
        self.data = data


class SessionGone(WebDriverError):
    """The driver or the session is gone: no later command can succeed."""


class CommandTimeout(WebDriverError):
    """A command got no answer in time: the page (or MiniBrowser) does not answer."""


def _short(value: Any, most: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= most else text[: most - 1] + "…"


async def _read_answer(response: aiohttp.ClientResponse) -> Any:
    """The JSON of an answer (at most ``WEBDRIVER_ANSWER_BYTES``); a WebDriverError when it is none."""
    body = await response.content.read(WEBDRIVER_ANSWER_BYTES + 1)
    if len(body) > WEBDRIVER_ANSWER_BYTES:
        raise WebDriverError(
            f"the driver's answer is larger than {WEBDRIVER_ANSWER_BYTES} bytes (HTTP {response.status})"
        )
    try:
        return json.loads(body)
    except ValueError:
        raise WebDriverError(
            f"the driver answered HTTP {response.status} with a body that is not JSON: {_short(body.decode('utf-8', 'replace'))}"
        ) from None


def _error_of(status: int, answer: Any) -> WebDriverError | None:
    """The error an answer carries, else None (a success)."""
    value = answer.get("value") if isinstance(answer, dict) else None
    if status < 400 and not (isinstance(value, dict) and isinstance(value.get("error"), str)):
        return None
    if not isinstance(value, dict):
        return WebDriverError(f"HTTP {status}: {_short(answer)}", error="")
    code = str(value.get("error") or "")
    message = str(value.get("message") or "")
    said = f"{code}: {message}" if message else code
    return WebDriverError(said or f"HTTP {status}", error=code, data=value.get("data"))


async def new_session(
    http: aiohttp.ClientSession,
    base_url: str,
    capabilities: dict[str, Any],
    *,
    label: str,
    describe_death: DeathMessage,
    timeout: float = WEBDRIVER_SESSION_TIMEOUT_SECONDS,
    stalled: Callable[[], Awaitable[str | None]] | None = None,
) -> WebDriverSession:
    """Open a session (``POST /session``), bounded by ``timeout``: WebKit's new session hangs for
    ever when MiniBrowser cannot start (no display). ``stalled`` says why it will never come (a
    driver that exited, a browser that could not open its display) as soon as that is known."""
    body = {"capabilities": {"alwaysMatch": capabilities}}

    async def ask() -> Any:
        async with http.post(f"{base_url}/session", json=body) as response:
            answer = await _read_answer(response)
            error = _error_of(response.status, answer)
            if error is not None:
                raise WebDriverError(f"WebKit ({label}) refused a new session: {error}", error=error.error)
            return answer

    request = asyncio.ensure_future(ask())
    try:
        async with asyncio.timeout(timeout):
            while True:
                if stalled is None:
                    answer = await request
                    break
                done, _ = await asyncio.wait({request}, timeout=STALL_CHECK_SECONDS)
                if done:
                    answer = request.result()
                    break
                why = await stalled()
                if why is not None:
                    raise SessionGone(f"WebKit ({label}) could not open a session: {why}")
    except TimeoutError:
        why = await describe_death("")
        raise CommandTimeout(
            f"WebKit ({label}) did not open a session within {timeout:g}s — MiniBrowser did not come up (it needs "
            f"an X display: DISPLAY, else the Xvfb argent starts).{why}"
        ) from None
    except (aiohttp.ClientError, OSError) as exc:
        raise SessionGone(
            f"WebKit ({label}) could not open a session: {exc or type(exc).__name__}.{await describe_death('')}"
        ) from None
    finally:
        if not request.done():
            request.cancel()
        request.add_done_callback(_retrieve)
    value = answer.get("value") if isinstance(answer, dict) else None
    session_id = value.get("sessionId") if isinstance(value, dict) else None
    if not isinstance(session_id, str) or not session_id:
        raise WebDriverError(
            f"WebKit ({label}) answered a new session without a session id: {_short(answer)}"
        )
    caps = value.get("capabilities") if isinstance(value, dict) else None
    return WebDriverSession(
        http,
        base_url,
        session_id,
        label=label,
        describe_death=describe_death,
        capabilities=caps if isinstance(caps, dict) else {},
    )


#: How often a pending new-session request looks at whether it can still come.
STALL_CHECK_SECONDS = 0.25


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class WebDriverSession:
    """One WebDriver session: commands, with the dialogs they meet answered, and a clean death."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        base_url: str,
        session_id: str,
        *,
        label: str,
        describe_death: DeathMessage,
        capabilities: dict[str, Any] | None = None,
        command_timeout: float = WEBDRIVER_COMMAND_TIMEOUT_SECONDS,
    ) -> None:
        self.http = http
        self.base_url = base_url
        self.session_id = session_id
        self.label = label
        self.capabilities = capabilities or {}
        self.command_timeout = command_timeout
        self._describe_death = describe_death
        self._death: str | None = None
        #: Answers a native dialog that refused a command (the device's dialog answers).
        self.on_alert: AlertHandler | None = None

    @property
    def url(self) -> str:
        """The session's URL (``ARGENT_WEBDRIVER_URL`` is the driver's; this adds the session)."""
        return f"{self.base_url}/session/{self.session_id}"

    @property
    def alive(self) -> bool:
        return self._death is None

    @property
    def death(self) -> str | None:
        return self._death

    async def _die(self, why: str) -> SessionGone:
        if self._death is None:
            self._death = await self._describe_death(why)
        return SessionGone(self._death, error=INVALID_SESSION)

    # -- commands --

    async def command(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        what: str | None = None,
        answer_alerts: bool = True,
    ) -> Any:
        """One command on the session (``path`` after ``/session/<id>``); its ``value``. A dialog
        that refuses it is answered (``on_alert``) and the command sent again, a few times at most."""
        for _ in range(MAX_DIALOGS_PER_COMMAND + 1):
            try:
                return await self._send(method, path, body, timeout, what)
            except WebDriverError as exc:
                if exc.error != ALERT_OPEN or not answer_alerts or self.on_alert is None:
                    raise
                text = exc.data.get("text") if isinstance(exc.data, dict) else None
                await self.on_alert(text if isinstance(text, str) else "")
        raise WebDriverError(
            f"WebKit ({self.label}): the page opened more than {MAX_DIALOGS_PER_COMMAND} dialogs in a row while "
            f"argent sent {what or path} — it keeps the page frozen; change the page or the flow's dialogs: answer.",
            error=ALERT_OPEN,
        )

    async def _send(
        self, method: str, path: str, body: dict[str, Any] | None, timeout: float | None, what: str | None
    ) -> Any:
        if self._death is not None:
            raise SessionGone(self._death, error=INVALID_SESSION)
        limit = self.command_timeout if timeout is None else timeout
        name = what or f"{method} {path or '/'}"
        payload = body if body is not None else ({} if method == "POST" else None)
        try:
            async with asyncio.timeout(limit):
                async with self.http.request(method, self.url + path, json=payload) as response:
                    answer = await _read_answer(response)
                    status = response.status
        except TimeoutError:
            raise CommandTimeout(
                f"WebKit ({self.label}) did not answer {name} within {limit:g}s — its page does not answer (a "
                "script that never yields?) or MiniBrowser hangs. Stop the device (stop-device) and boot a new one.",
                error="timeout",
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise await self._die(f"{name}: {exc or type(exc).__name__}") from None
        error = _error_of(status, answer)
        if error is None:
            return answer.get("value") if isinstance(answer, dict) else None
        if error.error == INVALID_SESSION:
            raise await self._die(f"{name}: {error}")
        error.args = (f"WebKit ({self.label}) {name}: {error}",)
        raise error

    # -- the commands argent uses --

    async def execute(self, script: str, args: Sequence[Any] = (), *, timeout: float | None = None) -> Any:
        """``execute/sync``: the function body ``script`` with ``args`` (a promise it returns is
        awaited); its value, by value."""
        return await self.command(
            "POST", "/execute/sync", {"script": script, "args": list(args)}, timeout=timeout, what="execute"
        )

    async def navigate(self, url: str, *, timeout: float | None = None) -> None:
        """``POST /url``: open ``url`` and wait for its load (WebKit's page-load timeout)."""
        await self.command("POST", "/url", {"url": url}, timeout=timeout, what="navigate")

    async def current_url(self) -> str:
        value = await self.command("GET", "/url", what="get the URL")
        return value if isinstance(value, str) else ""

    async def perform(self, sources: list[dict[str, Any]], *, timeout: float | None = None) -> None:
        """``POST /actions``: the input sources' actions, tick by tick."""
        await self.command("POST", "/actions", {"actions": sources}, timeout=timeout, what="actions")

    async def release(self) -> None:
        """``DELETE /actions``: every key and button still held goes up."""
        await self.command("DELETE", "/actions", what="release the input")

    async def screenshot(self, *, timeout: float | None = None) -> bytes:
        """A PNG of the viewport (``GET /screenshot``)."""
        value = await self.command("GET", "/screenshot", timeout=timeout, what="screenshot")
        if not isinstance(value, str) or not value:
            raise WebDriverError(f"WebKit ({self.label}): the screenshot came back empty.")
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            raise WebDriverError(f"WebKit ({self.label}): the screenshot is not base64.") from None

    async def window_rect(self) -> dict[str, Any]:
        value = await self.command("GET", "/window/rect", what="read the window size")
        return value if isinstance(value, dict) else {}

    async def set_window_size(self, width: int, height: int) -> None:
        await self.command(
            "POST", "/window/rect", {"width": int(width), "height": int(height)}, what="size the window"
        )

    async def set_timeouts(self, *, script_ms: int, page_load_ms: int) -> None:
        await self.command(
            "POST",
            "/timeouts",
            {"script": int(script_ms), "pageLoad": int(page_load_ms)},
            what="set timeouts",
        )

    async def alert_text(self) -> str | None:
        """The open dialog's message; None when no dialog is open."""
        try:
            value = await self.command("GET", "/alert/text", what="read the dialog", answer_alerts=False)
        except WebDriverError as exc:
            if exc.error == NO_SUCH_ALERT:
                return None
            raise
        return value if isinstance(value, str) else ""

    async def answer_alert(self, accept: bool) -> bool:
        """Accept or dismiss the open dialog; False when none was open (any more)."""
        try:
            await self.command(
                "POST",
                "/alert/accept" if accept else "/alert/dismiss",
                what="answer the dialog",
                answer_alerts=False,
            )
        except WebDriverError as exc:
            if exc.error == NO_SUCH_ALERT:
                return False
            raise
        return True

    async def send_alert_text(self, text: str) -> bool:
        """Type ``text`` into the open prompt; False when the open dialog takes no text (not a prompt)."""
        try:
            await self.command(
                "POST", "/alert/text", {"text": text}, what="answer the prompt", answer_alerts=False
            )
        except WebDriverError as exc:
            if exc.error in (NOT_INTERACTABLE, NO_SUCH_ALERT, "unsupported operation"):
                return False
            raise
        return True

    async def element_send_keys(self, element: str, text: str) -> None:
        await self.command("POST", f"/element/{element}/value", {"text": text}, what="set the files")

    async def delete(self, *, timeout: float) -> None:
        """End the session (MiniBrowser closes); a dead one is left as it is."""
        if self._death is not None:
            return
        with contextlib.suppress(DeviceError):
            await self._send("DELETE", "", None, timeout, "end the session")
        self._death = f"WebKit ({self.label}): the session has ended."
