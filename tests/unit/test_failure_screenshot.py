"""A device step that fails or errors carries a screenshot taken at the failure (artifact role
``screenshot``), like a failed snapshot carries its images; nothing else changes about the step."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from argent.devices.base import DeviceError
from argent.flows.model import PinchStep, Selector, SnapshotStep, TapStep
from argent.runner import directives as directives_module
from argent.runner import pixels as P
from argent.runner.directives import FAILURE_SCREENSHOT_ROLE, DeviceDirectives
from tests.unit.test_directives import FAST, SAVE, FakeDevice, canvas, make_ctx, page


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    d = tmp_path / "scratch"
    d.mkdir()
    return d


@pytest.fixture
def dd(scratch: Path) -> DeviceDirectives:
    return DeviceDirectives(timings=FAST, scratch_dir=str(scratch), failure_screenshots=True)


def counted(dev: FakeDevice) -> dict[str, int]:
    shots = {"n": 0}
    real = dev.screenshot

    async def screenshot() -> bytes:
        shots["n"] += 1
        return await real()

    dev.screenshot = screenshot  # type: ignore[method-assign]
    return shots


async def test_a_failed_tap_carries_the_screen_it_failed_on(
    dd: DeviceDirectives, tmp_path: Path, scratch: Path
) -> None:
    dev = FakeDevice(view=lambda: page(SAVE), image=canvas((10, 200, 30)))
    ctx = make_ctx(tmp_path, dev)
    out = await dd.execute(TapStep(Selector(text="Pay now")), dev, ctx)
    assert out.status == "fail" and (out.reason or "").startswith("no visible element matched")
    assert out.artifacts is not None and list(out.artifacts) == [FAILURE_SCREENSHOT_ROLE]
    shot = Path(out.artifacts[FAILURE_SCREENSHOT_ROLE])
    assert shot.name == "step-1-screenshot.png" and shot.parent.parent == scratch
    assert (P.decode_png(shot.read_bytes()) == dev.image).all()
    assert dev.calls == []  # nothing was tapped


async def test_an_errored_step_carries_one_too(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(tree_error=lambda n: DeviceError("no tree"))
    out = await dd.execute(TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev))
    assert out.status == "error" and out.artifacts is not None
    assert set(out.artifacts) == {FAILURE_SCREENSHOT_ROLE}


async def test_a_passing_step_takes_no_screenshot(
    dd: DeviceDirectives, tmp_path: Path, scratch: Path
) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))
    shots = counted(dev)
    out = await dd.execute(TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.artifacts, shots["n"]) == ("pass", None, 0)
    assert list(scratch.iterdir()) == []


async def test_a_failed_snapshot_keeps_its_own_images_only(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    out = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev))
    assert out.status == "fail" and out.artifacts is not None
    assert list(out.artifacts) == ["current"]


async def test_a_device_that_gives_no_image_leaves_the_verdict_alone(
    dd: DeviceDirectives, tmp_path: Path, scratch: Path
) -> None:
    dead = FakeDevice(shot_error=DeviceError("Chromium is not running"))
    out = await dd.execute(TapStep(Selector(text="Pay now")), dead, make_ctx(tmp_path, dead))
    assert out.status == "fail" and out.artifacts is None
    assert (out.reason or "").startswith("no visible element matched")

    garbage = FakeDevice()

    async def not_png() -> bytes:
        return b"<html>not an image</html>"

    garbage.screenshot = not_png  # type: ignore[method-assign]
    out = await dd.execute(TapStep(Selector(text="Pay now")), garbage, make_ctx(tmp_path, garbage))
    assert out.status == "fail" and out.artifacts is None
    assert list(scratch.iterdir()) == []


async def test_a_screenshot_that_never_comes_is_given_up_on_time(
    dd: DeviceDirectives, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(directives_module, "FAILURE_SCREENSHOT_TIMEOUT_SECONDS", 0.2)
    stuck = FakeDevice()
    never = asyncio.Event()

    async def hang() -> bytes:
        await never.wait()
        return b""

    stuck.screenshot = hang  # type: ignore[method-assign]
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    out = await dd.execute(PinchStep(scale=2.0), stuck, make_ctx(tmp_path, stuck))
    assert loop.time() - t0 < 2.0
    assert out.status == "fail" and out.artifacts is None


async def test_off_unless_asked(tmp_path: Path, scratch: Path) -> None:
    plain = DeviceDirectives(timings=FAST, scratch_dir=str(scratch))
    dev = FakeDevice()
    shots = counted(dev)
    out = await plain.execute(TapStep(Selector(text="Pay now")), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.artifacts, shots["n"]) == ("fail", None, 0)
