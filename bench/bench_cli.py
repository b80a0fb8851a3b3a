"""Command-line start-up: `argent --help` and `argent flow run hello` against a bare `python -c pass`.

    .venv/bin/python bench/bench_cli.py [--rounds 20] [--src base=/path/to/other/checkout]

Each round runs every command once, in turn, so all see the same machine load; the figures are the
medians (and 10th percentiles) of the wall time of the whole process. `flow run hello` runs a
one-echo flow on the embedded tool-server (no link), as a first-time user would, with byte-code
caches in place (``PYTHONDONTWRITEBYTECODE`` is dropped for the runs). Targets:
`argent --help` <= 5x `python -c pass`, `argent flow run hello` <= 8x. The row ``import_aiohttp_web``
(``python -c "import aiohttp.web"``) shows the floor of any command that starts the embedded server.

``--src NAME=DIR`` adds the rows of the ``argent`` package found in ``DIR`` (another checkout, say
the base commit), suffixed ``@NAME``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import add_src_option, report, sources_of


def run_seconds(argv: list[str], env: dict[str, str], cwd: str) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    took = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr.decode()
    return took


def _p10(values: list[float]) -> float:
    return sorted(values)[len(values) // 10]


def bench(rounds: int, sources: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        (project / ".argent" / "flows").mkdir(parents=True)
        (project / ".argent" / "flows" / "hello.yaml").write_text("steps:\n  - echo: hello\n")
        home = Path(tmp) / "home"
        home.mkdir()
        # No link, and byte-code caches written and used as on a user's machine (the warm-up writes them).
        dropped = ("ARGENT_TOOLS_URL", "ARGENT_AUTH_TOKEN", "PYTHONDONTWRITEBYTECODE")
        base_env = {k: v for k, v in os.environ.items() if k not in dropped}
        base_env.update(HOME=str(home), TMPDIR=tmp)
        cases: list[tuple[str, list[str], dict[str, str]]] = [
            ("python_pass", [sys.executable, "-c", "pass"], base_env),
            # What the embedded tool-server cannot do without: its HTTP server and client (reference only).
            ("import_aiohttp_web", [sys.executable, "-c", "import aiohttp.web"], base_env),
        ]
        for label, path in sources.items():
            env = dict(base_env)
            if path is not None:
                env["PYTHONPATH"] = path
            suffix = f"@{label}" if label else ""
            argent = [sys.executable, "-m", "argent"]
            cases.append((f"help{suffix}", [*argent, "--help"], env))
            cases.append((f"flow_run_hello{suffix}", [*argent, "flow", "run", "hello"], env))
        samples: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        for _, argv, env in cases:  # warm the file cache and the byte-code
            run_seconds(argv, env, str(project))
        for _ in range(rounds):
            for name, argv, env in cases:
                samples[name].append(run_seconds(argv, env, str(project)))
    bare = statistics.median(samples["python_pass"])
    bare_p10 = _p10(samples["python_pass"])
    results: dict[str, dict[str, Any]] = {}
    for name, values in samples.items():
        figures: dict[str, Any] = {"ms": statistics.median(values) * 1000, "p10_ms": _p10(values) * 1000}
        if name != "python_pass":
            figures["ratio_vs_python"] = statistics.median(values) / bare
            figures["p10_ratio_vs_python"] = _p10(values) / bare_p10
        results[name] = figures
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=20)
    add_src_option(parser)
    args = parser.parse_args()
    sources = sources_of(parser, args.src)
    report("cli", bench(args.rounds, sources))


if __name__ == "__main__":
    main()
