"""The event-driven settle (``argent.runner.idle``) and the directives on a device with page signals.

``SignalDevice`` is the in-test double of ``test_directives`` plus ``PageSignals``: its page is
quiet when the test says so, changes when the test says so, and records every signal call. Timings
are the real ones unless a test scales them: what is proved is that nothing sleeps them out.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from attrs import define, field

from argent.devices.base import DeviceError, PageSignals, UiTree
from argent.flows.model import AwaitStep, Condition, ScrollToStep, Selector, SnapshotStep, TapStep, TypeStep
from argent.runner import pixels as P
from argent.runner.directives import DeviceDirectives, Timings
from argent.runner.idle import Waiter
from tests.unit.test_directives import SAVE, FakeDevice, make_ctx, node, page

REAL = Timings()
FAST = Timings().scaled(0.05)


@define(slots=False)
class SignalDevice(FakeDevice):
    """A ``FakeDevice`` whose page reports quiet (after ``quiet_after`` s, or never)."""

    quiet_after: float | None = 0.0
    mark: int = 0
    signal_calls: list[tuple[Any, ...]] = field(factory=list)
    focus: bool = True
    broken: bool = False
    kept_view: Any = None
    revealed: Any = None
    region_size: tuple[int, int] | None = None

    def change(self) -> None:
        """The page changed (the next quiet after a mark below this one may answer)."""
        self.mark += 1
        self._changed.set()

    def __attrs_post_init__(self) -> None:
        self._changed = asyncio.Event()

    async def wait_quiet(self, timeout: float, *, after: int | None = None) -> int | None:
        self.signal_calls.append(("wait_quiet", round(timeout, 3), after))
        if self.broken:
            raise DeviceError("the monitor is gone")
        if after is not None and self.mark <= after:
            self._changed.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._changed.wait()
            except TimeoutError:
                return None
        if self.quiet_after is None or self.quiet_after > timeout:
            await asyncio.sleep(timeout)
            return None
        await asyncio.sleep(self.quiet_after)
        return self.mark

    async def ui_tree(self) -> UiTree:
        mark = self.mark
        return attrs.evolve(await super().ui_tree(), mark=mark)

    async def hold_still(self, x: float, y: float, timeout: float) -> bool:
        return False  # nothing on this page moves

    async def wait_focus(self, x: float, y: float, timeout: float, grace: float) -> bool:
        self.signal_calls.append(("wait_focus", round(x, 4), round(y, 4), timeout, grace))
        return self.focus

    async def enter_text(self, text: str) -> None:
        self._record("enter", text)

    def capture_size(self) -> tuple[int, int] | None:
        return self.region_size

    async def capture(self, region: tuple[int, int, int, int] | None = None) -> bytes:
        self.signal_calls.append(("capture", region))
        img = self.image if region is None else self.image[region[1] : region[3], region[0] : region[2]]
        return P.encode_png(img)

    async def quiet_capture(self, region: tuple[int, int, int, int] | None, timeout: float) -> bytes:
        self.signal_calls.append(("quiet_capture", region))
        await self.wait_quiet(timeout)
        return await self.capture(region)

    async def kept_tree(self) -> UiTree:
        self.signal_calls.append(("kept_tree",))
        return self.kept_view() if self.kept_view is not None else self.view()

    async def reveal(self, ref: int) -> UiTree | None:
        self.signal_calls.append(("reveal", ref))
        return self.revealed(ref) if self.revealed is not None else None


def called(dev: SignalDevice, name: str) -> list[tuple[Any, ...]]:
    return [c for c in dev.signal_calls if c[0] == name]


def test_the_double_has_page_signals() -> None:
    assert isinstance(SignalDevice(), PageSignals)
    assert not isinstance(FakeDevice(), PageSignals)


# --------------------------------------------------------------------------------------------
# The settle


async def test_a_quiet_page_is_read_once_and_nothing_sleeps(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: page(SAVE))
    t0 = time.monotonic()
    out = await DeviceDirectives(timings=REAL).execute(
        TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass" and dev.calls == [("tap", 0.2, 0.25, 1)]
    assert dev.reads == 1  # the reading settle needs two reads 250 ms apart
    assert called(dev, "wait_quiet") == [("wait_quiet", REAL.settle_max, None)]
    assert time.monotonic() - t0 < REAL.settle_interval


async def test_a_page_that_never_gets_quiet_is_read_at_the_ceiling(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: page(SAVE), quiet_after=None)
    out = await DeviceDirectives(timings=FAST).execute(
        TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass" and dev.reads == 1


async def test_an_element_that_appears_is_found_when_the_page_changes(tmp_path: Path) -> None:
    dev = SignalDevice()
    shown = {"save": False}
    dev.view = lambda: page(SAVE) if shown["save"] else page()

    def later() -> None:
        shown["save"] = True
        dev.change()

    asyncio.get_running_loop().call_later(0.05, later)
    t0 = time.monotonic()
    out = await DeviceDirectives(timings=REAL).execute(
        TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass"
    assert time.monotonic() - t0 < REAL.action_poll  # woken by the change, not by the 300 ms poll
    assert ("wait_quiet", REAL.action_poll, 0) in dev.signal_calls


async def test_signals_that_fail_fall_back_to_the_reading_settle(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: page(SAVE), broken=True)
    out = await DeviceDirectives(timings=FAST).execute(
        TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass" and dev.reads == 2  # two reads that agree


async def test_the_abort_cuts_a_quiet_wait_short(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: page(SAVE), quiet_after=None)
    ctx = make_ctx(tmp_path, dev)
    asyncio.get_running_loop().call_later(0.05, ctx.run.abort.set)
    out = await asyncio.wait_for(
        DeviceDirectives(timings=REAL).execute(TapStep(Selector(text="Save")), dev, ctx), 2
    )
    assert (out.status, out.reason) == ("skip", "run aborted") and dev.calls == []


async def test_a_condition_is_looked_at_again_when_the_page_changes(tmp_path: Path) -> None:
    dev = SignalDevice()
    dev.view = lambda: page(SAVE) if dev.mark else page(node("p", 0, 0, 1, 0.1, value="Loading"))
    asyncio.get_running_loop().call_later(0.05, dev.change)
    t0 = time.monotonic()
    cond = Condition(kind="visible", selector=Selector(text="Save"))
    out = await DeviceDirectives(timings=REAL).execute(AwaitStep(cond), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass" and time.monotonic() - t0 < REAL.condition_poll
    # the read's own mark: the wait wakes on a change since that read
    assert called(dev, "wait_quiet") == [("wait_quiet", REAL.condition_poll, 0)]


async def test_a_waiter_without_signals_sleeps_between_polls(tmp_path: Path) -> None:
    dev = FakeDevice()
    waiter = Waiter(dev, asyncio.Event(), FAST)
    await waiter.read(1.0)
    t0 = time.monotonic()
    await waiter.changed(0.05)
    assert time.monotonic() - t0 >= 0.045 and waiter.mark is None


# --------------------------------------------------------------------------------------------
# type


async def test_type_waits_for_focus_by_signal_and_enters_the_text(tmp_path: Path) -> None:
    dev = SignalDevice(
        view=lambda: page(node("input", 0.1, 0.1, 0.4, 0.1, identifier="email", clickable=True))
    )
    t0 = time.monotonic()
    out = await DeviceDirectives(timings=REAL).execute(
        TypeStep(Selector(identifier="email"), "bob"), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass"
    assert dev.calls == [("tap", 0.3, 0.15, 1), ("enter", "bob"), ("key", "enter")]
    assert called(dev, "wait_focus") == [
        ("wait_focus", 0.3, 0.15, REAL.type_focus_max, REAL.type_focus_grace)
    ]
    assert time.monotonic() - t0 < 0.5  # no fixed focus delay


async def test_type_goes_on_when_the_focus_never_comes(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: page(node("input", 0.1, 0.1, 0.4, 0.1, identifier="email")), focus=False)
    out = await DeviceDirectives(timings=REAL).execute(
        TypeStep(Selector(identifier="email"), "x", submit=False), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass" and [c[0] for c in dev.calls] == ["tap", "enter"]


# --------------------------------------------------------------------------------------------
# scroll-to


def rows(offset: int, count: int = 30, *, kept: bool = True) -> UiTree:
    """Rows 0.1 high, scrolled by ``offset`` rows; off-screen rows have empty frames on the edge."""
    out = []
    for i in range(count):
        y = (i - offset) * 0.1
        if y >= 0 and y + 0.1 <= 1:
            frame = (0.0, y, 1.0, 0.1)
        else:
            edge = 0.0 if y < 0 else 1.0
            frame = (0.0, edge, 0.0, 0.0)
        out.append(node("li", *frame, value=f"Row {i}", ref=i if kept else -1))
    return page(*out)


async def test_scroll_to_reveals_a_row_beyond_the_screen_in_one_move(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: rows(0))
    dev.revealed = lambda ref: rows(ref - 5)
    out = await DeviceDirectives(timings=REAL).execute(
        ScrollToStep(Selector(text="Row 25")), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass"
    assert called(dev, "reveal") == [("reveal", 25)] and dev.calls == []  # no wheel scrolls


async def test_scroll_to_in_view_already_needs_no_move(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: rows(0))
    out = await DeviceDirectives(timings=REAL).execute(
        ScrollToStep(Selector(text="Row 3")), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass" and called(dev, "reveal") == [] and dev.calls == []


async def test_scroll_to_reveals_only_in_its_direction(tmp_path: Path) -> None:
    state = {"offset": 20}
    dev = SignalDevice()
    dev.view = lambda: rows(state["offset"])
    out = await DeviceDirectives(timings=FAST).execute(
        ScrollToStep(Selector(text="Row 3")), dev, make_ctx(tmp_path, dev)
    )
    # Row 3 lies above; scrolling down never shows it: the end of the scroll, saying where it lies.
    assert (out.status, out.reason) == (
        "fail",
        'reached the end of the scroll without finding text="Row 3" — one lies above the scroll area, '
        "give scroll-to direction: up",
    )
    assert called(dev, "reveal") == []


async def test_scroll_to_scrolls_step_by_step_when_the_row_is_not_in_the_tree(tmp_path: Path) -> None:
    state = {"offset": 0.0}
    dev = SignalDevice()

    def view() -> UiTree:
        first = int(state["offset"] * 10)
        return rows(first, count=first + 10, kept=False)  # only the rows on screen exist

    def on_input(call: tuple[Any, ...]) -> None:
        if call[0] == "scroll":
            state["offset"] += call[4]

    dev.view, dev.on_input = view, on_input
    out = await DeviceDirectives(timings=FAST).execute(
        ScrollToStep(Selector(text="Row 25")), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass" and called(dev, "reveal") == []
    assert sum(1 for c in dev.calls if c[0] == "scroll") >= 3


async def test_scroll_to_whose_reveal_finds_the_row_gone_scrolls_on(tmp_path: Path) -> None:
    state = {"offset": 0.0}
    dev = SignalDevice()
    dev.view = lambda: rows(int(state["offset"] * 10))
    dev.on_input = lambda call: (
        state.__setitem__("offset", state["offset"] + call[4]) if call[0] == "scroll" else None
    )
    out = await DeviceDirectives(timings=FAST).execute(
        ScrollToStep(Selector(text="Row 25")), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass"
    assert called(dev, "reveal") == [("reveal", 25)]  # answered None: the element was gone
    assert any(c[0] == "scroll" for c in dev.calls)


# --------------------------------------------------------------------------------------------
# snapshot


async def test_a_snapshot_whose_bytes_equal_the_baseline_decodes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dev = SignalDevice(view=lambda: page(SAVE))
    dd = DeviceDirectives(timings=FAST, scratch_dir=str(tmp_path))
    adopted = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev, update=True))
    assert adopted.status == "pass"

    def no_decode(data: bytes) -> Any:
        raise AssertionError("decoded")

    monkeypatch.setattr(P, "decode_png", no_decode)
    out = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == ("pass", "diff 0.00% ≤ 0.5% (home__chromium-100x80.png)")
    assert called(dev, "quiet_capture") == [("quiet_capture", None), ("quiet_capture", None)]
    assert dev.reads == 0  # a whole-screen snapshot waits for quiet and reads no tree


async def test_a_crop_is_captured_alone_when_the_device_can(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: page(SAVE), region_size=(100, 80))
    dev.image[20:28, 10:30, :3] = (200, 0, 0)
    dd = DeviceDirectives(timings=FAST, scratch_dir=str(tmp_path))
    step = SnapshotStep("save", crop_on=Selector(text="Save"))
    out = await dd.execute(step, dev, make_ctx(tmp_path, dev, update=True))
    assert out.status == "pass" and out.snapshot_key is not None
    assert out.snapshot_key.startswith("save__chromium-100x80-crop-")
    assert called(dev, "capture") == [("capture", (10, 16, 30, 24))]
    again = await dd.execute(step, dev, make_ctx(tmp_path, dev))
    assert again.status == "pass" and (again.reason or "").startswith("diff 0.00%")


async def test_a_crop_without_an_exact_region_capture_crops_the_whole_screen(tmp_path: Path) -> None:
    dev = SignalDevice(view=lambda: page(SAVE))
    dd = DeviceDirectives(timings=FAST, scratch_dir=str(tmp_path))
    out = await dd.execute(
        SnapshotStep("save", crop_on=Selector(text="Save")), dev, make_ctx(tmp_path, dev, update=True)
    )
    assert out.status == "pass" and called(dev, "capture") == [("capture", None)]
    baseline = Path(out.artifacts["baseline"]) if out.artifacts else None
    assert baseline is not None and P.decode_png(baseline.read_bytes()).shape == (8, 20, 4)
