"""Record a flow with the real CLI against a real tool-server process, then replay it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, ServerProcess

pytestmark = pytest.mark.e2e


def linked(server: ServerProcess) -> dict[str, str]:
    return {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token}


def recorder_args(project: Path, name: str = "demo") -> list[str]:
    return ["--name", name, "--project-root", str(project)]


def test_record_over_a_link_from_the_cli_then_replay(cli: Cli, project: Path, server: ServerProcess) -> None:
    flows = project / ".argent" / "flows"
    (flows / "inner.yaml").write_text("steps:\n  - echo: from inner\n")
    env = linked(server)
    started = cli.run("run", "flow-start-recording", *recorder_args(project), "--json", **env)
    assert started.returncode == 0, started.stderr
    path = flows / "demo.yaml"
    # Over a link the client keeps the file: the directive came back and the client wrote it.
    assert json.loads(started.stdout)["savedTo"] == str(path)
    assert path.read_text() == "steps: []\n"

    echoed = cli.run("run", "flow-add-echo", *recorder_args(project), "--message", "hello", "--json", **env)
    assert echoed.returncode == 0, echoed.stderr
    assert json.loads(echoed.stdout)["stepCount"] == 1

    step_args = json.dumps({"args": json.dumps({"name": "inner", "project_root": str(project)})})
    added = cli.run(
        "run",
        "flow-add-step",
        "--args",
        step_args,
        *recorder_args(project),
        "--command",
        "flow-execute",
        **env,
    )
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["stepCount"] == 2

    finished = cli.run("run", "flow-finish-recording", *recorder_args(project), "--json", **env)
    assert finished.returncode == 0, finished.stderr
    summary = json.loads(finished.stdout)["summary"]
    assert summary[0] == "1. echo: hello"
    assert summary[1].startswith("2. ")

    again = cli.run("run", "flow-finish-recording", *recorder_args(project), **env)
    assert again.returncode == 1
    assert again.stderr.startswith(f'Error: No active recording for flow "demo" in {project}. ')

    over_link = cli.run("flow", "run", "demo", **env)
    assert over_link.returncode == 0, over_link.stdout + over_link.stderr
    local = cli.run("flow", "run", "demo")
    assert local.returncode == 0, local.stdout + local.stderr
    assert local.stdout.splitlines()[-1].startswith("PASS")


def test_recording_on_an_embedded_tool_server_says_it_does_not_last(cli: Cli, project: Path) -> None:
    started = cli.run("run", "flow-start-recording", *recorder_args(project))
    assert started.returncode == 0, started.stderr
    assert "runs on an embedded tool-server that stops when this command ends" in started.stderr
    assert (project / ".argent" / "flows" / "demo.yaml").read_text() == "steps: []\n"
    echoed = cli.run("run", "flow-add-echo", *recorder_args(project), "--message", "hi")
    assert echoed.returncode == 1
    assert 'Error: No active recording for flow "demo"' in echoed.stderr
