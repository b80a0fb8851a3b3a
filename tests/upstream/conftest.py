"""Upstream argent's real CLI (``@swmansion/argent`` from npm, unpacked by scripts/install-upstream)
pointed at a real ``argent server start``.

The package is found at ``$ARGENT_UPSTREAM_PACKAGE`` (scripts/test sets it) or in the cache
scripts/install-upstream fills. Without node or the package the tests skip, saying which; under
``CI=true`` they fail instead, so CI never passes by skipping them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from attrs import define

from tests.e2e.conftest import Cli, ServerProcess, start_server_process

UPSTREAM_VERSION = "0.25.2"
REPO = Path(__file__).resolve().parents[2]
CACHED = REPO / ".cache" / "upstream" / f"argent-{UPSTREAM_VERSION}" / "package"
#: One call of upstream's CLI, node start-up included (about 1 s on a busy machine).
CALL_TIMEOUT_SECONDS = 60


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI must run tests/upstream; scripts/test runs scripts/install-upstream)")
    pytest.skip(reason)


@define
class UpstreamCli:
    """``node dist/cli.js`` of the upstream package, with a private HOME and telemetry off."""

    node: str
    package: Path
    home: Path
    url: str
    token: str

    def run(self, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_")}
        env.update(
            HOME=str(self.home),
            ARGENT_TOOLS_URL=self.url,
            ARGENT_AUTH_TOKEN=self.token if token is None else token,
            DO_NOT_TRACK="1",
            ARGENT_TELEMETRY="0",
        )
        return subprocess.run(
            [self.node, str(self.package / "dist" / "cli.js"), *args],
            cwd=self.home,
            env=env,
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
        )


@pytest.fixture(scope="module")
def our_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("ours")
    (root / "home").mkdir()
    (root / "proj").mkdir()
    running = start_server_process(Cli(home=root / "home", cwd=root / "proj"))
    yield running
    running.stop(signal.SIGTERM)


@pytest.fixture(scope="module")
def upstream_package() -> tuple[str, Path]:
    """node and the unpacked package, checked before any server starts."""
    node = shutil.which("node")
    if node is None:
        _unavailable("node is not installed: upstream argent's CLI cannot run")
    package = Path(os.environ.get("ARGENT_UPSTREAM_PACKAGE") or CACHED)
    if not (package / "dist" / "cli.js").is_file():
        _unavailable(
            f"upstream argent {UPSTREAM_VERSION} is not unpacked at {package}: run scripts/install-upstream"
        )
    assert node is not None
    return node, package


@pytest.fixture(scope="module")
def upstream(
    upstream_package: tuple[str, Path], our_server: ServerProcess, tmp_path_factory: pytest.TempPathFactory
) -> UpstreamCli:
    node, package = upstream_package
    return UpstreamCli(
        node, package, tmp_path_factory.mktemp("upstream-home"), our_server.url, our_server.token
    )


def call_ours(server: ServerProcess, tool: str, args: dict[str, Any]) -> Any:
    """A call to our server over HTTP, for test set-up (booting a device)."""
    request = urllib.request.Request(
        f"{server.url}/tools/{tool}",
        data=json.dumps(args).encode(),
        headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"]
