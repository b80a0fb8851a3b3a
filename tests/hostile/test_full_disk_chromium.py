"""A careless host under snapshots on real headless Chromium: the tool-server's scratch directory for
a failed snapshot's images, and a co-located project's ``__baselines__``, on a full 2 MiB tmpfs.

A failed snapshot keeps its verdict (the images go, with a warning that says so and what to do);
a baseline the disk refuses is an error that names it and says what to do, and the older baseline
stays whole. Nothing partial is left behind.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from argent.link.png import PNG_SIGNATURE
from argent.server.tmp_files import LOCK_PREFIX, LOCK_SUFFIX
from tests.e2e.conftest import Cli, chromium_marks
from tests.hostile.conftest import Probe, start_probe
from tests.hostile.small_fs import FILLER, fill, small_fs

pytestmark = chromium_marks()

FLOW = 'steps:\n  - launch: { chromium: "data:text/html,<h1>Full disk</h1>" }\n  - snapshot: home\n'


def server_id(probe: Probe) -> str:
    """The id of the server of ``probe``, from the lock it holds in its temp dir."""
    (lock,) = [p.name for p in probe.tmp_dir.iterdir() if p.name.startswith(LOCK_PREFIX)]
    return lock[len(LOCK_PREFIX) : -len(LOCK_SUFFIX)]


@pytest.fixture
def full_artifacts(cli: Cli, project: Path, tmp_path: Path) -> Iterator[tuple[Probe, Path]]:
    """A real tool-server whose directory for failed snapshots' images is a full 2 MiB tmpfs (its
    Chromium profiles stay in the ordinary temp dir)."""
    probe = start_probe(cli, project, tmp_path)
    try:
        with small_fs(probe.tmp_dir / f"argent-artifacts-{server_id(probe)}") as artifacts:
            fill(artifacts)
            try:
                yield probe, artifacts
            finally:
                probe.server.stop(signal.SIGKILL)
    finally:
        probe.server.stop(signal.SIGKILL)


def test_a_failed_snapshot_on_a_full_scratch_disk_keeps_its_verdict(
    cli: Cli, project: Path, full_artifacts: tuple[Probe, Path]
) -> None:
    probe, artifacts = full_artifacts
    (project / ".argent" / "flows" / "main.yaml").write_text(FLOW)
    done = cli.run(
        "flow", "run", "main", timeout=120, ARGENT_TOOLS_URL=probe.url, ARGENT_AUTH_TOKEN=probe.token
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    out = done.stdout
    assert 'no baseline for "home" on this device class' in out, out
    assert (
        f"the images of this snapshot were not kept: ENOSPC: no space left on device, write '{artifacts}'. "
        "Free some space there and run again to keep them."
    ) in " ".join(out.split()), out
    assert sorted(p.name for p in artifacts.iterdir()) == [FILLER]
    probe.assert_healthy()


def test_a_baseline_on_a_full_disk_is_an_error_that_keeps_the_old_one(cli: Cli, project: Path) -> None:
    flows = project / ".argent" / "flows"
    (flows / "main.yaml").write_text(FLOW)
    with small_fs(flows / "__baselines__") as baselines:
        baseline = baselines / "main" / "home__chromium-1000x800.png"  # the default window's device class
        baseline.parent.mkdir()
        old = PNG_SIGNATURE + b"the older baseline"
        baseline.write_bytes(old)
        fill(baselines)
        done = cli.run("flow", "run", "main", "--update-baselines", timeout=120)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "Traceback" not in done.stdout + done.stderr
        assert baseline.read_bytes() == old
        assert sorted(p.name for p in baseline.parent.iterdir()) == [baseline.name]
        flat = " ".join(done.stdout.split())
        assert (
            f"baseline not written: ENOSPC: no space left on device, write '{baseline}'. Free some space there "
            "and run with --update-baselines again; an older baseline there is unchanged."
        ) in flat, done.stdout
