"""Starting a headless Firefox that speaks WebDriver BiDi.

Each instance gets its own temp directory (``argent.devices.web.launching``: ``profile/``, its
TMPDIR, its stderr log), its own process group (the browser and its content processes go down with
one ``killpg``) and a BiDi port Firefox picks itself (``--remote-debugging-port=0``; the real port is
read from the profile's ``WebDriverBiDiServer.json``).

A fresh profile costs Firefox seconds of first-run work before its first BiDi session answers. So
the profile of a device is a copy of a prepared template: a profile Firefox has started in once
with argent's preferences (``user.js``: no first-run pages, updates, telemetry, safe browsing or
background fetches; no scrollbars, no smooth scrolling, no caret blink), then shut down cleanly.
The template is made at the first Firefox boot of this user for this Firefox build and these
preferences (``<tmp>/argent-firefox-template-<uid>-<key>``, private to the user), and reused by
every later boot; no browser ever runs in it. Each device still starts from its own copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import aiohttp

from argent.devices.base import DeviceError
from argent.devices.registry import FIREFOX
from argent.devices.web import launching
from argent.devices.web.launching import VIEWPORT_HEIGHT, VIEWPORT_WIDTH, BrowserProcess, stderr_note

HOME_PREFIX = "argent-firefox-"
TEMPLATE_PREFIX = "argent-firefox-template-"
#: How long a fresh Firefox may take to open its BiDi port.
READY_TIMEOUT_SECONDS = 30.0
#: How long making the profile template may take (one Firefox start and a clean shutdown).
TEMPLATE_TIMEOUT_SECONDS = 60.0
#: How often the port file is looked for (a read of a small file: the wait is most of a boot's start).
PORT_POLL_SECONDS = 0.01
#: The file Firefox writes its BiDi host and port to, in its profile.
PORT_FILE = "WebDriverBiDiServer.json"
#: The page Firefox opens first: blank, but not ``about:blank`` itself. A window whose first page is a
#: blank one keeps the focus in its address bar for a person to type a URL, so its pages never have the
#: focus (``document.hasFocus()`` false, no ``focus``/``focusin``/``blur`` event, ``:focus`` never
#: matches: an app that opens its search box on ``focusin`` never opens it). Any other URL's page takes
#: the focus once it has painted, and the pages after it keep it; this one costs no more to load.
FIRST_PAGE = "about:blank#"
#: What a copy of the template leaves out: locks and the port file of the run that made it, caches.
_NOT_COPIED = frozenset(
    {"lock", ".parentlock", PORT_FILE, "cache2", "crashes", "minidumps", "sessionstore-backups"}
)

#: The preferences of every profile (``user.js``): quiet, offline apart from the pages it is sent
#: to, and deterministic pixels and input.
PREFS: dict[str, bool | int | str] = {
    "browser.startup.page": 0,
    "browser.startup.homepage": "about:blank",
    "browser.startup.homepage_override.mstone": "ignore",
    "startup.homepage_welcome_url": "",
    "startup.homepage_welcome_url.additional": "",
    "browser.aboutwelcome.enabled": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.sessionstore.resume_from_crash": False,
    "browser.sessionstore.max_resumed_crashes": -1,
    "toolkit.startup.max_resumed_crashes": -1,
    "browser.newtabpage.enabled": False,
    "browser.newtab.preload": False,
    "browser.newtabpage.activity-stream.feeds.system.topstories": False,
    "browser.newtabpage.activity-stream.feeds.telemetry": False,
    "browser.newtabpage.activity-stream.telemetry": False,
    "datareporting.healthreport.uploadEnabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.policy.dataSubmissionPolicyBypassNotification": True,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.unified": False,
    "toolkit.telemetry.server": "",
    "toolkit.telemetry.archive.enabled": False,
    "app.update.enabled": False,
    "app.update.auto": False,
    "app.update.disabledForTesting": True,
    "app.update.checkInstallTime": False,
    "app.normandy.enabled": False,
    "app.shield.optoutstudies.enabled": False,
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "extensions.blocklist.enabled": False,
    "extensions.systemAddon.update.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.blockedURIs.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.region.network.url": "",
    "browser.region.update.enabled": False,
    "browser.search.update": False,
    "browser.discovery.enabled": False,
    "services.settings.server": "",
    "browser.pagethumbnails.capturing_disabled": True,
    "media.gmp-manager.updateEnabled": False,
    "browser.translations.enable": False,
    "signon.rememberSignons": False,
    "identity.fxaccounts.enabled": False,
    "browser.ml.enable": False,
    "browser.places.importBookmarksHTML": False,
    "browser.bookmarks.restore_default_bookmarks": False,
    "browser.profiles.enabled": False,
    "browser.tabs.warnOnClose": False,
    # A file: page reads no other local file (each file is its own origin).
    "security.fileuri.strict_origin_policy": True,
    # Deterministic input and pixels: wheel scrolls land at once, no scrollbars, no caret blink.
    "general.smoothScroll": False,
    "layout.testing.scrollbars.always-hidden": True,
    "ui.caretBlinkTime": -1,
    "toolkit.cosmeticAnimations.enabled": False,
    # A headless page is never "in the background": timers and rendering stay at full speed.
    "dom.min_background_timeout_value": 4,
    "dom.timeout.enable_budget_timer_throttling": False,
}


def user_js() -> str:
    return "".join(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n" for name, value in PREFS.items())


def find_firefox() -> str | None:
    """The Firefox binary to launch: ``ARGENT_FIREFOX`` (a path or a name on PATH), else PATH."""
    return FIREFOX.find_binary()


def firefox_unavailable_reason() -> str | None:
    """None when a Firefox binary is at hand; else why not and what to install."""
    return FIREFOX.unavailable_reason()


def firefox_argv(exe: str, profile: str, *, extra_args: Sequence[str] = ()) -> list[str]:
    return [
        exe,
        "--headless",
        "--remote-debugging-port=0",
        "--no-remote",
        "--profile",
        profile,
        *extra_args,
        FIRST_PAGE,
    ]


def _environment(home: str, width: int, height: int) -> dict[str, str]:
    """The browser's environment. A headless Firefox's screen, and its window, are the size
    ``MOZ_HEADLESS_WIDTH`` and ``_HEIGHT`` say (``--window-size`` is not applied: 1366x768 whatever
    it says): the viewport's, as a page on Chromium sees them (the page's own size is pinned apart,
    ``browsingContext.setViewport``)."""
    env = dict(os.environ)
    env.update(
        MOZ_CRASHREPORTER_DISABLE="1",
        MOZ_HEADLESS="1",
        MOZ_NO_REMOTE="1",
        MOZ_HEADLESS_WIDTH=str(width),
        MOZ_HEADLESS_HEIGHT=str(height),
        TMPDIR=os.path.join(home, "tmp"),
    )
    env.pop("MOZ_REMOTE_SETTINGS_DEVTOOLS", None)
    return env


class FirefoxProcess(BrowserProcess):
    """A Firefox this process started."""

    log_name = "firefox.log"

    @property
    def ws_url(self) -> str:
        """The BiDi endpoint a session is made on."""
        return f"ws://127.0.0.1:{self.port}/session"


def sweep_stale_homes(tmp_dir: str | None = None) -> list[str]:
    """Remove the temp directories of Firefoxes whose owner died without cleaning up (killed)."""
    return launching.sweep_stale_homes(HOME_PREFIX, tmp_dir)


async def launch_firefox(
    *,
    binary: str | None = None,
    width: int = VIEWPORT_WIDTH,
    height: int = VIEWPORT_HEIGHT,
    extra_args: Sequence[str] = (),
    ready_timeout: float = READY_TIMEOUT_SECONDS,
    template: bool = True,
) -> FirefoxProcess:
    """Start a headless Firefox on ``FIRST_PAGE`` (its profile a copy of the template) and wait until
    its BiDi port is open."""
    exe = binary or find_firefox()
    if exe is None:
        raise DeviceError(f"Cannot boot a firefox device: {firefox_unavailable_reason()}")
    prepared = await profile_template(exe) if template else None
    home = launching.make_home(HOME_PREFIX)
    profile = os.path.join(home, "profile")
    try:
        os.mkdir(os.path.join(home, "tmp"))
        if prepared is not None:
            await asyncio.to_thread(_copy_profile, prepared, profile)
        else:
            _fresh_profile(profile)
    except OSError as exc:
        shutil.rmtree(home, ignore_errors=True)
        raise DeviceError(f"Cannot boot a firefox device: preparing its profile failed ({exc}).") from None
    return await _start(exe, home, profile, width, height, extra_args, ready_timeout)


async def _start(
    exe: str,
    home: str,
    profile: str,
    width: int,
    height: int,
    extra_args: Sequence[str],
    ready_timeout: float,
) -> FirefoxProcess:
    argv = firefox_argv(exe, profile, extra_args=extra_args)
    try:
        popen = launching.start(argv, home, FirefoxProcess.log_name, _environment(home, width, height))
    except OSError as exc:
        shutil.rmtree(home, ignore_errors=True)
        raise DeviceError(
            f"Cannot boot a firefox device: starting {exe} failed ({exc}). {FIREFOX.install_hint()}."
        ) from None
    process = FirefoxProcess(popen, home, exe)
    try:
        process.port = await _wait_for_port(process, ready_timeout)
    except BaseException:
        process.terminate_now()
        raise
    return process


def _fresh_profile(profile: str) -> None:
    os.mkdir(profile)
    with open(os.path.join(profile, "user.js"), "w", encoding="utf-8") as fh:
        fh.write(user_js())


def _copy_profile(template: str, profile: str) -> None:
    shutil.copytree(
        template, profile, symlinks=True, ignore=lambda _dir, names: [n for n in names if n in _NOT_COPIED]
    )


async def _wait_for_port(process: FirefoxProcess, timeout: float) -> int:
    """Poll the profile's ``WebDriverBiDiServer.json`` (raced against the browser exiting) for the port."""
    path = os.path.join(process.profile_dir, PORT_FILE)
    deadline = time.monotonic() + timeout
    while True:
        exited = process.exit_description()
        if exited is not None:
            raise DeviceError(
                f"Firefox ({process.binary}) {exited} before its WebDriver BiDi port was ready.{stderr_note(process)}"
            )
        port = _read_port(path)
        if port is not None:
            return port
        if time.monotonic() >= deadline:
            raise DeviceError(
                f"Firefox ({process.binary}) did not open its WebDriver BiDi port within {timeout:g}s."
                f"{stderr_note(process)}"
            )
        await asyncio.sleep(PORT_POLL_SECONDS)


def _read_port(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    port = data.get("ws_port") if isinstance(data, dict) else None
    if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
        return port
    return None


# --------------------------------------------------------------------------------------------
# The profile template


_TEMPLATE_LOCK = asyncio.Lock()


def template_key(exe: str) -> str:
    """What the template depends on: the binary (its real path, size and time) and the preferences."""
    real = os.path.realpath(exe)
    try:
        info = os.stat(real)
        ident = f"{real}|{info.st_size}|{info.st_mtime_ns}"
    except OSError:
        ident = real
    # The build of a Firefox lives beside its launcher script (Debian's firefox-esr is a shell script).
    for ini in (
        os.path.join(os.path.dirname(real), "application.ini"),
        "/usr/lib/firefox-esr/application.ini",
    ):
        with contextlib.suppress(OSError):
            with open(ini, "rb") as fh:
                ident += "|" + hashlib.sha256(fh.read()).hexdigest()
            break
    return hashlib.sha256(f"{ident}|{user_js()}".encode()).hexdigest()[:16]


def template_dir(exe: str, tmp_dir: str | None = None) -> str:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(tmp_dir or tempfile.gettempdir(), f"{TEMPLATE_PREFIX}{uid}-{template_key(exe)}")


def _usable(path: str) -> bool:
    """A template this user made: a real directory (no symlink), owned by us, closed to others."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    owner_ok = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and owner_ok and not info.st_mode & 0o077


async def profile_template(exe: str) -> str | None:
    """The prepared profile for ``exe`` (made now when there is none); None when it cannot be made
    (each device then starts from a fresh profile, slower)."""
    path = template_dir(exe)
    if _usable(path):
        return path
    async with _TEMPLATE_LOCK:
        if _usable(path):
            return path
        with contextlib.suppress(DeviceError, OSError):
            await _make_template(exe, path)
    return path if _usable(path) else None


async def _make_template(exe: str, path: str) -> None:
    """Start Firefox once in a fresh profile, open a BiDi session (its first-run work is done then),
    close the browser cleanly, and move the profile into place."""
    home = launching.make_home(HOME_PREFIX)
    profile = os.path.join(home, "profile")
    try:
        os.mkdir(os.path.join(home, "tmp"))
        _fresh_profile(profile)
        process = await _start(
            exe, home, profile, VIEWPORT_WIDTH, VIEWPORT_HEIGHT, (), TEMPLATE_TIMEOUT_SECONDS
        )
        try:
            async with asyncio.timeout(TEMPLATE_TIMEOUT_SECONDS):
                await _session_then_close(process)
                while process.returncode() is None:
                    await asyncio.sleep(0.05)
        finally:
            if process.returncode() is None:
                await process.terminate()
        made = tempfile.mkdtemp(prefix=TEMPLATE_PREFIX, dir=os.path.dirname(path))
        os.rmdir(made)
        await asyncio.to_thread(_copy_profile, profile, made)
        os.chmod(made, 0o700)
        try:
            os.rename(made, path)
        except OSError:
            shutil.rmtree(made, ignore_errors=True)  # another process made it first
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def _session_then_close(process: FirefoxProcess) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(process.ws_url, max_msg_size=0) as ws:
        for cid, method in enumerate(("session.new", "browser.close"), start=1):
            params: dict[str, Any] = {"capabilities": {}} if method == "session.new" else {}
            await ws.send_str(json.dumps({"id": cid, "method": method, "params": params}))
            async for message in ws:
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                with contextlib.suppress(ValueError):
                    if json.loads(message.data).get("id") == cid:
                        break
