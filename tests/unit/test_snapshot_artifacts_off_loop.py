"""A failed snapshot writes its images (baseline, current, diff) in a worker thread, never on the
event loop that serves every other call."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from argent.flows.model import SnapshotStep
from argent.runner import directives
from argent.runner.directives import DeviceDirectives, Timings
from tests.unit.test_directives import FakeDevice, canvas, make_ctx


async def test_failed_snapshot_images_are_written_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dd = DeviceDirectives(timings=Timings().scaled(0.02), scratch_dir=str(tmp_path / "scratch"))
    dev = FakeDevice()
    loop_thread = threading.get_ident()
    writers: list[tuple[str, int]] = []
    write = directives._write

    def spied(directory: str, name: str, data: bytes) -> str:
        writers.append((name, threading.get_ident()))
        return write(directory, name, data)

    monkeypatch.setattr(directives, "_write", spied)
    missing = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev))
    await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev, update=True))
    dev.image = canvas((0, 0, 0))
    changed = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev))
    assert missing.status == changed.status == "fail"
    assert changed.artifacts is not None and set(changed.artifacts) == {"baseline", "current", "diff"}
    assert all(Path(p).is_file() for p in changed.artifacts.values())
    assert sorted(name for name, _ in writers) == sorted(
        f"home__chromium-100x80-{role}.png" for role in ("current", "baseline", "current", "diff")
    )
    assert all(thread != loop_thread for _, thread in writers)
