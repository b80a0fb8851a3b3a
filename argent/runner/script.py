"""The `script:` step: run a local program beside the flow, pass on exit 0.

The script runs in a process group of its own, so a timeout, an abort or the end of the
step takes down everything it started: no process outlives its step.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from typing import Protocol, runtime_checkable

from argent.devices.deferred import DeferredDevice
from argent.devices.registry import ENGINES, engine_named
from argent.flows.model import ScriptStep
from argent.limits import DEFAULT_SCRIPT_TIMEOUT_MS, MAX_SCRIPT_STDERR_TAIL
from argent.runner.files import FlowRef
from argent.runner.report import StepStatus
from argent.runner.run import RUN_ABORTED, Run, StackEntry, StepLoop, ToolInvoker, line, push_leaf

SCRIPT_NOT_LOCAL = "script: steps run only where the flow's files are (co-located runs)"

#: How long the stderr reader may take to reach end-of-file once the process group is gone.
_DRAIN_GRACE_S = 2.0

_INTERPRETERS: dict[str, tuple[str, ...]] = {
    ".py": (sys.executable,),
    ".mjs": ("node",),
    ".js": ("node",),
    ".cjs": ("node",),
    ".sh": ("sh",),
}


@runtime_checkable
class ScriptGate(Protocol):
    """Files whose owner may switch `script:` steps off (a tool-server's ``scripts: false``)."""

    @property
    def script_refusal(self) -> str | None: ...


class ScriptHandler:
    """`script:` — one line: pass on exit 0, else why not."""

    def needs_device(self, step: ScriptStep, tools: ToolInvoker, platform_known: bool) -> bool:
        return False

    async def execute(self, loop: StepLoop, run: Run, step: ScriptStep, depth: int, top: StackEntry) -> None:
        t0 = time.monotonic()
        status, reason = await exec_script(step, run, top.ref)
        await push_leaf(run, line(run, step, status, top.display, depth, t0, reason=reason))


def script_command(path: str) -> list[str]:
    """The argv that runs ``path``: by its extension, else the file itself."""
    ext = os.path.splitext(path)[1].lower()
    return [*_INTERPRETERS.get(ext, ()), path]


def _format_ms(ms: float) -> str:
    return str(int(ms)) if float(ms).is_integer() else str(ms)


class _ScriptProtocol(asyncio.SubprocessProtocol):
    """Keeps the tail of stderr; signals the script's own exit apart from its pipes closing
    (a background child that inherited stderr may hold the pipe open after the script exits)."""

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.keep = chars * 4  # UTF-8 takes at most four bytes a character
        self.buf = bytearray()
        self.exited = asyncio.Event()
        self.closed = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.buf += data.encode() if isinstance(data, str) else data
        if len(self.buf) > 2 * self.keep:
            del self.buf[: len(self.buf) - self.keep]

    def process_exited(self) -> None:
        self.exited.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed.set()

    def stderr_tail(self) -> str:
        return bytes(self.buf[-self.keep :]).decode("utf-8", errors="replace")[-self.chars :].strip()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _environment(run: Run) -> dict[str, str]:
    env = dict(os.environ)
    device = run.device
    env["ARGENT_DEVICE"] = device.id if device is not None else ""
    env["ARGENT_PROJECT_ROOT"] = run.project_root or ""
    for each in ENGINES:
        env.pop(each.endpoint_env, None)
        if each.session_env:
            env.pop(each.session_env, None)
    endpoint = getattr(device, "endpoint", None) if device is not None else None
    engine = engine_named(device.platform) if device is not None else None
    if endpoint and engine is not None:
        env[engine.endpoint_env] = str(endpoint)
        session = getattr(device, "endpoint_session", None)
        if engine.session_env and session:
            env[engine.session_env] = str(session)
    return env


async def _look_up_device(run: Run) -> None:
    """An explicit device not looked up yet is looked up now, so the script gets ARGENT_CDP_URL
    when it answers (a script may drive it); a script that never uses it still runs when nothing
    answers there."""
    if isinstance(run.device, DeferredDevice) and run.device.connected is None:
        with contextlib.suppress(Exception):
            await run.device.resolve()


async def exec_script(step: ScriptStep, run: Run, containing: FlowRef) -> tuple[StepStatus, str | None]:
    """Run one `script:` step; its status and reason."""
    if isinstance(run.files, ScriptGate) and run.files.script_refusal is not None:
        return "error", run.files.script_refusal
    path = run.files.local_path(containing, step.path)
    if path is None:
        return "error", SCRIPT_NOT_LOCAL
    shown = step.path
    if not os.path.isfile(path):
        return "fail", f"script {shown} was not found: no file at {path}"
    if run.abort.is_set():
        return "skip", RUN_ABORTED
    await _look_up_device(run)
    argv = [*script_command(path), *(str(arg) for arg in step.args)]
    timeout_ms = step.timeout_ms if step.timeout_ms is not None else DEFAULT_SCRIPT_TIMEOUT_MS
    root = run.project_root
    cwd = root if root and os.path.isdir(root) else os.path.dirname(path)
    try:
        transport, protocol = await _spawn(argv, cwd=cwd, env=_environment(run))
    except OSError as exc:
        return "fail", _start_failure(shown, argv[0], exc)

    exited = asyncio.create_task(protocol.exited.wait())
    aborter = asyncio.create_task(run.abort.wait())
    finished = aborted = False
    try:
        done, _ = await asyncio.wait(
            {exited, aborter}, timeout=timeout_ms / 1000.0, return_when=asyncio.FIRST_COMPLETED
        )
        finished = exited in done
        aborted = aborter in done
    finally:
        exited.cancel()
        aborter.cancel()
        # Always: the script's own children die with it, whatever ended the step.
        _kill_group(transport.get_pid())
        await asyncio.shield(_settle(transport, protocol))

    if not finished:
        if aborted:
            return "skip", RUN_ABORTED
        return "fail", f"script {shown} did not finish within {_format_ms(timeout_ms)}ms"
    code = transport.get_returncode()
    if code == 0:
        return "pass", None
    return "fail", _exit_failure(shown, code, protocol.stderr_tail())


async def _spawn(
    argv: list[str], *, cwd: str, env: dict[str, str]
) -> tuple[asyncio.SubprocessTransport, _ScriptProtocol]:
    """Start the script in a session of its own (so its whole group can be ended); stderr kept."""
    loop = asyncio.get_running_loop()
    spawn = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: _ScriptProtocol(MAX_SCRIPT_STDERR_TAIL),
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Cancelled while the script was starting: it may run already, with children of its own
        # holding its stderr open. Let the start finish, then end its whole group.
        with contextlib.suppress(BaseException):
            started, started_protocol = await spawn
            _kill_group(started.get_pid())
            await _settle(started, started_protocol)
        raise


def _start_failure(shown: str, program: str, exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"script {shown} could not start: {program} was not found"
    if isinstance(exc, PermissionError):
        return (
            f"script {shown} could not start: it is not executable — make it executable, or give it a "
            ".py, .sh, .mjs, .js or .cjs extension"
        )
    return f"script {shown} could not start: {exc.strerror or exc}"


def _exit_failure(shown: str, code: int | None, stderr: str) -> str:
    if code is not None and code < 0:
        try:
            what = f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            what = f"was killed by signal {-code}"
    else:
        what = f"exited with code {code}"
    return f"script {shown} {what}" + (f": {stderr}" if stderr else "")


async def _settle(transport: asyncio.SubprocessTransport, protocol: _ScriptProtocol) -> None:
    """Let the killed group's pipes close (the process is reaped by then), then release the transport."""
    try:
        await asyncio.wait_for(protocol.closed.wait(), _DRAIN_GRACE_S)
    except TimeoutError:
        pass
    finally:
        transport.close()
