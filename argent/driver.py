"""Running flows from Python: the driver behind `argent flow run`, its suite runner and the pytest plugin.

``FlowDriver`` runs the flows of one project on a tool-server: the configured link (``ARGENT_TOOLS_URL``,
``~/.argent/link.json``), else one it starts on loopback for its own life (``argent.connect``), or a
client you give it. Each flow is one ``flow-execute`` call with the arguments `argent flow run` sends;
a tool-server that is busy (429) is asked again after its Retry-After, for a while, and so is one that
refused a browser while another flow of the same suite may free one. Progress comes one step report
at a time (``on_step``); the run ends as a ``FlowRun``: the report, and what the client would not
write (a refused client file, an unwritten baseline), which fails the flow as it fails the command.

    async with FlowDriver("/path/to/project") as driver:
        run = await driver.run("login")            # a saved flow, or a path to a flow file
        assert run.ok, run.problem

``run_suite`` runs many, up to ``workers`` at once, in the order given, and stops starting new ones
after a flow that could not start for a reason other than its arguments (as a directory run does).
A call that could not start the flow at all raises ``ToolCallError`` from ``run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from attrs import define, field, frozen

from argent.client.base import ProgressCallback, RefusalCallback, ToolCallError, ToolClient
from argent.client.client_files import RefusedClientFile
from argent.client.routing import Route
from argent.connect import open_client
from argent.errors import FLOW_FILE_INVALID, TOO_MANY_DEVICES
from argent.flows.names import FLOW_NAME_RE
from argent.limits import RETRY_AFTER_SECONDS, SUITE_BUSY_RETRY_SECONDS
from argent.link.models import FlowRunResult, ToolEntry
from argent.reports.model import FlowTarget
from argent.reports.render import echo, read_report, step_lines, unwritten_baseline_lines

if TYPE_CHECKING:
    from argent.runner.check import FlowProblem

__all__ = [
    "BrowserRoom",
    "CheckedClient",
    "FlowDriver",
    "FlowNotStarted",
    "FlowRun",
    "FlowTarget",
    "SuiteEntry",
    "flow_target",
    "run_options",
]

FLOW_EXECUTE = "flow-execute"
BUSY_STATUS = 429
WAITING_FOR_A_BROWSER = "  … waiting for a browser another flow of this run holds: {message}"


def run_options(
    *,
    device: str | None = None,
    platform: str | None = None,
    update_baselines: bool = False,
    acknowledge_prerequisites: bool = True,
) -> dict[str, Any]:
    """The flow-execute arguments every call of a run carries besides its flow, as `argent flow run`
    spells them (``prerequisiteAcknowledged`` first: a flow's prerequisite is the user's to meet)."""
    options: dict[str, Any] = {}
    if acknowledge_prerequisites:
        options["prerequisiteAcknowledged"] = True
    if device:
        options["device"] = device
    if platform:
        options["platform"] = platform
    if update_baselines:
        options["updateBaselines"] = True
    return options


def flow_target(ref: str | os.PathLike[str], project_root: str | os.PathLike[str]) -> FlowTarget:
    """A flow to run: a saved flow's name (``.argent/flows/<name>.yaml``), or a path to a flow file
    (relative to the working directory)."""
    text = os.fspath(ref)
    if FLOW_NAME_RE.match(text):
        return FlowTarget(path=str(Path(project_root) / ".argent" / "flows" / f"{text}.yaml"), name=text)
    return FlowTarget(path=os.path.abspath(text))


@frozen
class FlowRun:
    """How one flow ended: the call's ``result`` (a FlowRunResult's JSON, or a notice), the client files
    the client ``refused`` to write, and ``unwritten``: a line per baseline of the result not written."""

    target: FlowTarget
    result: Any
    refused: tuple[RefusedClientFile, ...] = ()

    @property
    def report(self) -> FlowRunResult | None:
        """The run report; None when the tool-server answered something else (a prerequisite notice)."""
        return read_report(self.result)

    @property
    def unwritten(self) -> list[str]:
        return unwritten_baseline_lines(self.result)

    @property
    def ok(self) -> bool:
        """Passed: the report says ``ok``, and the client wrote every file the result asked for."""
        report = self.report
        return report is not None and report.ok and not self.unwritten and not self.refused

    @property
    def problem(self) -> str | None:
        """The first line that says why the flow did not pass, as `argent flow run` prints it."""
        report = self.report
        if report is None:
            return f'"{self.target.stem}" did not produce a run report.'
        for step in report.steps:
            if step.status in ("fail", "error"):
                return step_lines(step, report.flow or self.target.stem)[0]
        extra = [*self.unwritten, *(refusal.line() for refusal in self.refused)]
        if extra:
            return extra[0]
        return None if report.ok else f'flow "{report.flow}" did not pass'


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


@frozen
class SuiteEntry:
    """One flow of a suite: its ``run``, or the ``error`` that kept it from starting, or neither
    (``skipped``: not started once the suite stopped)."""

    target: FlowTarget
    run: FlowRun | None = None
    error: ToolCallError | None = None

    @property
    def skipped(self) -> bool:
        return self.run is None and self.error is None

    @property
    def ok(self) -> bool:
        return self.run is not None and self.run.ok


def _stderr(text: str) -> None:
    """A note on stderr, made terminal-safe (a path a tool-server sent may hold control characters)."""
    echo(text, err=True)


class FlowDriver:
    """Runs the flows of the project at ``project_root``; an async context manager that holds one
    client to one tool-server for its life.

    ``options``: the flow-execute arguments of every call besides its flow (``run_options()``: the
    prerequisite acknowledged, as `argent flow run` does). ``client``: use this client (not closed here)
    instead of opening one; ``route``: where to open it (default: as the CLI routes); ``notice`` hears
    the client's notes (an upload, a ``[flow-files]`` line, a refused client file; default: stderr);
    ``wrap`` wraps the client once opened (the suite reports watch every call through it);
    ``room``: the calls of this driver that may hold browsers (one per driver by default); ``check``:
    check each flow on this machine before its call (``CheckedClient``), so a flow with a problem
    starts no device."""

    def __init__(
        self,
        project_root: str | os.PathLike[str],
        options: Mapping[str, Any] | None = None,
        *,
        client: ToolClient | None = None,
        route: Route | None = None,
        notice: Callable[[str], None] | None = _stderr,
        wrap: Callable[[ToolClient], ToolClient] | None = None,
        room: BrowserRoom | None = None,
        check: bool = True,
    ) -> None:
        self.root = Path(project_root)
        self.check = check
        self.options: dict[str, Any] = dict(run_options() if options is None else options)
        self.route = route
        self.notice = notice
        self.wrap = wrap
        self.room = room if room is not None else BrowserRoom()
        self._given = client
        self._client: ToolClient | None = None
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> FlowDriver:
        await self.client()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def client(self) -> ToolClient:
        """The driver's client: opened at the first call (and an embedded tool-server started then)."""
        client = self._client
        if client is None:
            opened: ToolClient
            if self._given is not None:
                opened = self._given
            else:
                opened = await self._stack.enter_async_context(open_client(self.route, notice=self.notice))
            if self.check:
                opened = CheckedClient(opened, notice=self.notice)
            client = self.wrap(opened) if self.wrap is not None else opened
            self._client = client
        return client

    async def close(self) -> None:
        """Close the client the driver opened (an embedded tool-server stops, and its browsers)."""
        self._client = None
        await self._stack.aclose()

    def target(self, ref: str | os.PathLike[str] | FlowTarget) -> FlowTarget:
        return ref if isinstance(ref, FlowTarget) else flow_target(ref, self.root)

    def args(self, target: FlowTarget) -> dict[str, Any]:
        """The flow-execute arguments of one flow's call."""
        args: dict[str, Any] = {"project_root": str(self.root), **self.options}
        if target.name is not None:
            args["name"] = target.name
        else:
            args["flow_path"] = target.path
        if target.platform is not None:
            args["platform"] = target.platform
        return args

    async def run(
        self,
        ref: str | os.PathLike[str] | FlowTarget,
        *,
        on_step: ProgressCallback | None = None,
        on_refused: RefusalCallback | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> FlowRun:
        """Run one flow (see the module). Each step report's JSON goes to ``on_step`` as it arrives (a
        call with ``on_step`` is streamed); each client file the client refused to write goes to
        ``on_refused`` (default: its line to ``notice``) and into the ``FlowRun``; ``on_wait`` hears the
        first time the flow waits for a browser another flow holds. Raises ``ToolCallError`` when the
        flow could not start."""
        target = self.target(ref)
        client = await self.client()
        refusals: list[RefusedClientFile] = []

        def refused(refusal: RefusedClientFile) -> None:
            refusals.append(refusal)
            if on_refused is not None:
                on_refused(refusal)
            elif self.notice is not None:
                self.notice(refusal.line())

        result = await self._call(client, self.args(target), on_step, refused, on_wait)
        return FlowRun(target, result, tuple(refusals))

    async def _call(
        self,
        client: ToolClient,
        args: dict[str, Any],
        on_step: ProgressCallback | None,
        refused: RefusalCallback,
        on_wait: Callable[[str], None] | None,
    ) -> Any:
        """One flow-execute call, asked again while the tool-server is busy (429: it ran nothing), and
        while it refuses a browser that another call of this driver may free."""
        deadline = time.monotonic() + SUITE_BUSY_RETRY_SECONDS
        room = self.room
        told = retry = False
        while True:
            seen = room.ended
            try:
                async with room.calling(retry=retry) as booted:
                    return await client.call(
                        FLOW_EXECUTE, args, on_progress=_first_step_tells(booted, on_step), on_refused=refused
                    )
            except ToolCallError as exc:
                if time.monotonic() >= deadline:
                    raise
                if exc.error_code == TOO_MANY_DEVICES:
                    if not room.may_free(seen):
                        raise
                    if on_wait is not None and not told:
                        told = True
                        on_wait(WAITING_FOR_A_BROWSER.format(message=exc.message))
                    await room.wait(seen)
                    retry = True
                    continue
                if exc.status != BUSY_STATUS:
                    raise
            await asyncio.sleep(RETRY_AFTER_SECONDS)

    async def run_suite(
        self,
        refs: Sequence[str | os.PathLike[str] | FlowTarget],
        *,
        workers: int = 1,
        on_start: Callable[[int, FlowTarget], None] | None = None,
        on_step: Callable[[int, FlowTarget, dict[str, Any]], Awaitable[None] | None] | None = None,
        on_end: Callable[[int, SuiteEntry], Awaitable[None] | None] | None = None,
        on_wait: Callable[[int, FlowTarget, str], None] | None = None,
        on_refused: Callable[[int, FlowTarget, RefusedClientFile], None] | None = None,
    ) -> list[SuiteEntry]:
        """Run ``refs`` in order, up to ``workers`` at once (see the module); the hooks hear each flow
        start, each of its steps, each client file refused, each wait for a browser and its end (a
        skipped flow ends without starting)."""
        targets = [self.target(ref) for ref in refs]
        entries: list[SuiteEntry | None] = [None] * len(targets)
        state = {"next": 0, "stopped": False}

        async def one(position: int) -> None:
            target = targets[position]
            if state["stopped"]:
                entry = SuiteEntry(target)
            else:
                if on_start is not None:
                    on_start(position, target)
                entry = await self._suite_flow(position, target, on_step, on_wait, on_refused)
                if (entry.error is not None and entry.error.error_kind != "validation") or (
                    entry.run is not None and entry.run.report is None
                ):
                    state["stopped"] = True
            entries[position] = entry
            if on_end is not None:
                outcome = on_end(position, entry)
                if outcome is not None:
                    await outcome

        async def worker() -> None:
            while state["next"] < len(targets):
                position = state["next"]
                state["next"] = position + 1
                await one(position)

        await self.client()
        await asyncio.gather(*(worker() for _ in range(max(1, min(workers, len(targets))))))
        return [entry for entry in entries if entry is not None]

    async def _suite_flow(
        self,
        position: int,
        target: FlowTarget,
        on_step: Callable[[int, FlowTarget, dict[str, Any]], Awaitable[None] | None] | None,
        on_wait: Callable[[int, FlowTarget, str], None] | None,
        on_refused: Callable[[int, FlowTarget, RefusedClientFile], None] | None,
    ) -> SuiteEntry:
        def step(report: dict[str, Any]) -> Awaitable[None] | None:
            return on_step(position, target, report) if on_step is not None else None

        def wait(text: str) -> None:
            if on_wait is not None:
                on_wait(position, target, text)

        def refused(refusal: RefusedClientFile) -> None:
            if on_refused is not None:
                on_refused(position, target, refusal)
            elif self.notice is not None:
                self.notice(refusal.line())

        try:
            run = await self.run(
                target, on_step=step if on_step is not None else None, on_refused=refused, on_wait=wait
            )
        except ToolCallError as exc:
            return SuiteEntry(target, error=exc)
        return SuiteEntry(target, run=run)


class FlowNotStarted(ToolCallError):
    """A flow the client's check refused before its call: nothing ran, no device started. ``problems``
    are its lines, as `argent flow check` prints them."""

    def __init__(self, problems: Sequence[str], error_code: str = FLOW_FILE_INVALID) -> None:
        count = len(problems)
        head = NOT_STARTED.format(count=count, s="s" if count != 1 else "")
        super().__init__(
            "\n".join([head, *problems]), status=422, error_code=error_code, error_kind="validation"
        )
        self.problems = tuple(problems)


NOT_STARTED = "not started: {count} problem{s} found before any device started:"


class CheckedClient:
    """A client whose ``flow-execute`` calls check their flow first, on this machine
    (``argent.runner.check``: what `argent flow check` finds in what the run surely reaches, outside
    `when:` blocks, but missing baselines, which a run reports itself with the capture to adopt). Co-located, that is the files the tool-server would
    read; over a link, the files this client would send, checked as a run over a link goes (a page
    path does not travel; a `script:` is left to the tool-server's own refusal, which comes before
    any device in the protocol's words). A flow with a problem raises ``FlowNotStarted``."""

    def __init__(self, inner: ToolClient, *, notice: Callable[[str], None] | None = None) -> None:
        self.inner = inner
        self.notice = notice
        self.linked = bool(getattr(inner, "linked", False))

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
        if name == FLOW_EXECUTE:
            from argent.runner.check import problem_lines

            problems = await self._problems(args)
            if problems:
                raise FlowNotStarted(problem_lines(problems), problems[0].code)
        return await self.inner.call(name, args, on_progress=on_progress, on_refused=on_refused)

    async def _problems(self, args: dict[str, Any]) -> list[FlowProblem]:
        from argent.runner.check import check_flow  # the runner: only once a flow runs

        root, name, path = args.get("project_root"), args.get("name"), args.get("flow_path")
        if not isinstance(root, str):
            return []  # the tool-server says what is wrong with the arguments
        if isinstance(name, str):
            path = os.path.join(root, ".argent", "flows", f"{name}.yaml")
        if not isinstance(path, str):
            return []
        found = await check_flow(
            path,
            root,
            name=name if isinstance(name, str) else None,
            over_link=self.linked,
            baselines=False,
            refusals=False,
            conditional=False,
        )
        return found


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
