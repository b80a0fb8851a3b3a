"""``run-sequence``: several interaction steps on one device in one call, as upstream's.

Each step is a real call of its tool through the registry (the same validation, policy and verdicts
as a direct call); the sequence stops at the first error or unmet ``await-ui-element`` and reports
``{ completed, total, steps }``. A flow's ``tool: run-sequence`` step is judged by that result
(``run_sequence_verdict``), with no special case in the runner.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from argent import limits
from argent.errors import ArgentError, InvalidToolInputError
from argent.link import issues
from argent.tools.args import arg
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec
from argent.tools.verdicts import run_sequence_verdict
from argent.tools.web.common import web_spec

DEFAULT_INTER_STEP_DELAY_MS = 100
#: upstream's list; the ones this tool-server lacks (touch and TV tools) fail at their step.
ALLOWED_TOOLS = (
    "gesture-tap",
    "gesture-swipe",
    "gesture-scroll",
    "gesture-drag",
    "gesture-custom",
    "gesture-pinch",
    "gesture-rotate",
    "button",
    "keyboard",
    "paste",
    "rotate",
    "shake",
    "tv-remote",
    "await-ui-element",
)


@frozen
class SequenceArgs:
    udid: str = arg(doc="Target device id from `list-devices` (a Chromium id), shared across all steps.")
    steps: list[dict[str, Any]] = arg(
        doc="Ordered steps, each { tool, args, delayMs? }: tool one of gesture-tap, gesture-scroll, gesture-drag, "
        "keyboard, await-ui-element; args its arguments without udid (injected); delayMs the wait after the "
        f"step (default {DEFAULT_INTER_STEP_DELAY_MS})."
    )


@frozen
class Step:
    tool: str
    args: Mapping[str, Any]
    delay_ms: float


def parse_steps(raw: list[dict[str, Any]]) -> list[Step]:
    if not raw:
        raise InvalidToolInputError(
            "Invalid arguments for run-sequence: steps must hold at least one step.",
            issues=[issues.too_small(["steps"], "array", 1)],
        )
    if len(raw) > limits.MAX_SEQUENCE_STEPS:
        raise InvalidToolInputError(
            f"Invalid arguments for run-sequence: {len(raw)} steps, more than the {limits.MAX_SEQUENCE_STEPS} "
            "one call may run. Split the sequence.",
            issues=[issues.too_big(["steps"], "array", limits.MAX_SEQUENCE_STEPS)],
        )
    out: list[Step] = []
    for i, step in enumerate(raw):
        where = f"Invalid arguments for run-sequence: steps.{i}"
        unknown = sorted(set(step) - {"tool", "args", "delayMs"})
        if unknown:
            raise InvalidToolInputError(
                f"{where}: unknown key {', '.join(unknown)} (a step takes tool, args, delayMs)."
            )
        tool, args, delay = step.get("tool"), step.get("args"), step.get("delayMs")
        if not isinstance(tool, str):
            raise InvalidToolInputError(f"{where}.tool must be a string.")
        if not isinstance(args, Mapping):
            raise InvalidToolInputError(f"{where}.args must be an object.")
        if delay is not None and (
            isinstance(delay, bool) or not isinstance(delay, int | float) or not math.isfinite(delay)
        ):
            raise InvalidToolInputError(f"{where}.delayMs must be a number.")
        if delay is not None and delay > limits.MAX_SEQUENCE_DELAY_MS:
            raise InvalidToolInputError(
                f"{where}.delayMs: at most {limits.MAX_SEQUENCE_DELAY_MS} ms (MAX_SEQUENCE_DELAY_MS) between steps.",
                issues=[issues.too_big(["steps", i, "delayMs"], "number", limits.MAX_SEQUENCE_DELAY_MS)],
            )
        out.append(Step(tool, args, DEFAULT_INTER_STEP_DELAY_MS if delay is None else float(delay)))
    return out


async def _pause(ms: float, abort: asyncio.Event) -> bool:
    """Wait ``ms``; False when the call was aborted meanwhile."""
    if ms <= 0:
        return not abort.is_set()
    try:
        async with asyncio.timeout(ms / 1000.0):
            await abort.wait()
    except TimeoutError:
        return True
    return False


async def run_steps(
    registry: ToolRegistry, udid: str, steps: list[Step], ctx: ToolContext
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for step in steps:
        if ctx.abort.is_set() or ctx.budget.exhausted:
            break
        if not ctx.budget.take():  # each step is a step of the call (a flow's, when one runs this)
            ctx.budget.exhausted = True
            results.append({"tool": step.tool, "error": ctx.budget.message})
            break
        if step.tool not in ALLOWED_TOOLS:
            allowed = ", ".join(ALLOWED_TOOLS)
            results.append(
                {
                    "tool": step.tool,
                    "error": f'Tool "{step.tool}" is not allowed in run-sequence. Allowed: {allowed}',
                }
            )
            break
        if registry.find(step.tool) is None:
            error = (
                f'Tool "{step.tool}" is not available on this tool-server (its devices are Chromium pages).'
            )
            results.append({"tool": step.tool, "error": error})
            break
        try:
            result = await registry.invoke(step.tool, {**step.args, "udid": udid}, ctx)
        except ArgentError as exc:
            results.append({"tool": step.tool, "error": exc.message})
            break
        if step.tool == "await-ui-element" and isinstance(result, Mapping) and result.get("success") is False:
            note = result.get("note")
            results.append(
                {
                    "tool": step.tool,
                    "error": "await-ui-element condition not met" + (f": {note}" if note else ""),
                }
            )
            break
        results.append({"tool": step.tool, "result": result})
        if not await _pause(step.delay_ms, ctx.abort):
            break
    return results


def sequence_tools(registry: ToolRegistry) -> list[ToolSpec[Any]]:
    async def run_sequence(args: SequenceArgs, ctx: ToolContext) -> Any:
        steps = parse_steps(args.steps)
        results = await run_steps(registry, args.udid, steps, ctx)
        completed = sum(1 for r in results if "result" in r)
        return {"completed": completed, "total": len(steps), "steps": results}

    return [
        web_spec(
            "run-sequence",
            "Execute several interaction steps on one device in a single call, when every step is known in advance "
            "(no need to look at the screen between them). Steps: gesture-tap { x, y, clickCount? }, gesture-scroll "
            "{ x, y, deltaX?, deltaY? }, gesture-drag { fromX, fromY, toX, toY, durationMs?, momentum? }, keyboard "
            "{ text? | key? }, await-ui-element { selector, condition?, timeoutMs?, pollIntervalMs? }; udid is "
            "injected. Stops at the first error or unmet await-ui-element and returns { completed, total, steps } "
            "with each step's result or error.",
            SequenceArgs,
            run_sequence,
            long_running=True,
            verdict=run_sequence_verdict,
            always_load=True,
            search_hint="batch sequence multiple gesture steps sequentially",
        )
    ]
