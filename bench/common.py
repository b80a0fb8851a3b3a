"""What every benchmark here shares: timing, reading a process's memory, writing the results."""

from __future__ import annotations

import json
import os
import statistics
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
