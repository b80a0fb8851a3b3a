"""Starting a headless Chromium.

Each instance gets its own temp directory (``argent.devices.web.launching``: ``profile/`` as
``--user-data-dir``, ``crash/`` for the crash handler's database, ``tmp/`` as its TMPDIR, its stderr
log), its own process group and a DevTools port Chromium picks itself
(``--remote-debugging-port=0``; the real port is read from the profile's ``DevToolsActivePort``
file). Chromium's crash handler starts in a session of its own, outside the group; it exits with
the browser, and ``terminate`` kills any process still naming the temp directory.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Sequence

from argent.devices.base import DeviceError
from argent.devices.registry import CHROMIUM
from argent.devices.web import launching
from argent.devices.web.launching import (
    OWNER_FILE,
    VIEWPORT_HEIGHT,
    VIEWPORT_WIDTH,
    BrowserProcess,
    processes_naming,
    stderr_note,
)

__all__ = [
    "OWNER_FILE",
    "VIEWPORT_HEIGHT",
    "VIEWPORT_WIDTH",
    "ChromiumProcess",
    "find_chromium",
    "launch_chromium",
    "processes_naming",
    "sweep_stale_homes",
]

CHROMIUM_ENV = CHROMIUM.binary_env
#: How long a fresh Chromium may take to open its DevTools port.
READY_TIMEOUT_SECONDS = 30.0
HOME_PREFIX = "argent-chromium-"
INSTALL_HINT = CHROMIUM.install_hint()

#: Flags that keep the browser headless, quiet and off the network.
BASE_FLAGS: tuple[str, ...] = (
    "--headless=new",
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-gpu",
    "--disable-quic",
    "--disable-features=Translate",
    "--disable-breakpad",
    # Deterministic input and pixels: wheel scrolls land at once, no scrollbars in screenshots.
    "--disable-smooth-scrolling",
    "--hide-scrollbars",
    "--mute-audio",
    "--password-store=basic",
    # A headless page is never "in the background": timers and rendering stay at full speed.
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
)


def find_chromium() -> str | None:
    """The Chromium binary to launch: ``ARGENT_CHROMIUM`` (a path or a name on PATH), else PATH."""
    return CHROMIUM.find_binary()


def chromium_unavailable_reason() -> str | None:
    """None when a Chromium binary is at hand; else why not and what to install."""
    return CHROMIUM.unavailable_reason()


def chromium_flags(
    profile_dir: str,
    *,
    width: int = VIEWPORT_WIDTH,
    height: int = VIEWPORT_HEIGHT,
    as_root: bool | None = None,
) -> list[str]:
    """The command-line flags of a launch (without the binary and the start URL)."""
    flags = [*BASE_FLAGS, f"--user-data-dir={profile_dir}", f"--window-size={width},{height}"]
    if as_root if as_root is not None else _is_root():
        flags.append("--no-sandbox")  # Chromium refuses to run its sandbox as root
    return flags


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


class ChromiumProcess(BrowserProcess):
    """A Chromium this process started."""

    log_name = "chromium.log"


def sweep_stale_homes(tmp_dir: str | None = None) -> list[str]:
    """Remove the temp directories of Chromiums whose owner died without cleaning up (killed)."""
    return launching.sweep_stale_homes(HOME_PREFIX, tmp_dir)


#: Chromium binds its singleton socket at ``$TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket``
#: (46 bytes after TMPDIR) and a unix socket path holds at most 107 bytes: with a longer TMPDIR
#: (CI runners, pytest's tmp_path) it aborts before its DevTools port opens.
_MAX_SOCKET_TMP_DIR = 107 - 46


def _short_tmp_dir(current: str) -> str | None:
    """A short writable directory for Chromium's TMPDIR when ``current`` is too long, else None."""
    if len(os.fsencode(current)) <= _MAX_SOCKET_TMP_DIR:
        return None
    for candidate in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return candidate
    return None


def _chromium_tmp_dir(home: str) -> tuple[str | None, bool]:
    """Chromium's own TMPDIR (its singleton directory is left behind when it is killed), and
    whether it lies outside ``home``: ``<home>/tmp`` when the socket path fits there, else a
    private directory in a short temp directory; None (keep TMPDIR) when there is none."""
    own = os.path.join(home, "tmp")
    if len(os.fsencode(own)) <= _MAX_SOCKET_TMP_DIR:
        os.mkdir(own)
        return own, False
    short = _short_tmp_dir(home)
    if short is None:
        return None, False
    return tempfile.mkdtemp(prefix="argent-chromium-tmp-", dir=short), True


async def launch_chromium(
    *,
    binary: str | None = None,
    width: int = VIEWPORT_WIDTH,
    height: int = VIEWPORT_HEIGHT,
    extra_args: Sequence[str] = (),
    ready_timeout: float = READY_TIMEOUT_SECONDS,
) -> ChromiumProcess:
    """Start a headless Chromium on ``about:blank`` and wait until its DevTools port is open."""
    exe = binary or find_chromium()
    if exe is None:
        raise DeviceError(f"Cannot boot a chromium device: {chromium_unavailable_reason()}")
    home = launching.make_home(HOME_PREFIX)
    profile = os.path.join(home, "profile")
    os.mkdir(profile)
    env = dict(os.environ)
    env["BREAKPAD_DUMP_LOCATION"] = os.path.join(home, "crash")  # keeps the crash handler findable
    chromium_tmp, outside = _chromium_tmp_dir(home)
    if chromium_tmp is not None:
        env["TMPDIR"] = chromium_tmp
    argv = [exe, *chromium_flags(profile, width=width, height=height), *extra_args, "about:blank"]
    try:
        popen = launching.start(argv, home, ChromiumProcess.log_name, env)
    except OSError as exc:
        shutil.rmtree(home, ignore_errors=True)
        if outside and chromium_tmp is not None:
            shutil.rmtree(chromium_tmp, ignore_errors=True)
        raise DeviceError(
            f"Cannot boot a chromium device: starting {exe} failed ({exc}). {INSTALL_HINT}."
        ) from None
    process = ChromiumProcess(popen, home, exe)
    if outside and chromium_tmp is not None:
        process.outside_dirs.append(chromium_tmp)
    try:
        process.port = await _wait_for_port(process, ready_timeout)
    except BaseException:
        process.terminate_now()
        raise
    return process


async def _wait_for_port(process: ChromiumProcess, timeout: float) -> int:
    """Poll ``DevToolsActivePort`` (raced against the browser exiting) for the real port."""
    path = os.path.join(process.profile_dir, "DevToolsActivePort")
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        exited = process.exit_description()
        if exited is not None:
            raise DeviceError(
                f"Chromium ({process.binary}) {exited} before its DevTools port was ready.{stderr_note(process)}"
            )
        port = _read_port(path)
        if port is not None:
            return port
        if time.monotonic() >= deadline:
            raise DeviceError(
                f"Chromium ({process.binary}) did not open its DevTools port within {timeout:g}s.{stderr_note(process)}"
            )
        await asyncio.sleep(delay)
        delay = min(0.1, delay * 1.5)


def _read_port(path: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            first = fh.readline().strip()
    except OSError:
        return None
    if first.isdigit() and 0 < int(first) < 65536:
        return int(first)
    return None
