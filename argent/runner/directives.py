"""Device directives on a ``Device``: the runner's ``DirectiveExecutor``.

``DeviceDirectives`` carries out `launch`, `tap`, `long-press`, `type`, `press`, `select`,
`await` (with `idle`), `assert`, `scroll-to`, `pinch`, `rotate`, `snapshot` and `dialogs`, and
answers `when:` UI guards; a native dialog that opens while a step runs is named in its line. It
only talks to the ``Device`` protocol and to ``FlowFiles`` (baselines), so any backend and any file
store (disk, or a link's in-memory members) works.

Timing: a *settle* waits until the page says it is quiet and reads the tree once (at most
3 s; see ``argent.runner.idle`` — a device without page signals re-reads the tree every 250 ms
until two reads agree); a selector action waits up to 7.5 s for a settled screen on which its
selector resolves to a visible element, looking again whenever the page changed (at least every
300 ms); conditions poll for their window the same way, with a final poll at the deadline. Every
wait is cut short by the run's abort event, and no gesture or keystroke is dispatched once it is
set.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar

import attrs
from attrs import define, field, frozen

from argent.cpu import run_cpu
from argent.devices.base import (
    Capability,
    Device,
    DeviceError,
    DeviceGoneError,
    DialogAnswer,
    FileInputs,
    FormControls,
    Frame,
    NativeDialogs,
    PageSignals,
    SelectorRefusedError,
    UiTree,
)
from argent.devices.deferred import resolved
from argent.devices.registry import baseline_suffix, engine_named, engines_text
from argent.devices.web.targets import LaunchTargetError, resolve_launch_target
from argent.flows.model import (
    AssertStep,
    AwaitStep,
    Condition,
    DialogsStep,
    IdleStep,
    LaunchStep,
    LongPressStep,
    PinchStep,
    Point,
    PressStep,
    RotateStep,
    ScrollToStep,
    Selector,
    SelectStep,
    SnapshotStep,
    Step,
    TapStep,
    TypeStep,
    UploadStep,
)
from argent.flows.names import describe_selector, js_json, js_number
from argent.flows.secrets import UnknownSecretError, fill_secrets, redact
from argent.limits import (
    ACTION_POLL_MS,
    ACTION_TIMEOUT_MS,
    CONDITION_POLL_MS,
    DEFAULT_ASSERT_GRACE_MS,
    DEFAULT_AWAIT_TIMEOUT_MS,
    DEFAULT_IDLE_STABLE_FOR_MS,
    DEFAULT_IDLE_TIMEOUT_MS,
    DEFAULT_LONG_PRESS_MS,
    DEFAULT_MAX_MISMATCH,
    FAILURE_SCREENSHOT_TIMEOUT_SECONDS,
    IDLE_POLL_MS,
    SCROLL_TO_MAX_ATTEMPTS,
    SCROLL_TO_MIN_STEP,
    SETTLE_INTERVAL_MS,
    SETTLE_MAX_MS,
    TYPE_FOCUS_GRACE_MS,
    TYPE_FOCUS_MAX_MS,
    TYPE_FOCUS_POLL_MS,
)
from argent.runner import masks, pixels
from argent.runner.files import FlowFileError, baseline_dir
from argent.runner.forms import SELECT_ALL_CHORD, choice_problem, with_dialogs
from argent.runner.idle import Aborted as _Aborted
from argent.runner.idle import Outage as _Outage
from argent.runner.idle import ReadTimeout as _ReadTimeout
from argent.runner.idle import Waiter, race, signals_of
from argent.runner.run import (
    DirectiveContext,
    DirectiveOutcome,
    GuardOutcome,
    Run,
    error_message,
    sleep_or_abort,
)
from argent.runner.selectors import (
    Leaf,
    Screen,
    alternatives,
    best_match,
    beyond,
    bounded,
    css_selectors,
    evaluate,
    exact_hits,
    flatten,
    lies_beyond,
    miss_reason,
    resolve_strict,
)
from argent.utils.oserrors import BASELINE_RUN_AGAIN, write_failure_text

T = TypeVar("T")

RUN_ABORTED_DURING_SNAPSHOT_SETTLE = "run aborted during snapshot settle"
RUN_ABORTED_WHILE_RESOLVING_CROP = "run aborted while resolving cropOn"
DIFF_SCRATCH_PREFIX = "argent-flow-diff-"
#: The warning of a failed snapshot whose images the disk refused (the verdict stands without them).
IMAGES_NOT_KEPT = "the images of this snapshot were not kept: {error}"
#: The artifact role of the screenshot a failed device step carries (beside baseline/current/diff).
FAILURE_SCREENSHOT_ROLE = "screenshot"

#: Why a browser engine without two-finger input (``Capability.TWO_FINGER``) fails a pinch or a rotate.
TWO_FINGER_UNSUPPORTED = (
    "{kind} is unsupported on {platform} — a {label} page gets mouse and keyboard input only, so there is no "
    "two-finger gesture to send; {instead}"
)
TWO_FINGER_INSTEAD = {
    "pinch": "zoom with the page's own controls (a tap on its zoom buttons) instead",
    "rotate": "turn the element with the page's own controls (a tap or a drag handle) instead",
}


# --------------------------------------------------------------------------------------------
# Timing


@frozen
class Timings:
    """The waits of the directives, in seconds. ``scale`` also multiplies the durations a step
    spells (await/idle timeouts, stableFor); messages keep the spelled milliseconds."""

    settle_interval: float = SETTLE_INTERVAL_MS / 1000
    settle_max: float = SETTLE_MAX_MS / 1000
    action_timeout: float = ACTION_TIMEOUT_MS / 1000
    action_poll: float = ACTION_POLL_MS / 1000
    condition_poll: float = CONDITION_POLL_MS / 1000
    type_focus_max: float = TYPE_FOCUS_MAX_MS / 1000
    type_focus_grace: float = TYPE_FOCUS_GRACE_MS / 1000
    type_focus_poll: float = TYPE_FOCUS_POLL_MS / 1000
    idle_poll: float = IDLE_POLL_MS / 1000
    #: The least time a single device read is given, even at the very end of a window.
    read_floor: float = 1.0
    scale: float = 1.0

    def scaled(self, factor: float) -> Timings:
        """Every wait multiplied by ``factor`` (tests run the real logic on a faster clock)."""
        return Timings(
            settle_interval=self.settle_interval * factor,
            settle_max=self.settle_max * factor,
            action_timeout=self.action_timeout * factor,
            action_poll=self.action_poll * factor,
            condition_poll=self.condition_poll * factor,
            type_focus_max=self.type_focus_max * factor,
            type_focus_grace=self.type_focus_grace * factor,
            type_focus_poll=self.type_focus_poll * factor,
            idle_poll=self.idle_poll * factor,
            read_floor=self.read_floor * factor,
            scale=self.scale * factor,
        )

    def ms(self, seconds: float) -> int:
        """Elapsed seconds as the milliseconds a person would have seen at scale 1."""
        return pixels.js_round(seconds / self.scale * 1000)


#: The waits of a run that names none (a frozen value: one serves every run).
DEFAULT_TIMINGS = Timings()


# --------------------------------------------------------------------------------------------
# Internal control flow


class _Refusal(Exception):
    """The step cannot run as written: ``status`` with this reason."""

    def __init__(self, reason: str, status: Literal["fail", "error"] = "fail") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status: Literal["fail", "error"] = status


@define
class _RunState:
    """What one run remembers across steps: launched apps, which app captured which key, and how
    its native dialogs are answered (None: the defaults) and on which devices that answer is set."""

    launched: dict[str, str] = field(factory=dict)
    captured: dict[str, str | None] = field(factory=dict)
    dialogs: DialogAnswer | None = None
    answered: set[str] = field(factory=set)


PollState = Literal["met", "unmet", "indeterminate"]


@frozen
class _Poll:
    state: PollState
    reason: str | None = None


def crop_hash(sel: Selector) -> str:
    """The 8-hex `-crop-` suffix of a cropOn key: own fields and looseness, not scopes or `any` (a `css`
    only where there is one: the keys of the baselines written before it stay as they were)."""
    own: list[Any] = [sel.text, sel.text_matches, sel.identifier, sel.role, sel.loose]
    payload = js_json(own if sel.css is None else [*own, sel.css])
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:8]


# --------------------------------------------------------------------------------------------
# The executor


class DeviceDirectives:
    """The ``DirectiveExecutor`` over the ``Device`` protocol (see module doc)."""

    def __init__(
        self,
        *,
        timings: Timings | None = None,
        env: Mapping[str, str] | None = None,
        scratch_dir: str | None = None,
        page_gate: Callable[[str, str | None], Awaitable[None]] | None = None,
        failure_screenshots: bool = False,
    ) -> None:
        self.t = timings or DEFAULT_TIMINGS
        self._env = env
        self._scratch_dir = scratch_dir
        #: A step that fails or errors carries a screenshot of the device taken right then.
        self._failure_screenshots = failure_screenshots
        #: Refuses (raises) a launch target whose page the call may not read from this host.
        self._page_gate = page_gate
        self._runs: weakref.WeakKeyDictionary[Run, _RunState] = weakref.WeakKeyDictionary()

    # -- the protocol ---------------------------------------------------------------------

    async def execute(self, step: Step, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        device = await resolved(device)  # an explicit device is looked up by the step that needs it
        dialogs = device if isinstance(device, NativeDialogs) else None
        mark = dialogs.dialog_mark() if dialogs is not None else 0
        if dialogs is not None:
            self._answer_dialogs(ctx.run, device, dialogs)
        outcome = await self._execute(step, device, ctx)
        if self._failure_screenshots and outcome.status in ("fail", "error") and not outcome.artifacts:
            path = await self._failure_screenshot(device, ctx)
            if path is not None:
                outcome = attrs.evolve(outcome, artifacts={FAILURE_SCREENSHOT_ROLE: path})
        if dialogs is not None:
            outcome = with_dialogs(outcome, dialogs.dialogs_since(mark))
        return outcome

    async def _failure_screenshot(self, device: Device, ctx: DirectiveContext) -> str | None:
        """The screen as the step left it, as a file beside failed snapshots' images (the report's
        evidence of what the step saw); None when the run is aborting, or the device gives no PNG
        within ``FAILURE_SCREENSHOT_TIMEOUT_SECONDS``, or it cannot be kept: the step's own verdict
        stands either way."""
        if ctx.run.abort.is_set():
            return None
        name = f"step-{len(ctx.run.steps) + 1}-{FAILURE_SCREENSHOT_ROLE}.png"
        try:
            shot = await self._race(ctx, device.screenshot(), FAILURE_SCREENSHOT_TIMEOUT_SECONDS)
            pixels.png_size(shot)
            (path,) = await asyncio.to_thread(self._write_scratch, {name: shot})
            return path
        except Exception:
            return None

    async def _execute(self, step: Step, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        try:
            return await self._dispatch(step, device, ctx)
        except _Aborted as exc:
            return DirectiveOutcome("skip", exc.reason)
        except _Refusal as exc:
            return DirectiveOutcome(exc.status, exc.reason)
        except _Outage as exc:
            return DirectiveOutcome("error", str(exc))
        except SelectorRefusedError as exc:
            return DirectiveOutcome("fail", str(exc))
        except (DeviceError, FlowFileError) as exc:
            return DirectiveOutcome("error", error_message(exc))

    async def check(
        self, condition: Condition, device: Device, grace_ms: float, ctx: DirectiveContext
    ) -> GuardOutcome:
        device = await resolved(device)
        try:
            poll = await self._poll(condition, device, ctx, grace_ms)
        except _Aborted:
            return GuardOutcome("aborted")
        except DeviceGoneError as exc:
            return GuardOutcome("indeterminate", error_message(exc))
        return GuardOutcome(poll.state, poll.reason)

    async def _dispatch(self, step: Step, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        """The directive's executor, by the hook its model names (``Step.executor``)."""
        execute = self._executors.get(step.executor)
        if execute is None:
            return DirectiveOutcome("error", f"{step.kind} is not a device directive")
        return await execute(step, device, ctx)

    @property
    def _executors(
        self,
    ) -> Mapping[str, Callable[[Any, Device, DirectiveContext], Awaitable[DirectiveOutcome]]]:
        """The device directives this executor carries out, by executor hook."""
        return {
            "tap": self._tap,
            "long-press": self._long_press,
            "type": self._type,
            "press": self._press,
            "select": self._select,
            "await": self._await,
            "assert": self._assert,
            "idle": self._idle,
            "scroll-to": self._scroll_to,
            "pinch": self._two_finger_step,
            "rotate": self._two_finger_step,
            "launch": self._launch,
            "snapshot": self._snapshot,
            "dialogs": self._dialogs,
            "upload": self._upload,
        }

    async def _tap(self, step: TapStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        return await self._gesture(step.target, device, ctx, tap_count=step.times or 1)

    async def _long_press(
        self, step: LongPressStep, device: Device, ctx: DirectiveContext
    ) -> DirectiveOutcome:
        duration = step.duration_ms if step.duration_ms is not None else DEFAULT_LONG_PRESS_MS
        return await self._gesture(step.target, device, ctx, press_ms=duration)

    async def _await(self, step: AwaitStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        timeout = step.timeout_ms if step.timeout_ms is not None else DEFAULT_AWAIT_TIMEOUT_MS
        return self._verdict(await self._poll(step.condition, device, ctx, timeout))

    async def _assert(self, step: AssertStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        return self._verdict(await self._poll(step.condition, device, ctx, DEFAULT_ASSERT_GRACE_MS))

    async def _two_finger_step(
        self, step: PinchStep | RotateStep, device: Device, ctx: DirectiveContext
    ) -> DirectiveOutcome:
        return self._two_finger(step, device)

    @staticmethod
    def _verdict(poll: _Poll) -> DirectiveOutcome:
        return DirectiveOutcome("pass") if poll.state == "met" else DirectiveOutcome("fail", poll.reason)

    def _state(self, run: Run) -> _RunState:
        state = self._runs.get(run)
        if state is None:
            state = self._runs[run] = _RunState()
        return state

    # -- waiting and reading (the waits themselves live in ``argent.runner.idle``) -------------

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    def _waiter(self, device: Device, ctx: DirectiveContext, *sels: Selector | None) -> Waiter:
        """The waits of one directive; its reads mark the CSS selectors of ``sels``."""
        return Waiter(device, ctx.run.abort, self.t, css=css_selectors(*sels))

    async def _sleep(self, ctx: DirectiveContext, seconds: float) -> None:
        if await sleep_or_abort(ctx.run.abort, seconds):
            raise _Aborted()

    @staticmethod
    def _live(ctx: DirectiveContext) -> None:
        """Called right before a gesture or keystroke: none goes out after the abort."""
        if ctx.run.abort.is_set():
            raise _Aborted()

    async def _race(self, ctx: DirectiveContext, call: Awaitable[T], timeout: float | None) -> T:
        """Await a device call, cut short by the abort (``_Aborted``) or ``timeout`` (``_ReadTimeout``)."""
        return await race(ctx.run.abort, call, timeout)

    async def _read(self, device: Device, ctx: DirectiveContext, budget: float) -> Screen:
        return await self._waiter(device, ctx).read(budget)

    async def _settle(self, device: Device, ctx: DirectiveContext, budget: float | None = None) -> Screen:
        """A quiet screen, read (see ``Waiter.settle``); raises ``_Outage`` when no read worked."""
        return await self._waiter(device, ctx).settle(budget)

    async def _settle_best_effort(self, device: Device, ctx: DirectiveContext) -> str | None:
        """Settle before a coordinate gesture; the warning to attach when the tree was unreadable."""
        try:
            await self._settle(device, ctx)
        except _Outage as exc:
            reason = str(exc).removeprefix("could not read the UI tree: ")
            return (
                f"dispatched without settling the screen first: the UI tree could not be read ({reason}), so "
                "there was no way to tell whether anything was moving. The gesture was sent anyway — if the "
                "screen may still be changing here, put an await before this step"
            )
        return None

    async def _find(
        self, sel: Selector, device: Device, ctx: DirectiveContext, *, focused_as_is: bool = False
    ) -> Leaf | Screen:
        """The element an action acts on, waiting for a settled screen that shows it where it holds
        still (one sliding in is read again where it comes to rest; ``focused_as_is``: not when it
        has the focus, for an action that then needs no pointer); the last screen read when none
        showed it in time."""
        t = self.t
        waiter = self._waiter(device, ctx, sel)
        deadline = self._now() + t.action_timeout
        while True:
            screen = await waiter.settle(deadline - self._now())
            leaf = await run_cpu(best_match, sel, screen)
            if leaf is not None:
                if (
                    not (focused_as_is and leaf.focused)
                    and self._now() < deadline
                    and await waiter.moved(*leaf.frame.center)
                ):
                    continue
                return leaf
            if self._now() + t.action_poll > deadline:
                return screen
            await waiter.changed(t.action_poll)

    async def _require(
        self, sel: Selector, device: Device, ctx: DirectiveContext, *, focused_as_is: bool = False
    ) -> Leaf:
        """The element an action acts on; a refusal that says what came nearest when none showed."""
        found = await self._find(sel, device, ctx, focused_as_is=focused_as_is)
        if isinstance(found, Screen):
            raise _Refusal(await run_cpu(miss_reason, sel, found))
        return found

    # -- gestures -----------------------------------------------------------------------------

    async def _gesture(
        self,
        target: Selector | Point,
        device: Device,
        ctx: DirectiveContext,
        *,
        tap_count: int = 1,
        press_ms: float | None = None,
    ) -> DirectiveOutcome:
        warning: str | None = None
        if isinstance(target, Point):
            warning = await self._settle_best_effort(device, ctx)
            x, y = target.x, target.y
        else:
            x, y = (await self._require(target, device, ctx)).frame.center
        self._live(ctx)
        if press_ms is not None:
            await device.long_press(x, y, press_ms)
        else:
            await device.tap(x, y, click_count=tap_count)
        return DirectiveOutcome("pass", warning=warning)

    async def _type(self, step: TypeStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        """Focus the field without a click when it can take the focus (the caret and selection the
        app made stay), else tap it; empty it with `clear` (by the select-all chord when it was
        tapped: see ``_select_all``); type; Enter with `submit`."""
        env = self._env if self._env is not None else os.environ
        try:
            text, secrets = fill_secrets(step.text, env)
        except UnknownSecretError as exc:
            raise _Refusal(exc.message) from None
        leaf = await self._require(step.into, device, ctx, focused_as_is=True)
        x, y = leaf.frame.center
        self._live(ctx)
        # A field that has the focus takes the text as it is (wherever it is moving to).
        tapped = not leaf.focused and not await self._focus(device, x, y)
        if tapped:
            self._live(ctx)
            await device.tap(x, y)
            await self._await_focus(device, ctx, x, y)
        signals = signals_of(device)
        try:
            if step.clear:
                self._live(ctx)
                await self._select_all(device, step, emptied=not text, chord=tapped)
            if text:
                self._live(ctx)
                if signals is not None:
                    await signals.enter_text(text)
                else:
                    await device.type_text(text)
            if step.submit:
                self._live(ctx)
                await device.press_key("enter")
        except (_Aborted, _Refusal):
            raise
        except Exception as exc:
            raise DeviceError(redact(error_message(exc), secrets)) from None
        return DirectiveOutcome("pass")

    @staticmethod
    async def _focus(device: Device, x: float, y: float) -> bool:
        """Give the element at (x, y) the focus without a click; False when the device cannot, or
        nothing there takes the focus (then it is tapped)."""
        if not isinstance(device, FormControls):
            return False
        try:
            return await device.focus_at(x, y) != "none"
        except DeviceError:
            return False

    @staticmethod
    async def _select_all(device: Device, step: TypeStep, *, emptied: bool, chord: bool) -> None:
        """`clear`: the field's whole text selected, so the typed text replaces it (a person's
        select-all), deleted when nothing is typed. A field argent focused itself is selected in
        the page; after a tap (``chord``: the app's own editor took the focus, a code editor's
        hidden textarea, whose text is not what the editor shows) the select-all chord goes to
        the focused element too, as a person presses it: the editor selects what it shows."""
        if isinstance(device, FormControls):
            if not await device.select_all():
                raise _Refusal(
                    f"clear: the focus is on no text field after focusing {describe_selector(step.into)} — "
                    "there is nothing to clear; name the field itself in `into`"
                )
            if chord:
                await device.press_key(SELECT_ALL_CHORD)
        else:
            await device.press_key(SELECT_ALL_CHORD)
        if emptied:
            await device.press_key("Backspace")

    async def _press(self, step: PressStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        """The key or chord, ``times`` times, to the focused element of a settled screen."""
        warning = await self._settle_best_effort(device, ctx)
        for _ in range(step.times):
            self._live(ctx)
            await device.press_key(step.keys)
        return DirectiveOutcome("pass", warning=warning)

    async def _select(self, step: SelectStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        """Choose the step's options in the native select it names, as a person's choice does."""
        if not isinstance(device, FormControls):
            return DirectiveOutcome(
                "fail", f"select is unsupported on {device.platform} — this device has no native <select>"
            )
        leaf = await self._require(step.target, device, ctx)
        x, y = leaf.frame.center
        self._live(ctx)
        choice = await device.choose(x, y, step.choices, step.by == "value")
        problem = choice_problem(step, choice)
        return DirectiveOutcome("pass") if problem is None else DirectiveOutcome("fail", problem)

    async def _dialogs(self, step: DialogsStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        """Answer the native dialogs of this run from now on as the step says (until the run ends)."""
        state = self._state(ctx.run)
        state.dialogs = DialogAnswer(accept=step.accept, text=step.text)
        state.answered.clear()
        if isinstance(device, NativeDialogs):
            self._answer_dialogs(ctx.run, device, device)
        return DirectiveOutcome("pass")

    def _answer_dialogs(self, run: Run, device: Device, dialogs: NativeDialogs) -> None:
        """Set the run's `dialogs:` answer on ``device`` once (undone when the run ends)."""
        state = self._runs.get(run)
        if state is None or state.dialogs is None or device.id in state.answered:
            return
        state.answered.add(device.id)
        run.on_end.append(dialogs.answer_dialogs(state.dialogs))

    async def _upload(self, step: UploadStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        """The files beside the flow (or the copies of those the call brought), set into the file
        input the selector finds, as a person's pick does."""
        paths = [await ctx.run.files.local_file(ctx.containing, path) for path in step.files]
        if not isinstance(device, FileInputs):
            raise _Refusal(f"upload is not supported on {device.platform} devices", "error")
        leaf = await self._require(step.into, device, ctx)
        x, y = leaf.frame.center
        self._live(ctx)
        await device.set_input_files(x, y, paths)
        return DirectiveOutcome("pass")

    async def _await_focus(self, device: Device, ctx: DirectiveContext, x: float, y: float) -> None:
        """Wait until the tap at (x, y) put the focus on a text field, or kept it on the tapped
        element for ``type_focus_grace`` (not a failure when neither happens: the text goes
        wherever the focus is)."""
        t = self.t
        signals = signals_of(device)
        if signals is not None:
            with contextlib.suppress(DeviceError, _ReadTimeout):
                await self._race(
                    ctx,
                    signals.wait_focus(x, y, t.type_focus_max, t.type_focus_grace),
                    t.type_focus_max + t.read_floor,
                )
            return
        deadline = self._now() + t.type_focus_max
        while True:
            with contextlib.suppress(DeviceError, _Outage):
                screen = await self._read(device, ctx, deadline - self._now())
                if any(_focus_taken(leaf, x, y) for leaf in screen.leaves):
                    return
            if self._now() + t.type_focus_poll > deadline:
                return
            await self._sleep(ctx, t.type_focus_poll)

    @staticmethod
    def _two_finger(step: PinchStep | RotateStep, device: Device) -> DirectiveOutcome:
        engine = engine_named(device.platform)
        if engine is not None and Capability.TWO_FINGER in engine.lacks:
            reason = TWO_FINGER_UNSUPPORTED.format(
                kind=step.kind,
                platform=engine.platform,
                label=engine.label,
                instead=TWO_FINGER_INSTEAD[step.kind],
            )
            return DirectiveOutcome("fail", reason)
        return DirectiveOutcome(
            "fail",
            f"{step.kind} is unsupported on {device.platform} — this device takes no two-finger gestures",
        )

    # -- scroll-to ----------------------------------------------------------------------------

    async def _scroll_to(self, step: ScrollToStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        clip = Frame(0.0, 0.0, 1.0, 1.0)
        if step.within is not None:
            container = await self._find(step.within, device, ctx)
            if isinstance(container, Screen):
                return DirectiveOutcome(
                    "fail", f"scroll container {describe_selector(step.within)} is not visible"
                )
            clip = container.frame
        signals = signals_of(device)
        if signals is not None and await self._reveal(step, signals, device, ctx, clip):
            return DirectiveOutcome("pass")
        target = describe_selector(step.target)
        horizontal = step.direction in ("left", "right")
        amount = max(SCROLL_TO_MIN_STEP, (clip.width if horizontal else clip.height) / 2)
        sign = 1.0 if step.direction in ("down", "right") else -1.0
        dx, dy = (sign * amount, 0.0) if horizontal else (0.0, sign * amount)
        cx, cy = clip.center
        before: str | None = None
        waiter = self._waiter(device, ctx, step.target, step.within)
        #: Once at the end of the scroll: until when the step waits there for the element to arrive.
        end_by: float | None = None
        attempt = 0
        while True:
            screen = await waiter.settle()
            leaf = await run_cpu(best_match, step.target, screen)
            if leaf is not None and _centre_inside(leaf.frame, clip):
                return DirectiveOutcome("pass")
            if before is not None and screen.fingerprint == before:
                elsewhere = await run_cpu(_lies_elsewhere, step, screen, clip)
                if elsewhere is not None:
                    way, side = elsewhere
                    hint = (
                        f"give scroll-to direction: {way}"
                        if way != step.direction
                        else "beyond this scroll's reach: name the area it scrolls in with within:"
                    )
                    return DirectiveOutcome(
                        "fail",
                        f"reached the end of the scroll without finding {target} — one lies {side} the "
                        f"scroll area, {hint}",
                    )
                # Nothing matches yet: what is sought may still be on its way (an app's answer over a
                # socket, a list that loads more at its end), so wait there as a person would.
                now = self._now()
                end_by = now + self.t.action_timeout if end_by is None else end_by
                if now >= end_by:
                    return DirectiveOutcome(
                        "fail",
                        f"reached the end of the scroll without finding {target}, and none came there "
                        f"within {self.t.ms(self.t.action_timeout)}ms",
                    )
                await waiter.changed(min(self.t.action_poll, end_by - now))
                continue
            if attempt == SCROLL_TO_MAX_ATTEMPTS:
                break
            attempt += 1
            before = screen.fingerprint
            self._live(ctx)
            await device.scroll(cx, cy, dx, dy)
        return DirectiveOutcome("fail", f"{target} not found after {SCROLL_TO_MAX_ATTEMPTS} scroll attempts")

    async def _reveal(
        self, step: ScrollToStep, signals: PageSignals, device: Device, ctx: DirectiveContext, clip: Frame
    ) -> bool:
        """Scroll-to in one move: on a quiet page, the target already in view, or an element that
        matches it lying beyond the scroll area in the step's direction scrolled into view and
        then seen there. False sends the step to the step-by-step scrolling (an element not in
        the tree yet, a page that moved it away again, signals that failed)."""
        waiter = self._waiter(device, ctx)
        await waiter.quiet()
        budget = self.t.settle_max
        css = css_selectors(step.target, step.within)
        try:
            kept = signals.kept_tree(css=css) if css else signals.kept_tree()
            screen = flatten(await self._race(ctx, kept, budget))
            if await run_cpu(_in_view, step, screen, clip):
                return True
            candidate = await run_cpu(_beyond_match, step, screen, clip)
            if candidate is None:
                return False
            self._live(ctx)
            revealed = signals.reveal(candidate.ref, css=css) if css else signals.reveal(candidate.ref)
            tree = await self._race(ctx, revealed, budget)
        except (DeviceError, _ReadTimeout):
            return False
        return tree is not None and await run_cpu(_in_view, step, flatten(tree), clip)

    # -- conditions ---------------------------------------------------------------------------

    async def _poll(self, cond: Condition, device: Device, ctx: DirectiveContext, window_ms: float) -> _Poll:
        """Poll ``cond`` for ``window_ms`` (plus a final poll at the deadline)."""
        t = self.t
        window = window_ms / 1000 * t.scale
        start = self._now()
        deadline = start + window
        last_err: BaseException | None = None
        last_failed = last_empty = any_read = False
        last_reason: str | None = None
        last_blank = ""
        last_good = start
        waiter = self._waiter(device, ctx, cond.selector)
        while True:
            at = self._now()
            try:
                screen = await waiter.read(deadline - at)
            except (_Aborted, DeviceGoneError):
                raise
            except SelectorRefusedError as exc:
                return _Poll("indeterminate", str(exc))
            except Exception as exc:
                last_err, last_failed = exc, True
            else:
                any_read, last_failed = True, False
                if screen.empty:
                    last_empty, last_blank = True, screen.blank
                else:
                    verdict = await run_cpu(evaluate, cond, screen)
                    if verdict.ok:
                        return _Poll("met")
                    last_reason, last_empty, last_good = verdict.reason, False, at
            now = self._now()
            if now >= deadline:
                break
            await waiter.changed(min(t.condition_poll, deadline - now))
        end = self._now()
        if not any_read:
            return _Poll(
                "indeterminate", f"could not read the UI tree: {error_message(last_err or Exception())}"
            )
        if last_reason is None:
            why = f": {last_blank}" if last_blank else " (the device did not say why)"
            return _Poll(
                "indeterminate",
                f"could not evaluate the condition — every read of the UI tree was empty{why}",
            )
        if cond.kind == "hidden":
            if last_failed:
                return _Poll(
                    "indeterminate",
                    "could not confirm the element is hidden — it was visible earlier, but the last UI read "
                    f"failed: {error_message(last_err or Exception())}",
                )
            if last_empty:
                return _Poll(
                    "indeterminate",
                    "could not confirm the element is hidden — it was visible earlier, but the last UI reads "
                    "were empty",
                )
        elif last_failed and end - last_good > window / 2:
            return _Poll(
                "indeterminate",
                "could not evaluate the condition — the UI tree was unreadable for the final "
                f"{t.ms(end - last_good)}ms of the window: {error_message(last_err or Exception())}",
            )
        return _Poll("unmet", last_reason)

    # -- idle ---------------------------------------------------------------------------------

    async def _idle(self, step: IdleStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        """Read the tree and a screenshot every ``idle_poll`` until both held still for the
        step's ``stableFor`` (judged by ``_IdleWatch``), or its timeout ran out."""
        t = self.t
        stable_ms = step.stable_for_ms if step.stable_for_ms is not None else DEFAULT_IDLE_STABLE_FOR_MS
        timeout_ms = step.timeout_ms if step.timeout_ms is not None else DEFAULT_IDLE_TIMEOUT_MS
        stable = stable_ms / 1000 * t.scale
        watch = _IdleWatch(self._now())
        deadline = watch.prev_at + timeout_ms / 1000 * t.scale
        while True:
            at = self._now()
            budget = max(deadline - at, t.read_floor)
            tree_res, shot_res = await asyncio.gather(
                self._race(ctx, device.ui_tree(), budget),
                self._race(ctx, device.screenshot(), budget),
                return_exceptions=True,
            )
            for res in (tree_res, shot_res):
                if isinstance(res, _Aborted | asyncio.CancelledError):
                    raise _Aborted()
            for res in (tree_res, shot_res):
                if isinstance(res, DeviceGoneError):
                    raise res
            await watch.observe(tree_res, shot_res, at)
            now = self._now()
            if watch.held(now, stable):
                watch.settled = True
                break
            if now + t.idle_poll > deadline:
                break
            await self._sleep(ctx, t.idle_poll)
        return self._idle_outcome(watch, stable_ms, timeout_ms)

    def _idle_outcome(self, watch: _IdleWatch, stable_ms: float, timeout_ms: float) -> DirectiveOutcome:
        """An `idle` step's verdict: an error when there was nothing to judge stillness by, else a
        pass, with a warning when stillness was judged on less than both sources or never held."""
        timeout_text = js_number(timeout_ms)
        if watch.tree_reads == 0:
            if watch.timed_out:
                return DirectiveOutcome(
                    "error",
                    f"the tree source never answered within the step's {timeout_text}ms — the device may be "
                    "hung or gone",
                )
            return DirectiveOutcome(
                "error",
                "could not read the UI tree while waiting for the screen to settle — "
                f"{error_message(watch.tree_err or Exception())}",
            )
        if not watch.settled and watch.failing_tail >= 2:
            return DirectiveOutcome(
                "error",
                f"the UI tree source answered and then stopped: {error_message(watch.tree_err or Exception())}",
            )
        if watch.all_empty and watch.shots == 0:
            return DirectiveOutcome(
                "error",
                "the UI tree read back empty and degraded, and no screenshot could be taken — there was nothing "
                "to judge stillness by",
            )
        if watch.settled:
            return DirectiveOutcome("pass", warning=_settled_warning(watch))
        return DirectiveOutcome("pass", warning=self._unsettled_warning(watch, stable_ms, timeout_text))

    def _unsettled_warning(self, watch: _IdleWatch, stable_ms: float, timeout_text: str) -> str:
        """Why an `idle` step that passed without the screen holding still passed anyway."""
        if watch.rounds < 3:
            return f"too few reads to judge stillness ({watch.rounds} in {timeout_text}ms) — the screen may still be changing"
        if watch.still_since is not None:
            return (
                f"the screen was still for the last {self.t.ms(self._now() - watch.still_since)}ms but the "
                f"{timeout_text}ms timeout ran out before it had held still for {js_number(stable_ms)}ms"
            )
        return (
            f"the screen never held still for {js_number(stable_ms)}ms within {timeout_text}ms — continuing "
            "anyway; the next steps may see it moving"
        )

    # -- launch -------------------------------------------------------------------------------

    async def _launch(self, step: LaunchStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        platform = device.platform
        target = step.app_for(platform)
        if target is None:
            return DirectiveOutcome(
                "error", f'no app id declared for platform "{platform}" — add a launch entry for it'
            )
        if engine_named(platform) is None:
            return DirectiveOutcome(
                "error",
                f"launch on {platform} is not supported by this tool-server — it drives {engines_text()} devices",
            )
        run = ctx.run
        # Beside the file that names the target (a fragment's page beside the fragment: docs/flows.md).
        probe = run.files.local_path(ctx.containing, ".")
        flow_dir = os.path.normpath(probe) if probe is not None else None

        if self._page_gate is not None:
            try:
                await self._page_gate(target, flow_dir)
            except Exception as exc:
                return DirectiveOutcome("error", error_message(exc))
        try:
            url = resolve_launch_target(target, flow_dir, platform)
        except LaunchTargetError as exc:
            return DirectiveOutcome("error", str(exc))
        self._live(ctx)
        try:
            await self._race(ctx, device.navigate(url), None)
        except DeviceError as exc:
            return DirectiveOutcome("error", f"could not open {target}: {error_message(exc)}")
        self._state(run).launched[device.id] = url
        await self._waiter(device, ctx).quiet()
        return DirectiveOutcome("pass")

    # -- snapshot -----------------------------------------------------------------------------

    async def _snapshot(self, step: SnapshotStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        """Capture the screen (or the ``cropOn`` element), then adopt it as the baseline or
        compare it with the baseline of its device class."""
        run = ctx.run
        crop_sel = step.crop_on
        shot = await self._snapshot_capture(step, device, ctx)
        if isinstance(shot, DirectiveOutcome):
            return shot
        key = f"{step.name}__{baseline_suffix(device.platform, shot.width, shot.height)}"
        if crop_sel is not None:
            key += f"-crop-{crop_hash(crop_sel)}"
        state = self._state(run)
        app = state.launched.get(device.id)
        if key in state.captured:
            prior = state.captured[key]
            if prior is not None and app is not None and prior != app:
                return DirectiveOutcome(
                    "fail",
                    f'snapshot "{step.name}" was already captured in this run from a different app ({prior}) — '
                    f"both captures would share the baseline {key}.png, nothing was compared. Give per-app "
                    "snapshots distinct names",
                )
        else:
            state.captured[key] = app
        rects: tuple[masks.Rect, ...] = ()
        if step.mask:
            found = await self._mask_rects(step, device, ctx, shot)
            if isinstance(found, DirectiveOutcome):
                return found
            rects = found
        current = await _cropped(shot, step, rects)
        if isinstance(current, DirectiveOutcome):
            return current
        path = f"{baseline_dir(run.root, run.name)}/{key}.png"
        if run.update_baselines:
            try:
                existed = await run.files.write_baseline(path, current)
            except OSError as exc:
                reason = f"baseline not written: {write_failure_text(exc, path, then=BASELINE_RUN_AGAIN)}"
                return DirectiveOutcome("error", reason, snapshot_key=key)
            reason = f"baseline {'updated' if existed else 'written'} ({key}.png)"
            if run.files.local_path(run.root, ".") is None:
                # Over a link the client writes it from the result's baselineWrites.
                verb = "updates" if existed else "writes"
                reason = f"baseline captured; the client {verb} it when the run ends ({path})"
            return DirectiveOutcome("pass", reason, artifacts={"baseline": path}, snapshot_key=key)
        baseline = await run.files.read_baseline(path)
        if baseline is None:
            artifacts, warning = await self._artifacts(key, current=current)
            return DirectiveOutcome(
                "fail",
                f'no baseline for "{step.name}" on this device class — expected {path}, nothing was compared. '
                "Run with updateBaselines (--update-baselines) to adopt the current screen, then review and "
                "commit it",
                warning=warning,
                artifacts=artifacts,
                snapshot_key=key,
            )
        return await self._compare_baseline(step, key, path, baseline, current, rects)

    async def _mask_rects(
        self, step: SnapshotStep, device: Device, ctx: DirectiveContext, shot: _Shot
    ) -> tuple[masks.Rect, ...] | DirectiveOutcome:
        """Where the elements ``mask`` names lie in the compared image (``argent.runner.masks``), on
        a read of the screen as captured; a fail naming a selector that matched nothing."""
        try:
            screen = await self._read(device, ctx, self.t.settle_max)
        except _Aborted:
            raise _Aborted(RUN_ABORTED_DURING_SNAPSHOT_SETTLE) from None
        except Exception as exc:
            return DirectiveOutcome(
                "error", f"could not read the screen to place the mask: {error_message(exc)}"
            )
        crop = _crop_rect(shot)
        found = await run_cpu(masks.mask_rects, step.mask, screen, shot.width, shot.height, crop)
        if isinstance(found, Selector):
            return DirectiveOutcome(
                "fail",
                f"mask selector {describe_selector(found)} matched nothing on the screen — nothing was compared. "
                "A mask that matches nothing would leave what it should hide in the compare: fix the "
                "selector, or take it out of mask",
            )
        return found

    async def _snapshot_capture(
        self, step: SnapshotStep, device: Device, ctx: DirectiveContext
    ) -> _Shot | DirectiveOutcome:
        """The screen once quiet — or, with ``cropOn``, once the element shows, captured alone where
        the device can (the same pixels, no whole screen to decode and crop); a failed outcome when
        the element never shows or the capture is no PNG."""
        crop_sel = step.crop_on
        crop_leaf: Leaf | None = None
        signals = signals_of(device)
        if crop_sel is not None:
            try:
                found = await self._find(crop_sel, device, ctx)
            except _Aborted:
                raise _Aborted(RUN_ABORTED_WHILE_RESOLVING_CROP) from None
            if isinstance(found, Screen):
                return DirectiveOutcome("fail", await run_cpu(miss_reason, crop_sel, found))
            crop_leaf = found
        elif signals is None:
            try:
                await self._waiter(device, ctx).quiet()
            except _Aborted:
                raise _Aborted(RUN_ABORTED_DURING_SNAPSHOT_SETTLE) from None
        size = signals.capture_size() if signals is not None else None
        region: tuple[int, int, int, int] | None = None
        if crop_leaf is not None and size is not None:
            f = crop_leaf.frame
            rect = pixels.crop_rect(f.x, f.y, f.width, f.height, *size)
            if rect[2] - rect[0] >= 1 and rect[3] - rect[1] >= 1:
                region = rect
        try:
            if signals is not None:
                png = await self._quiet_capture(signals, device, ctx, region)
            else:
                png = await self._race(ctx, device.screenshot(), None)
        except _Aborted:
            raise _Aborted(RUN_ABORTED_DURING_SNAPSHOT_SETTLE) from None
        if region is not None and size is not None:
            return _Shot(png, size[0], size[1], crop_leaf, cropped=True)
        try:
            width, height = pixels.png_size(png)
        except pixels.PngError as exc:
            return DirectiveOutcome("error", f"the device's screenshot is unusable: {exc}")
        return _Shot(png, width, height, crop_leaf, cropped=False)

    async def _compare_baseline(
        self,
        step: SnapshotStep,
        key: str,
        path: str,
        baseline: bytes,
        current: bytes,
        rects: tuple[masks.Rect, ...] = (),
    ) -> DirectiveOutcome:
        """The snapshot against its baseline: equal bytes pass undecoded, else the pixel diff
        within ``maxMismatch`` (the images of a failure kept as its artifacts); the ``mask``
        rects of the capture are painted over the baseline too."""
        crop_sel = step.crop_on
        max_mismatch = step.max_mismatch if step.max_mismatch is not None else DEFAULT_MAX_MISMATCH
        limit = js_number(max_mismatch)
        if baseline == current:  # the same PNG bytes: the same pixels, nothing to decode
            return DirectiveOutcome("pass", f"diff {pixels.js_to_fixed(0.0, 2)}% ≤ {limit}% ({key}.png)")
        try:
            result = await run_cpu(_compare, baseline, current, crop_sel is None, max_mismatch, rects)
        except pixels.PngError as exc:
            return DirectiveOutcome("error", f"baseline {path} is unusable: {exc}")
        diff, images, compared = result
        if diff.dimension_mismatch:
            (bw, bh), (cw, ch) = diff.baseline_size, diff.current_size
            artifacts, warning = await self._artifacts(key, baseline=baseline, current=current)
            if crop_sel is not None:
                reason = (
                    f"baseline is {bw}x{bh} but the cropOn region is {cw}x{ch} ({key}.png) — nothing was "
                    "compared. The element's size drifted — crop a fixed-size container, or re-adopt with "
                    "updateBaselines"
                )
            else:
                reason = (
                    f"baseline is {bw}x{bh} but the capture is {cw}x{ch} ({key}.png) — nothing was compared"
                )
            return DirectiveOutcome("fail", reason, warning=warning, artifacts=artifacts, snapshot_key=key)
        shown = pixels.js_to_fixed(diff.mismatch, 2)
        if diff.mismatch <= max_mismatch:
            return DirectiveOutcome("pass", f"diff {shown}% ≤ {limit}% ({key}.png)")
        written = {"baseline": compared or baseline, "current": current}
        if images is not None:
            written["diff"] = images
        artifacts, warning = await self._artifacts(key, **written)
        return DirectiveOutcome(
            "fail",
            f"diff {shown}% > {limit}% ({key}.png)",
            warning=warning,
            artifacts=artifacts,
            snapshot_key=key,
        )

    async def _quiet_capture(
        self,
        signals: PageSignals,
        device: Device,
        ctx: DirectiveContext,
        region: tuple[int, int, int, int] | None = None,
    ) -> bytes:
        """The screen (or ``region`` of it) once quiet to the pixel (a colour still fading is
        waited for here, unlike before an action), the wait and the capture overlapped; when the
        signals fail, the settle and then the capture."""
        try:
            return await self._race(ctx, signals.quiet_capture(region, self.t.settle_max), None)
        except DeviceError:
            await self._waiter(device, ctx).quiet()
            return await self._race(ctx, signals.capture(region), None)

    async def _artifacts(self, key: str, **images: bytes) -> tuple[dict[str, str] | None, str | None]:
        """Write a failed snapshot's images (by role) to a fresh scratch directory, in a thread: the
        event loop never waits on the disk. (images by role, None) — or, when the disk refuses them
        (full, read-only), (None, a warning saying so): the step's verdict stands without them."""
        try:
            return await asyncio.to_thread(self._write_artifacts, key, images), None
        except OSError as exc:
            where = self._scratch_dir or tempfile.gettempdir()
            return None, IMAGES_NOT_KEPT.format(
                error=write_failure_text(exc, where, then="run again to keep them")
            )

    def _write_artifacts(self, key: str, images: dict[str, bytes]) -> dict[str, str]:
        paths = self._write_scratch({f"{key}-{role}.png": data for role, data in images.items()})
        return dict(zip(images, paths, strict=True))

    def _write_scratch(self, files: dict[str, bytes]) -> list[str]:
        """Write ``files`` (by name) to a fresh scratch directory; their paths. On a failure (a full
        or read-only disk) the directory goes with what it holds: no cut image for a report to show."""
        scratch = self._scratch()
        try:
            return [_write(scratch, name, data) for name, data in files.items()]
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise

    def _scratch(self) -> str:
        """A fresh directory for one failed snapshot's images (they outlive the run as its artifacts;
        under a tool-server's artifacts directory they go when the server stops)."""
        if self._scratch_dir is not None:
            os.makedirs(self._scratch_dir, mode=0o700, exist_ok=True)
        return tempfile.mkdtemp(prefix=DIFF_SCRATCH_PREFIX, dir=self._scratch_dir)


# --------------------------------------------------------------------------------------------
# Helpers


@define
class _IdleWatch:
    """What an `idle` step saw so far: its reads and their failures, and since when the tree and the
    pixels held still (two still intervals at least, pixel motion confined to a small part allowed)."""

    prev_at: float
    rounds: int = 0
    tree_reads: int = 0
    shots: int = 0
    tree_err: BaseException | None = None
    shot_err: BaseException | None = None
    timed_out: bool = False
    all_empty: bool = True
    failing_tail: int = 0
    prev_fp: str | None = None
    prev_px: pixels.Pixels | None = None
    still_since: float | None = None
    still_intervals: int = 0
    localized: bool = False
    settled: bool = False

    async def observe(
        self, tree_res: UiTree | BaseException, shot_res: bytes | BaseException, at: float
    ) -> None:
        """Count one round of reads (started at ``at``) and judge it against the round before."""
        self.rounds += 1
        fp = self._tree(tree_res)
        px = await self._shot(shot_res)
        if self.rounds > 1:
            tree_still = fp is not None and fp == self.prev_fp
            motion = (
                await run_cpu(pixels.idle_state, self.prev_px, px)
                if px is not None and self.prev_px is not None
                else None
            )
            if tree_still and motion != "moving":
                self.still_intervals += 1
                self.still_since = self.prev_at if self.still_since is None else self.still_since
                self.localized = self.localized or motion == "localized"
            else:
                self.still_intervals, self.still_since, self.localized = 0, None, False
        self.prev_fp, self.prev_px, self.prev_at = fp, px, at

    def held(self, now: float, stable: float) -> bool:
        """The screen held still for ``stable`` seconds (over two intervals at least)."""
        return self.still_since is not None and self.still_intervals >= 2 and now - self.still_since >= stable

    def _tree(self, res: UiTree | BaseException) -> str | None:
        """The read's fingerprint; None when it failed."""
        if isinstance(res, BaseException):
            self.tree_err = res
            self.timed_out = self.timed_out or isinstance(res, _ReadTimeout)
            self.failing_tail += 1
            return None
        screen = flatten(res)
        self.tree_reads += 1
        self.failing_tail = 0
        self.all_empty = self.all_empty and screen.empty
        return screen.fingerprint

    async def _shot(self, res: bytes | BaseException) -> pixels.Pixels | None:
        """The screenshot's pixels; None when it failed or does not decode."""
        if isinstance(res, BaseException):
            self.shot_err = res
            return None
        try:
            px = await run_cpu(pixels.idle_frame, res)
        except Exception as exc:
            self.shot_err = exc
            return None
        self.shots += 1
        return px


def _settled_warning(watch: _IdleWatch) -> str | None:
    """What an `idle` step that settled could not check."""
    if watch.all_empty:
        return "the UI tree stayed empty the whole time — the screen was judged still on pixels alone"
    if watch.shots == 0:
        return (
            "settled on the UI tree alone — no screenshot could be taken "
            f"({error_message(watch.shot_err or Exception())}), so pixel motion was not checked"
        )
    if watch.localized:
        return (
            "the screen settled except for a small part that kept changing (a spinner, caret or clock?) "
            "— continuing"
        )
    return None


@frozen
class _Shot:
    """A snapshot's capture: the PNG, the size of the screen it was taken on, the ``cropOn`` element
    (None without one) and whether the PNG is that element's region already."""

    png: bytes
    width: int
    height: int
    crop: Leaf | None
    cropped: bool


def _crop_rect(shot: _Shot) -> masks.Rect | None:
    """The ``cropOn`` region of a capture in the whole screen's pixels; None without one."""
    if shot.crop is None:
        return None
    f = shot.crop.frame
    return pixels.crop_rect(f.x, f.y, f.width, f.height, shot.width, shot.height)


async def _cropped(
    shot: _Shot, step: SnapshotStep, rects: tuple[masks.Rect, ...] = ()
) -> bytes | DirectiveOutcome:
    """The image a snapshot compares: its ``cropOn`` region cut from a whole-screen capture (a fail
    when that region is empty at this resolution), else the capture as taken; the ``mask`` rects
    painted over it."""
    rect = _crop_rect(shot)
    if rect is None or shot.cropped or step.crop_on is None:
        return await run_cpu(masks.prepare, shot.png, None, rects) if rects else shot.png
    if rect[2] - rect[0] < 1 or rect[3] - rect[1] < 1:
        return DirectiveOutcome(
            "fail",
            f"cropOn matched {describe_selector(step.crop_on)} but its on-screen region is empty at this "
            "resolution — nothing was compared",
        )
    return await run_cpu(masks.prepare, shot.png, rect, rects)


#: Roles of the elements that take typed text (the tree of a device without page signals).
_TEXT_ROLES = frozenset({"input", "textarea", "textbox", "searchbox", "combobox", "textfield", "edittext"})


def _focus_taken(leaf: Leaf, x: float, y: float) -> bool:
    """A focused element that takes text, or that lies under the tapped point."""
    if not leaf.focused:
        return False
    f = leaf.frame
    takes_text = leaf.role.lower() in _TEXT_ROLES or leaf.kind.lower() in _TEXT_ROLES
    return takes_text or (f.x <= x <= f.x + f.width and f.y <= y <= f.y + f.height)


@bounded
def _in_view(step: ScrollToStep, screen: Screen, clip: Frame) -> bool:
    """The target's centre lies in the scroll area (``within`` read again on this screen: a
    reveal may have moved the container itself)."""
    if step.within is not None:
        container = best_match(step.within, screen)
        if container is None:
            return False
        clip = container.frame
    leaf = best_match(step.target, screen)
    return leaf is not None and _centre_inside(leaf.frame, clip)


@bounded
def _beyond_match(step: ScrollToStep, screen: Screen, clip: Frame) -> Leaf | None:
    """The element a scroll in the step's direction would bring into view first: from the first
    alternative with such matches, the most exact one, then the nearest in document order."""
    forward = step.direction in ("down", "right")
    for alt in alternatives(step.target):
        found = [
            leaf
            for leaf in resolve_strict(alt, screen.leaves)
            if leaf.ref >= 0 and not leaf.visible and beyond(leaf.frame, clip, step.direction)
        ]
        if found:
            return min(
                found, key=lambda leaf: (-exact_hits(leaf, alt), leaf.order if forward else -leaf.order)
            )
    return None


@bounded
def _lies_elsewhere(step: ScrollToStep, screen: Screen, clip: Frame) -> tuple[str, str] | None:
    """Where an element that matches the step's target lies beyond the scroll area (the direction
    that would bring it, and "above", "below", ...), when one does; None when none does (nothing
    matches yet, or only an element with no size in the area: one still on its way)."""
    for alt in alternatives(step.target):
        for leaf in resolve_strict(alt, screen.leaves):
            where = lies_beyond(leaf.frame, clip)
            if where is not None:
                return where
    return None


def _centre_inside(frame: Frame, clip: Frame) -> bool:
    cx, cy = frame.center
    return clip.x <= cx <= clip.x + clip.width and clip.y <= cy <= clip.y + clip.height


def _compare(
    baseline: bytes,
    current: bytes,
    full_screen: bool,
    max_mismatch: float,
    rects: tuple[masks.Rect, ...] = (),
) -> tuple[pixels.Diff, bytes | None, bytes | None]:
    """The diff; for a failing compare, the context diff image as PNG and (with ``rects``: the
    mask of the capture, painted over the baseline too) the baseline as compared."""
    base = pixels.decode_png(baseline)
    now = pixels.decode_png(current)
    if rects:
        size = (now.shape[1], now.shape[0])
        pixels.paint(base, masks.scaled(rects, size, (base.shape[1], base.shape[0])))
    diff = pixels.diff_images(base, now, full_screen=full_screen)
    if diff.dimension_mismatch or diff.mismatch <= max_mismatch:
        return diff, None, None
    compared = pixels.encode_png(base) if rects else None
    return diff, pixels.encode_png(pixels.context_image(pixels.diff_image(diff))), compared


def _write(directory: str, name: str, data: bytes) -> str:
    path = os.path.join(directory, name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def remove_scratch(path: str) -> None:
    """Remove a snapshot scratch directory (tests and callers that consumed the artifacts)."""
    shutil.rmtree(path, ignore_errors=True)
