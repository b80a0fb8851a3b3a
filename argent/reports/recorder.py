"""What feeds the reports: every ``flow-execute`` call of a run, as it ends.

``SuiteRecorder.wrap`` puts a ``RecordingClient`` between the CLI and its tool client. The CLI
runs its flows as it always does; each call's result (or the error that kept the flow from
starting) and its wall time become a ``FlowOutcome`` at the flow's place in the input order, and
the HTML report copies the flow's images right then, while the tool-server that keeps them is
still up. Flows that never got a call (a batch stopped early, an interrupt) are ``skipped``.
``write`` writes every report asked for, whatever the outcome.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Sequence
from datetime import datetime
from typing import Any

from attrs import evolve

from argent.client.base import ProgressCallback, RefusalCallback, ToolCallError, ToolClient
from argent.client.client_files import RefusedClientFile
from argent.link.models import ToolEntry
from argent.reports.html import HtmlReport
from argent.reports.junit import write_junit
from argent.reports.model import NOT_RUN, RUN_ABORTED, FlowOutcome, FlowTarget, outcome_of
from argent.utils.oserrors import remedy

FLOW_EXECUTE = "flow-execute"
#: How a report that could not be written ends: the run itself went as printed.
RESULTS_ABOVE = "the flows' results are above"


def relative_name(path: str, root: str) -> str:
    """A flow's path relative to the project root, with ``/`` separators (its name in every report)."""
    return os.path.relpath(path, root).replace(os.sep, "/")


def run_name(target: FlowTarget, root: str) -> str:
    """How the reports and the lines name one run: the flow's path relative to the project root, and
    ``[<platform>]`` after it when the run is one of a suite across platforms."""
    rel = relative_name(target.path, root)
    return f"{rel} [{target.platform}]" if target.platform else rel


def call_key(args: dict[str, Any], *, platform: bool = False) -> str | None:
    """Which flow a flow-execute call runs: its saved ``name``, else its ``flow_path`` (with
    ``platform``, and the platform the call names)."""
    for key in ("name", "flow_path"):
        value = args.get(key)
        if isinstance(value, str):
            on = args.get("platform")
            return f"{key}:{value} [{on}]" if platform and isinstance(on, str) else f"{key}:{value}"
    return None


def target_key(target: FlowTarget) -> str:
    key = f"name:{target.name}" if target.name is not None else f"flow_path:{target.path}"
    return f"{key} [{target.platform}]" if target.platform else key


class SuiteRecorder:
    """The outcomes of one run's flows, in input order, and the reports written from them."""

    def __init__(
        self, targets: Sequence[FlowTarget], root: str, *, junit: str | None, html: HtmlReport | None
    ) -> None:
        self.targets = list(targets)
        self.root = root
        self.junit = junit
        self.html = html
        self._positions = {target_key(t): i for i, t in enumerate(self.targets)}
        self._outcomes: dict[int, FlowOutcome] = {}
        self._t0 = time.monotonic()
        self.started = datetime.now().astimezone()

    def wrap(self, client: ToolClient) -> ToolClient:
        return RecordingClient(client, self)

    def position(self, args: dict[str, Any]) -> int | None:
        for key in (call_key(args, platform=True), call_key(args)):
            if key is not None and key in self._positions:
                return self._positions[key]
        return None

    def _outcome(self, position: int, seconds: float, **how: Any) -> FlowOutcome:
        target = self.targets[position]
        outcome = outcome_of(
            position, target.path, run_name(target, self.root), seconds, stem=target.stem, **how
        )
        return evolve(outcome, platform=target.platform) if target.platform else outcome

    async def finished(self, position: int, seconds: float, **how: Any) -> None:
        """Record how the flow at ``position`` ended (``outcome_of``'s keywords); its images are
        copied now."""
        outcome = self._outcome(position, seconds, **how)
        self._outcomes[position] = outcome
        if self.html is not None and outcome.result is not None:
            await self.html.collect(outcome)

    def interrupted(self, position: int, seconds: float, steps: Sequence[dict[str, Any]] = ()) -> None:
        """The flow at ``position`` was cut off (an interrupt); ``steps`` are the progress lines
        that had arrived, so its report says how far it got."""
        self._outcomes[position] = self._outcome(position, seconds, skipped=RUN_ABORTED, arrived=steps)

    def outcomes(self) -> list[FlowOutcome]:
        """Every flow in input order; one that never got a call is skipped as not run."""
        return [
            self._outcomes.get(i) or self._outcome(i, 0.0, skipped=NOT_RUN) for i in range(len(self.targets))
        ]

    def write(self) -> list[str]:
        """Write the reports; the problems, one message each (a report that could not be written)."""
        outcomes = self.outcomes()
        seconds = time.monotonic() - self._t0
        problems: list[str] = []
        if self.junit is not None:
            try:
                write_junit(self.junit, outcomes, seconds=seconds, timestamp=self.started)
            except OSError as exc:
                problems.append(
                    f"could not write the JUnit report {self.junit}: {exc.strerror or exc}. "
                    f"{remedy(exc) or 'Check that disk'} or pass another --junit-xml path; {RESULTS_ABOVE}."
                )
        if self.html is not None:
            try:
                self.html.write(outcomes, seconds=seconds, timestamp=self.started)
            except OSError as exc:
                problems.append(
                    f"could not write the HTML report in {self.html.directory}: {exc.strerror or exc}. "
                    f"{remedy(exc) or 'Check that disk'} or pass another --html directory; {RESULTS_ABOVE}."
                )
            else:
                if self.html.not_copied:
                    first = self.html.not_copied[0]
                    count = len(self.html.not_copied)
                    problems.append(
                        f"the HTML report in {self.html.directory} lacks {count} image{'s' if count > 1 else ''}: "
                        f"{first.strerror or first}. {remedy(first)} or pass another --html directory; "
                        f"{RESULTS_ABOVE}."
                    )
        return problems


class RecordingClient:
    """A ``ToolClient`` that tells the recorder how each flow-execute call of the run ended."""

    def __init__(self, inner: ToolClient, recorder: SuiteRecorder) -> None:
        self.inner = inner
        self.recorder = recorder

    async def list_tools(self) -> list[ToolEntry]:
        return await self.inner.list_tools()

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        on_progress: ProgressCallback | None = None,
        on_refused: RefusalCallback | None = None,
    ) -> Any:
        position = self.recorder.position(args) if name == FLOW_EXECUTE else None
        if position is None:
            return await self.inner.call(name, args, on_progress=on_progress, on_refused=on_refused)
        refused: list[str] = []
        arrived: list[dict[str, Any]] = []
        progress: ProgressCallback | None = None
        if on_progress is not None:
            inner_progress = on_progress

            def progress(step: dict[str, Any]) -> Awaitable[None] | None:
                arrived.append(step)
                return inner_progress(step)

        def refusal(item: RefusedClientFile) -> None:
            refused.append(item.line())
            if on_refused is not None:
                on_refused(item)

        t0 = time.monotonic()
        try:
            result = await self.inner.call(
                name, args, on_progress=progress, on_refused=refusal if on_refused is not None else None
            )
        except ToolCallError as exc:
            await self.recorder.finished(position, time.monotonic() - t0, error=exc.message)
            raise
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.recorder.interrupted(position, time.monotonic() - t0, arrived)
            raise
        await self.recorder.finished(position, time.monotonic() - t0, result=result, refused=refused)
        return result
