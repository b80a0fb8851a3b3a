"""One `argent flow run` on the terminal: its lines, its summary, its exit code and the images it exports.

The flows run through the public driver (``argent.driver.FlowDriver``), as the suite runner
(``argent.cli.suite``), the pytest plugin and a user's own Python code run them, so a flow runs with
the same arguments and reads the same whichever started it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from argent.cli.live import LiveStatus
from argent.cli.problems import CommandFailed, call_failed
from argent.cli.targets import (
    FlowTarget,
    UsageProblem,
)
from argent.client.base import RefusalCallback, ToolCallError, ToolClient
from argent.client.client_files import RefusedClientFile
from argent.client.routing import Route
from argent.driver import FlowDriver, SuiteEntry
from argent.limits import RESULTS_KEPT
from argent.link.codec import read_or_none
from argent.link.models import PrerequisiteNotice
from argent.reports.artifacts import EXPORT_MARKER as EXPORT_MARKER
from argent.reports.artifacts import KeepingClient
from argent.reports.artifacts import export_artifacts as export_artifacts
from argent.reports.model import FlowOutcome, counts, failed_flow_lines, outcome_of
from argent.reports.recorder import SuiteRecorder
from argent.reports.render import (
    echo,
    hang,
    json_text,
    one_line,
    prefixed_lines,
    read_report,
    read_step,
    step_lines,
    summary_line,
    unwritten_baseline_lines,
)
from argent.reports.results import ResultsDir

EXIT_OK, EXIT_FAILED = 0, 1


class FlowRunCommand:
    """`argent flow run` on the terminal: the lines, the summary, the exit code and the exported images
    of the flows a public ``FlowDriver`` runs (``argent.driver``)."""

    def __init__(
        self,
        root: Path,
        options: dict[str, Any],
        *,
        as_json: bool,
        output: str | None,
        route: Route | None = None,
    ) -> None:
        self.root = root
        self.as_json = as_json
        self.output = output
        #: The directory a directory run names (its flows' images go under their own subdirectories).
        self.directory: str | None = None
        #: The recorder every flow of a directory run (and any run with a report) is recorded by.
        self.recorder: SuiteRecorder | None = None
        self.results = ResultsDir(root, self.notice) if output is None else None
        self.keeping: KeepingClient | None = None
        #: The copies kept of failed steps' images (an HTML report copies them in turn).
        self.kept: set[str] = set()
        self.driver = FlowDriver(root, options, notice=self.notice, route=route, wrap=self._wrap)

    def _wrap(self, client: ToolClient) -> ToolClient:
        """The driver's client, beneath which each failed step's images are kept as its line arrives,
        and above that the recorder of the reports (which then names the kept copies)."""
        self.keeping = KeepingClient(client, self._destination, self.notice, kept=self.kept)
        return self.recorder.wrap(self.keeping) if self.recorder is not None else self.keeping

    def _destination(self, args: dict[str, Any]) -> tuple[str, str, Path | Callable[[], Path | None]] | None:
        """Where one flow's images go: ``--output``, else this run's folder under .argent/results; in a
        directory run, under the flow's subdirectory of that directory."""
        name, path = args.get("name"), args.get("flow_path")
        if isinstance(name, str):
            path = str(self.root / ".argent" / "flows" / f"{name}.yaml")
        if not isinstance(path, str):
            return None
        stem = name if isinstance(name, str) else Path(path).stem
        platform = args.get("platform")
        if isinstance(platform, str) and "platform" not in self.driver.options:
            stem = f"{stem}-{platform}"  # a suite across platforms: each run's images apart
        sub = ""
        if self.directory is not None:
            rel = os.path.relpath(os.path.dirname(path), self.directory)
            sub = "" if rel in (".", "") or rel.startswith("..") else rel
        if self.output is not None:
            return os.path.realpath(path), stem, Path(self.output) / sub if sub else Path(self.output)
        results = self.results
        assert results is not None

        def folder() -> Path | None:
            made = results.folder()
            return made / sub if made is not None and sub else made

        return os.path.realpath(path), stem, folder

    def kept_note(self) -> None:
        """Say where the images of failed steps are (a line at the end of a run that kept any)."""
        if self.as_json or not self.kept:
            return
        if self.output is not None:
            echo(f"Images of failed steps: {self.output}")
            return
        folder = self.results.folder() if self.results is not None else None
        if folder is not None:
            shown = os.path.relpath(folder) if not os.path.relpath(folder).startswith("..") else str(folder)
            echo(
                f"Images of failed steps: {shown} (the latest {RESULTS_KEPT} runs are kept there; "
                "--output DIR puts them elsewhere)"
            )

    def close(self) -> None:
        if self.results is not None:
            self.results.close()

    def notice(self, text: str) -> None:
        """A note for the user on stderr (a ``[flow-files]`` line, an upload): a JSON warning object
        with ``--json``, so stderr stays machine-readable too."""
        if self.as_json:
            echo(json_text({"warning": text}, indent=None), err=True)
        else:
            echo(text, err=True)

    def _flow_notice(self, prefix: str) -> Callable[[str], None]:
        """A flow's own notes for stderr (a refused file, an unwritten baseline), each physical
        line under ``prefix`` (§7); a JSON warning object with ``--json``."""

        def notice(text: str) -> None:
            if self.as_json or not prefix:
                self.notice(text)
            else:
                for part in prefixed_lines(prefix, text):
                    echo(part, err=True)

        return notice

    @staticmethod
    def _tell_refused(notice: Callable[[str], None]) -> RefusalCallback:
        def refused(refusal: RefusedClientFile) -> None:
            notice(refusal.line())

        return refused

    async def single(self, target: FlowTarget, *, prefix: str = "") -> int:
        """One flow: its lines as its progress lines arrive (under a live status line on a
        terminal), then its summary. With ``prefix`` (``--workers N``, N > 1: INTERFACE.md §7)
        every line but a blank one starts with it, and the lines are plain on a terminal too."""
        printed_header = False
        root_flow = target.stem
        note = self._flow_notice(prefix)

        live = LiveStatus(enabled=False if self.as_json or prefix else None)

        def say(line: str) -> None:
            for part in prefixed_lines(prefix, line):
                live.line(part)

        def out(line: str) -> None:
            for part in prefixed_lines(prefix, line) if line else [line]:
                echo(part, report=True)

        def progress(step: dict[str, Any]) -> None:
            nonlocal printed_header
            if self.as_json:
                return
            if not printed_header:
                say(f'Flow "{root_flow}"')
                printed_header = True
            report = read_step(step)
            for line in step_lines(report if report is not None else step, root_flow):
                say(line)
            live.reported(
                report.index if report is not None else 0, report.kind if report is not None else None
            )

        if live.enabled:
            live.plan = await _plan(target, self.root)
        try:
            async with self.driver, live:
                try:
                    run = await self.driver.run(target, on_step=progress, on_refused=self._tell_refused(note))
                except ToolCallError as exc:
                    raise call_failed(exc) from None
        finally:
            self.close()
        result = run.result
        report = read_report(result)
        if report is None:
            notice = read_or_none(result, PrerequisiteNotice)
            if notice is not None and notice.notice:
                raise CommandFailed(notice.notice)
            raise UsageProblem(f'"{target.stem}" did not produce a run report.')
        unwritten = self._unwritten_baselines(report, note)
        if self.as_json:
            echo(json_text(result))
        else:
            if not printed_header:
                out(f'Flow "{one_line(report.flow or root_flow)}"')
                for step in report.steps:
                    for line in step_lines(step, root_flow):
                        out(line)
            if report.execution_prerequisite:
                out(hang(f"  assumes: {report.execution_prerequisite}", "    "))
            out("")
            out(summary_line(report))
            if not prefix:
                self.kept_note()
        # The one definition of a flow's status a directory run and the reports use: a step the
        # report marks failed fails the flow, whatever its ``ok`` claims.
        status = outcome_of(0, target.path, target.path, 0.0, stem=root_flow, result=result).status
        return EXIT_OK if status == "passed" and not unwritten and not run.refused else EXIT_FAILED

    def _unwritten_baselines(self, result: Any, notice: Callable[[str], None] | None = None) -> int:
        """Say why each baseline of the result was not written; how many were not."""
        lines = unwritten_baseline_lines(result)
        for line in lines:
            (notice or self.notice)(line)
        return len(lines)

    async def batch(self, targets: list[FlowTarget], directory: str) -> int:
        """The flows of a directory one at a time: each flow's start line, every step line as
        its progress line arrives (under a live status line on a terminal), then its summary."""
        total = len(targets)
        shown = [0] * total
        live = LiveStatus(enabled=False if self.as_json else None)

        def say(line: str) -> None:
            if not self.as_json:
                live.line(line)

        current = [-1]

        def start(position: int, target: FlowTarget) -> None:
            shown_path = os.path.relpath(target.path, directory)
            on = f" [{target.platform}]" if target.platform else ""
            say(f"[{position + 1}/{total}] {shown_path}{on}")
            current[0] = position
            live.plan = None  # numbers alone until this flow's plan is read
            live.start(1)
            if live.enabled:
                asyncio.get_running_loop().create_task(planned(position, target))

        async def planned(position: int, target: FlowTarget) -> None:
            plan = await _plan(target, self.root)
            if current[0] == position:
                live.plan = plan

        def progress(position: int, target: FlowTarget, step: dict[str, Any]) -> None:
            shown[position] += 1
            report = read_step(step)
            for line in step_lines(report if report is not None else step, target.stem):
                say(line)
            live.reported(
                report.index if report is not None else 0, report.kind if report is not None else None
            )

        def end(position: int, entry: SuiteEntry) -> None:
            target = entry.target
            if entry.skipped:
                start(position, target)
                say("  · not run (batch stopped)")
            elif entry.error is not None:
                # The tool-server's words: their later lines stay under the mark (no line of theirs
                # can pose as a summary among this batch's lines).
                say(hang(f"  ✗ {entry.error.message}", "    "))
            elif entry.run is not None and entry.run.report is not None:
                result = entry.run.result
                self._unwritten_baselines(result)
                for line in closing_lines(result, target.stem, shown[position]):
                    say(line)

        try:
            async with self.driver, live:
                await self.driver.run_suite(
                    targets,
                    on_start=start,
                    on_step=progress,
                    on_end=end,
                    on_refused=lambda position, target, refusal: self.notice(refusal.line()),
                )
        finally:
            self.close()
        return self.summary()

    def summary(self) -> int:
        """The end of a directory run: its counts, the flows that did not pass (each with its first
        failing line), where their images are; or its JSON. The exit code. The counts are the
        recorder's, the one definition of a flow's status the JUnit and HTML reports use too."""
        assert self.recorder is not None
        outcomes = self.recorder.outcomes()
        tally = counts(outcomes)
        ok = tally["failed"] == 0 and tally["error"] == 0
        if self.as_json:
            summary = {
                "ok": ok,
                "total": len(outcomes),
                "passed": tally["passed"],
                "failed": tally["failed"],
                "errored": tally["error"],
                "skipped": tally["skipped"],
            }
            echo(json_text({**summary, "flows": [_flow_json(outcome) for outcome in outcomes]}))
        else:
            echo("")
            echo(suite_summary_line(outcomes), report=True)
            self.kept_note()
            for line in failed_flow_lines(outcomes):
                echo(line, report=True)
        return EXIT_OK if ok else EXIT_FAILED


async def _plan(target: FlowTarget, root: Path) -> list[str] | None:
    """The steps the status line names, in the runner's order (the runner's modules are loaded only
    for a terminal that shows it)."""
    from argent.runner.plan import step_plan

    return await step_plan(target.path, str(root), name=target.name)


#: A flow's status in a directory run's JSON, by its outcome (``argent.reports.model``).
_JSON_STATUS = {"passed": "pass", "failed": "fail", "error": "error", "skipped": "skip"}


def _flow_json(outcome: FlowOutcome) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": outcome.path, "status": _JSON_STATUS[outcome.status]}
    if outcome.platform is not None:
        entry["platform"] = outcome.platform
    if outcome.result is not None:
        entry["report"] = outcome.result
    elif outcome.status == "error" and outcome.message is not None:
        entry["error"] = outcome.message
    return entry


def suite_summary_line(outcomes: list[FlowOutcome]) -> str:
    """``PASS — 4 flows: 4 passed, 0 failed, 0 errored, 0 skipped``: the statuses of the reports."""
    tally = counts(outcomes)
    ok = tally["failed"] == 0 and tally["error"] == 0
    total = len(outcomes)
    return (
        f"{'PASS' if ok else 'FAIL'} — {total} flow{'s' if total != 1 else ''}: {tally['passed']} passed, "
        f"{tally['failed']} failed, {tally['error']} errored, {tally['skipped']} skipped"
    )


def closing_lines(result: Any, root_flow: str, shown: int) -> list[str]:
    """What is left to print when a flow of a directory run ends: the steps whose progress lines
    never came (a tool-server that does not stream), then the flow's summary line."""
    lines: list[str] = []
    for step in result["steps"][shown:]:
        lines.extend(step_lines(step, root_flow))
    lines.append(f"  {summary_line(result)}")
    return lines
