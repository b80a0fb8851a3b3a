"""Record a flow with the real CLI against a real tool-server process, then replay it."""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ENGINES, Cli, ServerProcess, on_engines, start_server_process

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

    # args as an object (the chromium test below sends its JSON text, as upstream's clients do)
    step_args = json.dumps({"args": {"name": "inner", "project_root": str(project)}})
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


# --------------------------------------------------------------------------------------------
# On a real headless Chromium, against the example app

EXAMPLE_APP = Path(__file__).resolve().parents[2] / "examples" / "shop"
FRAME = re.compile(r"\(([0-9.]+), ([0-9.]+), ([0-9.]+), ([0-9.]+)\)$")


def centre(description: str, element_id: str) -> tuple[float, float]:
    """The centre of the element with ``id="<element_id>"`` in a ``describe`` text, as an agent reads it."""
    for line in description.splitlines():
        if f'id="{element_id}"' in line:
            found = FRAME.search(line.strip())
            assert found, line
            x, y, w, h = (float(v) for v in found.groups())
            return round(x + w / 2, 4), round(y + h / 2, 4)
    raise AssertionError(f"no element {element_id} in:\n{description}")


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def app_url() -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(EXAMPLE_APP))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("platform", on_engines(*ENGINES))
def test_record_the_example_app_over_a_link_then_replay_over_the_link_and_locally(
    cli: Cli, project: Path, app_url: str, platform: str
) -> None:
    """Recorded on one engine (the recording carries the web target, no device), replayed on it."""
    server = start_server_process(cli)
    try:
        env = linked(server)

        def run(tool: str, *args: str) -> Any:
            done = cli.run("run", tool, *args, "--json", timeout=120, **env)
            assert done.returncode == 0, f"{tool}: {done.stderr}"
            return json.loads(done.stdout)

        def step(command: str, args: dict[str, Any]) -> Any:
            body = json.dumps({"args": json.dumps(args)})
            return run("flow-add-step", "--args", body, *recorder_args(project), "--command", command)

        run("flow-start-recording", *recorder_args(project))
        booted = step("boot-device", {"url": app_url, "platform": platform})
        udid = booted["toolResult"]["id"]
        try:
            assert booted["recorded"] == f'1. launch: {{"chromium":"{app_url}"}}'
            screen = run("describe", "--udid", udid)["description"]
            bx, by = centre(screen, "add-to-cart")
            tapped = step("gesture-tap", {"udid": udid, "x": bx, "y": by})
            assert tapped["recorded"] == '2. tap: {"id":"add-to-cart"}'
            assert tapped["message"] == 'Step added to "demo" flow'
            ex, ey = centre(screen, "email")
            assert (
                step("gesture-tap", {"udid": udid, "x": ex, "y": ey})["recorded"] == '3. tap: {"id":"email"}'
            )
            typed = step("keyboard", {"udid": udid, "text": "ada@example.com"})
            assert typed["recorded"] == '4. tool: keyboard {"text":"ada@example.com"}'
            # A key (or a chord) is recorded as the press: it is.
            assert step("keyboard", {"udid": udid, "key": "enter"})["recorded"] == '5. press: "Enter"'

            for selector in ({"text": "Welcome, ada@example.com"}, {"identifier": "cart-count", "text": "1"}):
                waited = step(
                    "await-ui-element",
                    {"udid": udid, "selector": selector, "condition": "visible", "timeoutMs": 5000},
                )
                assert waited["toolResult"]["success"] is True, waited
            finished = run("flow-finish-recording", *recorder_args(project))
        finally:
            cli.run("run", "stop-device", "--udid", udid, **env)
        assert finished["steps"] == 7
        assert finished["summary"][:5] == [
            f'1. launch: {{"chromium":"{app_url}"}}',
            '2. tap: {"id":"add-to-cart"}',
            '3. tap: {"id":"email"}',
            '4. tool: keyboard {"text":"ada@example.com"}',
            '5. press: "Enter"',
        ]
        recorded = (project / ".argent" / "flows" / "demo.yaml").read_text()
        assert "udid" not in recorded
        assert udid.startswith(f"{platform}-") and udid not in recorded
        assert "\n  - press: Enter\n" in recorded

        on = ("--platform", platform)
        over_link = cli.run("flow", "run", "demo", *on, timeout=180, **env)
        assert over_link.returncode == 0, over_link.stdout + over_link.stderr
        assert over_link.stdout.splitlines()[-1].startswith("PASS")
        assert f"started on {platform}-" in over_link.stdout
        local = cli.run("flow", "run", "demo", *on, timeout=180)
        assert local.returncode == 0, local.stdout + local.stderr
        assert local.stdout.splitlines()[-1].startswith("PASS")
    finally:
        assert server.stop() == 0
