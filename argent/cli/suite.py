"""`argent flow run` as a suite runner (INTERFACE.md §7): ``--shard I/N``, ``--workers N``,
``--junit-xml PATH`` and ``--html DIR``.

- ``--shard I/N`` keeps, of the flows a run selects sorted by their path relative to the project
  root, those at positions p (0-based) with ``p % N == I - 1``: the N shards are disjoint and
  together run every flow, so N CI jobs split a suite without talking to each other.
- ``--workers N`` runs up to N flows at once, each in its own flow-execute call on the one
  tool-server of the command (the embedded one, or the linked one); a run that launches Chromium
  gets its own browser from the tool-server. Every human line of a flow then starts with
  ``[<flow path relative to the project root>] `` (also when the run names one flow: the rule is
  about N); ``--json`` and the reports keep the input order.
- The reports are written from the calls' results (``argent.reports``) whatever the outcome, and
  leave the exit code alone.

``argent.cli.flow`` keeps the one-flow and one-at-a-time runs; this module selects the flows,
runs them concurrently when asked, and records them for the reports.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click
from attrs import define, evolve, field, frozen

from argent.cli.flow_run import closing_lines
from argent.cli.targets import FlowTarget, UsageProblem
from argent.driver import FlowDriver, SuiteEntry
from argent.limits import MAX_SUITE_WORKERS
from argent.reports.html import HtmlReport, ReportDirProblem, html_owned, prepare_report_dir
from argent.reports.junit import ReportPathProblem, prepare_junit_path
from argent.reports.recorder import SuiteRecorder, relative_name
from argent.reports.render import (
    echo,
    json_text,
    line_prefix,
    prefixed_lines,
    step_lines,
    unwritten_baseline_lines,
)

if TYPE_CHECKING:
    from argent.cli.flow_run import FlowRunCommand

EXIT_OK, EXIT_FAILED = 0, 1
BUSY_STATUS = 429
SHARD_FORMAT = "--shard takes I/N with whole numbers 1 <= I <= N (e.g. 2/4), not {value!r}"

F = TypeVar("F", bound=Callable[..., Any])


# --------------------------------------------------------------------------------------------
# Options


@frozen
class Shard:
    """Shard ``index`` of ``total`` (1-based, as typed)."""

    index: int
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


#: Characters of a bad ``--shard`` value its error message repeats.
SHARD_SHOWN_CHARS = 40


def _bad_shard(value: str) -> ValueError:
    if len(value) <= SHARD_SHOWN_CHARS:
        return ValueError(SHARD_FORMAT.format(value=value))
    shown = SHARD_FORMAT.format(value=value[:SHARD_SHOWN_CHARS])
    return ValueError(f"{shown}… ({len(value)} characters)")


def parse_shard(value: str) -> Shard:
    """``I/N`` with ``1 <= I <= N``; anything else raises ``ValueError`` with the message to show
    (also for numbers too long for Python to read: the spec's message, not Python's)."""
    text = value.strip()
    head, sep, tail = text.partition("/")
    if not sep or not head.isdecimal() or not tail.isdecimal() or not head.isascii() or not tail.isascii():
        raise _bad_shard(value)
    try:
        index, total = int(head), int(tail)
    except ValueError:
        raise _bad_shard(value) from None
    if not 1 <= index <= total:
        raise _bad_shard(value)
    return Shard(index, total)


class ShardType(click.ParamType):  # type: ignore[type-arg]
    name = "I/N"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Shard:
        if isinstance(value, Shard):
            return value
        try:
            return parse_shard(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def select_shard(targets: Sequence[FlowTarget], root: str, shard: Shard) -> list[FlowTarget]:
    """The targets of ``shard``: sorted by path relative to ``root`` (the runs of one flow across
    platforms in the order the platforms were given: the sort is stable), every N-th from I - 1."""
    ordered = sorted(targets, key=lambda t: relative_name(t.path, root))
    return [t for p, t in enumerate(ordered) if p % shard.total == shard.index - 1]


def across_platforms(targets: FlowTarget | list[FlowTarget], platforms: Sequence[str]) -> list[FlowTarget]:
    """A suite across engines (INTERFACE.md §11): every flow once per platform, in that order."""
    flows = [targets] if isinstance(targets, FlowTarget) else targets
    return [evolve(flow, platform=platform) for flow in flows for platform in platforms]


@frozen
class SuiteOptions:
    junit_xml: str | None = None
    html: str | None = None
    shard: Shard | None = None
    workers: int = 1


def suite_options(fn: F) -> F:
    """Add ``--junit-xml``, ``--html``, ``--shard`` and ``--workers`` to a command; it receives them
    as one ``suite: SuiteOptions`` keyword."""

    @click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="Run up to N flows at once, each its own call on the one tool-server.",
    )
    @click.option(
        "--shard",
        type=ShardType(),
        help="Run shard I of N: the flows at sorted positions p with p % N == I - 1.",
    )
    @click.option(
        "--html",
        "html_dir",
        type=click.Path(),
        help="Write a self-contained HTML report to DIR/index.html (images under DIR/images).",
    )
    @click.option("--junit-xml", type=click.Path(), help="Write a JUnit XML report to PATH.")
    @functools.wraps(fn)
    def wrapper(
        *args: Any,
        junit_xml: str | None,
        html_dir: str | None,
        shard: Shard | None,
        workers: int,
        **kwargs: Any,
    ) -> Any:
        suite = SuiteOptions(junit_xml=junit_xml, html=html_dir, shard=shard, workers=workers)
        return fn(*args, suite=suite, **kwargs)

    return wrapper  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# The run


def run_flows(
    runner: FlowRunCommand, targets: FlowTarget | list[FlowTarget], suite: SuiteOptions, *, ref: str
) -> int:
    """Run what ``argent flow run`` selected as ``suite`` says; the exit code."""
    root = str(runner.root)
    selected = [targets] if isinstance(targets, FlowTarget) else list(targets)
    if suite.shard is not None:
        selected = select_shard(selected, root, suite.shard)
    recorder = _recorder(selected, root, suite, directory=not isinstance(targets, FlowTarget))
    runner.recorder = recorder
    if recorder is not None and recorder.html is not None:
        recorder.html.trusted = runner.kept
    if not isinstance(targets, FlowTarget):
        runner.directory = os.path.abspath(ref)
    code = EXIT_OK
    try:
        if not selected:
            _say_empty_shard(runner, suite, targets)
        elif isinstance(targets, FlowTarget):
            prefix = line_prefix(relative_name(targets.path, root)) if suite.workers > 1 else ""
            code = asyncio.run(runner.single(targets, prefix=prefix))
        elif suite.workers > 1:
            workers = _bounded_workers(runner, suite.workers)
            code = asyncio.run(ParallelBatch(runner, selected, _directory(ref, root), workers).run())
        else:
            code = asyncio.run(runner.batch(selected, _directory(ref, root)))
    finally:
        if recorder is not None:
            for problem in recorder.write():
                echo(f"Error: {problem}", err=True)
                code = code or EXIT_FAILED
    return code


def _directory(ref: str, root: str) -> str:
    """The directory a run's flow paths are shown relative to: the one ``ref`` names, else (one flow
    run across platforms) the project root."""
    path = os.path.abspath(ref)
    return path if os.path.isdir(path) else root


def _bounded_workers(runner: FlowRunCommand, workers: int) -> int:
    """``--workers`` capped at ``MAX_SUITE_WORKERS`` (told on stderr when it is)."""
    if workers <= MAX_SUITE_WORKERS:
        return workers
    runner.notice(
        f"--workers {workers} is more than argent runs at once; running up to {MAX_SUITE_WORKERS} flows at once."
    )
    return MAX_SUITE_WORKERS


def _recorder(
    selected: list[FlowTarget], root: str, suite: SuiteOptions, *, directory: bool
) -> SuiteRecorder | None:
    """The recorder of the reports asked for (their paths are checked before anything runs); a
    directory run's counts and closing list come from it too, reports or not."""
    if suite.junit_xml is None and suite.html is None:
        return SuiteRecorder(selected, root, junit=None, html=None) if directory else None
    junit = os.path.abspath(suite.junit_xml) if suite.junit_xml is not None else None
    html: HtmlReport | None = None
    try:
        if junit is not None:
            if suite.html is not None:
                html_owned(junit, os.path.abspath(suite.html))
            prepare_junit_path(junit)
    except ReportPathProblem as exc:
        raise UsageProblem(str(exc)) from None
    if suite.html is not None:
        html_dir = os.path.abspath(suite.html)
        try:
            prepare_report_dir(html_dir)
        except ReportDirProblem as exc:
            raise UsageProblem(str(exc)) from None
        html = HtmlReport(html_dir)
    return SuiteRecorder(selected, root, junit=junit, html=html)


def _say_empty_shard(
    runner: FlowRunCommand, suite: SuiteOptions, targets: FlowTarget | list[FlowTarget]
) -> None:
    count = 1 if isinstance(targets, FlowTarget) else len(targets)
    text = f"Shard {suite.shard} keeps no flow of the {count} selected; nothing to run."
    if runner.as_json:
        echo(json_text({"ok": True, "total": 0, "passed": 0, "failed": 0, "skipped": 0, "flows": []}))
        runner.notice(text)
    else:
        echo(text)


@define
class ParallelBatch:
    """A directory run on up to ``workers`` concurrent calls, started in input order
    (``FlowDriver.run_suite``).

    Per flow it does what the one-at-a-time batch does (the same statuses, exports and JSON
    entries); every human line of a flow (started, each step as its progress line arrives, its
    summary, its notes on stderr) is printed at once, prefixed with the flow's path. The lines are
    plain on a terminal too: one status line cannot say what N flows are doing."""

    runner: FlowRunCommand
    targets: list[FlowTarget]
    directory: str
    workers: int
    shown: list[int] = field(factory=list)

    async def run(self) -> int:
        self.shown = [0] * len(self.targets)
        try:
            async with self.runner.driver as driver:
                await self._run(driver)
        finally:
            self.runner.close()
        return self.runner.summary()

    async def _run(self, driver: FlowDriver) -> None:
        await driver.run_suite(
            self.targets,
            workers=self.workers,
            on_start=self._started,
            on_step=self._step,
            on_end=self._ended,
            on_wait=lambda position, target, text: self._notice(self._prefix(target))(text),
            on_refused=lambda position, target, refusal: self._notice(self._prefix(target))(refusal.line()),
        )

    def _prefix(self, target: FlowTarget) -> str:
        return line_prefix(relative_name(target.path, str(self.runner.root)), target.platform)

    def _say(self, prefix: str, lines: Sequence[str], *, err: bool = False) -> None:
        """Print ``lines`` of one flow, every physical line prefixed (a reason holding a newline
        cannot make a line that looks like another flow's)."""
        if self.runner.as_json:
            return
        for line in lines:
            for part in prefixed_lines(prefix, line):
                echo(part, err=err, report=True)

    def _notice(self, prefix: str) -> Callable[[str], None]:
        """A flow's notes for stderr: prefixed like its lines, JSON objects with ``--json``."""

        def notice(text: str) -> None:
            if self.runner.as_json:
                self.runner.notice(text)
            else:
                self._say(prefix, [text], err=True)

        return notice

    def _started(self, position: int, target: FlowTarget) -> None:
        self._say(self._prefix(target), [f"  started ({position + 1}/{len(self.targets)})"])

    def _step(self, position: int, target: FlowTarget, step: dict[str, Any]) -> None:
        self.shown[position] += 1
        self._say(self._prefix(target), step_lines(step, target.stem))

    def _ended(self, position: int, flow: SuiteEntry) -> None:
        target, prefix = flow.target, self._prefix(flow.target)
        if flow.skipped:
            self._say(prefix, ["  · not run (batch stopped)"])
            return
        if flow.error is not None:
            self._say(prefix, [f"  ✗ {flow.error.message}"])
            return
        assert flow.run is not None
        result = flow.run.result
        if flow.run.report is None:
            self._say(prefix, [f'  ✗ "{target.stem}" did not produce a run report.'])
            return
        for line in unwritten_baseline_lines(result):
            self._notice(prefix)(line)
        self._say(prefix, closing_lines(result, target.stem, self.shown[position]))
