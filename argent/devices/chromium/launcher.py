"""Starting and killing a headless Chromium.

Each instance gets its own temp directory (``profile/`` as ``--user-data-dir``, ``crash/`` for
the crash handler's database, ``tmp/`` as its TMPDIR, its stderr log), its own process group (so one ``killpg`` takes
the browser, zygotes and renderers down together) and a DevTools port Chromium picks itself
(``--remote-debugging-port=0``; the real port is read from the profile's ``DevToolsActivePort``
file). Chromium's crash handler starts in a session of its own, outside the group; it exits
with the browser, and ``terminate`` kills any process still naming the temp directory. The
directory also names its owner (``owner.pid``), so a later launch removes what a killed owner
left behind. Nothing the launcher starts is
meant to outlive its owner: ``ChromiumProcess.terminate`` kills the group and removes the
directory, an ``atexit`` hook does the same for anything still running when Python exits, and
on Linux the browser also gets ``PR_SET_PDEATHSIG`` so a killed owner takes it along.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence

from argent.devices.base import DeviceError

#: Binaries tried on PATH, in order, when ``ARGENT_CHROMIUM`` is not set.
CHROMIUM_CANDIDATES: tuple[str, ...] = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_ENV = "ARGENT_CHROMIUM"

VIEWPORT_WIDTH = 1000
VIEWPORT_HEIGHT = 800
#: How long a fresh Chromium may take to open its DevTools port.
READY_TIMEOUT_SECONDS = 30.0
#: How long ``terminate`` waits for the killed browser to be reaped.
REAP_TIMEOUT_SECONDS = 5.0
HOME_PREFIX = "argent-chromium-"
#: The file in a Chromium's temp directory naming the process that launched it.
OWNER_FILE = "owner.pid"
STDERR_TAIL_LINES = 12

INSTALL_HINT = (
    "install Chromium (Debian/Ubuntu: apt-get install chromium) or set ARGENT_CHROMIUM to the path of a "
    "Chromium or Chrome binary"
)

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


def _configured() -> str | None:
    value = os.environ.get(CHROMIUM_ENV, "").strip()
    return value or None


def find_chromium() -> str | None:
    """The Chromium binary to launch: ``ARGENT_CHROMIUM`` (a path or a name on PATH), else PATH."""
    configured = _configured()
    if configured is not None:
        return shutil.which(configured)
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def chromium_unavailable_reason() -> str | None:
    """None when a Chromium binary is at hand; else why not and what to install."""
    configured = _configured()
    if configured is not None:
        if shutil.which(configured):
            return None
        return f'{CHROMIUM_ENV}="{configured}" is not an executable file — {INSTALL_HINT}.'
    if find_chromium() is not None:
        return None
    names = ", ".join(CHROMIUM_CANDIDATES)
    return f"no Chromium binary found ({CHROMIUM_ENV} is not set and none of {names} is on PATH) — {INSTALL_HINT}."


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


# --------------------------------------------------------------------------------------------
# A launched process


class ChromiumProcess:
    """A Chromium this process started: its group, DevTools port and temp directory."""

    def __init__(self, popen: subprocess.Popen[bytes], home: str, binary: str) -> None:
        self.popen = popen
        self.home = home
        self.binary = binary
        self.port = 0
        #: Chromium's TMPDIR when it lies outside ``home`` (a long ``home``); removed with it.
        self.outside_tmp_dir: str | None = None
        self._done = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def profile_dir(self) -> str:
        return os.path.join(self.home, "profile")

    @property
    def log_path(self) -> str:
        return os.path.join(self.home, "chromium.log")

    def returncode(self) -> int | None:
        """The exit status once the browser has exited (reaping it), else None."""
        return self.popen.poll()

    def exit_description(self) -> str | None:
        """``exited (code 1)`` / ``exited (killed by signal SIGKILL)``; None while it runs."""
        code = self.returncode()
        if code is None:
            return None
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return f"exited (killed by signal {name})"
        return f"exited (code {code})"

    def stderr_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        """The last lines of the browser's stderr, without the harmless D-Bus noise."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - 64 * 1024))
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        kept = [line for line in text.splitlines() if line.strip() and "dbus" not in line.lower()]
        return "\n".join(kept[-lines:])

    async def terminate(self) -> None:
        """Kill the whole process group, reap the browser and remove the temp directory."""
        if self._done:
            return
        self._kill_group()
        deadline = time.monotonic() + REAP_TIMEOUT_SECONDS
        while self.popen.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(self._sweep)
        self._finish()

    def terminate_now(self) -> None:
        """The synchronous ``terminate`` (interpreter exit, failed launches)."""
        if self._done:
            return
        self._kill_group()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=REAP_TIMEOUT_SECONDS)
        self._sweep()
        self._finish()

    def _sweep(self) -> None:
        """Kill what escaped the group (the crash handler), wait until every process naming the
        temp directory is gone (a killed process takes a moment to die), then remove it."""
        deadline = time.monotonic() + REAP_TIMEOUT_SECONDS
        while True:
            left = processes_naming(self.home)
            if not left or time.monotonic() >= deadline:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        shutil.rmtree(self.home, ignore_errors=True)
        if self.outside_tmp_dir is not None:
            shutil.rmtree(self.outside_tmp_dir, ignore_errors=True)

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        if self.popen.poll() is None:  # not a group leader after all (should not happen)
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()

    def _finish(self) -> None:
        self._done = True
        _LIVE.discard(self)


_LIVE: set[ChromiumProcess] = set()


def processes_naming(text: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``text`` (Linux ``/proc``; else [])."""
    needle = text.encode()
    me = str(os.getpid())
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or entry == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
            if needle not in cmdline:
                continue
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        state = stat.rsplit(b")", 1)[-1].split()[:1]
        if state != [b"Z"]:
            found.append(int(entry))
    return found


@atexit.register
def _kill_leftovers() -> None:
    for process in list(_LIVE):
        process.terminate_now()


def sweep_stale_homes(tmp_dir: str | None = None) -> list[str]:
    """Remove the temp directories of Chromiums whose owner died without cleaning up (killed).

    A directory is stale when the process that created it (its ``owner.pid``) is gone and no
    live process names it; the removed paths are returned."""
    base = tmp_dir or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(base) if n.startswith(HOME_PREFIX)]
    except OSError:
        return removed
    for name in names:
        home = os.path.join(base, name)
        try:
            with open(os.path.join(home, OWNER_FILE), encoding="ascii") as fh:
                owner = int(fh.read().strip() or "0")
        except (OSError, ValueError):
            continue  # not ours to judge (or still being created)
        if owner <= 0 or owner == os.getpid() or _pid_alive(owner) or processes_naming(home):
            continue
        shutil.rmtree(home, ignore_errors=True)
        removed.append(home)
    return removed


def _pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[:1] != [b"Z"]
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pdeathsig_hook() -> Callable[[], None] | None:
    """A pre-exec hook that has Linux kill the browser when the launching thread dies."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None  # the signal follows the launching *thread*; only the main thread lives long enough
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    kill = int(signal.SIGKILL)

    def hook() -> None:
        prctl(pr_set_pdeathsig, kill, 0, 0, 0)

    return hook


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
    sweep_stale_homes()
    home = tempfile.mkdtemp(prefix=HOME_PREFIX)
    with open(os.path.join(home, OWNER_FILE), "w", encoding="ascii") as fh:
        fh.write(str(os.getpid()))
    profile = os.path.join(home, "profile")
    os.mkdir(profile)
    env = dict(os.environ)
    env["BREAKPAD_DUMP_LOCATION"] = os.path.join(home, "crash")  # keeps the crash handler findable
    chromium_tmp, outside = _chromium_tmp_dir(home)
    if chromium_tmp is not None:
        env["TMPDIR"] = chromium_tmp
    argv = [exe, *chromium_flags(profile, width=width, height=height), *extra_args, "about:blank"]
    try:
        with open(os.path.join(home, "chromium.log"), "wb") as log:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=env,
                start_new_session=True,
                close_fds=True,
                preexec_fn=_pdeathsig_hook(),  # one prctl call between fork and exec
            )
    except OSError as exc:
        shutil.rmtree(home, ignore_errors=True)
        if outside and chromium_tmp is not None:
            shutil.rmtree(chromium_tmp, ignore_errors=True)
        raise DeviceError(
            f"Cannot boot a chromium device: starting {exe} failed ({exc}). {INSTALL_HINT}."
        ) from None
    process = ChromiumProcess(popen, home, exe)
    if outside:
        process.outside_tmp_dir = chromium_tmp
    _LIVE.add(process)
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
                f"Chromium ({process.binary}) {exited} before its DevTools port was ready.{_tail(process)}"
            )
        port = _read_port(path)
        if port is not None:
            return port
        if time.monotonic() >= deadline:
            raise DeviceError(
                f"Chromium ({process.binary}) did not open its DevTools port within {timeout:g}s.{_tail(process)}"
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


def _tail(process: ChromiumProcess) -> str:
    tail = process.stderr_tail()
    return f" Its stderr ended with:\n{tail}" if tail else ""
