"""Starting WebKitGTK's ``WebKitWebDriver``, which starts ``MiniBrowser`` for each session.

Each driver gets its own temp directory (``argent.devices.web.launching``: its log, ``home/`` as
the browser's ``HOME`` and XDG directories, so every device starts with a fresh profile), its own
process group (MiniBrowser and WebKit's web, network and GPU processes are its children: one
``killpg`` takes them all) and a port argent picks (the driver has no "pick one yourself"). It
draws on the display ``argent.devices.webkit.display`` hands out (``DISPLAY``, else argent's Xvfb).
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import socket
import time

import aiohttp

from argent.devices.base import DeviceError
from argent.devices.registry import WEBKIT
from argent.devices.web import launching
from argent.devices.web.launching import BrowserProcess, stderr_note
from argent.limits import WEBKIT_DRIVER_READY_TIMEOUT_SECONDS

HOME_PREFIX = "argent-webkit-"
#: MiniBrowser, where Debian's ``libwebkit2gtk-4.1`` puts it (the multiarch directory varies).
MINIBROWSER_GLOBS = (
    "/usr/lib/*/webkit2gtk-4.1/MiniBrowser",
    "/usr/lib/*/webkit2gtk-4.0/MiniBrowser",
    "/usr/libexec/webkit2gtk-4.1/MiniBrowser",
    "/usr/libexec/webkit2gtk-4.0/MiniBrowser",
)
#: GTK's settings for MiniBrowser: classic scrollbars, not overlay ones — an overlay scrollbar shows on
#: load and on every pointer move, then fades, so a screenshot would catch it or not. (WebKitGTK's
#: main-frame scrollbars ignore CSS: a page that scrolls keeps a 21 px bar inside the 1000 px viewport.)
GTK_SETTINGS = "[Settings]\ngtk-overlay-scrolling=false\ngtk-enable-animations=false\n"
#: How often a starting driver's ``/status`` is asked.
STATUS_POLL_SECONDS = 0.05


def find_driver() -> str | None:
    """``ARGENT_WEBKIT_DRIVER`` (a path or a name on PATH), else ``WebKitWebDriver`` on PATH."""
    return WEBKIT.find_binary()


def webkit_unavailable_reason() -> str | None:
    """None when a driver is at hand; else why not, naming the variable and the package."""
    return WEBKIT.unavailable_reason()


def find_minibrowser() -> str | None:
    """The MiniBrowser next to WebKitGTK's libraries (None: the driver's own default)."""
    for pattern in MINIBROWSER_GLOBS:
        for path in sorted(glob.glob(pattern)):
            if os.access(path, os.X_OK):
                return path
    return None


def free_port() -> int:
    """A loopback port nothing listens on now (the driver binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class WebKitProcess(BrowserProcess):
    """A ``WebKitWebDriver`` this process started (its MiniBrowsers are its children)."""

    log_name = "driver.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def browser_env(home: str, display: str) -> dict[str, str]:
    """The driver's environment: the display, and a home and temp of its own (a fresh profile)."""
    profile = os.path.join(home, "home")
    tmp = os.path.join(home, "tmp")
    for directory in (profile, tmp):
        os.makedirs(directory, exist_ok=True)
    gtk = os.path.join(profile, ".config", "gtk-3.0")
    os.makedirs(gtk, exist_ok=True)
    with open(os.path.join(gtk, "settings.ini"), "w", encoding="ascii") as fh:
        fh.write(GTK_SETTINGS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "WAYLAND_"))}
    env.update(
        DISPLAY=display,
        HOME=profile,
        TMPDIR=tmp,
        XDG_CONFIG_HOME=os.path.join(profile, ".config"),
        XDG_CACHE_HOME=os.path.join(profile, ".cache"),
        XDG_DATA_HOME=os.path.join(profile, ".local", "share"),
        XDG_RUNTIME_DIR=tmp,
        # No accessibility bus, no session bus to find: quiet logs, no waits on D-Bus.
        NO_AT_BRIDGE="1",
        GDK_BACKEND="x11",
    )
    return env


async def launch_driver(display: str, *, binary: str | None = None) -> WebKitProcess:
    """Start a driver on a free port with ``display`` and wait (bounded) until it answers ``/status``."""
    exe = binary or find_driver()
    if exe is None:
        raise DeviceError(f"Cannot boot a webkit device: {webkit_unavailable_reason()}")
    home = launching.make_home(HOME_PREFIX)
    port = free_port()
    try:
        popen = launching.start(
            [exe, f"--port={port}", "--host=127.0.0.1"],
            home,
            WebKitProcess.log_name,
            browser_env(home, display),
        )
    except OSError as exc:
        shutil.rmtree(home, ignore_errors=True)
        raise DeviceError(
            f"Cannot boot a webkit device: starting {exe} failed ({exc}). {WEBKIT.install_hint()}."
        ) from None
    process = WebKitProcess(popen, home, exe)
    process.port = port
    try:
        await wait_ready(process, WEBKIT_DRIVER_READY_TIMEOUT_SECONDS)
    except BaseException:
        await process.terminate()
        raise
    return process


async def wait_ready(process: WebKitProcess, timeout: float) -> None:
    """Until the driver answers ``GET /status`` (or exits, or ``timeout`` passes: a ``DeviceError``)."""
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            exited = process.exit_description()
            if exited is not None:
                raise DeviceError(
                    f"Cannot boot a webkit device: WebKitWebDriver {exited} before it listened on port "
                    f"{process.port}.{stderr_note(process)}"
                )
            try:
                async with asyncio.timeout(1.0):
                    async with http.get(f"{process.url}/status") as response:
                        if response.status == 200:
                            return
            except (TimeoutError, aiohttp.ClientError, OSError):
                pass
            if time.monotonic() >= deadline:
                raise DeviceError(
                    f"Cannot boot a webkit device: WebKitWebDriver did not answer on port {process.port} within "
                    f"{timeout:g}s.{stderr_note(process)}"
                )
            await asyncio.sleep(STATUS_POLL_SECONDS)
