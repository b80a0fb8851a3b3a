"""Real small file systems for the careless-host tests: a tmpfs of a few MiB mounted on a directory,
filled to the last byte or remounted read-only, and always unmounted afterwards.

Mounting needs root (and a kernel that lets the container mount tmpfs); elsewhere the test that
asks for one is skipped, saying why.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The size of each small file system.
SMALL_FS_SIZE = "2m"
#: The name of the file that fills a small file system (one per file system).
FILLER = ".filler"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=False, timeout=30)


@contextlib.contextmanager
def small_fs(path: Path, size: str = SMALL_FS_SIZE) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``path`` (made when missing) while the block runs."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    path.mkdir(parents=True, exist_ok=True)
    mounted = _run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        # Lazy: a process killed a moment ago may still hold its cwd or a file there.
        _run("umount", "-l", str(path))


def fill(path: Path) -> Path:
    """Fill the file system of ``path`` to its last byte; the filler file (remove it to free the space)."""
    filler = path / FILLER
    with open(filler, "ab", buffering=0) as fh:
        for size in (64 * 1024, 4096, 1):
            try:
                while fh.write(bytes(size)):
                    pass
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    return filler


def read_only(path: Path) -> None:
    """Remount the file system on ``path`` read-only."""
    done = _run("mount", "-o", "remount,ro", str(path))
    assert done.returncode == 0, done.stderr


@contextlib.contextmanager
def read_only_layer(path: Path) -> Iterator[None]:
    """``path`` read-only while the block runs, even while a process holds a file there open for
    writing (a server's lock file, which makes a remount busy): a read-only bind mount of ``path``
    over itself, removed afterwards."""
    done = _run("mount", "--bind", str(path), str(path))
    assert done.returncode == 0, done.stderr
    try:
        done = _run("mount", "-o", "remount,bind,ro", str(path))
        assert done.returncode == 0, done.stderr
        yield
    finally:
        _run("umount", str(path))
