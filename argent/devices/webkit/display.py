"""The X display MiniBrowser draws on: the tool-server's own ``DISPLAY``, else an ``Xvfb`` it starts.

WebKitGTK's MiniBrowser is a GTK window and needs an X server; without one it dies at start and
WebKit's new-session request hangs for ever. When ``DISPLAY`` is set it is checked first (an X
server must answer there, else the boot fails at once, saying so). When it is not, the first WebKit
boot of the process starts one ``Xvfb`` (``ARGENT_XVFB``, default ``Xvfb`` on PATH) on a display
it picks itself (``-displayfd``: Xvfb writes the display number once it accepts connections), and
every WebKit device of the process shares it. ``release`` by the last user (the provider, at server
exit) stops it; an ``atexit`` hook and ``PR_SET_PDEATHSIG`` stop it when the process ends otherwise.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time

from argent.devices.base import DeviceError
from argent.devices.web.launching import pdeathsig_hook
from argent.limits import XVFB_READY_TIMEOUT_SECONDS

XVFB_ENV = "ARGENT_XVFB"
XVFB_DEFAULT = "Xvfb"
#: The virtual screen: larger than the window (1000 px wide, 800 px of viewport plus MiniBrowser's toolbar).
SCREEN = "1280x1024x24"
#: How long Xvfb gets to exit on SIGTERM (it removes its lock file and socket) before SIGKILL.
XVFB_STOP_SECONDS = 3.0
X11_SOCKET_DIR = "/tmp/.X11-unix"
XVFB_INSTALL_HINT = (
    "install Xvfb (Debian/Ubuntu: apt-get install xvfb) or set ARGENT_XVFB to the path of an Xvfb binary"
)


def find_xvfb() -> str | None:
    """``ARGENT_XVFB`` (a path or a name on PATH), else ``Xvfb`` on PATH."""
    configured = os.environ.get(XVFB_ENV, "").strip()
    return shutil.which(configured or XVFB_DEFAULT)


def xvfb_unavailable_reason() -> str | None:
    """None when an Xvfb binary is at hand (or no Xvfb is needed: ``DISPLAY`` is set); else why not."""
    if os.environ.get("DISPLAY"):
        return None
    if find_xvfb() is not None:
        return None
    configured = os.environ.get(XVFB_ENV, "").strip()
    if configured:
        return f'{XVFB_ENV}="{configured}" is not an executable file — {XVFB_INSTALL_HINT}.'
    return (
        f"DISPLAY is not set and no Xvfb binary is on PATH ({XVFB_ENV} is not set) — MiniBrowser needs an X "
        f"display: {XVFB_INSTALL_HINT}, or run the tool-server with DISPLAY set."
    )


def x_server_answers(display: str) -> bool:
    """Whether an X server accepts connections at ``display`` (``:N``, ``:N.S``, ``host:N``)."""
    host, _, rest = display.rpartition(":")
    number = rest.split(".", 1)[0]
    if not number.isdigit():
        return False
    if host in ("", "unix"):
        for address in (f"\0{X11_SOCKET_DIR}/X{number}", f"{X11_SOCKET_DIR}/X{number}"):
            with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(1.0)
                sock.connect(address)
                return True
        return False
    try:
        with socket.create_connection((host, 6000 + int(number)), timeout=1.0):
            return True
    except OSError:
        return False


class Xvfb:
    """One running Xvfb: its process and the display it serves (``:N``)."""

    def __init__(self, popen: subprocess.Popen[bytes], display: str) -> None:
        self.popen = popen
        self.display = display

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def running(self) -> bool:
        return self.popen.poll() is None

    def stop(self) -> None:
        """SIGTERM (Xvfb then removes its lock file and socket), SIGKILL when it lingers; reaped."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=XVFB_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.popen.wait(timeout=XVFB_STOP_SECONDS)


def _read_display(fd: int, deadline: float) -> str:
    """The display number Xvfb writes to ``fd`` once it accepts connections ("" when it exited first)."""
    data = b""
    while not data.endswith(b"\n") and time.monotonic() < deadline:
        chunk = os.read(fd, 32)
        if not chunk:
            break
        data += chunk
    return data.decode("ascii", "replace").strip()


async def start_xvfb(binary: str | None = None, *, timeout: float = XVFB_READY_TIMEOUT_SECONDS) -> Xvfb:
    """Start Xvfb on a free display and wait until it accepts connections."""
    exe = binary or find_xvfb()
    if exe is None:
        raise DeviceError(f"Cannot boot a webkit device: {xvfb_unavailable_reason()}")
    read_fd, write_fd = os.pipe()
    try:
        popen = subprocess.Popen(
            [exe, "-displayfd", str(write_fd), "-screen", "0", SCREEN, "-nolisten", "tcp", "-nocursor"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write_fd,),
            start_new_session=True,
            preexec_fn=pdeathsig_hook(signal.SIGTERM),  # Xvfb removes its lock file on SIGTERM
        )
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        raise DeviceError(
            f"Cannot boot a webkit device: starting {exe} failed ({exc}). {XVFB_INSTALL_HINT}."
        ) from None
    os.close(write_fd)
    xvfb = Xvfb(popen, "")
    try:
        # Blocking read in a thread: it ends with the number, or with EOF when Xvfb exits (or is killed
        # at the deadline below).
        reading = asyncio.ensure_future(asyncio.to_thread(_read_display, read_fd, time.monotonic() + timeout))
        try:
            number = await asyncio.wait_for(asyncio.shield(reading), timeout)
        except TimeoutError:
            xvfb.stop()
            await reading
            number = ""
        if not number.isdigit():
            xvfb.stop()
            status = popen.poll()
            how = (
                f"it exited (code {status})"
                if status is not None
                else f"it named no display within {timeout:g}s"
            )
            raise DeviceError(
                f"Cannot boot a webkit device: Xvfb ({exe}) did not start: {how}. Set DISPLAY to an X server, or "
                f"{XVFB_INSTALL_HINT}."
            )
    except BaseException:
        xvfb.stop()
        raise
    finally:
        os.close(read_fd)
    xvfb.display = f":{number}"
    return xvfb


class SharedDisplay:
    """The process's X display for WebKit: ``DISPLAY``, else one Xvfb shared by its users."""

    def __init__(self) -> None:
        self._xvfb: Xvfb | None = None
        self._users = 0
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def xvfb(self) -> Xvfb | None:
        """The Xvfb this process started, while it runs."""
        return self._xvfb

    async def acquire(self) -> str:
        """The display to use (``:N``): ``DISPLAY`` when an X server answers there, else argent's
        Xvfb (started now when it is the first use). Each ``acquire`` needs one ``release``."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a lock made on another (closed) loop cannot be awaited here
            self._lock = asyncio.Lock()
            self._loop = loop
        async with self._lock:
            own = os.environ.get("DISPLAY", "").strip()
            if own:
                if not await asyncio.to_thread(x_server_answers, own):
                    raise DeviceError(
                        f"Cannot boot a webkit device: DISPLAY={own} names no X server that answers — MiniBrowser "
                        "needs one. Start it, or unset DISPLAY so that argent starts its own Xvfb."
                    )
                self._users += 1
                return own
            if self._xvfb is None or not self._xvfb.running:
                self._xvfb = await start_xvfb()
            self._users += 1
            return self._xvfb.display

    def release(self) -> None:
        """One user is done; the last one stops the Xvfb."""
        self._users = max(0, self._users - 1)
        if self._users == 0:
            self.stop()

    def stop(self) -> None:
        xvfb, self._xvfb = self._xvfb, None
        if xvfb is not None:
            xvfb.stop()


#: The one display of this process.
DISPLAY = SharedDisplay()


@atexit.register
def _stop_at_exit() -> None:
    DISPLAY.stop()
