"""Device directives against an in-test Device double (scripted UI tree, Pillow screenshots).

Timings are scaled down (x0.02) so every wait is real but short; the logic is the same.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from attrs import define, field

from argent.devices.base import CssSelectorError, DeviceError, Frame, UiNode, UiTree, css_unsupported
from argent.flows.model import (
    AssertStep,
    AwaitStep,
    ChromiumApp,
    Condition,
    IdleStep,
    LaunchStep,
    LongPressStep,
    PinchStep,
    Point,
    RotateStep,
    ScrollToStep,
    Selector,
    SnapshotStep,
    TapStep,
    TypeStep,
)
from argent.flows.parse import parse_flow
from argent.runner import pixels as P
from argent.runner.directives import (
    DeviceDirectives,
    Timings,
    crop_hash,
    fill_secrets,
)
from argent.runner.engine import DirectiveContext, Run, ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles, FlowRef, baseline_dir
from argent.runner.report import FlowRunResult

FAST = Timings().scaled(0.02)
#: For tests whose verdict depends on how many polls fit in a window: roomier under a loaded machine.
ROOMY = Timings().scaled(0.1)
W, H = 100, 80


# --------------------------------------------------------------------------------------------
# The double


def node(role: str, x: float, y: float, w: float, h: float, *children: UiNode, **kw: Any) -> UiNode:
    return UiNode(role=role, frame=Frame(x, y, w, h), children=tuple(children), **kw)


def page(*children: UiNode) -> UiTree:
    return UiTree(root=node("html", 0, 0, 1, 1, *children))


def canvas(rgb: tuple[int, int, int] = (255, 255, 255), w: int = W, h: int = H) -> np.ndarray[Any, Any]:
    img = np.empty((h, w, 4), dtype=np.uint8)
    img[..., :3] = rgb
    img[..., 3] = 255
    return img


@define(slots=False)
class FakeDevice:
    """Renders ``view()`` as its tree and ``image`` as its screen; records every input."""

    view: Callable[[], UiTree] = lambda: page()
    image: Any = field(factory=canvas)
    id: str = "chromium-cdp-9222"
    platform: str = "chromium"
    endpoint: str | None = None
    calls: list[tuple[Any, ...]] = field(factory=list)
    #: Raise this from ui_tree() (a callable gets the 1-based read number; None = answer).
    tree_error: Callable[[int], Exception | None] | None = None
    shot_error: Exception | None = None
    reads: int = 0
    on_input: Callable[[tuple[Any, ...]], None] | None = None

    async def ui_tree(self) -> UiTree:
        self.reads += 1
        if self.tree_error is not None:
            err = self.tree_error(self.reads)
            if err is not None:
                raise err
        return self.view()

    async def screenshot(self) -> bytes:
        if self.shot_error is not None:
            raise self.shot_error
        return P.encode_png(self.image)

    def _record(self, *call: Any) -> None:
        self.calls.append(call)
        if self.on_input is not None:
            self.on_input(call)

    async def tap(self, x: float, y: float, *, click_count: int = 1) -> None:
        self._record("tap", round(x, 4), round(y, 4), click_count)

    async def long_press(self, x: float, y: float, duration_ms: float) -> None:
        self._record("long_press", round(x, 4), round(y, 4), duration_ms)

    async def type_text(self, text: str) -> None:
        self._record("type", text)

    async def press_key(self, key: str) -> None:
        self._record("key", key)

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        self._record("scroll", round(x, 4), round(y, 4), round(dx, 4), round(dy, 4))

    async def navigate(self, url: str) -> None:
        self._record("navigate", url)

    async def close(self) -> None:
        pass


@define
class OneDevice:
    """A device provider that holds one ``FakeDevice``, whatever id is asked for."""

    device: FakeDevice

    async def get(self, device_id: str) -> FakeDevice:
        return self.device

    async def list_booted(self) -> list[FakeDevice]:
        return [self.device]


class NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("no tools in these tests")


def make_ctx(
    tmp_path: Path, device: FakeDevice, *, update: bool = False, name: str = "checkout"
) -> DirectiveContext:
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    path = str(flows / f"{name}.yaml")
    root = FlowRef(key=f"{flows}\0{name}.yaml", path=path, canonical=path)
    run = Run(
        files=DiskFlowFiles(),
        tools=NoTools(),
        root=root,
        name=name,
        device=device,
        update_baselines=update,
    )
    return DirectiveContext(run=run, flow=name, depth=0, containing=root)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    d = tmp_path / "scratch"
    d.mkdir()
    return d


@pytest.fixture
def dd(scratch: Path) -> DeviceDirectives:
    return DeviceDirectives(timings=FAST, env={"ARGENT_SECRET_PW": "s3cret!"}, scratch_dir=str(scratch))


SAVE = node("button", 0.1, 0.2, 0.2, 0.1, label="Save", clickable=True)


# --------------------------------------------------------------------------------------------
# tap / long-press


async def test_tap_selector_taps_the_centre_with_click_count(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))
    out = await dd.execute(TapStep(Selector(text="Save", loose=True), times=2), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass" and out.reason is None and out.warning is None
    assert dev.calls == [("tap", 0.2, 0.25, 2)]


async def test_tap_waits_for_the_element_to_appear(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    dev.view = lambda: page(SAVE) if dev.reads >= 6 else page()
    out = await dd.execute(TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass" and dev.calls == [("tap", 0.2, 0.25, 1)]


async def test_tap_not_found_reason(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(node("p", 0.5, 0.5, 0, 0, label="Save")))
    out = await dd.execute(TapStep(Selector(text="Save", loose=True)), dev, make_ctx(tmp_path, dev))
    assert out.status == "fail"
    assert out.reason == (
        'no visible element matched selector text="Save" — if it is off-screen, add a scroll-to step before this one'
    )
    assert dev.calls == []


async def test_tap_tree_outage_is_an_error(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(tree_error=lambda n: DeviceError("Chromium exited (code -9)"))
    out = await dd.execute(TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == ("error", "could not read the UI tree: Chromium exited (code -9)")
    assert dev.calls == []


async def test_coordinate_tap_passes_with_warning_when_tree_unreadable(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    dev = FakeDevice(tree_error=lambda n: DeviceError("walker crashed"))
    out = await dd.execute(TapStep(Point(0.5, 0.25)), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass"
    assert out.warning is not None and out.warning.startswith(
        "dispatched without settling the screen first: the UI tree could not be read (walker crashed), so there "
        "was no way to tell whether anything was moving."
    )
    assert dev.calls == [("tap", 0.5, 0.25, 1)]
    ok = FakeDevice()
    assert (await dd.execute(TapStep(Point(0.1, 0.1)), ok, make_ctx(tmp_path, ok))).warning is None


async def test_long_press_default_and_custom_duration(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))
    ctx = make_ctx(tmp_path, dev)
    await dd.execute(LongPressStep(Selector(text="Save")), dev, ctx)
    await dd.execute(LongPressStep(Point(0.5, 0.5), duration_ms=1200), dev, ctx)
    assert dev.calls == [("long_press", 0.2, 0.25, 800), ("long_press", 0.5, 0.5, 1200)]


async def test_device_error_during_gesture_is_an_error_step(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))

    def die(call: tuple[Any, ...]) -> None:
        raise DeviceError("the Chromium process is gone")

    dev.on_input = die
    out = await dd.execute(TapStep(Selector(text="Save")), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == ("error", "the Chromium process is gone")


# --------------------------------------------------------------------------------------------
# type


EMAIL = node("input", 0.1, 0.1, 0.4, 0.1, label="Email", identifier="email", clickable=True)


def focusing(dev: FakeDevice) -> None:
    focused = {"on": False}

    def on_input(call: tuple[Any, ...]) -> None:
        if call[0] == "tap":
            focused["on"] = True

    dev.on_input = on_input
    dev.view = lambda: page(
        node(
            "input",
            0.1,
            0.1,
            0.4,
            0.1,
            label="Email",
            identifier="email",
            clickable=True,
            focused=focused["on"],
        )
    )


async def test_type_taps_waits_for_focus_types_and_submits(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    focusing(dev)
    out = await dd.execute(
        TypeStep(Selector(identifier="email"), "bob@example.com"), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass"
    assert dev.calls == [("tap", 0.3, 0.15, 1), ("type", "bob@example.com"), ("key", "enter")]


async def test_type_without_submit_and_unconfirmed_focus(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(EMAIL))  # never reports focus: not a failure
    out = await dd.execute(TypeStep(Selector(text="Email"), "x", submit=False), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass" and [c[0] for c in dev.calls] == ["tap", "type"]


async def test_type_fills_secrets_at_dispatch_and_never_reports_them(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    dev = FakeDevice(view=lambda: page(EMAIL))
    out = await dd.execute(TypeStep(Selector(text="Email"), "pw={{secret:PW}}"), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass" and ("type", "pw=s3cret!") in dev.calls
    # a device error that echoes the text is redacted
    dev2 = FakeDevice(view=lambda: page(EMAIL))

    def echo(call: tuple[Any, ...]) -> None:
        if call[0] == "type":
            raise DeviceError(f"could not type {call[1]!r}")

    dev2.on_input = echo
    bad = await dd.execute(TypeStep(Selector(text="Email"), "{{secret:PW}}"), dev2, make_ctx(tmp_path, dev2))
    assert bad.status == "error" and "s3cret" not in (bad.reason or "") and "[secret]" in (bad.reason or "")


async def test_type_missing_secret_fails_before_any_input(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(EMAIL))
    out = await dd.execute(TypeStep(Selector(text="Email"), "{{secret:TOKEN}}"), dev, make_ctx(tmp_path, dev))
    assert out.status == "fail" and "ARGENT_SECRET_TOKEN" in (out.reason or "")
    assert dev.calls == []


def test_fill_secrets() -> None:
    assert fill_secrets("a{{secret:X}}b{{secret:X}}", {"ARGENT_SECRET_X": "1"}) == ("a1b1", ["1", "1"])
    assert fill_secrets("plain", {}) == ("plain", [])


# --------------------------------------------------------------------------------------------
# await / assert


def visible(sel: Selector) -> Condition:
    return Condition(kind="visible", selector=sel)


async def test_await_met_later_and_timeout_reason(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    dev.view = lambda: page(SAVE) if dev.reads >= 4 else page(node("p", 0, 0, 1, 0.1, value="Loading"))
    ctx = make_ctx(tmp_path, dev)
    assert (await dd.execute(AwaitStep(visible(Selector(text="Save"))), dev, ctx)).status == "pass"
    out = await dd.execute(AwaitStep(visible(Selector(text="Nope")), timeout_ms=500), dev, ctx)
    assert (out.status, out.reason) == (
        "fail",
        'no element matched selector text="Nope" — no text on the screen comes close to it',
    )


async def test_assert_reasons(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(
        view=lambda: page(
            SAVE,
            node("p", 0.5, 0.5, 0, 0, value="ghost"),
            node("div", 0, 0.5, 1, 0.2, node("span", 0, 0.5, 0.5, 0.1, value="Total 42"), identifier="total"),
        )
    )
    ctx = make_ctx(tmp_path, dev)

    async def reason(c: Condition) -> str | None:
        out = await dd.execute(AssertStep(c), dev, ctx)
        return None if out.status == "pass" else out.reason

    assert await reason(visible(Selector(text="Save"))) is None
    assert await reason(visible(Selector(text="ghost"))) == (
        'element(s) matched text="ghost" but none was visible (zero-area frame)'
    )
    assert await reason(Condition(kind="hidden", selector=Selector(text="Save", loose=True))) == (
        'an element matching text="Save" was still visible'
    )
    assert await reason(Condition("text", Selector(identifier="total"), "contains", "42")) is None
    assert await reason(Condition("text", Selector(identifier="total"), "equals", "Total")) == (
        'element matched id="total" but its text was "Total 42" (wanted to equal "Total")'
    )


async def test_condition_indeterminate_reasons(tmp_path: Path) -> None:
    dd = DeviceDirectives(timings=ROOMY)
    sel = Selector(text="Save")
    dead = FakeDevice(tree_error=lambda n: DeviceError("socket closed"))
    out = await dd.execute(AssertStep(visible(sel)), dead, make_ctx(tmp_path, dead))
    assert (out.status, out.reason) == ("fail", "could not read the UI tree: socket closed")

    blank = FakeDevice(view=lambda: page())
    out = await dd.execute(AssertStep(visible(sel)), blank, make_ctx(tmp_path, blank))
    assert out.reason == (
        "could not evaluate the condition — every read of the UI tree was empty (the device did not say why)"
    )

    hidden = Condition(kind="hidden", selector=sel)
    flaky = FakeDevice(view=lambda: page(SAVE), tree_error=lambda n: DeviceError("gone") if n > 1 else None)
    out = await dd.execute(AssertStep(hidden), flaky, make_ctx(tmp_path, flaky))
    assert out.reason == (
        "could not confirm the element is hidden — it was visible earlier, but the last UI read failed: gone"
    )

    emptied = FakeDevice()
    emptied.view = lambda: page(SAVE) if emptied.reads == 1 else page()
    out = await dd.execute(AssertStep(hidden), emptied, make_ctx(tmp_path, emptied))
    assert out.reason == (
        "could not confirm the element is hidden — it was visible earlier, but the last UI reads were empty"
    )

    # readable (and false) at first, then unreadable for most of the window
    tail = FakeDevice(view=lambda: page(), tree_error=lambda n: DeviceError("hung") if n > 1 else None)
    tail.view = lambda: page(node("p", 0, 0, 1, 0.1, value="other"))
    out = await dd.execute(AwaitStep(visible(sel), timeout_ms=1000), tail, make_ctx(tmp_path, tail))
    assert out.reason is not None
    assert out.reason.startswith(
        "could not evaluate the condition — the UI tree was unreadable for the final "
    )
    assert out.reason.endswith("ms of the window: hung")


async def test_hidden_is_met_only_on_a_trusted_read(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    dev.view = lambda: page(SAVE) if dev.reads < 3 else page(node("p", 0, 0, 1, 0.1, value="Done"))
    out = await dd.execute(
        AwaitStep(Condition(kind="hidden", selector=Selector(text="Save"))), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass"


# --------------------------------------------------------------------------------------------
# when: guards through the engine


async def run_yaml(
    tmp_path: Path,
    text: str,
    dev: FakeDevice,
    dd: DeviceDirectives,
    *,
    update: bool = False,
    abort: asyncio.Event | None = None,
    name: str = "checkout",
) -> FlowRunResult:
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    path = flows / f"{name}.yaml"
    path.write_text(text)
    files = DiskFlowFiles()
    ref = await files.locate(str(path))
    return await run_flow(
        parse_flow(text),
        ref,
        name,
        files=files,
        tools=NoTools(),
        directives=dd,
        device=dev,
        platform="chromium",
        update_baselines=update,
        abort=abort,
    )


def lines(result: FlowRunResult) -> list[tuple[str, str, str | None]]:
    return [(s.kind, s.status, s.reason) for s in result.steps]


async def test_when_guard_met_unmet_and_indeterminate(dd: DeviceDirectives, tmp_path: Path) -> None:
    flow = """
steps:
  - when: { visible: "What's new" }
    steps:
      - tap: Close
      - echo: closed
  - echo: after
"""
    shown = FakeDevice(
        view=lambda: page(
            node("h1", 0, 0, 1, 0.1, value="What's new"), node("button", 0.8, 0, 0.2, 0.1, label="Close")
        )
    )
    res = await run_yaml(tmp_path, flow, shown, dd)
    assert lines(res)[0] == ("when", "pass", 'condition met (visible text="What\'s new")')
    assert [s.status for s in res.steps] == ["pass", "pass", "pass", "pass"] and res.ok
    assert shown.calls == [("tap", 0.9, 0.05, 1)]

    absent = FakeDevice(view=lambda: page(node("p", 0, 0, 1, 0.1, value="Home")))
    res = await run_yaml(tmp_path, flow, absent, dd)
    assert lines(res) == [
        ("when", "skip", 'condition not met (visible text="What\'s new") — block skipped (2 steps)'),
        ("tap", "skip", "when block skipped"),
        ("echo", "skip", "when block skipped"),
        ("echo", "pass", None),
    ]
    assert res.ok

    dead = FakeDevice(tree_error=lambda n: DeviceError("renderer crashed"))
    res = await run_yaml(tmp_path, flow, dead, dd)
    assert lines(res) == [
        (
            "when",
            "error",
            'could not evaluate when guard (visible text="What\'s new"): could not read the UI tree: renderer crashed',
        ),
        ("tap", "skip", "when guard errored"),
        ("echo", "skip", "when guard errored"),
        ("echo", "skip", None),
    ]
    assert not res.ok


async def test_when_guard_with_trusted_false_reads_and_failing_final_polls_is_a_clean_skip(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    dev = FakeDevice(view=lambda: page(node("p", 0, 0, 1, 0.1, value="Home")))
    loop = asyncio.get_running_loop()
    start = loop.time()
    # a window ten polls long, on 0.2 of real time (0.6 s): the last answered read comes within a
    # poll of the failing ones even when a loaded machine runs each poll 100 ms late (a window
    # three polls long at 0.1 of real time was judged unreadable at load 12)
    timings = Timings().scaled(0.2)
    window = 3.0 * timings.scale

    def late_failure(n: int) -> Exception | None:
        # the first read always answers (a loaded machine may reach it late): the reads that fail are
        # the final polls, after a trusted "not there"
        return DeviceError("late") if n > 1 and loop.time() - start > 0.8 * window else None

    dev.tree_error = late_failure
    ctx = make_ctx(tmp_path, dev)
    out = await DeviceDirectives(timings=timings).check(visible(Selector(text="What's new")), dev, 3000, ctx)
    assert (out.state, out.reason) == (
        "unmet",
        'no element matched selector text="What\'s new" — no text on the screen comes close to it',
    )


# --------------------------------------------------------------------------------------------
# abort


async def test_abort_during_tap_auto_wait_skips_without_a_gesture(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    dev = FakeDevice(view=lambda: page())
    ctx = make_ctx(tmp_path, dev)
    asyncio.get_running_loop().call_later(0.03, ctx.run.abort.set)
    out = await dd.execute(TapStep(Selector(text="Save")), dev, ctx)
    assert (out.status, out.reason) == ("skip", "run aborted")
    assert dev.calls == []


async def test_abort_during_type_focus_wait_sends_no_keystroke(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(EMAIL))

    def abort_on_tap(call: tuple[Any, ...]) -> None:
        if call[0] == "tap":
            ctx.run.abort.set()

    dev.on_input = abort_on_tap
    ctx = make_ctx(tmp_path, dev)
    out = await dd.execute(TypeStep(Selector(text="Email"), "hello"), dev, ctx)
    assert (out.status, out.reason) == ("skip", "run aborted")
    assert [c[0] for c in dev.calls] == ["tap"]


async def test_abort_during_await_and_guard(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page())
    ctx = make_ctx(tmp_path, dev)
    asyncio.get_running_loop().call_later(0.02, ctx.run.abort.set)
    out = await dd.execute(AwaitStep(visible(Selector(text="x"))), dev, ctx)
    assert (out.status, out.reason) == ("skip", "run aborted")
    assert (await dd.check(visible(Selector(text="x")), dev, 1000, ctx)).state == "aborted"


async def test_a_hung_read_is_cut_short_by_the_abort(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    ctx = make_ctx(tmp_path, dev)

    async def hang() -> UiTree:
        await asyncio.sleep(30)
        return page()

    dev.ui_tree = hang  # type: ignore[method-assign]
    asyncio.get_running_loop().call_later(0.02, ctx.run.abort.set)
    out = await asyncio.wait_for(dd.execute(TapStep(Selector(text="x")), dev, ctx), 2)
    assert out.status == "skip"


# --------------------------------------------------------------------------------------------
# scroll-to


def scrolling(
    dev: FakeDevice, items: int = 40, row: float = 0.1, *, container: bool = False
) -> dict[str, float]:
    state = {"offset": 0.0}

    def view() -> UiTree:
        rows = []
        for i in range(items):
            y = i * row - state["offset"]
            top, bottom = max(0.0, y), min(1.0, y + row)
            frame_h = max(0.0, bottom - top)
            rows.append(node("li", 0, top if frame_h else 0, 1 if frame_h else 0, frame_h, value=f"Item {i}"))
        if container:
            return page(node("ul", 0, 0, 1, 1, *rows, identifier="list", scrollable=True))
        return page(*rows)

    def on_input(call: tuple[Any, ...]) -> None:
        if call[0] == "scroll":
            limit = items * row - 1.0
            state["offset"] = min(max(0.0, state["offset"] + call[4]), limit)

    dev.view = view
    dev.on_input = on_input
    return state


async def test_scroll_to_finds_an_item_below(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    state = scrolling(dev)
    out = await dd.execute(ScrollToStep(Selector(text="Item 23")), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass"
    assert state["offset"] > 1.0
    assert dev.calls[0] == ("scroll", 0.5, 0.5, 0.0, 0.5)


async def test_scroll_to_reaches_the_end(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    scrolling(dev, items=15)
    out = await dd.execute(ScrollToStep(Selector(text="Item 99")), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == (
        "fail",
        'reached the end of the scroll without finding text="Item 99", and none came there within 7500ms',
    )


async def test_scroll_to_waits_at_the_end_for_what_arrives_there(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    """At the end of the scroll, nothing matches yet: the step waits there (as a person waits for a
    list that loads more at its end) and scrolls on once more rows came."""
    dev = FakeDevice()
    state = scrolling(dev, items=15)
    view, reads = dev.view, {"at_end": 0}

    def growing() -> UiTree:
        if state["offset"] >= 15 * 0.1 - 1.0:
            reads["at_end"] += 1
        if reads["at_end"] > 3:
            return page(*view().root.children, node("li", 0, 0.95, 1, 0.05, value="Item 99"))
        return view()

    dev.view = growing
    out = await dd.execute(ScrollToStep(Selector(text="Item 99")), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass", out.reason


async def test_scroll_to_gives_up_after_25_attempts(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    scrolling(dev, items=500, row=0.1)
    out = await dd.execute(ScrollToStep(Selector(text="Item 400")), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == ("fail", 'text="Item 400" not found after 25 scroll attempts')
    assert sum(1 for c in dev.calls if c[0] == "scroll") == 25


async def test_scroll_to_within_a_container_and_up(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    scrolling(dev, container=True)
    ctx = make_ctx(tmp_path, dev)
    within = Selector(identifier="list")
    out = await dd.execute(ScrollToStep(Selector(text="Item 15"), within=within), dev, ctx)
    assert out.status == "pass"
    out = await dd.execute(ScrollToStep(Selector(text="Item 0"), direction="up", within=within), dev, ctx)
    assert out.status == "pass"
    assert any(c[0] == "scroll" and c[4] < 0 for c in dev.calls)
    missing = await dd.execute(ScrollToStep(Selector(text="x"), within=Selector(identifier="nope")), dev, ctx)
    assert (missing.status, missing.reason) == ("fail", 'scroll container id="nope" is not visible')


# --------------------------------------------------------------------------------------------
# pinch / rotate / launch


async def test_pinch_and_rotate_are_refused_on_chromium(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))
    ctx = make_ctx(tmp_path, dev)
    pinch = await dd.execute(PinchStep(scale=2, on=Selector(text="Save")), dev, ctx)
    rotate = await dd.execute(RotateStep(by=90), dev, ctx)
    assert (pinch.status, pinch.reason) == (
        "fail",
        "pinch is unsupported on chromium — a Chromium page gets mouse and keyboard input only, so there is no "
        "two-finger gesture to send; zoom with the page's own controls (a tap on its zoom buttons) instead",
    )
    assert (rotate.status, rotate.reason) == (
        "fail",
        "rotate is unsupported on chromium — a Chromium page gets mouse and keyboard input only, so there is no "
        "two-finger gesture to send; turn the element with the page's own controls (a tap or a drag handle) instead",
    )
    assert dev.calls == []


async def test_launch_opens_urls_files_and_directories_beside_the_root_flow(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))
    ctx = make_ctx(tmp_path, dev)
    flows = tmp_path / ".argent" / "flows"
    (flows / "site").mkdir()
    (flows / "site" / "index.html").write_text("<p>hi</p>")
    (flows / "page.html").write_text("<p>hi</p>")
    assert (await dd.execute(LaunchStep(app="https://example.test/"), dev, ctx)).status == "pass"
    assert (await dd.execute(LaunchStep(app="page.html"), dev, ctx)).status == "pass"
    assert (await dd.execute(LaunchStep(chromium=ChromiumApp("site")), dev, ctx)).status == "pass"
    assert [c[1] for c in dev.calls] == [
        "https://example.test/",
        (flows / "page.html").as_uri(),
        (flows / "site" / "index.html").as_uri(),
    ]
    missing = await dd.execute(LaunchStep(app="nope.html"), dev, ctx)
    assert missing.status == "error" and "does not exist" in (missing.reason or "")
    bare = await dd.execute(LaunchStep(app="site"), dev, make_ctx(tmp_path / "other", dev))
    assert bare.status == "error"
    ios_only = await dd.execute(LaunchStep(apps={"ios": "com.acme"}), dev, ctx)
    assert (ios_only.status, ios_only.reason) == (
        "error",
        'no app id declared for platform "chromium" — add a launch entry for it',
    )


async def test_launch_navigation_failure_is_an_error(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()

    def fail(call: tuple[Any, ...]) -> None:
        raise DeviceError("net::ERR_NAME_NOT_RESOLVED")

    dev.on_input = fail
    out = await dd.execute(LaunchStep(app="https://nowhere.invalid/"), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == (
        "error",
        "could not open https://nowhere.invalid/: net::ERR_NAME_NOT_RESOLVED",
    )


# --------------------------------------------------------------------------------------------
# snapshot


HEADER = node("header", 0.0, 0.25, 0.5, 0.25, label="Header", identifier="hdr")


def key_for(name: str, suffix: str = "") -> str:
    return f"{name}__chromium-{W}x{H}{suffix}"


async def test_snapshot_without_baseline_fails_and_writes_nothing(
    dd: DeviceDirectives, tmp_path: Path, scratch: Path
) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))
    ctx = make_ctx(tmp_path, dev)
    out = await dd.execute(SnapshotStep("home"), dev, ctx)
    expected = f"{tmp_path}/.argent/flows/__baselines__/checkout/{key_for('home')}.png"
    assert out.status == "fail"
    assert out.reason == (
        f'no baseline for "home" on this device class — expected {expected}, nothing was compared. Run with '
        "updateBaselines (--update-baselines) to adopt the current screen, then review and commit it"
    )
    assert out.artifacts is not None and list(out.artifacts) == ["current"]
    assert out.snapshot_key == key_for("home")
    assert not (tmp_path / ".argent" / "flows" / "__baselines__").exists()
    assert (P.decode_png(Path(out.artifacts["current"]).read_bytes()) == dev.image).all()


async def test_snapshot_update_writes_then_updates(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    ctx = make_ctx(tmp_path, dev, update=True)
    first = await dd.execute(SnapshotStep("home"), dev, ctx)
    path = tmp_path / ".argent" / "flows" / "__baselines__" / "checkout" / f"{key_for('home')}.png"
    assert (first.status, first.reason) == ("pass", f"baseline written ({key_for('home')}.png)")
    assert first.artifacts == {"baseline": str(path)} and first.snapshot_key == key_for("home")
    assert path.read_bytes() == P.encode_png(dev.image)
    dev.image = canvas((0, 0, 0))
    second = await dd.execute(SnapshotStep("home"), dev, ctx)
    assert (second.status, second.reason) == ("pass", f"baseline updated ({key_for('home')}.png)")
    assert (P.decode_png(path.read_bytes()) == dev.image).all()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp files left


async def test_snapshot_identical_passes_without_artifacts(
    dd: DeviceDirectives, tmp_path: Path, scratch: Path
) -> None:
    dev = FakeDevice()
    await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev, update=True))
    out = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == ("pass", f"diff 0.00% ≤ 0.5% ({key_for('home')}.png)")
    assert out.artifacts is None and out.snapshot_key is None
    assert list(scratch.iterdir()) == []


async def test_snapshot_ignores_the_status_bar_band(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev, update=True))
    dev.image = dev.image.copy()
    dev.image[:5, :, :3] = 0  # ceil(80 · 0.06) = 5 rows
    out = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev))
    assert out.reason == f"diff 0.00% ≤ 0.5% ({key_for('home')}.png)"


async def test_snapshot_mismatch_fails_with_diff_artifacts(
    dd: DeviceDirectives, tmp_path: Path, scratch: Path
) -> None:
    dev = FakeDevice()
    await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev, update=True))
    dev.image = dev.image.copy()
    dev.image[40:48, 10:41, :3] = (200, 0, 0)  # 248 of 8000 px = 3.10%
    ctx = make_ctx(tmp_path, dev)
    out = await dd.execute(SnapshotStep("home"), dev, ctx)
    key = key_for("home")
    assert (out.status, out.reason) == ("fail", f"diff 3.10% > 0.5% ({key}.png)")
    assert out.snapshot_key == key and out.artifacts is not None
    assert set(out.artifacts) == {"baseline", "current", "diff"}
    assert Path(out.artifacts["diff"]).name == f"{key}-diff.png"
    diff = P.decode_png(Path(out.artifacts["diff"]).read_bytes())
    assert diff.shape == (24, 30, 4)  # the 0.3x context diff
    assert Path(out.artifacts["baseline"]).read_bytes() == P.encode_png(canvas())
    # a generous maxMismatch passes, printed like JavaScript
    passed = await dd.execute(SnapshotStep("home", max_mismatch=5), dev, ctx)
    assert passed.reason == f"diff 3.10% ≤ 5% ({key}.png)"
    strict = await dd.execute(SnapshotStep("home", max_mismatch=1.5), dev, ctx)
    assert strict.reason == f"diff 3.10% > 1.5% ({key}.png)"


async def test_snapshot_dimension_mismatch(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    ctx = make_ctx(tmp_path, dev)
    path = Path(baseline_dir(ctx.run.root, "checkout")) / f"{key_for('home')}.png"
    path.parent.mkdir(parents=True)
    path.write_bytes(P.encode_png(canvas(w=80, h=100)))
    out = await dd.execute(SnapshotStep("home"), dev, ctx)
    assert (out.status, out.reason) == (
        "fail",
        f"baseline is 80x100 but the capture is 100x80 ({key_for('home')}.png) — nothing was compared",
    )
    assert out.artifacts is not None and set(out.artifacts) == {"baseline", "current"}


async def test_snapshot_same_shape_baseline_is_resampled(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    ctx = make_ctx(tmp_path, dev)
    path = Path(baseline_dir(ctx.run.root, "checkout")) / f"{key_for('home')}.png"
    path.parent.mkdir(parents=True)
    path.write_bytes(P.encode_png(canvas(w=200, h=160)))
    out = await dd.execute(SnapshotStep("home"), dev, ctx)
    assert out.status == "pass"


async def test_snapshot_crop_on(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(HEADER))
    dev.image = canvas()
    dev.image[20:40, 0:50, :3] = (10, 20, 30)
    update = make_ctx(tmp_path, dev, update=True)
    strict = Selector(text="Header")
    out = await dd.execute(SnapshotStep("hdr", crop_on=strict), dev, update)
    key = key_for("hdr", f"-crop-{crop_hash(strict)}")
    assert out.snapshot_key == key
    stored = P.decode_png(Path(out.artifacts["baseline"]).read_bytes())  # type: ignore[index]
    assert stored.shape == (20, 50, 4) and (stored[..., :3] == (10, 20, 30)).all()
    # loose vs strict and scopes: keys differ only by own fields and looseness
    assert crop_hash(Selector(text="Header", loose=True)) != crop_hash(strict)
    assert crop_hash(Selector(text="Header", within=Selector(identifier="x"))) == crop_hash(strict)
    assert crop_hash(Selector(identifier="hdr")) != crop_hash(strict)
    # the crop never masks its top rows
    dev.image = dev.image.copy()
    dev.image[20:22, 0:50, :3] = 255
    out = await dd.execute(SnapshotStep("hdr", crop_on=strict), dev, make_ctx(tmp_path, dev))
    assert out.status == "fail" and out.reason == f"diff 10.00% > 0.5% ({key}.png)"


async def test_snapshot_crop_on_failures(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(HEADER, node("i", 0.5, 0.5, 0.001, 0.001, label="dot")))
    ctx = make_ctx(tmp_path, dev, update=True)
    missing = await dd.execute(SnapshotStep("x", crop_on=Selector(text="Nope")), dev, ctx)
    assert missing.reason == (
        'no visible element matched selector text="Nope" — no text on the screen comes close to it'
    )
    tiny = await dd.execute(SnapshotStep("x", crop_on=Selector(text="dot")), dev, ctx)
    assert (tiny.status, tiny.reason) == (
        "fail",
        'cropOn matched text="dot" but its on-screen region is empty at this resolution — nothing was compared',
    )
    assert not (tmp_path / ".argent" / "flows" / "__baselines__").exists()
    # the element's size drifted
    sel = Selector(identifier="hdr")
    await dd.execute(SnapshotStep("h", crop_on=sel), dev, ctx)
    dev.view = lambda: page(node("header", 0.0, 0.25, 0.6, 0.25, identifier="hdr"))
    out = await dd.execute(SnapshotStep("h", crop_on=sel), dev, make_ctx(tmp_path, dev))
    key = key_for("h", f"-crop-{crop_hash(sel)}")
    assert out.reason == (
        f"baseline is 50x20 but the cropOn region is 60x20 ({key}.png) — nothing was compared. The element's "
        "size drifted — crop a fixed-size container, or re-adopt with updateBaselines"
    )


async def test_snapshot_abort_during_settle_captures_nothing(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    ctx = make_ctx(tmp_path, dev, update=True)
    shots = {"n": 0}
    real = dev.screenshot

    async def counted() -> bytes:
        shots["n"] += 1
        return await real()

    dev.screenshot = counted  # type: ignore[method-assign]
    ctx.run.abort.set()
    out = await dd.execute(SnapshotStep("home"), dev, ctx)
    assert (out.status, out.reason) == ("skip", "run aborted during snapshot settle")
    crop = await dd.execute(SnapshotStep("home", crop_on=Selector(text="x")), dev, ctx)
    assert (crop.status, crop.reason) == ("skip", "run aborted while resolving cropOn")
    assert shots["n"] == 0


async def test_snapshot_tree_outage_still_captures_and_screenshot_failure_errors(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    dev = FakeDevice(tree_error=lambda n: DeviceError("no tree"))
    out = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev, update=True))
    assert out.status == "pass"
    dev.shot_error = DeviceError("Chromium is not running")
    out = await dd.execute(SnapshotStep("home"), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == ("error", "Chromium is not running")


async def test_snapshot_cross_app_guard(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    ctx = make_ctx(tmp_path, dev, update=True)
    await dd.execute(LaunchStep(app="https://a.test/"), dev, ctx)
    assert (await dd.execute(SnapshotStep("home"), dev, ctx)).status == "pass"
    assert (await dd.execute(SnapshotStep("home"), dev, ctx)).status == "pass"  # same app recaptures
    await dd.execute(LaunchStep(app="https://b.test/"), dev, ctx)
    out = await dd.execute(SnapshotStep("home"), dev, ctx)
    assert (out.status, out.reason) == (
        "fail",
        'snapshot "home" was already captured in this run from a different app (https://a.test/) — both '
        f"captures would share the baseline {key_for('home')}.png, nothing was compared. Give per-app snapshots "
        "distinct names",
    )


async def test_snapshot_in_a_fragment_uses_the_root_flows_baselines(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    flows = tmp_path / ".argent" / "flows"
    (flows / "parts").mkdir(parents=True)
    (flows / "parts" / "snap.yaml").write_text("steps:\n  - snapshot: home\n")
    dev = FakeDevice()
    res = await run_yaml(tmp_path, "steps:\n  - run: parts/snap.yaml\n", dev, dd, update=True, name="main")
    assert [(s.kind, s.status) for s in res.steps] == [("run", "pass"), ("snapshot", "pass")]
    assert (flows / "__baselines__" / "main" / f"{key_for('home')}.png").is_file()


# --------------------------------------------------------------------------------------------
# idle


async def test_idle_settles_on_a_still_screen(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))
    # A timeout of 2 s of real time (FAST scales it by 0.02): a still screen settles at its first
    # stable window, however loaded the machine; the default's 0.1 s ran out at load 11.
    out = await dd.execute(IdleStep(timeout_ms=100_000), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.warning) == ("pass", None)


async def test_idle_never_still_passes_with_a_warning(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    dev.view = lambda: page(node("p", 0, 0, 1, 0.1, value=f"tick {dev.reads}"))
    roomy = DeviceDirectives(timings=ROOMY)
    # 0.5 s of real time on the test's clock: enough rounds to judge on a loaded machine (3 are needed)
    out = await roomy.execute(IdleStep(timeout_ms=5000), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass"
    assert out.warning == (
        "the screen never held still for 250ms within 5000ms — continuing anyway; the next steps may see it moving"
    )


async def test_idle_localized_motion_and_tree_alone(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(SAVE))
    frames = {"n": 0}

    async def spinner() -> bytes:
        frames["n"] += 1
        img = canvas(w=200, h=160)
        img[0:8, 0:8, :3] = 0 if frames["n"] % 2 else 255  # a 2x2 area at quarter scale... 4 px; make it 16
        img[0:16, 0:16, :3] = 0 if frames["n"] % 2 else 255
        return P.encode_png(img)

    dev.screenshot = spinner  # type: ignore[method-assign]
    out = await dd.execute(IdleStep(), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass" and out.warning is not None and "small part" in out.warning

    blind = FakeDevice(view=lambda: page(SAVE), shot_error=DeviceError("no pixels"))
    out = await dd.execute(IdleStep(), blind, make_ctx(tmp_path, blind))
    assert out.status == "pass" and (out.warning or "").startswith("settled on the UI tree alone")


async def test_idle_errors_when_the_tree_cannot_be_read(dd: DeviceDirectives, tmp_path: Path) -> None:
    dead = FakeDevice(tree_error=lambda n: DeviceError("gone"))
    out = await dd.execute(IdleStep(timeout_ms=1000), dead, make_ctx(tmp_path, dead))
    assert (out.status, out.reason) == (
        "error",
        "could not read the UI tree while waiting for the screen to settle — gone",
    )
    stopped = FakeDevice(view=lambda: page(node("p", 0, 0, 1, 0.1, value="x")))
    stopped.tree_error = lambda n: DeviceError("went away") if n > 1 else None
    stopped.view = lambda: page(node("p", 0, 0, 1, 0.1, value=f"{stopped.reads}"))
    out = await DeviceDirectives(timings=ROOMY).execute(
        IdleStep(timeout_ms=1000), stopped, make_ctx(tmp_path, stopped)
    )
    assert (out.status, out.reason) == ("error", "the UI tree source answered and then stopped: went away")


# --------------------------------------------------------------------------------------------
# the flow engine end to end with the double


async def test_a_flow_of_directives_reports_like_upstream(dd: DeviceDirectives, tmp_path: Path) -> None:
    dev = FakeDevice()
    focusing(dev)
    res = await run_yaml(
        tmp_path,
        """
steps:
  - type: { into: { id: email }, text: "bob", submit: false }
  - assert: { visible: Email }
  - tap: { x: 0.5, y: 0.5 }
  - tap: Missing
  - echo: never
""",
        dev,
        dd,
    )
    assert [(s.kind, s.status, s.target) for s in res.steps] == [
        ("type", "pass", "into id=email"),
        ("assert", "pass", 'visible "Email"'),
        ("tap", "pass", "(0.5, 0.5)"),
        ("tap", "fail", '"Missing"'),
        ("echo", "skip", None),
    ]
    assert res.steps[3].reason == (
        'no visible element matched selector text="Missing" — no text on the screen comes close to it'
    )


async def test_disk_baselines_are_atomic_and_report_existence(tmp_path: Path) -> None:
    files = DiskFlowFiles()
    path = str(tmp_path / "a" / "b" / "x.png")
    assert await files.read_baseline(path) is None
    assert await files.write_baseline(path, b"one") is False
    assert await files.write_baseline(path, b"two") is True
    assert await files.read_baseline(path) == b"two"
    assert os.listdir(tmp_path / "a" / "b") == ["x.png"]


# --------------------------------------------------------------------------------------------
# argent flow run --output


#: What a PNG file starts with: the export copies only PNG images.
PNG_HEAD = b"\x89PNG\r\n\x1a\n"


def failed_snapshot(tmp_path: Path, key: str = "home__chromium-100x80", **extra: Any) -> dict[str, Any]:
    """A failed snapshot step whose images are in a tool-server's snapshot scratch directory."""
    src = tmp_path / f"argent-flow-diff-{key.replace('/', '_').replace('.', '_')}"
    src.mkdir(exist_ok=True)
    artifacts = {}
    for role in ("baseline", "current", "diff"):
        (src / f"{role}.png").write_bytes(PNG_HEAD + role.encode())
        artifacts[role] = str(src / f"{role}.png")
    return {
        "index": 0,
        "kind": "snapshot",
        "status": "fail",
        "snapshotKey": key,
        "artifacts": artifacts,
        **extra,
    }


def test_output_export_copies_failed_snapshots_and_claims_the_dir(tmp_path: Path) -> None:
    from argent.cli.flow_run import EXPORT_MARKER, export_artifacts

    out = tmp_path / "out"
    warnings: list[str] = []
    passing = {"index": 1, "kind": "snapshot", "status": "pass", "artifacts": {"baseline": "/x.png"}}
    result = {"steps": [failed_snapshot(tmp_path), passing]}
    export_artifacts(result, "/p/.argent/flows/home.yaml", "home", out, warnings.append)
    step = result["steps"][0]
    assert step["artifacts"] == {
        r: str(out / "home" / f"home__chromium-100x80-{r}.png") for r in ("baseline", "current", "diff")
    }
    assert (out / "home" / "home__chromium-100x80-diff.png").read_bytes() == PNG_HEAD + b"diff"
    assert (out / "home" / EXPORT_MARKER).read_text() == "/p/.argent/flows/home.yaml\n"
    assert passing["artifacts"] == {"baseline": "/x.png"} and warnings == []
    # a re-run of the same file overwrites in place
    again = {"steps": [failed_snapshot(tmp_path)]}
    export_artifacts(again, "/p/.argent/flows/home.yaml", "home", out, warnings.append)
    assert again["steps"][0]["artifacts"]["diff"] == str(out / "home" / "home__chromium-100x80-diff.png")
    assert warnings == []


def test_output_export_moves_aside_for_another_flow_and_unknown_files(tmp_path: Path) -> None:
    import hashlib

    from argent.cli.flow_run import export_artifacts

    out = tmp_path / "out"
    export_artifacts({"steps": [failed_snapshot(tmp_path)]}, "/a/home.yaml", "home", out, lambda _: None)
    warnings: list[str] = []
    other = {"steps": [failed_snapshot(tmp_path)]}
    export_artifacts(other, "/b/home.yaml", "home", out, warnings.append)
    alt = out / f"home-{hashlib.sha256(b'/b/home.yaml').hexdigest()[:8]}"
    assert other["steps"][0]["artifacts"]["current"] == str(alt / "home__chromium-100x80-current.png")
    assert warnings == [
        f"warning: {out / 'home'} already holds artifacts from /a/home.yaml; writing this flow's artifacts to "
        f"{alt} so neither set is overwritten"
    ]
    (out / "stray").mkdir()
    (out / "stray" / "notes.txt").write_text("mine")
    warnings.clear()
    export_artifacts({"steps": [failed_snapshot(tmp_path)]}, "/c/stray.yaml", "stray", out, warnings.append)
    assert "already holds files from an unknown source" in warnings[0]


def test_output_export_skips_unsafe_names_and_leaves_output_alone_when_nothing_to_copy(
    tmp_path: Path,
) -> None:
    from argent.cli.flow_run import export_artifacts

    out = tmp_path / "out"
    warnings: list[str] = []
    export_artifacts({"steps": [{"status": "fail", "artifacts": {}}]}, "/a/x.yaml", "x", out, warnings.append)
    assert not out.exists() and warnings == []
    bad = failed_snapshot(tmp_path, key="../escape")
    export_artifacts({"steps": [bad]}, "/a/x.yaml", "x", out, warnings.append)
    assert not out.exists() and "unsafe snapshot key" in warnings[0]
    # the key comes from the baseline path when snapshotKey is missing
    step = failed_snapshot(tmp_path)
    del step["snapshotKey"]
    step["artifacts"]["baseline"] = str(
        Path(step["artifacts"]["baseline"]).with_name("home__chromium-9x9.png")
    )
    Path(step["artifacts"]["baseline"]).write_bytes(PNG_HEAD + b"b")
    export_artifacts({"steps": [step]}, "/a/x.yaml", "x", out, warnings.append)
    assert step["artifacts"]["baseline"] == str(out / "x" / "home__chromium-9x9-baseline.png")


# --------------------------------------------------------------------------------------------
# css: the reads mark what the directive's selectors name; a refusal fails the step at once


@define(slots=False)
class CssDevice(FakeDevice):
    """A web device double: its reads mark the elements whose ``classes`` hold a queried ``.class``;
    ``refuse`` answers a read that asks for CSS with that error instead."""

    classes: dict[str, str] = field(factory=dict)
    asked: list[tuple[str, ...]] = field(factory=list)
    refuse: Exception | None = None

    async def ui_tree(self, *, css: Sequence[str] = ()) -> UiTree:
        self.asked.append(tuple(css))
        if css and self.refuse is not None:
            raise self.refuse
        tree = await super().ui_tree()

        def mark(n: UiNode) -> UiNode:
            owned = {
                c for c in css if c.startswith(".") and c[1:] in self.classes.get(n.identifier, "").split()
            }
            return attrs.evolve(n, css=frozenset(owned), children=tuple(mark(k) for k in n.children))

        return attrs.evolve(tree, root=mark(tree.root))


def web_page(*children: UiNode) -> UiTree:
    return UiTree(root=UiNode(role="", kind="html", frame=Frame(0, 0, 1, 1), children=children))


def dialog_page() -> UiTree:
    ok = UiNode(role="button", kind="button", frame=Frame(0.1, 0.1, 0.1, 0.1), label="OK", identifier="ok1")
    inner = UiNode(
        role="button", kind="button", frame=Frame(0.6, 0.6, 0.1, 0.1), label="OK", identifier="ok2"
    )
    box = UiNode(role="", kind="div", frame=Frame(0.5, 0.5, 0.4, 0.4), identifier="shade")
    dialog = UiNode(role="dialog", kind="div", frame=Frame(0.5, 0.5, 0.4, 0.4), children=(inner,))
    return web_page(ok, box, dialog)


async def test_reads_ask_for_the_css_of_the_selectors_and_only_then(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    dev = CssDevice(view=dialog_page, classes={"ok2": "primary", "shade": "shade"})
    ctx = make_ctx(tmp_path, dev)
    out = await dd.execute(TapStep(Selector(css=".primary", within=Selector(role="dialog"))), dev, ctx)
    assert out.status == "pass" and dev.calls == [("tap", 0.65, 0.65, 1)]
    assert set(dev.asked) == {(".primary",)}
    dev.asked.clear()
    out = await dd.execute(TapStep(Selector(text="OK", within=Selector(css=".shade"))), dev, ctx)
    assert out.status == "pass" and dev.calls[-1] == ("tap", 0.65, 0.65, 1)
    assert set(dev.asked) == {(".shade",)}
    dev.asked.clear()
    out = await dd.execute(AssertStep(visible(Selector(text="OK", within=Selector(role="dialog")))), dev, ctx)
    assert out.status == "pass" and set(dev.asked) == {()}
    # css is strict: a css selector never stands for an id or a text
    out = await dd.execute(AssertStep(visible(Selector(css=".ok1"))), dev, ctx)
    assert (out.status, out.reason) == (
        "fail",
        'no element matched selector css=".ok1" — no visible element on the screen matches that CSS selector',
    )


async def test_a_css_selector_the_device_refuses_fails_the_step_at_once(
    dd: DeviceDirectives, tmp_path: Path
) -> None:
    refused = CssSelectorError(
        "a:frobnicate", "the browser refused it ('a:frobnicate' is not a valid selector)"
    )
    dev = CssDevice(view=dialog_page, refuse=refused)
    ctx = make_ctx(tmp_path, dev)
    reason = (
        "css selector \"a:frobnicate\" is not valid: the browser refused it ('a:frobnicate' is not a valid "
        "selector)"
    )
    out = await dd.execute(TapStep(Selector(css="a:frobnicate")), dev, ctx)
    assert (out.status, out.reason, dev.calls) == ("fail", reason, [])
    assert dev.reads == 0 and len(dev.asked) == 1  # not read again and again until the action timeout
    out = await dd.execute(
        AwaitStep(visible(Selector(text="OK", within=Selector(css="a:frobnicate")))), dev, ctx
    )
    assert (out.status, out.reason) == ("fail", reason)
    assert len(dev.asked) == 2
    android = CssDevice(view=dialog_page, platform="android", refuse=css_unsupported("android"))
    out = await dd.execute(TapStep(Selector(css="b")), android, make_ctx(tmp_path, android))
    assert (out.status, out.reason) == (
        "fail",
        "css selectors are unsupported on android — its screen is no web page; select by text, id or role instead",
    )


async def test_the_crop_key_of_a_selector_without_css_is_unchanged() -> None:
    # the hash of the five own fields, as baselines written before `css:` existed were named
    assert crop_hash(Selector(text="Header")) == "1b0573ff"
    assert crop_hash(Selector(text="Header", css="h1")) not in (crop_hash(Selector(text="Header")), "")
    assert crop_hash(Selector(css="h1")) != crop_hash(Selector(css="h2"))


async def test_a_condition_on_a_screen_that_shows_nothing_says_why(tmp_path: Path) -> None:
    dd = DeviceDirectives(timings=ROOMY)
    blank = attrs.evolve(web_page(), blank="the page is blank (its <body> is empty)")
    dev = FakeDevice(view=lambda: blank)
    out = await dd.execute(AssertStep(visible(Selector(text="Go"))), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == (
        "fail",
        "could not evaluate the condition — every read of the UI tree was empty: the page is blank (its <body> "
        "is empty)",
    )
    out = await dd.execute(TapStep(Selector(text="Go")), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == (
        "fail",
        'no visible element matched selector text="Go" — nothing on the screen is visible: the page is blank '
        "(its <body> is empty)",
    )
