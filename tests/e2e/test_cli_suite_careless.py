"""A careless user's ``argent flow run`` suite flags (INTERFACE.md §7): report paths that would
destroy files or each other, or that cannot be written, stop the run before it starts (exit 2);
an absurd ``--workers`` is bounded; odd directory names cannot break or spoof prefixed lines."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from argent.limits import MAX_SUITE_WORKERS
from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e

FLOW = "steps:\n  - wait: 1\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("victim", ["suite/a.yaml", "README.md"])
def test_junit_xml_never_overwrites_a_file_that_is_not_a_junit_report(
    cli: Cli, project: Path, victim: str
) -> None:
    write(project / "suite" / "a.yaml", FLOW)
    write(project / "README.md", "# my project\n")
    before = (project / victim).read_text()
    done = cli.run("flow", "run", "suite", "--junit-xml", victim)
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        f"Error: --junit-xml {project / victim} already holds a file that is not a JUnit report; pass the "
        "path of a new file or of an earlier report (it is replaced)."
    ) in done.stderr
    assert (project / victim).read_text() == before


def test_junit_xml_naming_a_fifo_is_refused_without_opening_it(cli: Cli, project: Path) -> None:
    write(project / "suite" / "a.yaml", FLOW)
    os.mkfifo(project / "pipe")
    done = cli.run("flow", "run", "suite", "--junit-xml", "pipe", timeout=30)
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        f"Error: --junit-xml {project / 'pipe'} already holds a file that is not a JUnit report"
        in done.stderr
    )


def test_an_earlier_junit_report_or_an_empty_file_is_replaced(cli: Cli, project: Path) -> None:
    write(project / "suite" / "a.yaml", FLOW)
    write(project / "old.xml", '<?xml version="1.0"?>\n<testsuites tests="9"></testsuites>\n')
    write(project / "empty.xml", "")
    for name in ("old.xml", "empty.xml"):
        done = cli.run("flow", "run", "suite", "--junit-xml", name)
        assert done.returncode == 0, done.stderr
        assert '<testcase name="suite/a.yaml"' in (project / name).read_text(encoding="utf-8")


def test_junit_xml_inside_the_html_report_exits_2(cli: Cli, project: Path) -> None:
    write(project / "suite" / "a.yaml", FLOW)
    done = cli.run("flow", "run", "suite", "--junit-xml", "h/index.html", "--html", "h")
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        f"Error: --junit-xml {project / 'h' / 'index.html'} is inside the --html report directory "
        f"{project / 'h'}, which the HTML report replaces; write it elsewhere."
    ) in done.stderr
    assert not (project / "h").exists()


def test_junit_xml_where_no_file_can_be_created_exits_2_before_anything_runs(cli: Cli, project: Path) -> None:
    write(project / "suite" / "a.yaml", FLOW)
    done = cli.run("flow", "run", "suite", "--junit-xml", "/proc/argent-junit.xml")
    assert (done.returncode, done.stdout) == (2, "")
    assert "Error: --junit-xml cannot write /proc/argent-junit.xml: " in done.stderr


def test_a_billion_workers_run_the_flows_with_a_bounded_number_of_calls(cli: Cli, project: Path) -> None:
    for i in range(3):
        write(project / "suite" / f"f{i}.yaml", FLOW)
    done = cli.run("flow", "run", "suite", "--workers", "1000000000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "PASS — 3 flows: 3 passed, 0 failed, 0 errored, 0 skipped"
    assert done.stderr == (
        f"--workers 1000000000 is more than argent runs at once; running up to {MAX_SUITE_WORKERS} flows at "
        "once.\n"
    )


def test_odd_directory_names_cannot_break_or_spoof_a_prefixed_line(cli: Cli, project: Path) -> None:
    write(project / "odd" / "x] <b>" / "a.yaml", "steps:\n  - echo: '<script>alert(1)</script>'\n")
    write(project / "odd" / "n\nl" / "b.yaml", FLOW)
    done = cli.run("flow", "run", "odd", "-r", "--workers", "2", "--junit-xml", "j.xml", "--html", "h")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(done.stdout.splitlines()[:-2]) == sorted(
        [
            "[odd/n\\u000al/b.yaml] started (1/2)",
            "[odd/n\\u000al/b.yaml] ✓  1 wait",
            "[odd/n\\u000al/b.yaml] PASS — 1 passed, 0 failed, 0 skipped, 0 errored",
            "[odd/x\\u005d <b>/a.yaml] started (2/2)",
            "[odd/x\\u005d <b>/a.yaml] › <script>alert(1)</script>",
            "[odd/x\\u005d <b>/a.yaml] PASS — 0 passed, 0 failed, 0 skipped, 0 errored (no test steps)",
        ]
    )
    names = re.findall(r'<testcase name="([^"]*)"', (project / "j.xml").read_text(encoding="utf-8"))
    assert names == ["odd/n\\u000al/b.yaml", "odd/x] &lt;b&gt;/a.yaml"]
    page = (project / "h" / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "odd/x] &lt;b&gt;/a.yaml" in page
    assert "<script" not in page and "<b>" not in page
    assert "Content-Security-Policy\" content=\"default-src 'none'; img-src 'self'" in page


def test_a_suite_outside_the_project_root_is_named_with_dotdot_and_writes_nothing_by_name(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    for name in ("a", "b"):
        write(tmp_path / "outside" / f"{name}.yaml", FLOW)
    done = cli.run(
        "flow", "run", str(tmp_path / "outside"), "--workers", "2", "--junit-xml", "j.xml", "--html", "h"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(done.stdout.splitlines()[:-2]) == [
        "[../outside/a.yaml] PASS — 1 passed, 0 failed, 0 skipped, 0 errored",
        "[../outside/a.yaml] started (1/2)",
        "[../outside/a.yaml] ✓  1 wait",
        "[../outside/b.yaml] PASS — 1 passed, 0 failed, 0 skipped, 0 errored",
        "[../outside/b.yaml] started (2/2)",
        "[../outside/b.yaml] ✓  1 wait",
    ]
    names = re.findall(r'<testcase name="([^"]*)"', (project / "j.xml").read_text(encoding="utf-8"))
    assert names == ["../outside/a.yaml", "../outside/b.yaml"]
    assert sorted(p.name for p in (project / "h").iterdir()) == [".argent-report", "images", "index.html"]
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["a.yaml", "b.yaml"]


def test_a_reason_that_spans_lines_stays_under_its_step_and_its_flow(cli: Cli, project: Path) -> None:
    """A script's stderr tail cannot print a line that passes for another flow's or a summary."""
    write(
        project / "suite" / "bad.sh", 'echo "line one" >&2\necho "[suite/b.yaml] PASS — spoof" >&2\nexit 3\n'
    )
    write(project / "suite" / "a.yaml", "steps:\n  - script: bad.sh\n")
    write(project / "suite" / "b.yaml", FLOW)
    done = cli.run("flow", "run", "suite", "--workers", "2")
    assert done.returncode == 1
    mine = [line for line in done.stdout.splitlines() if line.startswith("[suite/a.yaml] ")]
    assert mine == [
        "[suite/a.yaml] started (1/2)",
        "[suite/a.yaml] ✗  1 script bad.sh — script bad.sh exited with code 3: line one",
        "[suite/a.yaml]      [suite/b.yaml] PASS — spoof",
        "[suite/a.yaml] FAIL — 0 passed, 1 failed, 0 skipped, 0 errored",
    ]
    assert [line for line in done.stdout.splitlines() if "spoof" in line] == [mine[2]]
    single = cli.run("flow", "run", "suite/a.yaml")
    assert single.stdout.splitlines()[1:3] == [
        "  ✗  1 script bad.sh — script bad.sh exited with code 3: line one",
        "       [suite/b.yaml] PASS — spoof",
    ]
