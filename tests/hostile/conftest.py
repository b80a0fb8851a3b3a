"""Hostile calls against a real `argent server start`: each test proves the server stays usable.

``hostile_server`` is a real tool-server process with a private temp dir, so a test can prove
that nothing is left behind; ``Probe`` checks what every hostile test must show afterwards (or
while the hostile call runs): `/healthz` answers within a second, the temp dir holds nothing of
ours, and a normal flow still runs.

``hostile`` is the other way round: a fake tool-server that answers what a real one never would, for
the real CLI to distrust; ``flows`` gives the CLI's project its ``main`` flow.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from attrs import define

from tests.e2e.conftest import Cli, ServerProcess, cli, project, start_server_process
from tests.hostile.hostile_server import HostileToolServer, hostile_tool_server

__all__ = ["MAIN_FLOW", "Probe", "cli", "flows", "hostile", "hostile_server", "main_flow", "project"]

#: The project's ``main`` flow in the tests that point the real CLI at a ``hostile`` tool-server.
MAIN_FLOW = "steps:\n  - echo: hello\n"
#: How fast `/healthz` must answer while a hostile call runs (issue 10, "Done when").
HEALTHZ_WITHIN_SECONDS = 1.0


@define
class Probe:
    """A running tool-server with its own temp dir, and the checks every hostile test ends with."""

    server: ServerProcess
    tmp_dir: Path
    cli: Cli
    project: Path

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token(self) -> str:
        return self.server.token

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def healthz_seconds(self) -> float:
        """Seconds `/healthz` took to answer `{"ok": true}` (fails the test past 5 s)."""
        t0 = time.monotonic()
        with urllib.request.urlopen(f"{self.url}/healthz", timeout=5) as resp:
            assert json.loads(resp.read())["ok"] is True
        return time.monotonic() - t0

    def assert_healthy(self) -> None:
        took = self.healthz_seconds()
        assert took < HEALTHZ_WITHIN_SECONDS, f"/healthz took {took:.2f}s"

    def leftovers(self) -> list[str]:
        """What the server left in its temp dir (Chromium's own dirs excluded: they have their owner)."""
        return sorted(p.name for p in self.tmp_dir.iterdir() if p.name.startswith("argent-"))

    def call(self, tool: str, args: dict[str, Any], *, timeout: float = 30) -> tuple[int, Any]:
        """A buffered tool call: (status, parsed JSON body)."""
        return self.post(tool, json.dumps(args).encode(), timeout=timeout)

    def post(self, tool: str, raw: bytes, *, timeout: float = 30) -> tuple[int, Any]:
        """A buffered tool call of a body encoded beforehand: (status, parsed JSON body)."""
        request = urllib.request.Request(
            f"{self.url}/tools/{tool}",
            data=raw,
            headers={"Content-Type": "application/json", **self.auth()},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def assert_serves_a_normal_flow(self) -> None:
        """The real CLI runs a small flow over a link to this server and it passes."""
        flows = self.project / ".argent" / "flows"
        flows.mkdir(parents=True, exist_ok=True)
        (flows / "still-works.yaml").write_text("steps:\n  - echo: one\n  - echo: two\n")
        done = self.cli.run(
            "flow",
            "run",
            "still-works",
            ARGENT_TOOLS_URL=self.url,
            ARGENT_AUTH_TOKEN=self.token,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def assert_still_fine(self) -> None:
        """The three checks of every hostile test, once the hostile call is over."""
        self.assert_healthy()
        self.assert_serves_a_normal_flow()
        assert self.leftovers() == []


def start_probe(cli: Cli, project: Path, tmp_path: Path, *extra: str, **env: str) -> Probe:
    tmp_dir = tmp_path / "server-tmp"
    tmp_dir.mkdir(exist_ok=True)
    running = start_server_process(cli, *extra, TMPDIR=str(tmp_dir), **env)
    return Probe(server=running, tmp_dir=tmp_dir, cli=cli, project=project)


@pytest.fixture
def hostile_server(cli: Cli, project: Path, tmp_path: Path) -> Iterator[Probe]:
    probe = start_probe(cli, project, tmp_path)
    yield probe
    probe.server.stop(signal.SIGKILL)


def environ_without_argent() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_")}


@pytest.fixture
def hostile() -> Iterator[HostileToolServer]:
    """A fake tool-server (``hostile_server.py``) that answers each call as the test sets."""
    with hostile_tool_server() as server:
        yield server


@pytest.fixture
def main_flow() -> str:
    """What ``flows`` writes as ``main.yaml``; a test module overrides it to run other words."""
    return MAIN_FLOW


@pytest.fixture
def flows(project: Path, main_flow: str) -> Path:
    """The project's flows directory, holding ``main.yaml``."""
    directory = project / ".argent" / "flows"
    (directory / "main.yaml").write_text(main_flow)
    return directory
