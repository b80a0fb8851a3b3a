"""Real processes: the `argent` CLI and `argent server start`, with a private HOME."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from attrs import define


@define
class Cli:
    home: Path
    cwd: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_")}
        env.update(HOME=str(self.home), PYTHONUNBUFFERED="1", **extra)
        return env

    def run(
        self, *args: str, cwd: Path | None = None, timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "argent", *args],
            cwd=cwd or self.cwd,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def spawn(self, *args: str, cwd: Path | None = None, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "argent", *args],
            cwd=cwd or self.cwd,
            env=self.env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".argent" / "flows").mkdir(parents=True)
    return root


@pytest.fixture
def cli(tmp_path: Path, project: Path) -> Cli:
    home = tmp_path / "home"
    home.mkdir()
    return Cli(home=home, cwd=project)


@define
class ServerProcess:
    proc: subprocess.Popen[str]
    url: str
    token: str
    banner: list[str]

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)


def start_server_process(cli: Cli, *extra: str, **env: str) -> ServerProcess:
    """Start `argent server start --port 0 ...` and read its banner (one line, two with auth)."""
    proc = cli.spawn("server", "start", "--port", "0", *extra, **env)
    assert proc.stdout is not None
    expected = 1 if "--no-auth" in extra else 2
    lines = [proc.stdout.readline().rstrip("\n") for _ in range(expected)]
    if not lines[0].startswith("Tools server listening on "):
        proc.kill()
        raise AssertionError(f"no banner: {lines} {proc.stderr.read() if proc.stderr else ''}")
    url = lines[0].removeprefix("Tools server listening on ")
    token = lines[1].split("argent://", 1)[1].split("@", 1)[0] if expected == 2 else ""
    return ServerProcess(proc=proc, url=url, token=token, banner=lines)


@pytest.fixture
def server(cli: Cli) -> Iterator[ServerProcess]:
    running = start_server_process(cli)
    yield running
    running.stop(signal.SIGKILL)


def read_until(stream: Any, predicate: Any, timeout: float = 30) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if predicate(line):
            return lines
    raise AssertionError(f"did not see the expected line; got {lines}")
