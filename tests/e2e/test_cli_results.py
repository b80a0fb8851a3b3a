"""The images of failing steps outlive the command without ``--output`` (issue 23 item 3, INTERFACE.md
section 12): kept under ``<project>/.argent/results/<run>/``, the 10 latest runs kept, a running
run's folder never removed by another, a project that cannot hold them sends them to a kept temp
folder, and over a link the client keeps what the tool-server's lines name. Real Chromium."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, ServerProcess, chromium_marks

pytestmark = chromium_marks()

PAGE = "<!doctype html><title>p</title><h1>Welcome</h1>\n"
FAILING = "steps:\n  - launch: page.html\n  - assert: { visible: Nope }\n"
SHOT = re.compile(r"^ +screenshot: (.+)$", re.MULTILINE)
NOTE = re.compile(r"^Images of failed steps: (\S+) \(the latest 10 runs are kept there", re.MULTILINE)
RUN_NAME = re.compile(r"^\d{8}-\d{6}-\d+-[0-9a-f]{6}\Z")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def failing(project: Path) -> Path:
    flows = project / ".argent" / "flows"
    write(flows / "page.html", PAGE)
    write(flows / "home.yaml", FAILING)
    return project


def runs(project: Path) -> list[str]:
    return sorted(p.name for p in (project / ".argent" / "results").iterdir())


def test_the_screenshot_of_a_failed_step_outlives_the_command(cli: Cli, failing: Path) -> None:
    done = cli.run("flow", "run", "home")
    assert done.returncode == 1
    [shot] = SHOT.findall(done.stdout)
    [run] = runs(failing)
    assert RUN_NAME.match(run)
    assert shot == str(failing / ".argent" / "results" / run / "home" / "step-2-screenshot.png")
    assert Path(shot).read_bytes().startswith(b"\x89PNG")
    note = NOTE.search(done.stdout)
    assert note is not None and note.group(1) == f".argent/results/{run}"
    assert done.stdout.splitlines()[-1].startswith("Images of failed steps: ")
    # --json names the kept copy too
    as_json = cli.run("flow", "run", "home", "--json")
    assert '"screenshot": "' + str(failing / ".argent" / "results") in as_json.stdout
    # every run that kept nothing makes no folder
    write(failing / ".argent" / "flows" / "ok.yaml", "steps:\n  - wait: 1\n")
    assert cli.run("flow", "run", "ok").returncode == 0
    assert len(runs(failing)) == 2


@pytest.fixture
def locked() -> Iterator[list[int]]:
    fds: list[int] = []
    yield fds
    for fd in fds:
        os.close(fd)


def test_the_ten_latest_runs_are_kept_and_a_running_one_never_removed(
    cli: Cli, failing: Path, locked: list[int]
) -> None:
    results = failing / ".argent" / "results"
    old = [f"20200101-0000{n:02d}-1-abcdef" for n in range(11)]
    for name in old:
        write(results / name / "home" / "step-2-screenshot.png", "old")
        write(results / name / ".running", "")
    # the oldest is still running (another `argent flow run` holds its lock)
    fd = os.open(results / old[0] / ".running", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    locked.append(fd)
    write(results / "notes.txt", "mine")  # not a run's folder: never touched
    done = cli.run("flow", "run", "home")
    assert done.returncode == 1
    ours = [name for name in runs(failing) if name not in old and name != "notes.txt"]
    assert len(ours) == 1
    # ours and the 9 latest old ones are the 10 latest; old[1] is removed, old[0] runs and stays
    assert runs(failing) == sorted([old[0], *old[2:], ours[0], "notes.txt"])


def test_two_runs_at_once_never_remove_each_others_folder(cli: Cli, failing: Path) -> None:
    """Run A keeps an image, then waits at a gate while run B, with ten newer folders about, prunes:
    A's folder is beyond the 10 latest, but it runs, so B leaves it; then A ends with its paths alive."""
    flows = failing / ".argent" / "flows"
    gate = failing / "gate"
    write(flows / "suite" / "a1.yaml", "steps:\n  - launch: ../page.html\n  - assert: { visible: Nope }\n")
    write(flows / "suite" / "a2.yaml", f"steps:\n  - script: {{ path: ../wait.sh, args: [{gate}] }}\n")
    write(flows / "wait.sh", 'while [ ! -e "$1" ]; do sleep 0.01; done\n')
    a = cli.spawn("flow", "run", ".argent/flows/suite")
    try:
        assert a.stdout is not None
        seen = []
        while not any(SHOT.match(line) for line in seen):
            line = a.stdout.readline()
            assert line, "run A ended before it kept an image"
            seen.append(line.rstrip("\n"))
        a_shot = SHOT.match(seen[-1]).group(1)  # type: ignore[union-attr]
        a_run = Path(a_shot).parents[1].name
        for n in range(10):  # ten runs newer than A's (their names sort later)
            write(failing / ".argent" / "results" / f"29991231-0000{n:02d}-1-abcdef" / "x.png", "new")
        b = cli.run("flow", "run", "home")
        assert b.returncode == 1
        [b_shot] = SHOT.findall(b.stdout)
        assert Path(a_shot).is_file() and Path(b_shot).is_file()
        assert a_run in runs(failing)
        gate.touch()
        a.communicate(timeout=60)
    finally:
        if a.poll() is None:
            a.kill()
            a.communicate()
    assert a.returncode == 1
    assert Path(a_shot).is_file() and Path(b_shot).is_file()


def test_a_project_that_cannot_hold_results_keeps_them_in_a_temp_folder(cli: Cli, failing: Path) -> None:
    write(failing / ".argent" / "results", "a file where the folder would be\n")
    done = cli.run("flow", "run", "home")
    assert done.returncode == 1
    [shot] = SHOT.findall(done.stdout)
    try:
        assert Path(shot).read_bytes().startswith(b"\x89PNG")
        kept = Path(shot).parents[1]
        assert kept.name.startswith("argent-results-")
        assert done.stderr.startswith(
            f"warning: {failing / '.argent' / 'results'} cannot be written (File exists); the images of failed "
            f"steps are kept in {kept} instead."
        )
    finally:
        shutil.rmtree(Path(shot).parents[1], ignore_errors=True)


def test_over_a_link_the_client_keeps_the_images_the_lines_name(
    cli: Cli, failing: Path, server: ServerProcess
) -> None:
    page = (failing / ".argent" / "flows" / "page.html").resolve()
    write(
        failing / ".argent" / "flows" / "remote.yaml",
        f"steps:\n  - launch: {page.as_uri()}\n  - assert: {{ visible: Nope }}\n",
    )
    done = cli.run("flow", "run", "remote", ARGENT_TOOLS_URL=server.url, ARGENT_AUTH_TOKEN=server.token)
    assert done.returncode == 1, done.stderr
    [shot] = SHOT.findall(done.stdout)
    assert shot.startswith(str(failing / ".argent" / "results"))
    server.stop()
    assert Path(shot).read_bytes().startswith(b"\x89PNG")
