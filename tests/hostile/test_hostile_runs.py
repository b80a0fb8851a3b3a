"""A `run:` fan-out over a link: a few KB of fragments that would run 10**8 times.

The call ends at the step limit with an error naming it, `/healthz` answers within a second while
it runs, a client that hangs up stops it, and SIGTERM stops the server within its grace.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.hostile.conftest import Probe

pytestmark = pytest.mark.e2e

LEVELS = 8
WIDTH = 10


def write_fan_out(project: Path) -> None:
    """main runs f0; each f<i> runs f<i+1> WIDTH times: WIDTH**LEVELS fragment runs."""
    flows = project / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / "main.yaml").write_text("steps:\n  - run: f0\n")
    for level in range(LEVELS):
        (flows / f"f{level}.yaml").write_text("steps:\n" + f"  - run: f{level + 1}\n" * WIDTH)
    (flows / f"f{LEVELS}.yaml").write_text("steps:\n  - echo: leaf\n")
    total = sum(p.stat().st_size for p in flows.iterdir())
    assert total < 3 * 1024


class FanOutClient:
    """The real CLI running the fan-out; its output is drained as it comes (a full pipe would
    stall the CLI, and with it the call)."""

    def __init__(self, probe: Probe) -> None:
        write_fan_out(probe.project)
        self.proc = probe.cli.spawn(
            "flow", "run", "main", ARGENT_TOOLS_URL=probe.url, ARGENT_AUTH_TOKEN=probe.token
        )
        self.lines: list[str] = []
        self.started = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            self.started.set()
        self.started.set()

    def wait_started(self) -> None:
        assert self.started.wait(30), "the call never reported a step"

    def finish(self, timeout: float) -> tuple[int, str, str]:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        err = self.proc.stderr.read() if self.proc.stderr is not None else ""
        return code, "".join(self.lines), err


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_fan_out_ends_at_the_step_limit_while_healthz_answers(hostile_server: Probe) -> None:
    t0 = time.monotonic()
    client = FanOutClient(hostile_server)
    client.wait_started()
    while client.proc.poll() is None and time.monotonic() - t0 < 60:
        hostile_server.assert_healthy()
        time.sleep(0.2)  # pacing the probe, not synchronising with it
    code, out, err = client.finish(timeout=5)
    took = time.monotonic() - t0
    assert code == 1, out[-2000:] + err
    assert "step limit reached" in out and "MAX_STEPS_PER_CALL" in out
    assert took < 30, f"the call took {took:.1f}s"
    hostile_server.assert_still_fine()


def test_a_client_that_hangs_up_stops_its_run_within_a_second(hostile_server: Probe) -> None:
    client = FanOutClient(hostile_server)
    client.wait_started()
    client.proc.kill()
    client.finish(timeout=5)
    pid = hostile_server.server.proc.pid
    time.sleep(1.0)  # the second the run has to notice
    before = cpu_seconds(pid)
    time.sleep(1.0)
    busy = cpu_seconds(pid) - before
    assert busy < 0.2, f"the server spent {busy:.2f}s of CPU in the second after the run should have stopped"
    hostile_server.assert_still_fine()


def test_sigterm_during_a_fan_out_exits_within_the_grace(hostile_server: Probe) -> None:
    client = FanOutClient(hostile_server)
    client.wait_started()
    t0 = time.monotonic()
    code = hostile_server.server.stop(signal.SIGTERM)
    took = time.monotonic() - t0
    assert code == 0
    assert took < 10, f"shutdown took {took:.1f}s"
    code, out, err = client.finish(timeout=30)
    assert code == 1, out[-2000:] + err
    assert "run aborted" in out
    assert hostile_server.leftovers() == []
