"""What `argent flow run` shows a person (issue 23 item 5): colour on the status marks and verdicts
on a terminal or with FORCE_COLOR, never with NO_COLOR, the lines otherwise the same; on a real
terminal (a pty) the live line names the step that runs; and ``--local`` runs on an embedded
tool-server whatever link is configured."""

from __future__ import annotations

import os
import pty
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def suite(project: Path) -> Path:
    write(project / "suite" / "a.yaml", "steps:\n  - echo: hello\n  - wait: 1\n")
    write(
        project / "suite" / "b.yaml",
        "steps:\n  - wait: 1\n  - tool: flow-read-prerequisite\n    args: { name: x }\n",
    )
    return project / "suite"


def test_force_color_colours_marks_and_verdicts_and_nothing_else(cli: Cli, suite: Path) -> None:
    plain = cli.run("flow", "run", "suite")
    coloured = cli.run("flow", "run", "suite", FORCE_COLOR="1")
    assert plain.returncode == coloured.returncode == 1
    assert "\x1b[" not in plain.stdout
    assert click.unstyle(coloured.stdout) == plain.stdout
    lines = coloured.stdout.splitlines()
    assert "  \x1b[32m✓\x1b[0m  2 wait" in lines
    assert any(line.startswith("  \x1b[31m✗\x1b[0m  2 tool flow-read-prerequisite") for line in lines)
    assert "\x1b[31m\x1b[1mFAIL\x1b[0m — 2 flows: 1 passed, 1 failed, 0 errored, 0 skipped" in lines
    # only marks and verdicts: every escape stands before one of them
    for line in lines:
        for match in ANSI.finditer(line):
            after = ANSI.sub("", line[match.end() :])
            assert not after or after[0] in "✓✗·⚠PF" or match.group() == "\x1b[0m", line


def test_no_color_wins_over_force_color(cli: Cli, suite: Path) -> None:
    plain = cli.run("flow", "run", "suite")
    done = cli.run("flow", "run", "suite", FORCE_COLOR="1", NO_COLOR="1")
    assert done.stdout == plain.stdout and "\x1b" not in done.stdout


def test_flow_check_colours_its_closing_mark(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "ok.yaml", "steps:\n  - wait: 1\n")
    done = cli.run("flow", "check", "ok", FORCE_COLOR="1")
    assert done.stdout == "\x1b[32m✓\x1b[0m 1 flow checked: no problem found\n"


def run_on_a_terminal(cli: Cli, args: list[str], until: str, then: Path, timeout: float = 60) -> str:
    """Run the CLI on a pty (a real terminal); when its screen shows ``until``, create ``then``."""
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "argent", *args],
        cwd=cli.cwd,
        env=cli.env(TERM="xterm"),
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
    )
    os.close(child)
    screen = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                screen += chunk
            if until.encode() in screen and not then.exists():
                then.touch()
            if proc.poll() is not None and not ready:
                break
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    return screen.decode("utf-8", "replace")


def test_the_live_line_names_the_running_step_and_no_step_past_the_last(cli: Cli, project: Path) -> None:
    gate = project / "gate"
    flows = project / ".argent" / "flows"
    write(flows / "wait.sh", 'while [ ! -e "$1" ]; do sleep 0.01; done\n')
    write(
        flows / "live.yaml",
        f"steps:\n  - echo: start\n  - script: {{ path: wait.sh, args: [{gate}] }}\n  - wait: 1\n",
    )
    screen = run_on_a_terminal(cli, ["flow", "run", "live"], "… step 2 script wait.sh (", gate)
    assert gate.exists(), screen  # the live line named step 2 while it ran, so the test opened its gate
    text = click.unstyle(screen)
    assert "  ✓  2 script wait.sh\r\n" in text
    assert "step 4" not in text  # the flow has 3 steps
    assert "PASS — 2 passed, 0 failed, 0 skipped, 0 errored" in text
    assert "\x1b[32m✓\x1b[0m" in screen  # a terminal gets colour


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_local_runs_on_an_embedded_tool_server_whatever_the_link_says(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "ok.yaml", "steps:\n  - wait: 1\n")
    link = {"ARGENT_TOOLS_URL": f"http://127.0.0.1:{closed_port()}"}
    linked = cli.run("flow", "run", "ok", **link)
    assert linked.returncode == 1
    assert linked.stderr.startswith(f"Error: Could not reach the tool-server at {link['ARGENT_TOOLS_URL']}")
    assert "(or pass --local)" in linked.stderr
    assert cli.run("flow", "run", "ok", "--local", **link).returncode == 0
    tools = cli.run("tools", "list", "--local", **link)
    assert tools.returncode == 0 and "flow-execute" in tools.stdout
    devices = cli.run("run", "--local", "list-devices", **link)
    assert devices.returncode == 0 and '"devices"' in devices.stdout
    assert cli.run("tools", "list", **link).returncode == 1
