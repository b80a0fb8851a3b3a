"""A call that never ends: a `wait:` of a year holds its slot, connection (and browser) as long as its client
stays. A tool-server bounds the wall-clock time of one call (limits.seconds_per_call): past it the run is
aborted and the call answers an error naming the limit, and the server serves on.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from argent.limits import DEFAULT_SECONDS_PER_CALL
from argent.server.policy import ServerPolicy
from tests.e2e.conftest import Cli
from tests.hostile.conftest import start_probe

pytestmark = pytest.mark.e2e

SECONDS = 2


def test_a_call_past_its_wall_clock_bound_is_stopped_with_an_error_naming_it(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    config = tmp_path / "server.yaml"
    config.write_text(f"limits:\n  seconds_per_call: {SECONDS}\n")
    probe = start_probe(cli, project, tmp_path, "--config", str(config))
    try:
        flows = project / ".argent" / "flows"
        (flows / "forever.yaml").write_text(
            "steps:\n  - echo: start\n  - wait: 31536000000\n  - echo: never\n"
        )
        t0 = time.monotonic()
        proc = probe.cli.spawn(
            "flow", "run", "forever", ARGENT_TOOLS_URL=probe.url, ARGENT_AUTH_TOKEN=probe.token
        )
        while proc.poll() is None:
            assert time.monotonic() - t0 < SECONDS + 30, "the call never ended"
            probe.assert_healthy()
            time.sleep(0.1)
        out, err = proc.communicate()
        took = time.monotonic() - t0
        assert proc.returncode == 1, out + err
        assert (
            f"ran for {SECONDS}s, the longest one call may run on this tool-server (limits.seconds_per_call)"
            in (out + err)
        ), out + err
        assert took < SECONDS + 15
        probe.assert_still_fine()
    finally:
        probe.server.stop()


def test_the_default_bound_is_an_hour() -> None:
    assert ServerPolicy().seconds_per_call == DEFAULT_SECONDS_PER_CALL == 3600
