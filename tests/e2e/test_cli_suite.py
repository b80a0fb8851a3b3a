"""`argent flow run ... --junit-xml --shard --workers` as CI runs it (INTERFACE.md §7): real
processes, real files, the JUnit file validated against Jenkins' junit-10.xsd."""

from __future__ import annotations

import json
import signal
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from tests.e2e.conftest import Cli, read_until, start_server_process

pytestmark = pytest.mark.e2e

SCHEMA = xmlschema.XMLSchema(str(Path(__file__).parents[1] / "fixtures" / "junit-10.xsd"))

#: Waits until ``n`` flows have arrived in ``dir`` (each leaves a file): only flows that run at
#: the same time pass it. Exits 1 naming how many came when ``timeout`` seconds pass first.
BARRIER = """\
import os, sys, time
where, n, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
os.makedirs(where, exist_ok=True)
with open(os.path.join(where, str(os.getpid())), "w") as fh:
    fh.write(os.environ.get("ARGENT_CDP_URL", ""))
deadline = time.monotonic() + timeout
while len(os.listdir(where)) < n:
    if time.monotonic() > deadline:
        sys.exit(f"only {len(os.listdir(where))} of {n} flows arrived together")
    time.sleep(0.02)
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def junit(path: Path) -> ET.Element:
    text = path.read_text(encoding="utf-8")
    SCHEMA.validate(text)
    return ET.fromstring(text)


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name") or "": case for case in root.iter("testcase")}


# --------------------------------------------------------------------------------------------
# --junit-xml


def test_junit_xml_of_a_directory_run_validates_and_the_exit_code_stays(cli: Cli, project: Path) -> None:
    suite = project / "suite"
    write(suite / "a-pass.yaml", "steps:\n  - echo: hello\n  - wait: 1\n")
    write(
        suite / "b-fail.yaml",
        "steps:\n  - wait: 1\n  - tool: flow-read-prerequisite\n    args: { name: gone }\n  - wait: 1\n",
    )
    write(suite / "c-invalid.yaml", "steps:\n  - bogus: line\n")
    write(suite / "sub" / "d-pass.yaml", "steps:\n  - wait: 1\n")
    done = cli.run("flow", "run", "suite", "-r", "--junit-xml", "reports/ci/junit.xml")
    assert done.returncode == 1, done.stdout + done.stderr
    root = junit(project / "reports" / "ci" / "junit.xml")
    suite_el = root.find("testsuite")
    assert suite_el is not None
    counts = {k: suite_el.get(k) for k in ("tests", "failures", "errors", "skipped")}
    assert counts == {"tests": "4", "failures": "1", "errors": "1", "skipped": "0"}
    assert {k: root.get(k) for k in ("tests", "failures", "errors")} == {
        "tests": "4",
        "failures": "1",
        "errors": "1",
    }
    by_name = cases(root)
    assert list(by_name) == [
        "suite/a-pass.yaml",
        "suite/b-fail.yaml",
        "suite/c-invalid.yaml",
        "suite/sub/d-pass.yaml",
    ]
    assert all(
        case.get("classname") == "argent" and float(case.get("time") or -1) >= 0 for case in by_name.values()
    )
    failure = by_name["suite/b-fail.yaml"].find("failure")
    assert failure is not None
    printed = [
        line for line in done.stdout.splitlines() if line.startswith("  ✗  2 tool flow-read-prerequisite")
    ]
    assert failure.get("message") == printed[0]  # the line as the CLI printed it, reason included
    assert (failure.text or "").splitlines()[:3] == ["  ✓  1 wait", printed[0], "  ·  3 wait"]
    error = by_name["suite/c-invalid.yaml"].find("error")
    assert error is not None and (error.get("message") or "") == (
        "not started: 1 problem found before any device started:\n"
        "suite/c-invalid.yaml:2: step 1: unrecognized step kind. See docs/flows.md for every directive and its keys."
    )
    assert [child.tag for child in by_name["suite/a-pass.yaml"]] == ["system-out"]

    write(suite / "b-fail.yaml", "steps:\n  - wait: 1\n")
    write(suite / "c-invalid.yaml", "steps: []\n")
    again = cli.run("flow", "run", "suite", "-r", "--junit-xml", "reports/ci/junit.xml")
    assert again.returncode == 0, again.stdout + again.stderr
    root = junit(project / "reports" / "ci" / "junit.xml")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "0", "0")
    assert sorted(p.name for p in (project / "reports" / "ci").iterdir()) == ["junit.xml"]


def test_junit_xml_of_one_flow_leaves_its_output_alone(cli: Cli, project: Path) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "checkout.yaml", "steps:\n  - echo: Checking out\n  - wait: 1\n")
    plain = cli.run("flow", "run", "checkout")
    reported = cli.run("flow", "run", "checkout", "--junit-xml", "j.xml")
    assert (reported.returncode, reported.stdout, reported.stderr) == (
        plain.returncode,
        plain.stdout,
        plain.stderr,
    )
    assert list(cases(junit(project / "j.xml"))) == [".argent/flows/checkout.yaml"]

    write(flows / "tapper.yaml", "steps:\n  - tap: Save\n")
    no_device = cli.run("flow", "run", "tapper", "--junit-xml", "j.xml")
    assert no_device.returncode == 1
    error = cases(junit(project / "j.xml"))[".argent/flows/tapper.yaml"].find("error")
    assert error is not None
    assert no_device.stderr.startswith(f"Error: {error.get('message')}")
    assert "No booted device found" in (error.get("message") or "")


def test_junit_xml_path_problems_exit_2_before_anything_runs(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "a.yaml", "steps:\n  - wait: 1\n")
    (project / "adir").mkdir()
    done = cli.run("flow", "run", "a", "--junit-xml", "adir")
    assert done.returncode == 2
    assert "--junit-xml names a file to write" in done.stderr and done.stdout == ""


# --------------------------------------------------------------------------------------------
# --shard


def test_shards_are_disjoint_and_cover_the_suite(cli: Cli, project: Path) -> None:
    suite = project / "suite"
    rels = ["a.yaml", "b.yaml", "c/a.yaml", "c/b.yaml", "d.yaml", "e/f/g.yaml", "z.yaml"]
    for rel in rels:
        write(suite / rel, "steps:\n  - wait: 1\n")
    seen: list[list[str]] = []
    for i in (1, 2, 3):
        done = cli.run("flow", "run", "suite", "-r", "--shard", f"{i}/3", "--json")
        assert done.returncode == 0, done.stderr
        flows = json.loads(done.stdout)["flows"]
        seen.append([Path(f["path"]).relative_to(suite).as_posix() for f in flows])
    assert seen == [rels[0::3], rels[1::3], rels[2::3]]


@pytest.mark.parametrize("spec", ["0/3", "4/3", "x"])  # the parser: tests/unit/test_suite_shard.py
def test_a_bad_shard_spec_exits_2(cli: Cli, project: Path, spec: str) -> None:
    write(project / "suite" / "a.yaml", "steps:\n  - wait: 1\n")
    done = cli.run("flow", "run", "suite", "--shard", spec, "--junit-xml", "j.xml")
    assert done.returncode == 2
    assert f"--shard takes I/N with whole numbers 1 <= I <= N (e.g. 2/4), not {spec!r}" in done.stderr
    assert not (project / "j.xml").exists()


def test_a_shard_that_keeps_no_flow_says_so_and_exits_0(cli: Cli, project: Path) -> None:
    write(project / "suite" / "a.yaml", "steps:\n  - wait: 1\n")
    write(project / "suite" / "b.yaml", "steps:\n  - wait: 1\n")
    done = cli.run("flow", "run", "suite", "--shard", "3/3", "--junit-xml", "j.xml")
    assert (done.returncode, done.stdout) == (
        0,
        "Shard 3/3 keeps no flow of the 2 selected; nothing to run.\n",
    )
    root = junit(project / "j.xml")
    assert (root.get("tests"), root.find("testsuite").get("tests")) == ("0", "0")  # type: ignore[union-attr]
    as_json = cli.run("flow", "run", "suite", "--shard", "3/3", "--json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout) == {
        "ok": True,
        "total": 0,
        "passed": 0,
        "failed": 0,
        "skipped": 0,
        "flows": [],
    }
    assert json.loads(as_json.stderr) == {
        "warning": "Shard 3/3 keeps no flow of the 2 selected; nothing to run."
    }


# --------------------------------------------------------------------------------------------
# --workers


def barrier_suite(project: Path, count: int, together: int, timeout: float) -> Path:
    write(project / "barrier.py", BARRIER)
    suite = project / "suite"
    for i in range(count):
        write(
            suite / f"f{i}.yaml",
            f"steps:\n  - echo: flow {i}\n  - script: {{ path: ../barrier.py, args: [{project / 'arrived'}, "
            f'"{together}", "{timeout}"] }}\n',
        )
    return suite


@pytest.mark.parametrize("workers", ["0", "two"])
def test_workers_must_be_a_positive_integer(cli: Cli, project: Path, workers: str) -> None:
    write(project / "suite" / "a.yaml", "steps:\n  - wait: 1\n")
    done = cli.run("flow", "run", "suite", "--workers", workers)
    assert done.returncode == 2 and "--workers" in done.stderr and done.stdout == ""


def test_workers_run_flows_at_once_and_keep_the_input_order(cli: Cli, project: Path) -> None:
    barrier_suite(project, count=6, together=4, timeout=30)
    done = cli.run("flow", "run", "suite", "--workers", "4", "--junit-xml", "j.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == ["", "PASS — 6 flows: 6 passed, 0 failed, 0 errored, 0 skipped"]
    names = [f"suite/f{i}.yaml" for i in range(6)]
    assert all(any(line.startswith(f"[{name}] ") for name in names) for line in lines[:-2]), lines
    for name in names:
        mine = [line for line in lines if line.startswith(f"[{name}] ")]
        assert mine[0].startswith(f"[{name}] started (") and mine[-1].startswith(f"[{name}] PASS — ")
    assert list(cases(junit(project / "j.xml"))) == names  # input order, whatever order they ended in

    (project / "arrived").rename(project / "arrived-1")
    as_json = cli.run("flow", "run", "suite", "--workers", "4", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert [Path(f["path"]).name for f in json.loads(as_json.stdout)["flows"]] == [
        f"f{i}.yaml" for i in range(6)
    ]


def test_the_barrier_holds_flows_that_do_not_run_together(cli: Cli, project: Path) -> None:
    """The barrier above proves concurrency: with fewer workers than it waits for, its flows fail."""
    barrier_suite(project, count=2, together=2, timeout=1)
    done = cli.run("flow", "run", "suite", "--workers", "1", "--json")
    assert done.returncode == 1
    assert [f["status"] for f in json.loads(done.stdout)["flows"]] == ["fail", "pass"]


def test_workers_share_a_linked_tool_server_that_allows_fewer_calls(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    config = write(tmp_path / "policy.yaml", "limits:\n  concurrent_calls_per_token: 2\n")
    server = start_server_process(cli, "--config", str(config))
    try:
        for i in range(5):
            write(project / "suite" / f"s{i}.yaml", "steps:\n  - echo: linked\n  - wait: 300\n")
        env = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token}
        done = cli.run("flow", "run", "suite", "--workers", "5", "--json", "--junit-xml", "j.xml", **env)
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert (report["total"], report["passed"]) == (5, 5)
        assert all(f["report"]["ok"] for f in report["flows"])
        root = junit(project / "j.xml")
        assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "0", "0")
    finally:
        server.stop(signal.SIGTERM)


def test_an_interrupted_run_still_writes_its_reports(cli: Cli, project: Path) -> None:
    for i in range(3):
        write(project / "suite" / f"w{i}.yaml", "steps:\n  - wait: 60000\n")
    run = cli.spawn("flow", "run", "suite", "--workers", "2", "--junit-xml", "j.xml", "--html", "h")
    assert run.stdout is not None
    read_until(run.stdout, lambda line: "suite/w1.yaml] started" in line)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 1 and err.strip() == "Aborted!"
    by_name = cases(junit(project / "j.xml"))
    skipped = {name: case.find("skipped").get("message") for name, case in by_name.items()}  # type: ignore[union-attr]
    assert skipped == {
        "suite/w0.yaml": "run aborted",
        "suite/w1.yaml": "run aborted",
        "suite/w2.yaml": "not run (batch stopped)",
    }
    assert "suite/w2.yaml" in (project / "h" / "index.html").read_text(encoding="utf-8")
