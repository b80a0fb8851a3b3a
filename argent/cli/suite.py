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
import contextlib
import functools
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click
from attrs import define, field, frozen

from argent.cli.flow_run import closing_lines
from argent.cli.targets import FlowTarget, UsageProblem
from argent.client.base import ProgressCallback, RefusalCallback, ToolCallError, ToolClient
from argent.client.client_files import RefusedClientFile
from argent.errors import TOO_MANY_DEVICES
from argent.limits import MAX_SUITE_WORKERS, RETRY_AFTER_SECONDS, SUITE_BUSY_RETRY_SECONDS
from argent.reports.html import HtmlReport, ReportDirProblem, html_owned, prepare_report_dir
from argent.reports.junit import ReportPathProblem, prepare_junit_path
from argent.reports.recorder import SuiteRecorder, relative_name
from argent.reports.render import (
    echo,
    is_report,
    json_text,
    line_prefix,
    prefixed_lines,
    read_report,
    step_lines,
    unwritten_baseline_lines,
)

if TYPE_CHECKING:
    from argent.cli.flow_run import _FlowRun

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
    """The targets of ``shard``: sorted by path relative to ``root``, every N-th from I - 1."""
    ordered = sorted(targets, key=lambda t: relative_name(t.path, root))
    return [t for p, t in enumerate(ordered) if p % shard.total == shard.index - 1]


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
    runner: _FlowRun, targets: FlowTarget | list[FlowTarget], suite: SuiteOptions, *, ref: str
) -> int:
    """Run what ``argent flow run`` selected as ``suite`` says; the exit code."""
    root = str(runner.root)
    selected = [targets] if isinstance(targets, FlowTarget) else list(targets)
    if suite.shard is not None:
        selected = select_shard(selected, root, suite.shard)
    recorder = _recorder(selected, root, suite)
    if recorder is not None:
        runner.wrap_client = recorder.wrap
    code = EXIT_OK
    try:
        if not selected:
            _say_empty_shard(runner, suite, targets)
        elif isinstance(targets, FlowTarget):
            prefix = line_prefix(relative_name(targets.path, root)) if suite.workers > 1 else ""
            code = asyncio.run(runner.single(targets, prefix=prefix))
        elif suite.workers > 1:
            workers = _bounded_workers(runner, suite.workers)
            code = asyncio.run(ParallelBatch(runner, selected, os.path.abspath(ref), workers).run())
        else:
            code = asyncio.run(runner.batch(selected, os.path.abspath(ref)))
    finally:
        if recorder is not None:
            for problem in recorder.write():
                echo(f"Error: {problem}", err=True)
                code = code or EXIT_FAILED
    return code


def _bounded_workers(runner: _FlowRun, workers: int) -> int:
    """``--workers`` capped at ``MAX_SUITE_WORKERS`` (told on stderr when it is)."""
    if workers <= MAX_SUITE_WORKERS:
        return workers
    runner.notice(
        f"--workers {workers} is more than argent runs at once; running up to {MAX_SUITE_WORKERS} flows at once."
    )
    return MAX_SUITE_WORKERS


def _recorder(selected: list[FlowTarget], root: str, suite: SuiteOptions) -> SuiteRecorder | None:
    """The recorder of the reports asked for; their paths are checked before anything runs."""
    if suite.junit_xml is None and suite.html is None:
        return None
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
        directory = os.path.abspath(suite.html)
        try:
            prepare_report_dir(directory)
        except ReportDirProblem as exc:
            raise UsageProblem(str(exc)) from None
        html = HtmlReport(directory)
    return SuiteRecorder(selected, root, junit=junit, html=html)


def _say_empty_shard(runner: _FlowRun, suite: SuiteOptions, targets: FlowTarget | list[FlowTarget]) -> None:
    count = 1 if isinstance(targets, FlowTarget) else len(targets)
    text = f"Shard {suite.shard} keeps no flow of the {count} selected; nothing to run."
    if runner.as_json:
        echo(json_text({"ok": True, "total": 0, "passed": 0, "failed": 0, "skipped": 0, "flows": []}))
        runner.notice(text)
    else:
        echo(text)


@define
class BrowserRoom:
    """The calls of one run that may hold a browser on the tool-server.

    A flow the tool-server refused a browser (``TOO_MANY_DEVICES``: the token holds the most it may,
    ``limits.devices_per_token``) waits for another call of the run to end (at most Retry-After) and
    tries again, as a busy flow does. When no call of the run is running and none ended since the
    refused one started, the browsers are someone else's: the refusal is the flow's error.

    Retries ask one at a time (until the retried call's first step line: its browser is up), so
    refused flows never keep each other "running" and waiting for ever.

    ``siblings``: other processes of the same run share the token (pytest-xdist workers over one
    link), so a browser may be freed by a call this process never sees; a refused flow then waits
    (Retry-After at a time) for as long as a busy one."""

    siblings: bool = False
    running: int = 0
    ended: int = 0
    _ending: asyncio.Event = field(factory=asyncio.Event)
    _retrying: asyncio.Lock = field(factory=asyncio.Lock)

    @contextlib.asynccontextmanager
    async def calling(self, *, retry: bool) -> AsyncIterator[Callable[[], None]]:
        """Count a call as running while it runs; yields ``booted``, to call at its first step line.
        Its end may free a browser, unless the tool-server refused it one (or was busy): a refused
        call frees nothing, and counting it would keep two refused flows retrying each other."""
        if retry:
            await self._retrying.acquire()
        turn = retry

        def booted() -> None:
            nonlocal turn
            if turn:
                turn = False
                self._retrying.release()

        self.running += 1
        freed = True
        try:
            yield booted
        except ToolCallError as exc:
            freed = not (exc.error_code == TOO_MANY_DEVICES or exc.status == BUSY_STATUS)
            raise
        finally:
            booted()
            self.running -= 1
            if freed:
                self.ended += 1
                self._ending.set()
                self._ending = asyncio.Event()

    def may_free(self, seen: int) -> bool:
        """After a refusal of a call started when ``seen`` calls had ended: whether a call of the run
        may have freed a browser since, or still may."""
        return self.siblings or self.ended > seen or self.running > 0

    async def wait(self, seen: int) -> None:
        """Until a call of the run ends after ``seen`` had (at most Retry-After: the browsers may be
        another client's of the same token)."""
        if self.ended > seen:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ending.wait(), RETRY_AFTER_SECONDS)


@define
class ParallelBatch:
    """A directory run on up to ``workers`` concurrent calls, started in input order.

    Per flow it does what the one-at-a-time batch does (the same statuses, exports and JSON
    entries); every human line of a flow (started, each step as its progress line arrives, its
    summary, its notes on stderr) is printed at once, prefixed with the flow's path. The lines are
    plain on a terminal too: one status line cannot say what N flows are doing."""

    runner: _FlowRun
    targets: list[FlowTarget]
    directory: str
    workers: int
    stopped: bool = False
    entries: list[dict[str, Any]] = field(factory=list)
    next_position: int = 0
    room: BrowserRoom = field(factory=BrowserRoom)

    async def run(self) -> int:
        total = len(self.targets)
        self.entries = [{"path": t.path} for t in self.targets]
        async with self.runner.client() as client:
            await asyncio.gather(*(self._worker(client) for _ in range(min(self.workers, total))))
        passed = sum(1 for e in self.entries if e.get("status") == "pass")
        failed = sum(1 for e in self.entries if e.get("status") == "fail")
        skipped = sum(1 for e in self.entries if e.get("status") == "skip")
        ok = failed == 0
        if self.runner.as_json:
            summary = {"ok": ok, "total": total, "passed": passed, "failed": failed, "skipped": skipped}
            echo(json_text({**summary, "flows": self.entries}))
        else:
            plural = "s" if total != 1 else ""
            echo(
                f"\n{'PASS' if ok else 'FAIL'} — {total} flow{plural}: {passed} passed, {failed} failed, "
                f"{skipped} skipped"
            )
        return EXIT_OK if ok else EXIT_FAILED

    async def _worker(self, client: ToolClient) -> None:
        while self.next_position < len(self.targets):
            position = self.next_position
            self.next_position += 1
            await self._one(client, position)

    def _say(self, prefix: str, lines: Sequence[str], *, err: bool = False) -> None:
        """Print ``lines`` of one flow, every physical line prefixed (a reason holding a newline
        cannot make a line that looks like another flow's)."""
        if self.runner.as_json:
            return
        for line in lines:
            for part in prefixed_lines(prefix, line):
                echo(part, err=err)

    def _notice(self, prefix: str) -> Callable[[str], None]:
        """A flow's notes for stderr: prefixed like its lines, JSON objects with ``--json``."""

        def notice(text: str) -> None:
            if self.runner.as_json:
                self.runner.notice(text)
            else:
                self._say(prefix, [text], err=True)

        return notice

    async def _one(self, client: ToolClient, position: int) -> None:
        runner = self.runner
        target = self.targets[position]
        entry = self.entries[position]
        prefix = line_prefix(relative_name(target.path, str(runner.root)))
        if self.stopped:
            entry["status"] = "skip"
            self._say(prefix, ["  · not run (batch stopped)"])
            return
        self._say(prefix, [f"  started ({position + 1}/{len(self.targets)})"])
        refusals: list[RefusedClientFile] = []
        shown = 0

        def progress(step: dict[str, Any]) -> None:
            nonlocal shown
            shown += 1
            self._say(prefix, step_lines(step, target.stem))

        notice = self._notice(prefix)

        def refused(refusal: RefusedClientFile) -> None:
            refusals.append(refusal)
            notice(refusal.line())

        try:
            result = await call_flow(
                runner,
                client,
                target,
                refusals,
                on_progress=progress,
                on_refused=refused,
                room=self.room,
                on_wait=notice,
            )
        except ToolCallError as exc:
            entry.update(status="fail", error=exc.message)
            self._say(prefix, [f"  ✗ {exc.message}"])
            if exc.error_kind != "validation":
                self.stopped = True
            return
        if not is_report(result):
            error = f'"{target.stem}" did not produce a run report.'
            entry.update(status="fail", error=error)
            self._say(prefix, [f"  ✗ {error}"])
            self.stopped = True
            return
        exported = runner._export(result, target, self.directory)
        entry["report"] = result
        unwritten = unwritten_baseline_lines(result)
        for line in unwritten:
            notice(line)
        report = read_report(result)
        # As the one-at-a-time runs read it: ``ok`` is the JSON true, nothing else that is truthy.
        ok = report is not None and report.ok and not unwritten and not refusals
        entry["status"] = "pass" if ok else "fail"
        self._say(prefix, closing_lines(result, target.stem, shown, exported))


async def call_flow(
    runner: _FlowRun,
    client: ToolClient,
    target: FlowTarget,
    refusals: list[RefusedClientFile],
    *,
    on_progress: ProgressCallback | None = None,
    on_refused: RefusalCallback | None = None,
    room: BrowserRoom | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Any:
    """One flow-execute call of ``runner``'s run (also the pytest plugin's); a tool-server that is
    busy (429: it runs fewer calls at once than its clients ask, and ran nothing) is asked again
    after its Retry-After, for a while. With a ``room`` (the calls of a ``--workers`` run), a flow
    refused a browser (``TOO_MANY_DEVICES``, before any step ran) is asked again the same way while
    another flow of the run may free one (``on_wait`` is told the first refusal). Each step's progress
    line goes to ``on_progress``; each refused client file to ``on_refused`` (default: kept in
    ``refusals`` and told to the user)."""
    deadline = time.monotonic() + SUITE_BUSY_RETRY_SECONDS
    room = BrowserRoom() if room is None else room
    told = retry = False
    while True:
        seen = room.ended
        try:
            async with room.calling(retry=retry) as booted:
                return await client.call(
                    "flow-execute",
                    runner._args(target),
                    on_progress=_first_step_tells(booted, on_progress),
                    on_refused=on_refused or runner._refused(refusals),
                )
        except ToolCallError as exc:
            if time.monotonic() >= deadline:
                raise
            if exc.error_code == TOO_MANY_DEVICES:
                if not room.may_free(seen):
                    raise
                if on_wait is not None and not told:
                    told = True
                    on_wait(f"  … waiting for a browser another flow of this run holds: {exc.message}")
                await room.wait(seen)
                retry = True
                continue
            if exc.status != BUSY_STATUS:
                raise
        await asyncio.sleep(RETRY_AFTER_SECONDS)


def _first_step_tells(
    booted: Callable[[], None], on_progress: ProgressCallback | None
) -> ProgressCallback | None:
    """``on_progress``, calling ``booted`` first (None stays None: it decides whether the call streams)."""
    if on_progress is None:
        return None
    tell = on_progress

    def progress(step: dict[str, Any]) -> Awaitable[None] | None:
        booted()
        return tell(step)

    return progress
