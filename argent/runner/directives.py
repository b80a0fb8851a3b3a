"""Device directives on a ``Device``: the runner's ``DirectiveExecutor``.

``DeviceDirectives`` carries out `launch`, `tap`, `long-press`, `type`, `await` (with
`idle`), `assert`, `scroll-to`, `pinch`, `rotate` and `snapshot`, and answers `when:` UI
guards. It only talks to the ``Device`` protocol and to ``FlowFiles`` (baselines), so any
backend and any file store (disk, or a link's in-memory members) works.

Timing follows upstream: a *settle* re-reads the tree every 250 ms until two reads agree
(at most 3 s); a selector action waits up to 7.5 s (polling every 300 ms) for a settled
screen on which its selector resolves to a visible element; conditions poll every
300 ms for their window with a final poll at the deadline. Every wait is cut short by the
run's abort event, and no gesture or keystroke is dispatched once it is set.
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
from argent.devices.base import Device, DeviceError, Frame
from argent.flows.model import (
    AssertStep,
    AwaitStep,
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
    Step,
    TapStep,
    TypeStep,
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
    TYPE_FOCUS_DELAY_MS,
    TYPE_FOCUS_MAX_MS,
    TYPE_FOCUS_POLL_MS,
)
from argent.runner import pixels
from argent.runner.files import FlowFileError, baseline_dir
from argent.runner.run import (
    RUN_ABORTED,
    DirectiveContext,
    DirectiveOutcome,
    GuardOutcome,
    Run,
    error_message,
    sleep_or_abort,
)
from argent.runner.selectors import Leaf, Screen, best_match, evaluate, flatten

T = TypeVar("T")

RUN_ABORTED_DURING_SNAPSHOT_SETTLE = "run aborted during snapshot settle"
RUN_ABORTED_WHILE_RESOLVING_CROP = "run aborted while resolving cropOn"
DIFF_SCRATCH_PREFIX = "argent-flow-diff-"
#: The artifact role of the screenshot a failed device step carries (beside baseline/current/diff).
FAILURE_SCREENSHOT_ROLE = "screenshot"

PINCH_UNSUPPORTED = (
    "pinch is unsupported on chromium — a Chromium page gets mouse and keyboard input only, so there is no "
    "two-finger gesture to send; zoom with the page's own controls (a tap on its zoom buttons) instead"
)
ROTATE_UNSUPPORTED = (
    "rotate is unsupported on chromium — a Chromium page gets mouse and keyboard input only, so there is no "
    "two-finger gesture to send; turn the element with the page's own controls (a tap or a drag handle) instead"
)


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
    type_focus_delay: float = TYPE_FOCUS_DELAY_MS / 1000
    type_focus_max: float = TYPE_FOCUS_MAX_MS / 1000
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
            type_focus_delay=self.type_focus_delay * factor,
            type_focus_max=self.type_focus_max * factor,
            type_focus_poll=self.type_focus_poll * factor,
            idle_poll=self.idle_poll * factor,
            read_floor=self.read_floor * factor,
            scale=self.scale * factor,
        )

    def ms(self, seconds: float) -> int:
        """Elapsed seconds as the milliseconds a person would have seen at scale 1."""
        return pixels.js_round(seconds / self.scale * 1000)


# --------------------------------------------------------------------------------------------
# Internal control flow


class _Aborted(Exception):
    def __init__(self, reason: str = RUN_ABORTED) -> None:
        super().__init__(reason)
        self.reason = reason


class _Outage(Exception):
    """Every read of the UI tree failed: the step errors with this message."""


class _Refusal(Exception):
    """The step cannot run as written: ``status`` with this reason."""

    def __init__(self, reason: str, status: Literal["fail", "error"] = "fail") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status: Literal["fail", "error"] = status


class _ReadTimeout(Exception):
    pass


@define
class _RunState:
    """What one run remembers across steps: launched apps and which app captured which key."""

    launched: dict[str, str] = field(factory=dict)
    captured: dict[str, str | None] = field(factory=dict)


PollState = Literal["met", "unmet", "indeterminate"]


@frozen
class _Poll:
    state: PollState
    reason: str | None = None


def off_screen_reason(sel: Selector) -> str:
    return (
        f"no visible element matched selector {describe_selector(sel)} — if it is off-screen, add a "
        "scroll-to step before this one"
    )


def crop_hash(sel: Selector) -> str:
    """The 8-hex `-crop-` suffix of a cropOn key: own fields and looseness, not scopes or `any`."""
    payload = js_json([sel.text, sel.text_matches, sel.identifier, sel.role, sel.loose])
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
        self.t = timings or Timings()
        self._env = env
        self._scratch_dir = scratch_dir
        #: A step that fails or errors carries a screenshot of the device taken right then.
        self._failure_screenshots = failure_screenshots
        #: Refuses (raises) a launch target whose page the call may not read from this host.
        self._page_gate = page_gate
        self._runs: weakref.WeakKeyDictionary[Run, _RunState] = weakref.WeakKeyDictionary()

    # -- the protocol ---------------------------------------------------------------------

    async def execute(self, step: Step, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        outcome = await self._execute(step, device, ctx)
        if self._failure_screenshots and outcome.status in ("fail", "error") and not outcome.artifacts:
            path = await self._failure_screenshot(device, ctx)
            if path is not None:
                outcome = attrs.evolve(outcome, artifacts={FAILURE_SCREENSHOT_ROLE: path})
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
            return await asyncio.to_thread(_write, self._scratch(), name, shot)
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
        except (DeviceError, FlowFileError) as exc:
            return DirectiveOutcome("error", error_message(exc))

    async def check(
        self, condition: Condition, device: Device, grace_ms: float, ctx: DirectiveContext
    ) -> GuardOutcome:
        try:
            poll = await self._poll(condition, device, ctx, grace_ms)
        except _Aborted:
            return GuardOutcome("aborted")
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
            "await": self._await,
            "assert": self._assert,
            "idle": self._idle,
            "scroll-to": self._scroll_to,
            "pinch": self._two_finger_step,
            "rotate": self._two_finger_step,
            "launch": self._launch,
            "snapshot": self._snapshot,
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

    # -- waiting and reading ----------------------------------------------------------------

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

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
        abort = ctx.run.abort
        task: asyncio.Future[T] = asyncio.ensure_future(call)
        if abort.is_set():
            task.cancel()
            raise _Aborted()
        waiter: asyncio.Future[Any] = asyncio.ensure_future(abort.wait())
        racing: set[asyncio.Future[Any]] = {task, waiter}
        try:
            done, _ = await asyncio.wait(racing, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if task in done:
            return task.result()
        task.cancel()
        task.add_done_callback(_swallow)
        if abort.is_set():
            raise _Aborted()
        raise _ReadTimeout()

    async def _read(self, device: Device, ctx: DirectiveContext, budget: float) -> Screen:
        try:
            tree = await self._race(ctx, device.ui_tree(), max(budget, self.t.read_floor))
        except _ReadTimeout:
            raise DeviceError(
                f"the UI tree read did not answer within {self.t.ms(max(budget, self.t.read_floor))}ms"
            ) from None
        return flatten(tree)

    async def _settle(self, device: Device, ctx: DirectiveContext, budget: float | None = None) -> Screen:
        """Re-read the tree until two reads agree; the last read when time runs out.

        Raises ``_Outage`` when every read failed."""
        t = self.t
        limit = t.settle_max if budget is None else max(0.0, min(t.settle_max, budget))
        deadline = self._now() + limit
        prev: Screen | None = None
        err: BaseException | None = None
        while True:
            try:
                screen = await self._read(device, ctx, deadline - self._now())
            except _Aborted:
                raise
            except Exception as exc:
                err = exc
            else:
                if prev is not None and screen.fingerprint == prev.fingerprint:
                    return screen
                prev = screen
            if self._now() + t.settle_interval > deadline:
                break
            await self._sleep(ctx, t.settle_interval)
        if prev is None:
            raise _Outage(f"could not read the UI tree: {error_message(err) if err else 'no read'}")
        return prev

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

    async def _find(self, sel: Selector, device: Device, ctx: DirectiveContext) -> Leaf | None:
        """The element an action acts on, waiting for a settled screen that shows it."""
        t = self.t
        deadline = self._now() + t.action_timeout
        while True:
            screen = await self._settle(device, ctx, deadline - self._now())
            leaf = best_match(sel, screen)
            if leaf is not None:
                return leaf
            if self._now() + t.action_poll > deadline:
                return None
            await self._sleep(ctx, t.action_poll)

    async def _require(self, sel: Selector, device: Device, ctx: DirectiveContext) -> Leaf:
        leaf = await self._find(sel, device, ctx)
        if leaf is None:
            raise _Refusal(off_screen_reason(sel))
        return leaf

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
        env = self._env if self._env is not None else os.environ
        try:
            text, secrets = fill_secrets(step.text, env)
        except UnknownSecretError as exc:
            raise _Refusal(exc.message) from None
        leaf = await self._require(step.into, device, ctx)
        self._live(ctx)
        await device.tap(*leaf.frame.center)
        await self._sleep(ctx, self.t.type_focus_delay)
        await self._await_focus(device, ctx)
        try:
            self._live(ctx)
            await device.type_text(text)
            if step.submit:
                self._live(ctx)
                await device.press_key("enter")
        except _Aborted:
            raise
        except Exception as exc:
            raise DeviceError(redact(error_message(exc), secrets)) from None
        return DirectiveOutcome("pass")

    async def _await_focus(self, device: Device, ctx: DirectiveContext) -> None:
        """Poll until some element has focus (not a failure when it never shows)."""
        t = self.t
        deadline = self._now() + t.type_focus_max
        while True:
            with contextlib.suppress(DeviceError, _Outage):
                screen = await self._read(device, ctx, deadline - self._now())
                if any(leaf.focused for leaf in screen.leaves):
                    return
            if self._now() + t.type_focus_poll > deadline:
                return
            await self._sleep(ctx, t.type_focus_poll)

    @staticmethod
    def _two_finger(step: PinchStep | RotateStep, device: Device) -> DirectiveOutcome:
        if device.platform == "chromium":
            return DirectiveOutcome("fail", PINCH_UNSUPPORTED if step.kind == "pinch" else ROTATE_UNSUPPORTED)
        return DirectiveOutcome(
            "fail",
            f"{step.kind} is unsupported on {device.platform} — this device takes no two-finger gestures",
        )

    # -- scroll-to ----------------------------------------------------------------------------

    async def _scroll_to(self, step: ScrollToStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        clip = Frame(0.0, 0.0, 1.0, 1.0)
        if step.within is not None:
            container = await self._find(step.within, device, ctx)
            if container is None:
                return DirectiveOutcome(
                    "fail", f"scroll container {describe_selector(step.within)} is not visible"
                )
            clip = container.frame
        target = describe_selector(step.target)
        horizontal = step.direction in ("left", "right")
        amount = max(SCROLL_TO_MIN_STEP, (clip.width if horizontal else clip.height) / 2)
        sign = 1.0 if step.direction in ("down", "right") else -1.0
        dx, dy = (sign * amount, 0.0) if horizontal else (0.0, sign * amount)
        cx, cy = clip.center
        before: str | None = None
        for attempt in range(SCROLL_TO_MAX_ATTEMPTS + 1):
            screen = await self._settle(device, ctx)
            leaf = best_match(step.target, screen)
            if leaf is not None and _centre_inside(leaf.frame, clip):
                return DirectiveOutcome("pass")
            if before is not None and screen.fingerprint == before:
                return DirectiveOutcome("fail", f"reached the end of the scroll without finding {target}")
            if attempt == SCROLL_TO_MAX_ATTEMPTS:
                break
            before = screen.fingerprint
            self._live(ctx)
            await device.scroll(cx, cy, dx, dy)
        return DirectiveOutcome("fail", f"{target} not found after {SCROLL_TO_MAX_ATTEMPTS} scroll attempts")

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
        last_good = start
        while True:
            at = self._now()
            try:
                screen = await self._read(device, ctx, deadline - at)
            except _Aborted:
                raise
            except Exception as exc:
                last_err, last_failed = exc, True
            else:
                any_read, last_failed = True, False
                if screen.empty:
                    last_empty = True
                else:
                    verdict = evaluate(cond, screen)
                    if verdict.ok:
                        return _Poll("met")
                    last_reason, last_empty, last_good = verdict.reason, False, at
            now = self._now()
            if now >= deadline:
                break
            await self._sleep(ctx, min(t.condition_poll, deadline - now))
        end = self._now()
        if not any_read:
            return _Poll(
                "indeterminate", f"could not read the UI tree: {error_message(last_err or Exception())}"
            )
        if last_reason is None:
            return _Poll(
                "indeterminate",
                "could not evaluate the condition — every read of the UI tree was empty or degraded",
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
        t = self.t
        stable_ms = step.stable_for_ms if step.stable_for_ms is not None else DEFAULT_IDLE_STABLE_FOR_MS
        timeout_ms = step.timeout_ms if step.timeout_ms is not None else DEFAULT_IDLE_TIMEOUT_MS
        stable = stable_ms / 1000 * t.scale
        start = self._now()
        deadline = start + timeout_ms / 1000 * t.scale
        rounds = tree_reads = shots = 0
        tree_err: BaseException | None = None
        shot_err: BaseException | None = None
        timed_out = False
        all_empty = True
        failing_tail = 0
        prev_fp: str | None = None
        prev_px: pixels.Pixels | None = None
        prev_at = start
        still_since: float | None = None
        still_intervals = 0
        localized = False
        settled = False
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
            rounds += 1
            fp: str | None = None
            if isinstance(tree_res, BaseException):
                tree_err = tree_res
                timed_out = timed_out or isinstance(tree_res, _ReadTimeout)
                failing_tail += 1
            else:
                screen = flatten(tree_res)
                tree_reads += 1
                failing_tail = 0
                all_empty = all_empty and screen.empty
                fp = screen.fingerprint
            px: pixels.Pixels | None = None
            if isinstance(shot_res, BaseException):
                shot_err = shot_res
            else:
                try:
                    px = await run_cpu(pixels.idle_frame, shot_res)
                    shots += 1
                except Exception as exc:
                    shot_err = exc
            if rounds > 1:
                tree_still = fp is not None and fp == prev_fp
                motion = (
                    await run_cpu(pixels.idle_state, prev_px, px)
                    if px is not None and prev_px is not None
                    else None
                )
                if tree_still and motion != "moving":
                    still_intervals += 1
                    still_since = prev_at if still_since is None else still_since
                    localized = localized or motion == "localized"
                else:
                    still_intervals, still_since, localized = 0, None, False
            prev_fp, prev_px, prev_at = fp, px, at
            now = self._now()
            if still_since is not None and still_intervals >= 2 and now - still_since >= stable:
                settled = True
                break
            if now + t.idle_poll > deadline:
                break
            await self._sleep(ctx, t.idle_poll)
        timeout_text = js_number(timeout_ms)
        if tree_reads == 0:
            if timed_out:
                return DirectiveOutcome(
                    "error",
                    f"the tree source never answered within the step's {timeout_text}ms — the device may be "
                    "hung or gone",
                )
            return DirectiveOutcome(
                "error",
                "could not read the UI tree while waiting for the screen to settle — "
                f"{error_message(tree_err or Exception())}",
            )
        if not settled and failing_tail >= 2:
            return DirectiveOutcome(
                "error",
                f"the UI tree source answered and then stopped: {error_message(tree_err or Exception())}",
            )
        if all_empty and shots == 0:
            return DirectiveOutcome(
                "error",
                "the UI tree read back empty and degraded, and no screenshot could be taken — there was nothing "
                "to judge stillness by",
            )
        warning: str | None = None
        if settled:
            if all_empty:
                warning = (
                    "the UI tree stayed empty the whole time — the screen was judged still on pixels alone"
                )
            elif shots == 0:
                warning = (
                    "settled on the UI tree alone — no screenshot could be taken "
                    f"({error_message(shot_err or Exception())}), so pixel motion was not checked"
                )
            elif localized:
                warning = (
                    "the screen settled except for a small part that kept changing (a spinner, caret or clock?) "
                    "— continuing"
                )
        elif rounds < 3:
            warning = f"too few reads to judge stillness ({rounds} in {timeout_text}ms) — the screen may still be changing"
        elif still_since is not None:
            warning = (
                f"the screen was still for the last {t.ms(self._now() - still_since)}ms but the {timeout_text}ms "
                f"timeout ran out before it had held still for {js_number(stable_ms)}ms"
            )
        else:
            warning = (
                f"the screen never held still for {js_number(stable_ms)}ms within {timeout_text}ms — continuing "
                "anyway; the next steps may see it moving"
            )
        return DirectiveOutcome("pass", warning=warning)

    # -- launch -------------------------------------------------------------------------------

    async def _launch(self, step: LaunchStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        platform = device.platform
        target = step.app_for(platform)
        if target is None:
            return DirectiveOutcome(
                "error", f'no app id declared for platform "{platform}" — add a launch entry for it'
            )
        if platform != "chromium":
            return DirectiveOutcome(
                "error",
                f"launch on {platform} is not supported by this tool-server — it drives chromium devices",
            )
        run = ctx.run
        probe = run.files.local_path(run.root, ".")
        flow_dir = os.path.normpath(probe) if probe is not None else None
        from argent.devices.chromium.targets import LaunchTargetError, resolve_launch_target

        if self._page_gate is not None:
            try:
                await self._page_gate(target, flow_dir)
            except Exception as exc:
                return DirectiveOutcome("error", error_message(exc))
        try:
            url = resolve_launch_target(target, flow_dir)
        except LaunchTargetError as exc:
            return DirectiveOutcome("error", str(exc))
        self._live(ctx)
        try:
            await self._race(ctx, device.navigate(url), None)
        except DeviceError as exc:
            return DirectiveOutcome("error", f"could not open {target}: {error_message(exc)}")
        self._state(run).launched[device.id] = url
        with contextlib.suppress(_Outage):
            await self._settle(device, ctx)
        return DirectiveOutcome("pass")

    # -- snapshot -----------------------------------------------------------------------------

    async def _snapshot(self, step: SnapshotStep, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        run = ctx.run
        crop_sel = step.crop_on
        max_mismatch = step.max_mismatch if step.max_mismatch is not None else DEFAULT_MAX_MISMATCH
        crop_leaf: Leaf | None = None
        if crop_sel is not None:
            try:
                crop_leaf = await self._find(crop_sel, device, ctx)
            except _Aborted:
                raise _Aborted(RUN_ABORTED_WHILE_RESOLVING_CROP) from None
            if crop_leaf is None:
                return DirectiveOutcome("fail", off_screen_reason(crop_sel))
        else:
            try:
                await self._settle(device, ctx)
            except _Aborted:
                raise _Aborted(RUN_ABORTED_DURING_SNAPSHOT_SETTLE) from None
            except _Outage:
                pass
        try:
            shot = await self._race(ctx, device.screenshot(), None)
        except _Aborted:
            raise _Aborted(RUN_ABORTED_DURING_SNAPSHOT_SETTLE) from None
        try:
            width, height = pixels.png_size(shot)
        except pixels.PngError as exc:
            return DirectiveOutcome("error", f"the device's screenshot is unusable: {exc}")
        key = f"{step.name}__{device.platform}-{width}x{height}"
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
        current = shot
        if crop_leaf is not None and crop_sel is not None:
            f = crop_leaf.frame
            rect = pixels.crop_rect(f.x, f.y, f.width, f.height, width, height)
            if rect[2] - rect[0] < 1 or rect[3] - rect[1] < 1:
                return DirectiveOutcome(
                    "fail",
                    f"cropOn matched {describe_selector(crop_sel)} but its on-screen region is empty at this "
                    "resolution — nothing was compared",
                )
            current = await run_cpu(_crop_png, shot, rect)
        path = f"{baseline_dir(run.root, run.name)}/{key}.png"
        if run.update_baselines:
            existed = await run.files.write_baseline(path, current)
            reason = f"baseline {'updated' if existed else 'written'} ({key}.png)"
            if run.files.local_path(run.root, ".") is None:
                # Over a link the client writes it from the result's baselineWrites.
                verb = "updates" if existed else "writes"
                reason = f"baseline captured; the client {verb} it when the run ends ({path})"
            return DirectiveOutcome("pass", reason, artifacts={"baseline": path}, snapshot_key=key)
        baseline = await run.files.read_baseline(path)
        if baseline is None:
            artifacts = await self._artifacts(key, current=current)
            return DirectiveOutcome(
                "fail",
                f'no baseline for "{step.name}" on this device class — expected {path}, nothing was compared. '
                "Run with updateBaselines (--update-baselines) to adopt the current screen, then review and "
                "commit it",
                artifacts=artifacts,
                snapshot_key=key,
            )
        try:
            result = await run_cpu(_compare, baseline, current, crop_sel is None, max_mismatch)
        except pixels.PngError as exc:
            return DirectiveOutcome("error", f"baseline {path} is unusable: {exc}")
        diff, images = result
        if diff.dimension_mismatch:
            (bw, bh), (cw, ch) = diff.baseline_size, diff.current_size
            artifacts = await self._artifacts(key, baseline=baseline, current=current)
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
            return DirectiveOutcome("fail", reason, artifacts=artifacts, snapshot_key=key)
        shown = pixels.js_to_fixed(diff.mismatch, 2)
        limit = js_number(max_mismatch)
        if diff.mismatch <= max_mismatch:
            return DirectiveOutcome("pass", f"diff {shown}% ≤ {limit}% ({key}.png)")
        written = {"baseline": baseline, "current": current}
        if images is not None:
            written["diff"] = images
        artifacts = await self._artifacts(key, **written)
        return DirectiveOutcome(
            "fail", f"diff {shown}% > {limit}% ({key}.png)", artifacts=artifacts, snapshot_key=key
        )

    async def _artifacts(self, key: str, **images: bytes) -> dict[str, str]:
        """Write a failed snapshot's images (by role) to a fresh scratch directory, in a thread: the
        event loop never waits on the disk."""
        return await asyncio.to_thread(self._write_artifacts, key, images)

    def _write_artifacts(self, key: str, images: dict[str, bytes]) -> dict[str, str]:
        scratch = self._scratch()
        return {role: _write(scratch, f"{key}-{role}.png", data) for role, data in images.items()}

    def _scratch(self) -> str:
        """A fresh directory for one failed snapshot's images (they outlive the run as its artifacts;
        under a tool-server's artifacts directory they go when the server stops)."""
        if self._scratch_dir is not None:
            os.makedirs(self._scratch_dir, mode=0o700, exist_ok=True)
        return tempfile.mkdtemp(prefix=DIFF_SCRATCH_PREFIX, dir=self._scratch_dir)


# --------------------------------------------------------------------------------------------
# Helpers


def _swallow(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _centre_inside(frame: Frame, clip: Frame) -> bool:
    cx, cy = frame.center
    return clip.x <= cx <= clip.x + clip.width and clip.y <= cy <= clip.y + clip.height


def _crop_png(png: bytes, rect: tuple[int, int, int, int]) -> bytes:
    left, top, right, bottom = rect
    return pixels.encode_png(pixels.decode_png(png)[top:bottom, left:right])


def _compare(
    baseline: bytes, current: bytes, full_screen: bool, max_mismatch: float
) -> tuple[pixels.Diff, bytes | None]:
    """The diff, and (only for a failing compare) the context diff image as PNG."""
    diff = pixels.diff_images(
        pixels.decode_png(baseline), pixels.decode_png(current), full_screen=full_screen
    )
    if diff.dimension_mismatch or diff.mismatch <= max_mismatch:
        return diff, None
    return diff, pixels.encode_png(pixels.context_image(pixels.diff_image(diff)))


def _write(directory: str, name: str, data: bytes) -> str:
    path = os.path.join(directory, name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def remove_scratch(path: str) -> None:
    """Remove a snapshot scratch directory (tests and callers that consumed the artifacts)."""
    shutil.rmtree(path, ignore_errors=True)
