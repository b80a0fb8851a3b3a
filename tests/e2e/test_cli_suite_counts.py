"""A directory run that did not all pass: its counts are the reports' (JUnit, HTML, --json) by one
definition (``argent.reports.model``: a flow that ran and failed or errored a step is failed, one
that could not start is an error), and it ends with the flows that did not pass, one line each with
its first failing line (issue 23 item 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e

#: A step that errors as it runs (no check before the run can judge a tool's arguments).
ERRS = "  - tool: flow-read-prerequisite\n    args: { name: gone }\n"
ERR_LINE = "✗  2 tool flow-read-prerequisite — Invalid arguments for flow-read-prerequisite: project_root is required"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def suite(project: Path) -> Path:
    directory = project / "suite"
    write(directory / "a-pass.yaml", "steps:\n  - wait: 1\n")
    write(directory / "b-fail.yaml", "steps:\n  - wait: 1\n" + ERRS)
    write(directory / "c-fail.yaml", "steps:\n  - echo: c\n" + ERRS)
    write(directory / "d-error.yaml", "steps:\n  - run: nothere\n")
    write(directory / "e-error.yaml", "steps:\n  - bogus: line\n")
    return directory


def test_the_console_counts_are_the_reports_counts_and_the_failures_end_the_run(
    cli: Cli, project: Path, suite: Path
) -> None:
    done = cli.run("flow", "run", "suite", "--junit-xml", "j.xml", "--html", "h")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    tail = lines[lines.index("") :]
    assert tail == [
        "",
        "FAIL — 5 flows: 1 passed, 2 failed, 2 errored, 0 skipped",
        "Flows that did not pass:",
        f"  ✗ suite/b-fail.yaml (failed): {ERR_LINE}",
        f"  ✗ suite/c-fail.yaml (failed): {ERR_LINE}",
        "  ✗ suite/d-error.yaml (error): not started: 1 problem found before any device started: "
        f"suite/d-error.yaml:2: `run: nothere.yaml` names no flow file: {suite.resolve()}/nothere.yaml does not "
        "exist. Create that file, or fix the target: it is relative to this file, and .yaml may be left out.",
        "  ✗ suite/e-error.yaml (error): not started: 1 problem found before any device started: "
        "suite/e-error.yaml:2: step 1: unrecognized step kind. See docs/flows.md for every directive and its keys.",
    ]
    junit = (project / "j.xml").read_text(encoding="utf-8")
    head = re.search(r"<testsuites [^>]*>", junit)
    assert head is not None
    assert 'tests="5"' in head.group() and 'failures="2"' in head.group() and 'errors="2"' in head.group()
    page = (project / "h" / "index.html").read_text(encoding="utf-8")
    assert "5 flows · 1 passed · 2 failed · 2 error · 0 skipped" in page
    as_json = json.loads(cli.run("flow", "run", "suite", "--json").stdout)
    assert {k: as_json[k] for k in ("total", "passed", "failed", "errored", "skipped")} == {
        "total": 5,
        "passed": 1,
        "failed": 2,
        "errored": 2,
        "skipped": 0,
    }
    assert [flow["status"] for flow in as_json["flows"]] == ["pass", "fail", "fail", "error", "error"]


def test_the_same_counts_with_workers(cli: Cli, suite: Path) -> None:
    done = cli.run("flow", "run", "suite", "--workers", "3")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "FAIL — 5 flows: 1 passed, 2 failed, 2 errored, 0 skipped" in lines
    assert [line.split(" (")[0] for line in lines[lines.index("Flows that did not pass:") + 1 :]] == [
        "  ✗ suite/b-fail.yaml",
        "  ✗ suite/c-fail.yaml",
        "  ✗ suite/d-error.yaml",
        "  ✗ suite/e-error.yaml",
    ]


def test_a_run_that_all_passed_ends_with_its_summary(cli: Cli, project: Path) -> None:
    write(project / "suite" / "a.yaml", "steps:\n  - wait: 1\n")
    done = cli.run("flow", "run", "suite")
    assert done.stdout.splitlines()[-1] == "PASS — 1 flow: 1 passed, 0 failed, 0 errored, 0 skipped"
