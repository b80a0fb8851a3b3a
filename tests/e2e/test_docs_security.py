"""docs/security.md's example policy, as written: the server starts with it (its project root swapped
for a real directory), `ci` runs flows and may not record, and `alice` records a flow on a browser she
boots and taps in (the example once gave her a list that could not boot a device)."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest

from argent.devices.chromium import chromium_unavailable_reason
from tests.e2e.conftest import Cli, start_server_process

pytestmark = pytest.mark.e2e

DOC = Path(__file__).parents[2] / "docs" / "security.md"
CI = "ci-" + "c" * 40
ALICE = "alice-" + "a" * 40
PAGE = (
    "data:text/html,<button onclick=\"this.textContent='Done'\" style='width:300px;height:200px'>Go</button>"
)


def example_policy(project_root: Path) -> str:
    block = re.search(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
    assert block is not None
    text = "\n".join(line[3:] if line.startswith("   ") else line for line in block.group(1).splitlines())
    assert "/srv/projects" in text
    return text.replace("/srv/projects", str(project_root))


def test_the_example_policy_lets_ci_run_and_alice_record(cli: Cli, project: Path, tmp_path: Path) -> None:
    if (reason := chromium_unavailable_reason()) is not None:
        pytest.skip(reason)
    config = tmp_path / "server.yaml"
    config.write_text(example_policy(project.parent))
    server = start_server_process(cli, "--config", str(config), ARGENT_TOKEN_CI=CI, ARGENT_TOKEN_ALICE=ALICE)
    try:
        as_ci = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": CI}
        as_alice = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": ALICE}
        rec = ["--name", "checkout", "--project-root", str(project)]
        refused = cli.run("run", "flow-start-recording", *rec, **as_ci)
        assert refused.returncode == 1 and 'guard "token:ci" did not pass' in refused.stderr

        assert cli.run("run", "flow-start-recording", *rec, **as_alice).returncode == 0
        booted = cli.run(
            "run", "flow-add-step", *rec, "--command", "boot-device", "--json",
            "--args", json.dumps({"args": json.dumps({"platform": "chromium", "url": PAGE})}),
            **as_alice,
        )  # fmt: skip
        assert booted.returncode == 0, booted.stderr
        device = json.loads(booted.stdout)["toolResult"]["id"]
        tapped = cli.run(
            "run", "flow-add-step", *rec, "--command", "gesture-tap",
            "--args", json.dumps({"args": json.dumps({"udid": device, "x": 0.1, "y": 0.1})}),
            **as_alice,
        )  # fmt: skip
        assert tapped.returncode == 0, tapped.stderr
        finished = cli.run("run", "flow-finish-recording", *rec, "--json", **as_alice)
        assert finished.returncode == 0, finished.stderr
        assert len(json.loads(finished.stdout)["summary"]) == 2
        cli.run("run", "stop-device", "--udid", device, **as_alice)

        ran = cli.run("flow", "run", "checkout", **as_ci)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    finally:
        server.stop(signal.SIGTERM)
