"""What starting and stopping any browser shares: its own temp home, its own process group, killing
the whole tree, and sweeping what a killed owner left behind.

Each browser gets a temp directory of its own (its profile, its logs, its TMPDIR), named by its
engine's prefix and holding ``owner.pid`` (so a later launch removes what a killed owner left), and
its own process group (one ``killpg`` takes the browser and its children down together). Nothing a
launcher starts is meant to outlive its owner: ``BrowserProcess.terminate`` kills the group, kills
any process still naming the temp directory (helpers that left the group) and removes the
directory; an ``atexit`` hook does the same for anything still running when Python exits; and on
Linux the browser also gets ``PR_SET_PDEATHSIG`` so a killed owner takes it along.
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
from collections.abc import Callable

#: Every engine's viewport in CSS pixels (a viewport screenshot is a 1000x800 PNG on each).
VIEWPORT_WIDTH = 1000
VIEWPORT_HEIGHT = 800
#: How long ``terminate`` waits for the killed browser to be reaped.
REAP_TIMEOUT_SECONDS = 5.0
#: The file in a browser's temp directory naming the process that launched it.
OWNER_FILE = "owner.pid"
STDERR_TAIL_LINES = 12


class BrowserProcess:
    """A browser this process started: its group, protocol port and temp directory (``home``)."""

    #: The browser's stderr, in ``home``.
    log_name = "browser.log"

    def __init__(self, popen: subprocess.Popen[bytes], home: str, binary: str) -> None:
        self.popen = popen
        self.home = home
        self.binary = binary
        self.port = 0
        #: Directories of the browser outside ``home`` (a short TMPDIR); removed with it.
        self.outside_dirs: list[str] = []
        self._done = False
        _LIVE.add(self)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def profile_dir(self) -> str:
        return os.path.join(self.home, "profile")

    @property
    def log_path(self) -> str:
        return os.path.join(self.home, self.log_name)

    def returncode(self) -> int | None:
        """The exit status once the browser has exited (reaping it), else None."""
        return self.popen.poll()

    def state(self) -> str | None:
        """The browser's process state as Linux reports it (``R``, ``S``, ``T`` when stopped, ...);
        None once it is gone, or where ``/proc`` does not say."""
        try:
            with open(f"/proc/{self.popen.pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[-1].split()
        except OSError:
            return None
        return fields[0].decode("ascii", "replace") if fields else None

    def stopped(self) -> bool:
        """Whether the browser's process is stopped (SIGSTOP, a debugger): it cannot answer at all."""
        return self.state() in ("T", "t")

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
        """Kill what escaped the group (a crash handler), wait until every process naming the temp
        directory is gone (a killed process takes a moment to die), then remove it."""
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
        for directory in self.outside_dirs:
            shutil.rmtree(directory, ignore_errors=True)

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        if self.popen.poll() is None:  # not a group leader after all (should not happen)
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()

    def _finish(self) -> None:
        self._done = True
        _LIVE.discard(self)


_LIVE: set[BrowserProcess] = set()


@atexit.register
def _kill_leftovers() -> None:
    for process in list(_LIVE):
        process.terminate_now()


def make_home(prefix: str) -> str:
    """A new temp directory for a browser, naming its owner (after sweeping stale ones of ``prefix``)."""
    sweep_stale_homes(prefix)
    home = tempfile.mkdtemp(prefix=prefix)
    with open(os.path.join(home, OWNER_FILE), "w", encoding="ascii") as fh:
        fh.write(str(os.getpid()))
    return home


def start(argv: list[str], home: str, log_name: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a new session (its own process group), stderr to ``home/log_name``."""
    with open(os.path.join(home, log_name), "wb") as log:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
            preexec_fn=pdeathsig_hook(),  # one prctl call between fork and exec
        )


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


def sweep_stale_homes(prefix: str, tmp_dir: str | None = None) -> list[str]:
    """Remove the temp directories (named ``prefix…``) of browsers whose owner died without cleaning up.

    A directory is stale when the process that created it (its ``owner.pid``) is gone and no live
    process names it; the removed paths are returned."""
    base = tmp_dir or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(base) if n.startswith(prefix)]
    except OSError:
        return removed
    for name in names:
        home = os.path.join(base, name)
        try:
            with open(os.path.join(home, OWNER_FILE), encoding="ascii") as fh:
                owner = int(fh.read().strip() or "0")
        except (OSError, ValueError):
            continue  # not ours to judge (or still being created)
        if owner <= 0 or owner == os.getpid() or pid_alive(owner) or processes_naming(home):
            continue
        shutil.rmtree(home, ignore_errors=True)
        removed.append(home)
    return removed


def pid_alive(pid: int) -> bool:
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


def pdeathsig_hook(sig: signal.Signals = signal.SIGKILL) -> Callable[[], None] | None:
    """A pre-exec hook that has Linux send ``sig`` (kill the browser) when the launching thread dies."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None  # the signal follows the launching *thread*; only the main thread lives long enough
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    kill = int(sig)

    def hook() -> None:
        prctl(pr_set_pdeathsig, kill, 0, 0, 0)

    return hook


def stderr_note(process: BrowserProcess) -> str:
    tail = process.stderr_tail()
    return f" Its stderr ended with:\n{tail}" if tail else ""
