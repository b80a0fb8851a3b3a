"""Where a run keeps the images of its failing steps when no ``--output`` is given:
``<project_root>/.argent/results/<run>/`` (INTERFACE.md section 12).

One folder per run, made only once the run has an image to keep, named by its start time (so names
sort as runs started) and the process; the ``RESULTS_KEPT`` latest are kept and older ones removed
when a new one is made. A run holds a lock (``flock``) on its folder while it runs, and a folder
whose lock is held is never removed: two runs at once never delete each other's images. A project
that cannot hold the folder (read-only, full) gets it in the system's temporary directory instead,
kept after the command exits, and the run says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from argent.limits import RESULTS_KEPT
from argent.utils.oserrors import remedy

__all__ = ["LOCK_FILE", "RESULTS_DIR", "ResultsDir"]

#: The results directory of a project, relative to its root.
RESULTS_DIR = os.path.join(".argent", "results")
#: The lock a running run holds in its folder.
LOCK_FILE = ".running"
#: A run's folder: its start time, its process and a few random characters.
_RUN_NAME = re.compile(r"^\d{8}-\d{6}-\d+-[0-9a-f]{6}\Z")


class ResultsDir:
    """The results folder of one run, made on first use (``folder()``); ``close()`` releases it."""

    def __init__(self, project_root: str | os.PathLike[str], warn: Callable[[str], None]) -> None:
        self.base = Path(project_root) / RESULTS_DIR
        self.warn = warn
        self._folder: Path | None = None
        self._lock: int | None = None
        self._failed = False

    def folder(self) -> Path | None:
        """This run's folder (made now if it is not yet); None when no folder could be made at all."""
        if self._folder is None and not self._failed:
            try:
                self._folder = self._make(self.base)
            except OSError as exc:
                self._folder = self._fallback(exc)
            else:
                self._prune()
        return self._folder

    def _make(self, base: Path) -> Path:
        """A new locked folder under ``base``: made under a hidden name, locked, then renamed into
        place, so a pruning run never sees it unlocked."""
        base.mkdir(parents=True, exist_ok=True)
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{secrets.token_hex(3)}"
        hidden = base / f".{name}"
        hidden.mkdir()
        try:
            fd = os.open(hidden / LOCK_FILE, os.O_WRONLY | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.rename(hidden, base / name)
        except OSError:
            shutil.rmtree(hidden, ignore_errors=True)
            raise
        self._lock = fd
        return base / name

    def _fallback(self, exc: OSError) -> Path | None:
        try:
            folder = Path(tempfile.mkdtemp(prefix="argent-results-"))
        except OSError:
            self._failed = True
            self.warn(
                f"warning: the images of failed steps cannot be kept: {self.base} cannot be written "
                f"({exc.strerror or exc}) and neither can the temporary directory. Pass --output DIR."
            )
            return None
        advice = remedy(exc)
        self.warn(
            f"warning: {self.base} cannot be written ({exc.strerror or exc}); the images of failed steps are "
            f"kept in {folder} instead.{f' {advice}, or pass' if advice else ' Pass'} --output DIR to choose."
        )
        return folder

    def _prune(self) -> None:
        """Remove the runs older than the ``RESULTS_KEPT`` latest, but any that still runs."""
        try:
            names = sorted(
                (n for n in os.listdir(self.base) if _RUN_NAME.match(n) and (self.base / n).is_dir()),
                reverse=True,
            )
        except OSError:
            return
        ours = self._folder.name if self._folder is not None else None
        for name in names[RESULTS_KEPT:]:
            if name != ours and not _running(self.base / name):
                shutil.rmtree(self.base / name, ignore_errors=True)

    def close(self) -> None:
        """Release this run's folder (it stays; a later run may remove it once it is old enough)."""
        if self._lock is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock)
            self._lock = None


def _running(folder: Path) -> bool:
    """Whether a run holds ``folder``'s lock now (its process is alive and has not closed it)."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: keep it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
