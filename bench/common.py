"""What every benchmark here shares: timing, reading a process's memory, writing the results."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def rss_kib(pid: int, field: str) -> int:
    """A memory figure of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM`` for the peak), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process ``pid`` has used so far: a cost figure that other load on
    the machine changes far less than wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(name: str, results: dict[str, dict[str, Any]]) -> None:
    """Print one line per row and keep the figures in ``bench/results/<name>.json``."""
    width = max(len(row) for row in results) + 1
    for row, figures in results.items():
        shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items())
        print(f"{row:<{width}} {shown}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")


#: The help of ``--src``, the same in every benchmark that compares checkouts.
SRC_HELP = "Also measure the argent package in DIR (PYTHONPATH) as NAME; repeatable."


def src_spec(value: str) -> tuple[str, str]:
    """One ``--src NAME=DIR``: a name for the rows (not empty: the unnamed rows are this
    checkout's) and a directory holding an ``argent`` package, else a usage error."""
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"--src takes NAME=DIR, not {value!r}")
    if not (Path(path) / "argent" / "__init__.py").is_file():
        raise argparse.ArgumentTypeError(f"--src {value}: no argent package in {path}")
    return name, path


def add_src_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--src NAME=DIR`` (repeatable) to ``parser``; read it with ``sources_of``."""
    parser.add_argument(
        "--src", action="append", default=[], type=src_spec, metavar="NAME=DIR", help=SRC_HELP
    )


def sources_of(parser: argparse.ArgumentParser, specs: list[tuple[str, str]]) -> dict[str, str | None]:
    """The checkouts to measure: this one (``None``: as installed, under the empty name), then
    each ``--src`` by its name; a name given twice is a usage error (one row would hide the other)."""
    sources: dict[str, str | None] = {"": None}
    for name, path in specs:
        if name in sources:
            parser.error(f"--src names {name} twice")
        sources[name] = path
    return sources


def start_argent_no_auth(tmp: str, pythonpath: str | None) -> tuple[subprocess.Popen[str], str]:
    """`argent server start --port 0 --no-auth` in ``tmp`` (its TMPDIR too), with the ``argent``
    package of ``pythonpath`` (None: the installed one); the server and its URL from its banner."""
    env = {**os.environ, "TMPDIR": tmp}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.Popen(
        [sys.executable, "-m", "argent", "server", "start", "--port", "0", "--no-auth"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip().removeprefix("Tools server listening on ")
