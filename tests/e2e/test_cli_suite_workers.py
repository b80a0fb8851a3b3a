"""`argent flow run <dir> --workers N` prints every step line of every flow as it arrives
(INTERFACE.md §4); when N > 1 each human line is prefixed with ``[<flow path relative to
project_root>] `` (§7), when N = 1 (the default) it is not.

The test process is the conductor: each flow's steps wait for a gate file that the test writes
only once it has *read* the line of the step before on the CLI's stdout, so the exact order of
the lines is fixed and a line that were held back until its flow ended would stall the run."""

from __future__ import annotations

import json
import signal
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import IO

import pytest
import xmlschema

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e

SCHEMA = xmlschema.XMLSchema(str(Path(__file__).parents[1] / "fixtures" / "junit-10.xsd"))

#: Waits for the gate file ``$1`` (poll with a deadline of 30 s: no event crosses the processes).
GATE = """\
i=0
while [ ! -e "$1" ]; do
  i=$((i + 1))
  if [ "$i" -gt 3000 ]; then echo "gate $1 never opened" >&2; exit 1; fi
  sleep 0.01
done
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def gate_step(project: Path, name: str) -> str:
    return f"  - script: {{ path: ../gate.sh, args: [{project / 'gates' / name}] }}\n"


def next_line(stream: IO[str]) -> str:
    line = stream.readline()
    assert line, "the CLI closed its stdout early"
    return line.rstrip("\n")


def rest_of(run: subprocess.Popen[str]) -> tuple[str, str]:
    """What the CLI prints after the lines ``next_line`` took, read through the same text streams:
    their buffers may already hold the next lines, which ``communicate()`` (reading the pipes
    beneath them) would lose."""
    assert run.stdout is not None and run.stderr is not None
    out, err = run.stdout.read(), run.stderr.read()
    run.wait(timeout=60)
    return out, err


def test_every_line_of_every_flow_arrives_prefixed_and_interleaved(cli: Cli, project: Path) -> None:
    write(project / "gate.sh", GATE)
    (project / "gates").mkdir()
    suite = project / "suite"
    write(
        suite / "a.yaml", "steps:\n  - echo: A begins\n" + gate_step(project, "a1") + gate_step(project, "a2")
    )
    write(
        suite / "b.yaml",
        "steps:\n"
        + gate_step(project, "b1")
        + gate_step(project, "b2")
        + "  - tool: flow-read-prerequisite\n    args: { name: gone }\n  - wait: 1\n",
    )
    write(suite / "c.yaml", "steps:\n  - bogus: line\n")
    run = cli.spawn("flow", "run", "suite", "--workers", "2")
    assert run.stdout is not None
    seen: list[str] = []

    def expect(*lines: str) -> None:
        got = [next_line(run.stdout) for _ in lines]  # type: ignore[arg-type]
        seen.extend(got)
        assert sorted(got) == sorted(lines), seen

    def opens(gate: str) -> None:
        (project / "gates" / gate).touch()

    try:
        expect("[suite/a.yaml] started (1/3)", "[suite/b.yaml] started (2/3)", "[suite/a.yaml] › A begins")
        opens("a1")
        expect("[suite/a.yaml] ✓  2 script ../gate.sh")
        opens("b1")
        expect("[suite/b.yaml] ✓  1 script ../gate.sh")
        opens("a2")
        expect(
            "[suite/a.yaml] ✓  3 script ../gate.sh",
            "[suite/a.yaml] PASS — 2 passed, 0 failed, 0 skipped, 0 errored",
        )
        expect(
            "[suite/c.yaml] started (3/3)",
            "[suite/c.yaml] ✗ not started: 1 problem found before any device started:",
            "[suite/c.yaml] suite/c.yaml:2: step 1: unrecognized step kind. See docs/flows.md for every directive and "
            "its keys.",
        )
        opens("b2")
        out, err = rest_of(run)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    rest = out.splitlines()
    assert rest == [
        "[suite/b.yaml] ✓  2 script ../gate.sh",
        "[suite/b.yaml] ✗  3 tool flow-read-prerequisite — Invalid arguments for flow-read-prerequisite: "
        "project_root is required",
        "[suite/b.yaml] ·  4 wait",
        "[suite/b.yaml] FAIL — 2 passed, 0 failed, 1 skipped, 1 errored",
        "",
        "FAIL — 3 flows: 1 passed, 1 failed, 1 errored, 0 skipped",
        "Flows that did not pass:",
        "  ✗ suite/b.yaml (failed): ✗  3 tool flow-read-prerequisite — Invalid arguments for flow-read-prerequisite: "
        "project_root is required",
        "  ✗ suite/c.yaml (error): not started: 1 problem found before any device started: suite/c.yaml:2: step 1: "
        "unrecognized step kind. See docs/flows.md for every directive and its keys.",
    ], seen
    assert (run.returncode, err) == (1, "")


def test_one_worker_prints_every_step_line_as_it_arrives_unprefixed(cli: Cli, project: Path) -> None:
    """The default ``--workers 1`` streams as one flow and ``--workers N`` do: a passing step's
    line is printed when its progress line arrives, not held back (or dropped) until the flow ends;
    the flow's start line, its summary and the suite's stay as they were."""
    write(project / "gate.sh", GATE)
    (project / "gates").mkdir()
    suite = project / "suite"
    write(
        suite / "a.yaml", "steps:\n  - echo: A begins\n" + gate_step(project, "a1") + gate_step(project, "a2")
    )
    write(
        suite / "b.yaml",
        "steps:\n"
        + gate_step(project, "b1")
        + "  - tool: flow-read-prerequisite\n    args: { name: gone }\n  - wait: 1\n",
    )
    write(suite / "c.yaml", "steps:\n  - bogus: line\n")
    run = cli.spawn("flow", "run", "suite")
    assert run.stdout is not None
    seen: list[str] = []

    def expect(*lines: str) -> None:
        seen.extend(next_line(run.stdout) for _ in lines)  # type: ignore[arg-type]
        assert seen[-len(lines) :] == list(lines), seen

    def opens(gate: str) -> None:
        (project / "gates" / gate).touch()

    try:
        expect("[1/3] a.yaml", "  › A begins")
        opens("a1")
        expect("  ✓  2 script ../gate.sh")
        opens("a2")
        expect(
            "  ✓  3 script ../gate.sh", "  PASS — 2 passed, 0 failed, 0 skipped, 0 errored", "[2/3] b.yaml"
        )
        opens("b1")
        expect("  ✓  1 script ../gate.sh")
        out, err = rest_of(run)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert out.splitlines() == [
        "  ✗  2 tool flow-read-prerequisite — Invalid arguments for flow-read-prerequisite: project_root is required",
        "  ·  3 wait",
        "  FAIL — 1 passed, 0 failed, 1 skipped, 1 errored",
        "[3/3] c.yaml",
        "  ✗ not started: 1 problem found before any device started:",
        "    suite/c.yaml:2: step 1: unrecognized step kind. See docs/flows.md for every directive and its keys.",
        "",
        "FAIL — 3 flows: 1 passed, 1 failed, 1 errored, 0 skipped",
        "Flows that did not pass:",
        "  ✗ suite/b.yaml (failed): ✗  2 tool flow-read-prerequisite — Invalid arguments for flow-read-prerequisite: "
        "project_root is required",
        "  ✗ suite/c.yaml (error): not started: 1 problem found before any device started: suite/c.yaml:2: step 1: "
        "unrecognized step kind. See docs/flows.md for every directive and its keys.",
    ], seen
    assert (run.returncode, err) == (1, "")


def test_an_interrupted_flow_keeps_the_lines_that_arrived_in_its_junit_case(cli: Cli, project: Path) -> None:
    """SIGINT mid-suite: the reports are still written (INTERFACE.md §7), and the aborted flow's
    case says how far it got, as the terminal did."""
    write(project / "suite" / "a.yaml", "steps:\n  - echo: first\n  - wait: 1\n  - wait: 60000\n")
    write(project / "suite" / "b.yaml", "steps:\n  - wait: 60000\n")
    run = cli.spawn("flow", "run", "suite", "--workers", "2", "--junit-xml", "j.xml", "--html", "h")
    assert run.stdout is not None
    while next_line(run.stdout) != "[suite/a.yaml] ✓  2 wait":
        pass
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert (run.returncode, err.strip()) == (1, "Aborted!")
    text = (project / "j.xml").read_text(encoding="utf-8")
    SCHEMA.validate(text)
    root = ET.fromstring(text)
    case = {c.get("name"): c for c in root.iter("testcase")}["suite/a.yaml"]
    skipped, out = case.find("skipped"), case.find("system-out")
    assert skipped is not None and skipped.get("message") == "run aborted"
    assert out is not None and out.text == "  › first\n  ✓  2 wait"
    page = (project / "h" / "index.html").read_text(encoding="utf-8")
    assert '<pre class="lines">  › first\n  ✓  2 wait</pre>' in page


@pytest.mark.parametrize(
    ("target", "rel"), [("checkout", ".argent/flows/checkout.yaml"), ("suite/b.yaml", "suite/b.yaml")]
)
def test_one_flow_with_workers_prefixes_its_lines_too(cli: Cli, project: Path, target: str, rel: str) -> None:
    """§7's prefix is about N, not about how many flows: one flow run with ``--workers 3`` (by name
    or by path) prints the lines it prints with one worker, each with the flow's prefix (its
    indent dropped, as in a directory run); a blank line stays blank, and ``--json`` is unchanged."""
    write(
        project / ".argent" / "flows" / "checkout.yaml",
        "executionPrerequisite: signed in\nsteps:\n  - echo: Checking out\n  - wait: 1\n",
    )
    write(
        project / "suite" / "b.yaml",
        "steps:\n  - wait: 1\n  - tool: flow-read-prerequisite\n    args: { name: gone }\n",
    )
    plain = cli.run("flow", "run", target)
    prefixed = cli.run("flow", "run", target, "--workers", "3")
    assert (prefixed.returncode, prefixed.stderr) == (plain.returncode, plain.stderr)
    prefix = f"[{rel}] "
    assert prefixed.stdout.splitlines() == [
        prefix + line.removeprefix("  ") if line else "" for line in plain.stdout.splitlines()
    ]
    assert prefixed.stdout.splitlines()[-1].startswith(
        f"{prefix}{'PASS' if target == 'checkout' else 'FAIL'} — "
    )
    assert len(prefixed.stdout.splitlines()) == (6 if target == "checkout" else 5)
    as_json = cli.run("flow", "run", target, "--workers", "3", "--json")
    assert as_json.stdout.startswith("{") and json.loads(as_json.stdout)["steps"][0]["index"] == 0
