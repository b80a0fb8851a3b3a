"""The flow recorder: flow-start-recording, flow-add-step, flow-add-echo, flow-add-script,
flow-finish-recording.

An agent records a flow by driving the device one call at a time. Every recorded step runs
live first, through the registry like any call, and is appended only when it ran (a result
that reports an unmet condition still counts as run). A step that is refused — it cannot be
written, the recording is gone, a link could not replay it — runs nothing. Over a link a
``flow-execute`` step is also refused after it ran when its flow did not pass (or did not run
for its prerequisite): nothing is recorded.

``flow-add-step``'s command is a tool or a flow directive. A directive (``recording_directives``)
is read by the flow parser and run by the runner as a one-step flow on the recording's device —
the code path of a replay — and recorded as itself only when it passed.

Recorded tool calls are normalised for replay: device ids are dropped (a replay binds its own
device); a page opened with ``boot-device`` / ``open-url`` becomes ``launch: { chromium: <url> }``,
so a replay boots and opens it itself (the chromium form of upstream's ``restart-app`` to
``launch`` rewrite); a ``gesture-tap`` becomes a selector tap when the screen it tapped offers a
selector that names the tapped element alone (``recording_capture``); a ``keyboard`` key or chord
becomes ``press: <keys>``; and a ``flow-execute`` of a flow beside the recording becomes
``run: <name>.yaml``. A page under the project root is written relative to the flow file
(``recording_paths``). Each tool's description says what a call of it records (``recording_notes``).

Where the file lives is decided when the recording starts: a call over a link
(``x-argent-linked: 1``), or a ``project_root`` that does not exist on this host, makes the
recording *client-kept* — the tool-server writes nothing and each result's ``savedTo`` is a
client-write directive. See ``recording_sessions`` for the session and file rules.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import posixpath
from collections.abc import Mapping
from typing import Any

from attrs import evolve, frozen

from argent.cpu import run_cpu
from argent.devices.base import Device, DeviceProvider
from argent.devices.caller import current_caller
from argent.devices.registry import DEFAULT_ENGINE, engine_named
from argent.errors import (
    FLOW_RECORDING_REFUSED,
    ArgentError,
    DeviceResolutionError,
    FlowError,
    InvalidToolInputError,
    ToolExecutionError,
)
from argent.flows.directives.press import chord
from argent.flows.grammar import did_you_mean
from argent.flows.load import parse_flow_async
from argent.flows.model import (
    ChromiumApp,
    EchoStep,
    Flow,
    LaunchStep,
    Point,
    PressStep,
    RunStep,
    ScriptStep,
    Selector,
    SnapshotStep,
    Step,
    TapStep,
    ToolStep,
)
from argent.flows.names import assert_safe_flow_name, is_safe_flow_name
from argent.flows.write import FlowDocument, flow_to_yaml, summarize_step
from argent.link.members import Member, MemberStore
from argent.link.models import FileInputSpec
from argent.link.paths import spelling_of
from argent.link.rules import (
    FLOW_EXECUTE,
    RECORDING_TOOLS,
    classify_file_inputs,
    has_dotdot,
    nested_flow_ref,
)
from argent.runner.execute import detect_device, launched_engine
from argent.runner.files import LISTED, DiskFlowFiles, FlowRef
from argent.runner.load import check_project_root
from argent.runner.member_files import NO_MEMBER, MemberFlowFiles
from argent.runner.report import FlowRunResult, PrerequisiteNotice
from argent.runner.run import DEVICE_ARG_KEYS, RUN_ABORTED, Run, ToolCallContext, sleep_or_abort
from argent.tools.args import arg
from argent.tools.flow_tools import directives_for
from argent.tools.link_preflight import NESTED_REASON
from argent.tools.member_invoker import FileInputDirs, MemberToolInvoker
from argent.tools.recording_directives import (
    DIRECTIVE_PERMISSION,
    RECORDABLE_DIRECTIVES,
    DirectiveRun,
    did_not_pass,
    directive_value,
    is_directive,
    not_recorded,
    parse_directive,
    run_directive,
    unknown_command,
)
from argent.tools.recording_paths import portable_launch, portable_upload
from argent.tools.recording_sessions import (
    RecordingError,
    RecordingSession,
    RecordingSessions,
    being_recorded,
    client_file,
    make_flows_dir,
    no_longer_active,
    not_yours,
    other_spelling,
    read_recording,
    recording_key,
    recording_path,
    write_recording,
)
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec
from argent.utils.oserrors import enoent_message

START_RECORDING = "flow-start-recording"
ADD_STEP = "flow-add-step"
ADD_ECHO = "flow-add-echo"
ADD_SCRIPT = "flow-add-script"
FINISH_RECORDING = "flow-finish-recording"

#: A recording's document before a step, and with the step appended (checked before the step runs).
Prepared = tuple[FlowDocument, FlowDocument]

GESTURE_TAP = "gesture-tap"
#: Recorded as `press: <keys>` when it presses a key or a chord.
KEYBOARD = "keyboard"
BOOT_DEVICE = "boot-device"
STOP_DEVICE = "stop-device"
#: Tools that open a page; recorded as `launch: { chromium: <url> }` so a replay opens it itself.
OPENS_A_PAGE = frozenset({BOOT_DEVICE, "open-url"})
#: Arguments an opening call may carry besides ``url`` and still be a launch.
_LAUNCH_EXTRA = frozenset({*DEVICE_ARG_KEYS, "platform"})
#: ``clickCount`` values a recorded tap keeps as ``times``.
MAX_TAP_TIMES = 10

PROJECT_ROOT_PROBE = FileInputSpec(target="project_root", path="${project_root}", kind="probe")
PROJECT_ROOT_STEP_PROBE = FileInputSpec(
    target="project_root", path="${project_root}", kind="probe", collect="step"
)

STARTED = 'Started recording "{name}" flow'
RESTARTED = (
    'Restarted recording "{name}" — the previous take{count} was discarded and {path} reset to an empty flow.'
)
ECHO_ADDED = 'Echo added to "{name}" flow'
STEP_ADDED = 'Step added to "{name}" flow'
SCRIPT_ADDED = 'Script step added to "{name}" flow'
FINISHED = 'Finished recording "{name}" flow ({n} steps)'

ARGS_NOT_JSON = "args must be an object or the JSON text of one ({detail}); nothing was run or recorded."
ARGS_NOT_OBJECT = "args must be an object or the JSON text of one, not {what}; nothing was run or recorded."
DIRECTIVE_DELAY = (
    "delayMs applies to tool steps; a {command} step waits for what it needs (record an await step to wait "
    "for something). Nothing was run or recorded."
)
DIRECTIVE_FILES_OVER_LINK = (
    "flow-add-step cannot record this {command} step on a recording kept on the client: its files are not on "
    "this tool-server. Record it where the project's files are, or add it to the file by hand (a snapshot: "
    "then run the flow once with --update-baselines). Nothing was run or recorded."
)
UPLOAD_REFUSED = "flow-add-step cannot run this upload step: {reason}. Nothing was run or recorded."
#: The directive whose files a recording writes relative to the flow file (its grammar wants them so).
UPLOAD = "upload"
NO_DEVICE_FOR_DIRECTIVE = (
    "{reason} flow-add-step runs a {command} step on the recording's device: record a launch step first (it "
    "boots one), or pass device."
)
NO_DEVICES = "this tool-server has no devices."
DELAY_NEGATIVE = "delayMs must be an integer ≥ 0 (got {value}); nothing was run or recorded."
NOT_A_STEP = (
    "{command} cannot be recorded as a step: it is a recorder tool, and a flow that records a flow "
    "cannot be replayed. Call it directly."
)
ABORTED_BEFORE_RUN = "flow-add-step was aborted before {command} ran; nothing was recorded."
FLOW_PATH_REFUSED = (
    'Cannot record a flow-execute of flow_path "{path}": {detail}. flow_path carries no file-input '
    "resolution through flow-add-step's opaque args — name a flow that sits beside the recording with "
    "name and project_root instead, and it is recorded as a run: step."
)
SCRIPT_OVER_LINK = (
    "flow-add-script records nothing over a link: a replay over a link rejects script: steps, because a "
    "script runs only where the flow's files are. No script ran. Record on the machine that holds the "
    "project, or add the script: step to the file by hand."
)
SCRIPT_FAILED = "{reason}; nothing was recorded."

LINK_REFUSED = (
    "flow-add-step cannot record this {command} step: a replay over a link rejects it — {reason}. Nothing "
    "ran and nothing was recorded."
)
FILE_INPUT_REASON = "a replay over a link sends only file arguments, and {why}"
NESTED_NOT_PASSED = (
    'flow-add-step cannot record this flow-execute step: its flow "{flow}" did not pass ({detail}), and over '
    "a link a flow-execute step is recorded only when its flow passes. The flow ran; nothing was recorded."
)
NESTED_NOT_RUN = (
    'flow-add-step cannot record this flow-execute step: its flow "{flow}" did not run — it declares an '
    "execution prerequisite; once it is met, set prerequisiteAcknowledged: true in the step's args. Nothing "
    "was recorded."
)
OLDER_CLIENT_REFUSED = (
    "flow-add-step cannot record {what}: this recording is kept on the client, and the client sent none of "
    "the step's files with the call — it is older than this tool-server. Update the argent CLI or MCP "
    "adapter on the client (keep client and tool-server at the same version). Nothing ran and nothing was "
    "recorded."
)
OLDER_NESTED = "a flow-execute step that names its flow"
OLDER_SIBLING_PATH = "a flow-execute step with the flow_path of a flow beside the recording"
OLDER_FILE_ARGUMENT = "a {command} step with a file argument ({names})"

WARN_NO_FLOW_NAME = "flow-execute call had no flow name; kept the raw step"
WARN_OTHER_PROJECT = (
    'kept the raw flow-execute step — "{name}" is a flow of another project ({root}), and run: resolves '
    "beside the recording"
)
WARN_CASE_FOLDED = (
    'kept the raw flow-execute step — this filesystem lists "{target}" as "{actual}", so a run: step '
    "could not name it"
)
WARN_UNVERIFIABLE = (
    'kept the raw flow-execute step — "{target}" could not be found beside the recording in {dir} to '
    "verify it"
)
WARN_NO_DEVICES = "selector capture failed (this tool-server has no devices); kept coordinates"


# --------------------------------------------------------------------------------------------
# Arguments

_NAME_DOC = "Flow name: the recording is <project_root>/.argent/flows/<name>.yaml."
_ROOT_DOC = "Absolute path of the project root (the directory holding .argent/)."


@frozen
class StartRecordingArgs:
    name: str = arg(doc=_NAME_DOC)
    project_root: str = arg(doc=_ROOT_DOC)
    execution_prerequisite: str | None = arg(
        None,
        wire="executionPrerequisite",
        doc="The start state the flow assumes (e.g. 'logged in, cart empty'); a replay asks for it.",
    )


@frozen
class AddStepArgs:
    name: str = arg(doc=_NAME_DOC)
    project_root: str = arg(doc=_ROOT_DOC)
    command: str = arg(
        doc=(
            "A tool to run and record (e.g. gesture-tap), or a flow directive run as a replay runs it and "
            "recorded as itself: " + ", ".join(RECORDABLE_DIRECTIVES) + "."
        )
    )
    args: str | dict[str, Any] | None = arg(
        None,
        doc=(
            "A tool's arguments as an object or its JSON text, e.g. {\"x\":0.5}; a directive's value as JSON: "
            'its map form, or the JSON text of any of its forms, e.g. {"into":{"id":"email"},"text":"a@b.c"} '
            'for type, "Enter" for press.'
        ),
    )
    delay_ms: int | None = arg(
        None,
        wire="delayMs",
        doc="Wait this many milliseconds before the tool runs (and on replay); tools only.",
    )
    device: str | None = arg(
        None,
        doc=(
            "The device a directive runs on; default: the device the recording last used, else the one "
            "booted device (a launch boots one when none is known)."
        ),
    )


@frozen
class AddEchoArgs:
    name: str = arg(doc=_NAME_DOC)
    project_root: str = arg(doc=_ROOT_DOC)
    message: str = arg(doc="Text the replay prints at this point.")


@frozen
class AddScriptArgs:
    name: str = arg(doc=_NAME_DOC)
    project_root: str = arg(doc=_ROOT_DOC)
    path: str = arg(doc="The script, relative to the flow file's directory (as the script: step writes it).")
    args: list[str] | None = arg(None, doc="Arguments passed to the script.")
    timeout: float | None = arg(None, doc="Milliseconds the script may run (default 30000).")
    device: str | None = arg(None, doc="Device the script acts on (ARGENT_DEVICE, ARGENT_CDP_URL).")


@frozen
class FinishRecordingArgs:
    name: str = arg(doc=_NAME_DOC)
    project_root: str = arg(doc=_ROOT_DOC)


# --------------------------------------------------------------------------------------------
# Step plans


@frozen
class StepPlan:
    """What flow-add-step runs and what it records."""

    command: str
    args: dict[str, Any]
    step: Step
    warnings: tuple[str, ...] = ()
    #: Run with the files the call brought (a client-kept recording over a link), not this host's.
    members: MemberStore | None = None


@frozen
class StepLink:
    """How one flow-add-step call stands to a link.

    ``refuse``: the call came over a link or the recording is client-kept — a step that a replay over
    a link rejects is refused. ``members``: the files of the step, for a client-kept recording whose
    client sent them; ``older_client``: a client-kept recording whose client sent none (no members
    field at all). ``call_root`` is project_root as the call spelled it: the members' keys use it.
    """

    refuse: bool
    members: MemberStore | None
    older_client: bool
    call_root: str

    @classmethod
    def of(cls, session: RecordingSession, ctx: ToolContext, call_root: str) -> StepLink:
        sent = ctx.step_members.get("project_root")
        return cls(
            refuse=ctx.linked or session.client_kept,
            members=sent if session.client_kept else None,
            older_client=session.client_kept and sent is None,
            call_root=call_root,
        )


def parse_step_args(text: str | dict[str, Any] | None) -> dict[str, Any]:
    """flow-add-step's ``args`` for a tool: an object or its JSON text; none means ``{}``."""
    if text is None:
        return {}
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        detail = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
        raise InvalidToolInputError(ARGS_NOT_JSON.format(detail=detail)) from None
    except RecursionError:
        detail = "it nests arrays or objects too deeply to read"
        raise InvalidToolInputError(ARGS_NOT_JSON.format(detail=detail)) from None
    if not isinstance(value, dict):
        raise InvalidToolInputError(ARGS_NOT_OBJECT.format(what=_json_kind(value)))
    return value


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


def strip_device_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded step's args: without the device id (a replay binds its own); a ``devices`` list stays."""
    return {key: value for key, value in args.items() if key not in DEVICE_ARG_KEYS}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _tap_times(args: Mapping[str, Any]) -> int | None:
    count = args.get("clickCount")
    if isinstance(count, int) and not isinstance(count, bool) and 2 <= count <= MAX_TAP_TIMES:
        return count
    return None


def _launch_of(args: Mapping[str, Any]) -> LaunchStep | None:
    """The launch a page-opening call amounts to: a browser ``url`` (of any engine, recorded as the
    ``chromium:`` web target every engine runs) and nothing but device keys."""
    url = args.get("url")
    platform = args.get("platform", DEFAULT_ENGINE.platform)
    if not isinstance(url, str) or not url or not isinstance(platform, str) or engine_named(platform) is None:
        return None
    if any(key not in _LAUNCH_EXTRA and key != "url" for key in args):
        return None
    return LaunchStep(chromium=ChromiumApp(url))


def _press_of(args: Mapping[str, Any]) -> PressStep | None:
    """The `press:` a keyboard call amounts to: a ``key`` that is a key or a chord, and nothing but
    device keys beside it."""
    key = args.get("key")
    if not isinstance(key, str) or any(name not in DEVICE_ARG_KEYS and name != "key" for name in args):
        return None
    try:
        return PressStep(keys=chord(key).name)
    except ValueError:
        return None  # the call fails with its own words; nothing is recorded


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


# --------------------------------------------------------------------------------------------
# The recorder


class Recorder:
    """The recorder tools of one tool-server, over its registry and its live recordings."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        devices: DeviceProvider | None = None,
        sessions: RecordingSessions | None = None,
        file_input_dirs: FileInputDirs | None = None,
        artifacts_dir: str | None = None,
    ) -> None:
        self.registry = registry
        self.devices = devices
        self.sessions = sessions or RecordingSessions()
        #: Where a recorded `tool:` step's file arguments go (a tool-server's carry its id).
        self.file_input_dirs = file_input_dirs
        #: Where a recorded directive that failed leaves its screenshot (as a replay's step does).
        self.artifacts_dir = artifacts_dir

    # -- addressing --------------------------------------------------------------------------

    def _address(self, name: str, project_root: str) -> tuple[str, str]:
        """The recording file as addressed, and its key; the errors of flow-execute for bad input.

        Synchronous on purpose (a realpath is a few quick syscalls): a call reaches its recording's
        step order without yielding, so concurrent calls are recorded in the order they came."""
        check_project_root(project_root)
        assert_safe_flow_name(name)
        flow_file = os.path.normpath(recording_path(project_root, name))
        return flow_file, recording_key(flow_file)

    def _session(self, name: str, project_root: str) -> RecordingSession:
        flow_file, key = self._address(name, project_root)
        session = self.sessions.get(key)
        if session is None:
            raise self.sessions.missing(name, project_root, key)
        if session.flow_file != flow_file:
            raise other_spelling(name, project_root, session)
        return session

    def _current(self, session: RecordingSession, *, tool_ran: bool) -> None:
        if not self.sessions.is_current(session):
            raise no_longer_active(session, tool_ran=tool_ran)

    # -- the recording's text ------------------------------------------------------------------

    async def _text(self, session: RecordingSession) -> str:
        if session.client_kept:
            return session.text
        return await run_cpu(read_recording, session.flow_file)

    @staticmethod
    def _saved_to(session: RecordingSession, text: str) -> Any:
        return client_file(session.flow_file, text) if session.client_kept else session.flow_file

    async def _document(self, session: RecordingSession) -> FlowDocument:
        """The recording as a document: a client-kept one is the session's; a host one is its file,
        read again (hand edits are kept) and parsed again only when it changed."""
        if session.client_kept:
            return session.document
        return await asyncio.to_thread(_host_document, session.flow_file, session.document)

    async def _check_appendable(self, session: RecordingSession, step: Step) -> Prepared:
        """Refuse before anything runs a step the recording could not take (a broken hand edit, a
        leading launch under a prerequisite, a step that cannot be written); the append, prepared."""
        current = await self._document(session)
        return current, await asyncio.to_thread(current.append, step)

    async def _append(
        self, session: RecordingSession, step: Step, *, tool_ran: bool, prepared: Prepared | None = None
    ) -> tuple[str, int]:
        """Append ``step`` under the file's lock; the new text and its step count. Only the step is
        parsed (``FlowDocument``); ``prepared`` is used when the recording is still what it was."""
        async with self.sessions.lock(session.key):
            self._current(session, tool_ran=tool_ran)
            if session.client_kept:
                current = session.document
                if prepared is not None and prepared[0] is current:
                    document = prepared[1]
                else:
                    document = await asyncio.to_thread(current.append, step)
                session.text = document.text
            else:
                document = await asyncio.to_thread(
                    _append_on_disk, session.flow_file, session.document, step, prepared
                )
            session.document = document
        return document.text, document.steps

    # -- the policy of a call, before it starts ------------------------------------------------

    @staticmethod
    async def _precheck_start(args: StartRecordingArgs, ctx: ToolContext) -> None:
        """A recording this host keeps works in a safe project and reads flows from this disk."""
        policy = ctx.policy
        if policy is None or ctx.linked:
            return  # over a link the recording is client-kept: project_root is only a key
        await policy.check_workspace(args.project_root)
        if await _present_on_host(args.project_root, ctx):
            policy.check_local_flows(START_RECORDING)
            # The file it writes, by real path: a `.argent` or `.argent/flows` that links out of the
            # project (a checkout's symlink) would have it write outside the project roots.
            await policy.check_read(recording_path(args.project_root, args.name))

    @staticmethod
    async def _precheck_step(args: AddStepArgs, ctx: ToolContext) -> None:
        if ctx.policy is not None:
            ctx.policy.check_tool(DIRECTIVE_PERMISSION if is_directive(args.command) else args.command)

    @staticmethod
    async def _precheck_script(args: AddScriptArgs, ctx: ToolContext) -> None:
        if ctx.policy is not None:
            ctx.policy.check_scripts_recording()

    # -- flow-start-recording ----------------------------------------------------------------

    async def start(self, args: StartRecordingArgs, ctx: ToolContext) -> dict[str, Any]:
        flow_file, key = self._address(args.name, args.project_root)
        client_kept = ctx.linked or not await _present_on_host(args.project_root, ctx)
        text = flow_to_yaml(Flow(execution_prerequisite=args.execution_prerequisite or ""))
        async with self.sessions.lock(key):
            previous = self.sessions.get(key)
            if not client_kept:
                await self._check_start_on_host(args, key, flow_file, previous, ctx)
            discarded = await self._count_steps(previous) if previous is not None else None
            if not client_kept:
                await asyncio.to_thread(_reset_on_disk, args.project_root, flow_file, text)
                self.sessions.note_recorder(key)
            session = RecordingSession(
                key=key,
                name=args.name,
                project_root=args.project_root,
                flow_file=flow_file,
                client_kept=client_kept,
                text=text if client_kept else "",
                document=FlowDocument.parse(text),
            )
            self.sessions.put(session)
        out: dict[str, Any] = {"message": STARTED.format(name=args.name)}
        if previous is not None:
            count = "" if discarded is None else f" ({discarded} step{'' if discarded == 1 else 's'})"
            out["message"] = RESTARTED.format(name=args.name, count=count, path=flow_file)
            out["restarted"] = True
            if discarded is not None:
                out["discardedSteps"] = discarded
        out["flowFile"] = flow_file
        out["savedTo"] = self._saved_to(session, text)
        return out

    async def _check_start_on_host(
        self,
        args: StartRecordingArgs,
        key: str,
        flow_file: str,
        previous: RecordingSession | None,
        ctx: ToolContext,
    ) -> None:
        """With named tokens, a recording of a file on this host undoes no other token's work: not one
        that token is recording now, nor a saved flow this token did not record (unless the policy's
        ``overwrite_flows``). 409 and nothing changed otherwise. One user's server restarts any."""
        if current_caller().owner is None:
            return
        if self.sessions.host_holder(key) is not None:
            raise being_recorded(args.name, args.project_root)
        overwrite = ctx.policy is not None and ctx.policy.overwrite_flows
        mine = previous is not None or self.sessions.recorded_here(key)
        if not mine and not overwrite and await asyncio.to_thread(os.path.lexists, key):
            raise not_yours(args.name, args.project_root, flow_file)

    async def _count_steps(self, session: RecordingSession) -> int | None:
        try:
            return len((await parse_flow_async(await self._text(session))).steps)
        except ArgentError:
            return None

    # -- flow-add-echo -------------------------------------------------------------------------

    async def add_echo(self, args: AddEchoArgs, ctx: ToolContext) -> dict[str, Any]:
        session = self._session(args.name, args.project_root)
        async with session.order:
            text, count = await self._append(session, EchoStep(args.message), tool_ran=False)
        return {
            "message": ECHO_ADDED.format(name=args.name),
            "stepCount": count,
            "savedTo": self._saved_to(session, text),
        }

    # -- flow-add-step -------------------------------------------------------------------------

    async def add_step(self, args: AddStepArgs, ctx: ToolContext) -> dict[str, Any]:
        session = self._session(args.name, args.project_root)
        if args.command in RECORDING_TOOLS:
            raise RecordingError(NOT_A_STEP.format(command=args.command), error_code=FLOW_RECORDING_REFUSED)
        if is_directive(args.command):
            return await self._add_directive(session, args, ctx)
        refusal = not_recorded(args.command) if self.registry.find(args.command) is None else None
        if refusal is not None:
            raise refusal
        call_args = parse_step_args(args.args)
        if args.delay_ms is not None and args.delay_ms < 0:
            raise InvalidToolInputError(DELAY_NEGATIVE.format(value=args.delay_ms))
        if self.registry.find(args.command) is None:  # before anything runs: what exists instead
            raise self._unknown(args.command)
        link = StepLink.of(session, ctx, args.project_root)
        async with session.order:
            self._current(session, tool_ran=False)
            plan = await self._plan(session, args.command, call_args, args.delay_ms, link)
            self._check_replayable(plan, link)
            prepared = await self._check_appendable(session, plan.step)
            if args.delay_ms and await sleep_or_abort(ctx.abort, args.delay_ms / 1000):
                raise RecordingError(ABORTED_BEFORE_RUN.format(command=plan.command))
            result, baseline_writes = await self._run_step(session, plan, ctx)
            if link.refuse and plan.command == FLOW_EXECUTE:
                _check_nested_passed(result)
            _note_device(session, plan.command, call_args, result)
            text, count = await self._append(session, plan.step, tool_ran=True, prepared=prepared)
        message = STEP_ADDED.format(name=args.name) + "".join(f" — {w}" for w in plan.warnings)
        out: dict[str, Any] = {
            "message": message,
            "toolResult": result,
            "stepCount": count,
            "recorded": summarize_step(count, plan.step),
            "savedTo": self._saved_to(session, text),
        }
        if baseline_writes:
            out["baselineWrites"] = baseline_writes
        return out

    def _unknown(self, command: str) -> InvalidToolInputError:
        tools = [spec.name for spec in self.registry if spec.name not in RECORDING_TOOLS]
        return unknown_command(command, tools, did_you_mean(command, [*RECORDABLE_DIRECTIVES, *tools]))

    # -- flow-add-step of a directive ------------------------------------------------------------

    async def _add_directive(
        self, session: RecordingSession, args: AddStepArgs, ctx: ToolContext
    ) -> dict[str, Any]:
        """Run a directive as a replay runs it, on the recording's device; record it when it passed."""
        command = args.command
        if args.delay_ms is not None:
            raise InvalidToolInputError(DIRECTIVE_DELAY.format(command=command))
        value = directive_value(command, args.args)
        if command == UPLOAD:
            if session.client_kept:
                raise _refused(DIRECTIVE_FILES_OVER_LINK.format(command=command))
            try:
                value = portable_upload(
                    value, project_root=session.project_root, flow_file=session.flow_file, on_host=True
                )
            except ValueError as exc:
                raise InvalidToolInputError(UPLOAD_REFUSED.format(reason=exc)) from None
        step = live = await parse_directive(command, value)
        warnings: list[str] = []
        if isinstance(step, LaunchStep):
            step, warning = portable_launch(
                step,
                project_root=session.project_root,
                flow_file=session.flow_file,
                on_host=not session.client_kept,
            )
            warnings.extend([warning] if warning else [])
            if not session.client_kept:
                live = step  # runs as its replay will; a client's path cannot resolve on this host
        link = StepLink.of(session, ctx, args.project_root)
        if session.client_kept and isinstance(step, SnapshotStep):
            raise _refused(DIRECTIVE_FILES_OVER_LINK.format(command=command))
        async with session.order:
            self._current(session, tool_ran=False)
            prepared = await self._check_appendable(session, step)
            where = await self._directive_run(session, link, ctx)
            device, booted = await self._directive_device(session, step, args.device)
            outcome = await run_directive(live, where, device, ctx.abort)
            report = outcome.report
            if report.status != "pass":
                if booted is not None and self.devices is not None:
                    await self.devices.stop(booted.id)  # a launch that did not open its page leaves nothing
                raise RecordingError(did_not_pass(step.summary(), report))
            if outcome.device is not None:
                session.device = outcome.device.id
            text, count = await self._append(session, step, tool_ran=True, prepared=prepared)
        if report.warning:
            warnings.append(report.warning)
        out: dict[str, Any] = {
            "message": STEP_ADDED.format(name=args.name) + "".join(f" — {w}" for w in warnings),
            "stepCount": count,
            "recorded": summarize_step(count, step),
            "savedTo": self._saved_to(session, text),
            "device": session.device,
            "report": report,
        }
        return out

    async def _directive_run(
        self, session: RecordingSession, link: StepLink, ctx: ToolContext
    ) -> DirectiveRun:
        """The files, tools and device directives of a recorded directive: the recording's own file is
        the run's root, so a relative path resolves as it will in a replay of this file."""
        from argent.tools.invoker import RegistryInvoker

        files: Any
        if session.client_kept:
            files = MemberFlowFiles.for_root(session.flow_file, session.flow_file, LISTED, b"", link.members)
            root = files.root
        else:
            files = ctx.policy.disk_files() if ctx.policy is not None else DiskFlowFiles()
            root = await files.locate(session.flow_file)
        return DirectiveRun(
            files=files,
            root=root,
            name=session.name,
            project_root=session.project_root,
            tools=RegistryInvoker(self.registry, ctx.policy),
            directives=directives_for(ctx, self.artifacts_dir),
            budget=ctx.budget,
        )

    async def _directive_device(
        self, session: RecordingSession, step: Step, named: str | None
    ) -> tuple[Device, Device | None]:
        """The device a directive runs on, and the one booted for it (a launch with none known):
        ``device`` as given, else the recording's last device, else a fresh chromium for a launch,
        else the one booted device."""
        if self.devices is None:
            raise DeviceResolutionError(NO_DEVICE_FOR_DIRECTIVE.format(reason=NO_DEVICES, command=step.kind))
        if named:
            return await self.devices.get(named), None
        if session.device is not None:
            try:
                return await self.devices.get(session.device), None
            except DeviceResolutionError:
                session.device = None  # stopped since: resolve afresh
        if isinstance(step, LaunchStep):
            engine = launched_engine(step, None)
            if engine is None and step.web_target() is not None:
                engine = DEFAULT_ENGINE
            if engine is not None:
                booted = await self.devices.boot(engine.platform)
                return booted, booted
        try:
            return await detect_device(self.devices, None), None
        except DeviceResolutionError as exc:
            raise DeviceResolutionError(
                NO_DEVICE_FOR_DIRECTIVE.format(reason=exc.message, command=step.kind)
            ) from None

    def _check_replayable(self, plan: StepPlan, link: StepLink) -> None:
        """Over a link, refuse before anything runs a step that a replay over a link rejects, and the
        steps whose files a client older than this tool-server did not send."""
        if not link.refuse or not isinstance(plan.step, ToolStep):
            return
        command, args = plan.command, plan.step.args
        if command == FLOW_EXECUTE:
            if nested_flow_ref(args) is None:
                raise _refused(LINK_REFUSED.format(command=command, reason=NESTED_REASON))
            if link.older_client:
                raise _refused(OLDER_CLIENT_REFUSED.format(what=OLDER_NESTED))
            return
        spec = self.registry.get(command)
        files, others = classify_file_inputs(spec.file_inputs, args)
        if others:
            reason = FILE_INPUT_REASON.format(why=others[0].why)
            raise _refused(LINK_REFUSED.format(command=command, reason=reason))
        if files and link.older_client:
            names = ", ".join(f.name for f in files)
            raise _refused(
                OLDER_CLIENT_REFUSED.format(what=OLDER_FILE_ARGUMENT.format(command=command, names=names))
            )

    async def _run_step(self, session: RecordingSession, plan: StepPlan, ctx: ToolContext) -> tuple[Any, Any]:
        """Run the step's tool; its result and, for a flow run over a link, the baselines it wrote."""
        if plan.members is None:
            sub_ctx = ToolContext(
                abort=ctx.abort,
                emit_progress=ctx.emit_progress,
                linked=ctx.linked,
                policy=ctx.policy,
                budget=ctx.budget,
            )
            return await self.registry.invoke(plan.command, plan.args, sub_ctx), None
        if plan.command == FLOW_EXECUTE:
            files = nested_run_files(plan.args, plan.members)
            sub_ctx = ToolContext(
                abort=ctx.abort,
                emit_progress=ctx.emit_progress,
                linked=True,
                flow_files={"flow_file": files},
                policy=ctx.policy,
                budget=ctx.budget,
            )
            result = await self.registry.invoke(plan.command, plan.args, sub_ctx)
            writes = None
            if isinstance(result, FlowRunResult) and result.baseline_writes:
                # The step's result carries them, as a run's does; the client writes them once.
                writes, result.baseline_writes = result.baseline_writes, None
            return result, writes
        invoker = MemberToolInvoker(
            self.registry,
            MemberFlowFiles(_NO_ROOT, b"", plan.members),
            policy=ctx.policy,
            file_input_dirs=self.file_input_dirs,
        )
        call = ToolCallContext(
            device=None, platform=None, abort=ctx.abort, project_root=None, flow=session.name
        )
        return (await invoker.invoke(plan.command, plan.args, call)).result, None

    async def _plan(
        self,
        session: RecordingSession,
        command: str,
        args: dict[str, Any],
        delay_ms: int | None,
        link: StepLink,
    ) -> StepPlan:
        if command == FLOW_EXECUTE:
            return await self._plan_flow_execute(session, args, delay_ms, link)
        if command in OPENS_A_PAGE and delay_ms is None:
            launch = _launch_of(args)
            if launch is not None:
                launch, warning = portable_launch(
                    launch,
                    project_root=session.project_root,
                    flow_file=session.flow_file,
                    on_host=not session.client_kept,
                )
                return StepPlan(command, args, launch, (warning,) if warning else ())
        if command == KEYBOARD and delay_ms is None:
            press = _press_of(args)
            if press is not None:
                return StepPlan(command, args, press)
        if (
            command == GESTURE_TAP
            and delay_ms is None
            and isinstance(args.get("udid"), str)
            and _number(args.get("x"))
            and _number(args.get("y"))
        ):
            return await self._plan_tap(args)
        return StepPlan(
            command, args, ToolStep(command, strip_device_args(args), delay_ms), members=link.members
        )

    async def _plan_tap(self, args: dict[str, Any]) -> StepPlan:
        """A tap by selector when the screen offers one that lands on the same point (read before the
        tap); else by coordinates, with the reason."""
        x, y = args["x"], args["y"]
        times = _tap_times(args)
        selector: Selector | None = None
        warning: str | None = WARN_NO_DEVICES
        if self.devices is not None:
            from argent.tools.recording_capture import capture_tap_selector

            selector, warning = await capture_tap_selector(self.devices, args["udid"], x, y)
        target = selector if selector is not None else Point(x, y)
        return StepPlan(GESTURE_TAP, args, TapStep(target, times), (warning,) if warning else ())

    async def _plan_flow_execute(
        self, session: RecordingSession, args: dict[str, Any], delay_ms: int | None, link: StepLink
    ) -> StepPlan:
        members = link.members
        if args.get("flow_path") is not None and args.get("name") is None:
            if members is not None:
                args = _member_sibling_by_flow_path(session, link, members, args)
            elif session.client_kept:
                if link.older_client and _beside_as_spelled(session, args["flow_path"]):
                    raise _refused(OLDER_CLIENT_REFUSED.format(what=OLDER_SIBLING_PATH))
                raise _flow_path_refused(args["flow_path"], NOT_BESIDE.format(dir=_spelled_dir(session)))
            else:
                args = await asyncio.to_thread(_sibling_by_flow_path, session, args)
        raw = StepPlan(
            FLOW_EXECUTE, args, ToolStep(FLOW_EXECUTE, strip_device_args(args), delay_ms), members=members
        )
        name = args.get("name")
        if not isinstance(name, str) or not name:
            return evolve(raw, warnings=(WARN_NO_FLOW_NAME,))
        root = args.get("project_root")
        if (
            delay_ms is not None
            or not is_safe_flow_name(name)
            or not isinstance(root, str)
            or not os.path.isabs(root)
        ):
            return raw  # the run refuses a bad name or root with its own words
        if members is not None:
            warning = _member_sibling_warning(session, link, members, name, root)
        elif session.client_kept:
            return raw  # an older client: refused before anything runs
        else:
            warning = await asyncio.to_thread(_sibling_warning, session, name, root)
        if warning is not None:
            return evolve(raw, warnings=(warning,))
        return evolve(raw, step=RunStep(f"{name}.yaml"))

    # -- flow-add-script -----------------------------------------------------------------------

    async def add_script(self, args: AddScriptArgs, ctx: ToolContext) -> dict[str, Any]:
        session = self._session(args.name, args.project_root)
        if ctx.linked or session.client_kept:
            raise RecordingError(SCRIPT_OVER_LINK, error_code=FLOW_RECORDING_REFUSED)
        step = ScriptStep(
            args.path,
            tuple(args.args or ()),
            args.timeout,
            short=not args.args and args.timeout is None,
        )
        async with session.order:
            self._current(session, tool_ran=False)
            prepared = await self._check_appendable(session, step)
            await self._run_script(session, step, args.device, ctx)
            text, count = await self._append(session, step, tool_ran=True, prepared=prepared)
        return {
            "message": SCRIPT_ADDED.format(name=args.name),
            "stepCount": count,
            "recorded": summarize_step(count, step),
            "savedTo": self._saved_to(session, text),
        }

    async def _run_script(
        self, session: RecordingSession, step: ScriptStep, device_id: str | None, ctx: ToolContext
    ) -> None:
        from argent.runner.script import exec_script
        from argent.tools.invoker import RegistryInvoker

        files = ctx.policy.disk_files() if ctx.policy is not None else DiskFlowFiles()
        ref = await files.locate(session.flow_file)
        device = None
        if device_id:
            if self.devices is None:
                raise RecordingError(f'No device "{device_id}" found — this tool-server has no devices.')
            device = await self.devices.get(device_id)
        run = Run(
            files=files,
            tools=RegistryInvoker(self.registry, ctx.policy),
            root=ref,
            name=session.name,
            device=device,
            project_root=session.project_root,
            abort=ctx.abort,
        )
        status, reason = await exec_script(step, run, ref)
        if status != "pass":
            raise ToolExecutionError(SCRIPT_FAILED.format(reason=reason or RUN_ABORTED))

    # -- flow-finish-recording -----------------------------------------------------------------

    async def finish(self, args: FinishRecordingArgs, ctx: ToolContext) -> dict[str, Any]:
        session = self._session(args.name, args.project_root)
        async with self.sessions.lock(session.key):
            self._current(session, tool_ran=False)
            text = await self._text(session)
            flow = await parse_flow_async(text)  # a broken hand edit: its error, and the recording stays live
            self.sessions.end(session)
        count = len(flow.steps)
        return {
            "message": FINISHED.format(name=args.name, n=count),
            "path": session.flow_file,
            "executionPrerequisite": flow.execution_prerequisite,
            "steps": count,
            "summary": [summarize_step(i, step) for i, step in enumerate(flow.steps, start=1)],
            "flowFile": session.flow_file,
            "savedTo": self._saved_to(session, text),
        }

    # -- registration --------------------------------------------------------------------------

    def specs(self) -> list[ToolSpec[Any]]:
        return [
            ToolSpec(
                name=START_RECORDING,
                description=(
                    "Start recording a flow: creates (or truncates) <project_root>/.argent/flows/<name>.yaml "
                    "as an empty flow. Then drive the app with flow-add-step (each step runs live and is "
                    "recorded when it ran), flow-add-echo, and end with flow-finish-recording."
                ),
                args_type=StartRecordingArgs,
                execute=self.start,
                precheck=self._precheck_start,
                file_inputs=(PROJECT_ROOT_PROBE,),
            ),
            ToolSpec(
                name=ADD_STEP,
                description=(
                    "Run one step live and record it as the next flow step (nothing is recorded when it fails). "
                    "command is a flow directive — "
                    + ", ".join(RECORDABLE_DIRECTIVES)
                    + " — run as a replay "
                    "runs it on the recording's device and recorded as itself, args its value as JSON (type: "
                    '{"into":{"id":"email"},"text":"ada@example.com"}, tap: {"text":"Sign in","role":"button"}, '
                    'press: "Enter", await: {"visible":{"text":"Welcome"}}, launch: {"chromium":"pages/index.html"});'
                    " or a tool, args its arguments, recorded as the tool's description says (open-url and "
                    "boot-device become launch:, a gesture-tap a tap: of a selector that names the element alone, "
                    "a keyboard key or chord press:, a flow beside the recording run:, any other call a tool: "
                    "step). The answer's `recorded` is the line written."
                ),
                args_type=AddStepArgs,
                execute=self.add_step,
                precheck=self._precheck_step,
                file_inputs=(PROJECT_ROOT_STEP_PROBE,),
                long_running=True,
            ),
            ToolSpec(
                name=ADD_ECHO,
                description="Record an echo step: a message the replay prints at this point.",
                args_type=AddEchoArgs,
                execute=self.add_echo,
            ),
            ToolSpec(
                name=ADD_SCRIPT,
                description=(
                    "Run a local script once and record it as a script: step (path relative to the flow "
                    "file). Only where the project's files are: refused over a link."
                ),
                args_type=AddScriptArgs,
                execute=self.add_script,
                precheck=self._precheck_script,
                long_running=True,
            ),
            ToolSpec(
                name=FINISH_RECORDING,
                description="Finish a recording: returns the flow's steps, one summary line each.",
                args_type=FinishRecordingArgs,
                execute=self.finish,
            ),
        ]


def recording_tools(
    registry: ToolRegistry,
    devices: DeviceProvider | None = None,
    file_input_dirs: FileInputDirs | None = None,
    artifacts_dir: str | None = None,
) -> list[ToolSpec[Any]]:
    """The recorder tools, bound to the registry that runs their steps."""
    return Recorder(
        registry, devices=devices, file_input_dirs=file_input_dirs, artifacts_dir=artifacts_dir
    ).specs()


# --------------------------------------------------------------------------------------------
# Blocking helpers (run in a thread)


async def _present_on_host(project_root: str, ctx: ToolContext) -> bool:
    probe = ctx.file_inputs.get("project_root")
    if probe is not None:
        return probe.present_on_host
    return await asyncio.to_thread(os.path.exists, project_root)


def _reset_on_disk(project_root: str, flow_file: str, text: str) -> None:
    make_flows_dir(project_root)
    write_recording(flow_file, text)


def _host_document(flow_file: str, known: FlowDocument) -> FlowDocument:
    """The document of a host recording's file: ``known`` while the file still holds its text."""
    text = read_recording(flow_file)
    return known if text == known.text else FlowDocument.parse(text)


def _append_on_disk(
    flow_file: str, known: FlowDocument, step: Step, prepared: Prepared | None
) -> FlowDocument:
    text = read_recording(flow_file)
    if prepared is not None and prepared[0].text == text:
        document = prepared[1]
    else:
        document = (known if text == known.text else FlowDocument.parse(text)).append(step)
    write_recording(flow_file, document.text)
    return document


def _sibling_warning(session: RecordingSession, name: str, root: str) -> str | None:
    """None when ``<root>/.argent/flows/<name>.yaml`` is a flow beside the recording, spelled as listed."""
    directory = os.path.dirname(session.key)
    if not _same_dir(os.path.join(root, ".argent", "flows"), directory):
        return WARN_OTHER_PROJECT.format(name=name, root=root)
    target = f"{name}.yaml"
    spelling = spelling_of(directory, target)
    if spelling.state == "case_folded":
        return WARN_CASE_FOLDED.format(target=target, actual=spelling.actual)
    if spelling.state == "absent":
        return WARN_UNVERIFIABLE.format(target=target, dir=directory)
    return None


NOT_BESIDE = "it is not beside the recording in {dir}"


def _note_device(session: RecordingSession, command: str, args: Mapping[str, Any], result: Any) -> None:
    """Remember the device a recorded tool call acted on (a directive step later runs there): the
    one it named, the one ``boot-device`` booted; ``stop-device`` of it forgets it."""
    named = next((args[key] for key in DEVICE_ARG_KEYS if isinstance(args.get(key), str)), None)
    if command == STOP_DEVICE:
        if named == session.device:
            session.device = None
        return
    if command == BOOT_DEVICE and isinstance(result, Mapping) and isinstance(result.get("id"), str):
        session.device = result["id"]
    elif named:
        session.device = named


def _check_nested_passed(result: Any) -> None:
    """Over a link, refuse a recorded flow-execute step whose flow did not pass (or did not run)."""
    if isinstance(result, PrerequisiteNotice):
        raise _refused(NESTED_NOT_RUN.format(flow=result.flow))
    if not isinstance(result, FlowRunResult) or result.ok:
        return
    parts = [f"{n} {word}" for n, word in ((result.failed, "failed"), (result.errored, "errored")) if n]
    if result.aborted:
        parts.append("aborted")
    first = next((s for s in result.steps if s.kind != "echo" and s.status in ("fail", "error")), None)
    detail = ", ".join(parts)
    if first is not None:
        detail += f"; first: step {first.index + 1} {first.kind} — {first.reason or first.status}"
    raise _refused(NESTED_NOT_PASSED.format(flow=result.flow, detail=detail))


def _refused(message: str) -> RecordingError:
    return RecordingError(message, error_code=FLOW_RECORDING_REFUSED)


def _flow_path_refused(flow_path: Any, detail: str) -> FlowError:
    return FlowError(
        FLOW_PATH_REFUSED.format(path=flow_path, detail=detail), error_code=FLOW_RECORDING_REFUSED
    )


def _spelled_dir(session: RecordingSession) -> str:
    return os.path.dirname(session.flow_file)


def _beside_as_spelled(session: RecordingSession, flow_path: Any) -> bool:
    """Whether ``flow_path`` names a file in the recording's directory as the caller spells it."""
    return isinstance(flow_path, str) and posixpath.normpath(posixpath.dirname(flow_path)) == _spelled_dir(
        session
    )


def _flow_path_name(flow_path: Any) -> tuple[str, str]:
    """``(basename, flow name)`` of a flow_path a recording could name as a sibling, or refused."""
    if not isinstance(flow_path, str) or not os.path.isabs(flow_path):
        raise _flow_path_refused(flow_path, "it is not an absolute path")
    if has_dotdot(flow_path):
        raise _flow_path_refused(flow_path, 'it has a ".." segment')
    base = os.path.basename(flow_path)
    if not base.endswith(".yaml"):
        lower = base.lower().endswith(".yaml")
        detail = "it must end in the lowercase .yaml extension" if lower else "it does not end in .yaml"
        raise _flow_path_refused(flow_path, detail)
    stem = base[: -len(".yaml")]
    if not is_safe_flow_name(stem):
        raise _flow_path_refused(flow_path, f'"{stem}" is not a valid flow name')
    return base, stem


def _step_root(flow_path: str, args: Mapping[str, Any]) -> str:
    root = args.get("project_root")
    if not isinstance(root, str) or not os.path.isabs(root):
        raise _flow_path_refused(flow_path, "it comes without an absolute project_root")
    return root


def _named_instead(args: Mapping[str, Any], stem: str) -> dict[str, Any]:
    out = {key: value for key, value in args.items() if key not in ("flow_path", "flow_file")}
    out["name"] = stem
    return out


def _sibling_by_flow_path(session: RecordingSession, args: dict[str, Any]) -> dict[str, Any]:
    """A flow_path flow-execute rewritten to name the flow beside the (host) recording, or refused."""
    flow_path = args["flow_path"]
    base, stem = _flow_path_name(flow_path)
    directory = os.path.dirname(session.key)
    if not _same_dir(os.path.dirname(flow_path), directory):
        raise _flow_path_refused(flow_path, NOT_BESIDE.format(dir=_spelled_dir(session)))
    root = _step_root(flow_path, args)
    if not _same_dir(os.path.join(root, ".argent", "flows"), directory):
        detail = f'its project_root "{root}" is not the project of the recording ({session.project_root})'
        raise _flow_path_refused(flow_path, detail)
    spelling = spelling_of(os.path.dirname(flow_path), base)
    if spelling.state == "case_folded":
        detail = f'this filesystem lists "{base}" as "{spelling.actual}" — pass the on-disk spelling'
        raise _flow_path_refused(flow_path, detail)
    if spelling.state == "absent":
        raise _flow_path_refused(flow_path, f'no file named "{base}" is beside the recording')
    return _named_instead(args, stem)


# --------------------------------------------------------------------------------------------
# A client-kept recording: the step's files are the members the call brought


def _flow_key(project_root: str, name: str) -> str:
    return f"{project_root}/.argent/flows\0{name}.yaml"


def _recording_member(session: RecordingSession, link: StepLink, members: MemberStore) -> Member | None:
    member = members.flow(_flow_key(link.call_root, session.name))
    return member if member is not None and member.canonical else None


def _member_sibling_by_flow_path(
    session: RecordingSession, link: StepLink, members: MemberStore, args: dict[str, Any]
) -> dict[str, Any]:
    """A flow_path flow-execute rewritten to name the flow beside the client's recording, or refused:
    the client sent the file by the recording's directory when it is there."""
    flow_path = args["flow_path"]
    base, stem = _flow_path_name(flow_path)
    recording = _recording_member(session, link, members)
    sent = members.flow(f"{link.call_root}/.argent/flows\0{base}")
    if (
        recording is None
        or sent is None
        or posixpath.dirname(sent.canonical or "") != posixpath.dirname(recording.canonical or "")
    ):
        raise _flow_path_refused(flow_path, NOT_BESIDE.format(dir=_spelled_dir(session)))
    root = _step_root(flow_path, args)
    named = members.flow(_flow_key(root, stem))
    if named is None or named.canonical != sent.canonical:
        detail = f'its project_root "{root}" is not the project of the recording ({session.project_root})'
        raise _flow_path_refused(flow_path, detail)
    if sent.spelled.state == "case_folded":
        detail = f'the client lists "{base}" as "{sent.spelled.actual}" — pass the on-disk spelling'
        raise _flow_path_refused(flow_path, detail)
    if sent.data is None:
        raise _flow_path_refused(flow_path, f'no file named "{base}" is beside the recording')
    return _named_instead(args, stem)


def _member_sibling_warning(
    session: RecordingSession, link: StepLink, members: MemberStore, name: str, root: str
) -> str | None:
    """None when the named flow is the file beside the client's recording, spelled as listed."""
    target = f"{name}.yaml"
    recording = _recording_member(session, link, members)
    named = members.flow(_flow_key(root, name))
    beside = None
    if recording is not None and recording.canonical:
        beside = members.flow(f"{posixpath.dirname(recording.canonical)}\0{target}")
    if recording is None or named is None or beside is None:
        return WARN_UNVERIFIABLE.format(target=target, dir=_spelled_dir(session))
    if beside.canonical != named.canonical:
        return WARN_OTHER_PROJECT.format(name=name, root=root)
    if beside.spelled.state == "case_folded":
        return WARN_CASE_FOLDED.format(target=target, actual=beside.spelled.actual)
    if beside.data is None:
        return WARN_UNVERIFIABLE.format(target=target, dir=_spelled_dir(session))
    return None


def nested_run_files(args: Mapping[str, Any], members: MemberStore) -> MemberFlowFiles:
    """The files of a recorded flow-execute step's run: the named flow the client sent, and the rest
    of the call's members (its fragments, nested flows, baselines and tool files)."""
    name, root = args.get("name"), args.get("project_root")
    assert isinstance(name, str) and isinstance(root, str)
    assert_safe_flow_name(name)
    path = f"{root}/.argent/flows/{name}.yaml"
    member = members.flow(_flow_key(root, name))
    if member is None:
        raise ToolExecutionError(NO_MEMBER.format(path=path))
    canonical = member.canonical or path
    if member.data is None:
        reason = member.error if member.state == "refused" else None
        raise ToolExecutionError(reason or enoent_message(canonical))
    return MemberFlowFiles.for_root(path, canonical, member.spelled, member.data, members)


_NO_ROOT = FlowRef(key="", path="", canonical="")
