"""``--src NAME=DIR`` of the benchmarks that compare checkouts (bench/bench_calls.py,
bench/bench_cli.py): one option, read in one place (bench/common.py). A spec that would measure
something else than the user meant (no ``=``, no name, the unnamed row of this checkout, a
directory without an ``argent`` package, a name given twice) stops the run before it measures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
ROOT = BENCH.parent
SCRIPTS = {"bench_calls.py": ["--calls", "1"], "bench_cli.py": ["--rounds", "1"]}


def bench(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / script), *SCRIPTS[script], *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("base", "--src takes NAME=DIR, not 'base'"),
        ("=.", "--src takes NAME=DIR, not '=.'"),
        ("base=", "--src takes NAME=DIR, not 'base='"),
        ("base=/nowhere", "--src base=/nowhere: no argent package in /nowhere"),
    ],
)
def test_a_src_that_names_no_checkout_stops_before_anything_runs(script: str, spec: str, says: str) -> None:
    done = bench(script, "--src", spec)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines()[-1].endswith(f"error: argument --src: {says}")


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_name_given_twice_stops_before_anything_runs(script: str) -> None:
    done = bench(script, "--src", f"base={ROOT}", "--src", f"base={ROOT}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines()[-1].endswith("error: --src names base twice")


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_both_benchmarks_describe_the_one_option(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "--src NAME=DIR" in done.stdout
    assert "Also measure the argent package in DIR (PYTHONPATH) as NAME; repeatable." in " ".join(
        done.stdout.split()
    )
