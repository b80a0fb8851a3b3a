"""`argent flow check` as a user runs it, and the same check before `argent flow run` starts a device
(issue 23 item 2, INTERFACE.md section 12): one line per problem, ``<path>:<line>: <what>. <what to
do>.``, YAML errors in plain words, no device started, nothing written; exit 0 / 1 / 2."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e

#: The issue's YAML typo: a list item indented one space more than its siblings.
TYPO = "steps:\n  - launch: page.html\n  - tap: Say hello\n   - tap: x\n"
PAGE = "<!doctype html><title>p</title><h1>Welcome</h1>\n"
#: What ruamel says about TYPO: the words a person should no longer meet.
PARSER_JARGON = "while parsing a block collection, expected <block end>, but found '<block sequence start>'"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def broken(project: Path) -> Path:
    """A project with one flow of each problem a run meets, a valid flow and a shared broken fragment."""
    flows = project / ".argent" / "flows"
    write(flows / "page.html", PAGE)
    write(flows / "good.yaml", "steps:\n  - launch: page.html\n  - assert: { visible: Welcome }\n")
    write(flows / "typo.yaml", TYPO)
    write(flows / "missing-run.yaml", "steps:\n  - echo: hi\n  - run: nothere\n")
    write(flows / "bad-step.yaml", "steps:\n  - echo: ok\n  - snapshoot: home\n")
    write(flows / "no-page.yaml", "steps:\n  - launch: pages/gone.html\n")
    write(flows / "no-script.yaml", "steps:\n  - script: scripts/seed.py\n")
    write(flows / "no-upload.yaml", "steps:\n  - upload: { into: Photo, files: [fixtures/photo.png] }\n")
    write(flows / "no-baseline.yaml", "steps:\n  - launch: page.html\n  - snapshot: home\n")
    write(
        flows / "prereq.yaml",
        "executionPrerequisite: signed in\nsteps:\n  - launch: page.html\n",
    )
    write(flows / "lib" / "bad-fragment.yaml", "steps:\n  - echo: 'it's\n")
    write(flows / "uses-a.yaml", "steps:\n  - run: lib/bad-fragment\n")
    write(
        flows / "uses-b.yaml",
        "steps:\n  - when: { platform: ios }\n    steps:\n      - run: lib/bad-fragment\n",
    )
    return project


EXPECTED = [
    ".argent/flows/bad-step.yaml:3: step 2: unrecognized step kind (did you mean `snapshot`?). "
    "See docs/flows.md for every directive and its keys.",
    ".argent/flows/missing-run.yaml:3: `run: nothere.yaml` names no flow file: {flows}/nothere.yaml does not "
    "exist. Create that file, or fix the target: it is relative to this file, and .yaml may be left out.",
    '.argent/flows/no-baseline.yaml:3: snapshot "home" has no baseline yet (none in '
    "__baselines__/no-baseline). Record it with `argent flow run <flow> --update-baselines`, look at it, and "
    "commit it.",
    '.argent/flows/no-page.yaml:2: The chromium launch target "pages/gone.html" is neither a URL nor an '
    "existing file: {flows}/pages/gone.html does not exist. Fix the path: it is relative to this file.",
    ".argent/flows/no-script.yaml:2: script scripts/seed.py was not found: no file at {flows}/scripts/seed.py. "
    "Fix the path (it is relative to this file), or create the script.",
    ".argent/flows/no-upload.yaml:2: `upload:` file fixtures/photo.png cannot be had: ENOENT: no such file or "
    "directory, open '{flows}/fixtures/photo.png'. Fix the path (it is relative to this file), or create the "
    "file.",
    ".argent/flows/prereq.yaml:1: A flow that starts with a launch step must not declare "
    "executionPrerequisite. It launches its own app and controls its start state. Drop the leading launch to "
    "make it a fragment, or drop executionPrerequisite.",
    ".argent/flows/typo.yaml:4: this list item (`- `) is indented by 3 spaces, which matches no list above it. "
    "Use spaces only, and put every item of one list (each `- `) in the same column: line it up with the items "
    "of its list (the block that begins on line 2).",
    ".argent/flows/lib/bad-fragment.yaml:2: text follows a closing quote on this line. Put the whole value "
    "inside one pair of quotes (inside '...' an apostrophe is written '').",
]


def test_check_prints_one_line_per_problem_and_exits_1(cli: Cli, broken: Path) -> None:
    done = cli.run("flow", "check", ".argent/flows")
    flows = (broken / ".argent" / "flows").resolve()
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[:-1] == [line.format(flows=flows) for line in EXPECTED]
    # the fragment both uses-a and uses-b reach (one only inside a when: block) is said once
    assert lines[-1] == "✗ 9 problems in 10 of 11 flows"
    assert PARSER_JARGON not in done.stdout


def test_recursive_check_reaches_the_subdirectories_and_says_a_problem_once(cli: Cli, broken: Path) -> None:
    done = cli.run("flow", "check", ".argent/flows", "-r")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[-1] == "✗ 9 problems in 11 of 12 flows"
    assert sum(1 for line in lines if "bad-fragment.yaml:2:" in line) == 1


def test_a_valid_flow_exits_0(cli: Cli, broken: Path) -> None:
    done = cli.run("flow", "check", "good")
    assert (done.returncode, done.stdout, done.stderr) == (0, "✓ 1 flow checked: no problem found\n", "")


def test_json_lists_every_problem_with_its_file_and_line(cli: Cli, broken: Path) -> None:
    done = cli.run("flow", "check", ".argent/flows/typo.yaml", "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    flows = (broken / ".argent" / "flows").resolve()
    assert report["ok"] is False
    assert report["flows"] == [{"path": str(flows / "typo.yaml"), "ok": False, "problems": 1}]
    [problem] = report["problems"]
    assert (problem["path"], problem["line"]) == (str(flows / "typo.yaml"), 4)
    assert problem["text"] == EXPECTED[7]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope",), "Flow file not found: "),
        (("good", "-r"), 'flow check --recursive requires a directory path: "good" is a saved-flow name'),
        (("good.yaml",), "did you mean: argent flow check good"),
    ],
)
def test_usage_problems_exit_2(cli: Cli, broken: Path, args: tuple[str, ...], message: str) -> None:
    done = cli.run("flow", "check", *args)
    assert done.returncode == 2 and message in done.stderr and done.stdout == ""


def test_over_a_link_it_checks_what_a_link_cannot_carry(cli: Cli, project: Path) -> None:
    """A configured link (nothing need answer there: the check starts no call): a page path and a
    `script:` are problems of a run over it; --local checks for a local run."""
    flows = project / ".argent" / "flows"
    write(flows / "page.html", PAGE)
    write(flows / "seed.py", "print('seeded')\n")
    write(flows / "local.yaml", "steps:\n  - script: seed.py\n  - launch: page.html\n")
    link = {"ARGENT_TOOLS_URL": f"http://127.0.0.1:{closed_port()}"}
    linked = cli.run("flow", "check", "local", **link)
    assert linked.returncode == 1
    assert linked.stdout.splitlines() == [
        ".argent/flows/local.yaml:2: `script: seed.py` does not run over a link (the tool-server refuses script: "
        "steps). Run the flow with --local, or move the script's work into the app under test.",
        '.argent/flows/local.yaml:3: the page "page.html" is a file of this machine, which a tool-server over a '
        "link cannot open (the client sends no pages). Launch an http(s):// URL the tool-server can reach, or "
        "run with --local.",
        "✗ 2 problems in 1 of 1 flow",
    ]
    assert linked.stderr.startswith(
        f"Checked as a run over the link to {link['ARGENT_TOOLS_URL']} goes (env)"
    )
    local = cli.run("flow", "check", "local", "--local", **link)
    assert (local.returncode, local.stderr) == (0, "")


def test_check_starts_no_device_and_writes_nothing(cli: Cli, broken: Path, tmp_path: Path) -> None:
    marker, chromium = chromium_spy(tmp_path)
    before = sorted(str(p.relative_to(broken)) for p in broken.rglob("*"))
    done = cli.run("flow", "check", ".argent/flows", "-r", ARGENT_CHROMIUM=str(chromium))
    assert done.returncode == 1
    assert not marker.exists()
    assert sorted(str(p.relative_to(broken)) for p in broken.rglob("*")) == before


# --------------------------------------------------------------------------------------------
# flow run: the same check before any device


def chromium_spy(tmp_path: Path) -> tuple[Path, Path]:
    """A Chromium that leaves a mark each time it is started, then is the real one."""
    real = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if real is None:
        pytest.skip("no Chromium here")
    marker = tmp_path / "chromium-started"
    spy = tmp_path / "chromium-spy"
    spy.write_text(f'#!/bin/sh\necho started >> "{marker}"\nexec "{real}" "$@"\n')
    spy.chmod(0o755)
    return marker, spy


def test_a_missing_run_target_never_costs_a_browser_launch(cli: Cli, project: Path, tmp_path: Path) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "page.html", PAGE)
    write(flows / "checkout.yaml", "steps:\n  - launch: page.html\n  - run: nothere\n")
    marker, chromium = chromium_spy(tmp_path)
    done = cli.run("flow", "run", "checkout", ARGENT_CHROMIUM=str(chromium))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        "Error: not started: 1 problem found before any device started:\n"
        f"       .argent/flows/checkout.yaml:3: `run: nothere.yaml` names no flow file: {flows.resolve()}/"
        "nothere.yaml does not exist. Create that file, or fix the target: it is relative to this file, and "
        ".yaml may be left out.\n"
    )
    assert "ENOENT" not in done.stderr
    assert not marker.exists()
    # the same flow with its fragment: the spy is the Chromium that runs it
    write(flows / "nothere.yaml", "steps:\n  - assert: { visible: Welcome }\n")
    fixed = cli.run("flow", "run", "checkout", ARGENT_CHROMIUM=str(chromium))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert marker.read_text() == "started\n"


def test_a_yaml_typo_is_said_in_plain_words_by_flow_run(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "typo.yaml", TYPO)
    done = cli.run("flow", "run", "typo")
    assert done.returncode == 1
    assert PARSER_JARGON not in done.stderr
    assert done.stderr.splitlines()[1].strip() == EXPECTED[7]


def test_a_directory_run_starts_the_valid_flows_and_not_the_broken_ones(cli: Cli, project: Path) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "a.yaml", "steps:\n  - wait: 1\n")
    write(flows / "b.yaml", "steps:\n  - run: nothere\n")
    write(flows / "c.yaml", "steps:\n  - wait: 1\n")
    done = cli.run("flow", "run", ".argent/flows", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 1
    assert [flow["status"] for flow in report["flows"]] == ["pass", "error", "pass"]
    assert report["flows"][1]["error"].startswith("not started: 1 problem found before any device started:\n")
    assert os.path.basename(report["flows"][1]["path"]) == "b.yaml"
