"""`argent flow run <dir> --workers N`: a suite on 4 workers against the same suite on 1, as ratios
of the wall time of the real command (embedded tool-server, process start included), in one run.

    .venv/bin/python bench/bench_suite.py [--repeat N] [--chromium-flows 16]

1. ``workers_wait_16x1s``: 16 flows that each wait 1 s without a device, ``--workers 4`` vs
   ``--workers 1`` (target <= 0.3x; the ideal is 0.25x plus the fixed start-up of the command).
2. ``workers_chromium_16``: 16 flows that each ``launch:`` a Chromium page, tap and assert,
   ``--workers 4`` vs ``--workers 1``. What bounds it is measured, not guessed: the CPU seconds of
   the command and of every Chromium process it starts (sampled from ``/proc`` every 100 ms), as
   the average number of cores the run kept busy and the CPU seconds per flow, beside the
   machine's core count and the load average when the row started (other work on the machine
   takes its share of the cores too); ``cpu_bound_ratio`` is the best ratio those CPU seconds
   allow with every core to the run alone.

Prints a table and writes ``bench/results/suite.json``. Medians of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from common import report

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head>
<body><h1>Shop</h1><button onclick="this.textContent = 'In the cart'">Add to cart</button></body></html>
"""
TICKS = os.sysconf("SC_CLK_TCK")
ARGENT = (sys.executable, "-m", "argent")


class CpuSampler:
    """CPU seconds of a process and of every process whose command line names ``needle``
    (the Chromiums of one run live under its private TMPDIR): each pid's last utime+stime seen."""

    def __init__(self, pid: int, needle: str) -> None:
        self.pid = pid
        self.needle = needle.encode()
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def cpu_seconds(self) -> float:
        return sum(self.seen.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(0.1)

    def _sample(self) -> None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            try:
                if pid != self.pid:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        if self.needle not in fh.read():
                            continue
                with open(f"/proc/{pid}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            # fields[11], fields[12]: utime, stime (fields 14 and 15 of proc(5), after the name)
            self.seen[pid] = (int(fields[11]) + int(fields[12])) / TICKS


def command_env(home: Path, tmp: Path) -> dict[str, str]:
    """The command's environment: a private HOME and TMPDIR, no link, and Python's bytecode caches
    written (as an installed package has them), so start-up is not recompiling every module."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("ARGENT_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(HOME=str(home), TMPDIR=str(tmp))
    return env


def run_suite(project: Path, workers: int, home: Path, tmp: Path, *, sample_cpu: bool) -> dict[str, Any]:
    """One `argent flow run suite --workers N --json` in ``project``: wall time, CPU, results."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [
            *ARGENT,
            "flow",
            "run",
            "suite",
            "--workers",
            str(workers),
            "--json",
            "--junit-xml",
            str(tmp / "junit.xml"),
        ],
        cwd=project,
        env=command_env(home, tmp),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    cpu = CpuSampler(proc.pid, str(tmp))
    if sample_cpu:
        with cpu:
            out, err = proc.communicate(timeout=1800)
    else:
        out, err = proc.communicate(timeout=1800)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"--workers {workers} failed ({proc.returncode}):\n{out[-2000:]}\n{err[-2000:]}")
    flows = json.loads(out)["flows"]
    # each flow's call, as the JUnit file times it: browser boot and teardown included
    per_flow = [float(case.get("time") or 0) for case in ET.parse(tmp / "junit.xml").iter("testcase")]
    launches = [s["durationMs"] / 1000 for f in flows for s in f["report"]["steps"] if s["kind"] == "launch"]
    return {
        "wall_s": wall,
        "cpu_s": cpu.cpu_seconds,
        "flow_s": statistics.mean(per_flow),
        "launch_s": statistics.mean(launches) if launches else 0.0,
    }


def make_project(root: Path, flows: int, text: str) -> Path:
    project = root / "proj"
    suite = project / "suite"
    (project / ".argent").mkdir(parents=True)
    (suite / "site").mkdir(parents=True)
    (suite / "site" / "index.html").write_text(PAGE)
    for i in range(flows):
        (suite / f"f{i:02d}.yaml").write_text(text)
    return project


def warm_up(home: Path, tmp: Path) -> None:
    """One trivial command, so the measured ones start with Python's bytecode caches in place."""
    subprocess.run(
        [*ARGENT, "tools", "list"],
        env=command_env(home, tmp),
        capture_output=True,
        check=True,
        stdin=subprocess.DEVNULL,
    )


def bench_row(text: str, flows: int, repeat: int, *, sample_cpu: bool) -> dict[str, Any]:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_dir:
        root = Path(tmp_dir)
        project = make_project(root, flows, text)
        (root / "home").mkdir()
        warm_up(root / "home", root)
        runs: dict[int, list[dict[str, Any]]] = {1: [], 4: []}
        for _ in range(repeat):
            for workers in (4, 1):
                tmp = root / f"tmp-{workers}-{len(runs[workers])}"
                tmp.mkdir()
                runs[workers].append(run_suite(project, workers, root / "home", tmp, sample_cpu=sample_cpu))
    figures: dict[str, Any] = {}
    for workers, samples in runs.items():
        best = sorted(samples, key=lambda s: s["wall_s"])[len(samples) // 2]
        figures[f"w{workers}_wall_s"] = best["wall_s"]
        if sample_cpu:
            figures[f"w{workers}_cores_busy"] = best["cpu_s"] / best["wall_s"]
            figures[f"w{workers}_cpu_s_per_flow"] = best["cpu_s"] / flows
        figures[f"w{workers}_flow_s"] = best["flow_s"]
        if best["launch_s"]:
            figures[f"w{workers}_launch_s"] = best["launch_s"]
    figures["ratio"] = figures["w4_wall_s"] / figures["w1_wall_s"]
    if sample_cpu:
        # the best --workers 4 could do if it had every core to itself: its CPU seconds spread
        # over all of them, against the one-at-a-time wall time
        cores = os.cpu_count() or 1
        figures["cpu_bound_ratio"] = figures["w4_cpu_s_per_flow"] * flows / cores / figures["w1_wall_s"]
    figures["cores"] = os.cpu_count() or 0
    figures["load_avg_at_start"] = round(load, 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--chromium-flows", type=int, default=16)
    args = parser.parse_args()
    results = {
        "workers_wait_16x1s": bench_row("steps:\n  - wait: 1000\n", 16, args.repeat, sample_cpu=False),
        "workers_chromium_16": bench_row(
            "steps:\n  - launch: { chromium: site }\n  - tap: Add to cart\n  - assert: { visible: In the cart }\n",
            args.chromium_flows,
            args.repeat,
            sample_cpu=True,
        ),
    }
    report("suite", results)


if __name__ == "__main__":
    main()
