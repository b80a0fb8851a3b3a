"""The ``debugger-*`` tools on a browser device: upstream's JS-runtime debugger (Hermes over Metro for
React Native) becomes the page's own script engine over the device's protocol session — an evaluation
in the active tab (``WebPage.run_script``), and the console calls the device recorded
(``WebPage.console``, a bounded ring)."""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import tempfile
from typing import Any

from attrs import frozen

from argent import limits
from argent.devices.base import Capability, DeviceError, DeviceProvider
from argent.devices.registry import engine_named, lacks
from argent.devices.web.page import WebPage, lacking
from argent.devices.web.recorders import ConsoleRing, log_lines
from argent.errors import DeviceResolutionError, ToolExecutionError
from argent.tools.args import arg
from argent.tools.registry import ToolContext, ToolSpec
from argent.tools.web.common import DEVICE_ID_DOC, PORT_DOC, metro_port, page_device, unsupported, web_spec

ENABLED_DOMAINS = ["Page", "Inspector", "Network", "Runtime"]
UNREACHABLE_GUIDANCE = (
    "The app's CDP endpoint could not be reached (or did not answer like CDP — see detail). Make sure the "
    "device is running (list-devices; boot-device boots one, or start Chromium with --remote-debugging-port), "
    "then retry once."
)
LOG_FILE_NAME = "argent-console.log"
#: How long debugger-status waits for the page's count of scripts.
STATUS_TIMEOUT_SECONDS = 2.0


ON_CHROMIUM = (
    " On a browser device (Chromium over CDP, Firefox over WebDriver BiDi) it works on the page's own script "
    "engine over the device's protocol session"
)
CONNECT_DOC = (
    "Connect to a JS runtime CDP debugger."
    + ON_CHROMIUM
    + " (the active tab); port is ignored. Returns { port, "
    "projectRoot (empty), deviceName, appName, logicalDeviceId, isNewDebugger, connected }."
)
STATUS_DOC = (
    "JS runtime debugger status." + ON_CHROMIUM + ". Never fails when the device is unreachable: answers "
    '{ status: "connected", port, projectRoot, deviceName, appName, logicalDeviceId, isNewDebugger, connected, '
    "loadedScripts (the page's <script> elements), enabledDomains, sourceMapReady } or "
    '{ status: "not_connected", connected: false, reason, detail, guidance }.'
)
EVALUATE_DOC = (
    "Execute JavaScript in the app's JS runtime via CDP."
    + ON_CHROMIUM
    + ": an evaluation in the active tab, "
    "promises awaited, the value returned by value (cyclic objects fail). Returns { result, deviceName, appName, "
    "logicalDeviceId }; fails if the expression throws."
)
LOG_REGISTRY_DOC = (
    "A summary of the console logs captured from the app's JS runtime."
    + ON_CHROMIUM
    + ": the console calls of "
    "the device's tabs since it was booted or attached. Returns { status, file (the kept entries, one a line), "
    "totalEntries, byLevel, fileSizeBytes, clusters, deviceName, appName, logicalDeviceId }, or "
    '{ status: "not_connected", … } when the device cannot be reached.'
)


@frozen
class DebuggerArgs:
    device_id: str = arg(doc=DEVICE_ID_DOC)
    port: Any = arg(None, doc=PORT_DOC)


@frozen
class EvaluateArgs:
    device_id: str = arg(doc=DEVICE_ID_DOC)
    expression: str = arg(doc="JavaScript expression to evaluate in the app runtime (the active tab's page).")
    port: Any = arg(None, doc=PORT_DOC)


def app_name(device: WebPage) -> str:
    """What upstream calls the app: the browser (``Chromium``, ``Firefox``)."""
    engine = engine_named(device.platform)
    return engine.label if engine is not None else device.platform


def identity(device: WebPage) -> dict[str, Any]:
    name = app_name(device)
    return {"deviceName": name, "appName": name, "logicalDeviceId": device.id}


def connection(device: WebPage) -> dict[str, Any]:
    """upstream's connection info, as its Chromium debugger reports it (no Metro project here)."""
    return {
        "port": device.port,
        "projectRoot": "",
        **identity(device),
        "isNewDebugger": True,
        "connected": device.alive,
    }


def not_connected(exc: Exception) -> dict[str, Any]:
    return {
        "status": "not_connected",
        "connected": False,
        "reason": "cdp_unreachable",
        "detail": str(exc),
        "guidance": UNREACHABLE_GUIDANCE,
    }


async def reachable(devices: DeviceProvider, device_id: str, tool: str) -> WebPage:
    """The device, when its page session is alive; else DeviceError/DeviceResolutionError."""
    device = await page_device(devices, device_id, tool)
    if not device.alive:
        raise DeviceError(device.death or f"The session of {app_name(device)} ({device.id}) is closed.")
    return device


#: Runs the caller's expression (as a script, in the page's global scope: indirect eval, which CDP allows
#: under any CSP), awaits it, and measures its JSON in the page: a result past the limits never crosses
#: the CDP socket, so a page answering a 500 MB string or a deep object costs this server nothing.
BOUNDED_EVALUATE = """(async () => {
  const value = await (0, eval)(%(expression)s);
  if (typeof value === "string" && value.length > %(chars)d) return {kind: "large", size: value.length};
  const text = value === undefined ? undefined : JSON.stringify(value);
  if (text === undefined) return {kind: "undefined"};
  if (text.length > %(chars)d) return {kind: "large", size: text.length};
  let depth = 0, deepest = 0, quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quoted) { if (c === 92) i++; else if (c === 34) quoted = false; }
    else if (c === 34) quoted = true;
    else if (c === 91 || c === 123) { if (++depth > deepest) deepest = depth; }
    else if (c === 93 || c === 125) depth--;
  }
  if (deepest > %(depth)d) return {kind: "deep", depth: deepest};
  return {kind: "json", text};
})()"""
TOO_LARGE = (
    "The expression's result is {size} characters of JSON, more than debugger-evaluate returns "
    "(MAX_EVALUATE_RESULT_CHARS = {limit}). Return a part of it (e.g. .slice(0, 1000)) or a summary "
    "(its length, its keys)."
)
TOO_DEEP = (
    "The expression's result nests {depth} levels deep, more than debugger-evaluate returns "
    "(MAX_EVALUATE_RESULT_DEPTH = {limit}). Return a flatter summary of it."
)


EVALUATE_TIMED_OUT = (
    "The expression ran longer than debugger-evaluate waits (EVALUATE_TIMEOUT_SECONDS = {limit:g}s) and was "
    "terminated; the page answers again. Evaluate something that finishes sooner (e.g. with a bounded loop)."
)


async def evaluate(device: WebPage, expression: str) -> Any:
    """The expression's value, bounded by ``limits.MAX_EVALUATE_RESULT_CHARS`` / ``_DEPTH``; a script
    past ``EVALUATE_TIMEOUT_SECONDS`` is stopped (``WebPage.run_script``)."""
    wrapped = BOUNDED_EVALUATE % {
        "expression": json.dumps(expression),
        "chars": limits.MAX_EVALUATE_RESULT_CHARS,
        "depth": limits.MAX_EVALUATE_RESULT_DEPTH,
    }
    limit = limits.EVALUATE_TIMEOUT_SECONDS
    outcome = await device.run_script(wrapped, timeout=limit)
    if outcome.timed_out:
        raise ToolExecutionError(
            EVALUATE_TIMED_OUT.format(limit=limit), error_code="DEBUGGER_EVALUATE_TIMEOUT"
        )
    if outcome.thrown is not None:
        raise ToolExecutionError(outcome.thrown, error_code="DEBUGGER_EVALUATE_EXPRESSION_THREW")
    value = outcome.value
    answer: dict[str, Any] = value if isinstance(value, dict) else {}
    kind = answer.get("kind")
    if kind == "large":
        message = TOO_LARGE.format(size=answer.get("size"), limit=limits.MAX_EVALUATE_RESULT_CHARS)
        raise ToolExecutionError(message, error_code="DEBUGGER_EVALUATE_RESULT_TOO_LARGE")
    if kind == "deep":
        message = TOO_DEEP.format(depth=answer.get("depth"), limit=limits.MAX_EVALUATE_RESULT_DEPTH)
        raise ToolExecutionError(message, error_code="DEBUGGER_EVALUATE_RESULT_TOO_LARGE")
    text = answer.get("text")
    if not isinstance(text, str) or len(text) > limits.MAX_EVALUATE_RESULT_CHARS:
        return None
    try:
        return await asyncio.to_thread(json.loads, text)
    except (ValueError, RecursionError):
        return None


_PRIVATE_DIRS: list[str] = []


def _private_dir() -> str:
    """This process's own directory (0700, removed at exit) for the log files of devices it did not
    boot: never a predictable name in the shared temp directory, where another user could plant a
    symlink and have page text written over a file of the server's user."""
    if not _PRIVATE_DIRS:
        made = tempfile.mkdtemp(prefix="argent-console-")
        atexit.register(shutil.rmtree, made, True)
        _PRIVATE_DIRS.append(made)
    return _PRIVATE_DIRS[0]


def log_path(device: WebPage) -> str:
    """Where the console log file goes: inside an owned device's profile (removed with it), else this
    process's private directory (a thread: it touches the disk)."""
    if device.profile_dir:
        return os.path.join(device.profile_dir, LOG_FILE_NAME)
    return os.path.join(_private_dir(), f"argent-logs-{device.port}.log")


def _write_log(path: str, data: bytes) -> None:
    """Replace the file at ``path`` with ``data``, never through a symlink."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


async def log_registry(device: WebPage) -> dict[str, Any]:
    log: ConsoleRing = device.console
    entries = list(log.entries)

    def write() -> tuple[str, int]:
        path = log_path(device)
        data = log_lines(entries).encode("utf-8")
        _write_log(path, data)
        return path, len(data)

    path, size = await asyncio.to_thread(write)
    clusters = sorted(log.clusters.values(), key=lambda c: -c.count)[:20]
    return {
        "status": "connected",
        "file": path,
        "totalEntries": log.total,
        "byLevel": dict(log.by_level),
        "fileSizeBytes": size,
        "clusters": [
            {
                "message": c.message,
                "count": c.count,
                "level": c.level,
                "firstId": c.first_id,
                "lastId": c.last_id,
                **({"sourceFile": c.source_file} if c.source_file else {}),
                **({"sourceLine": c.source_line} if c.source_line is not None else {}),
            }
            for c in clusters
        ],
        **identity(device),
    }


def debugger_tools(devices: DeviceProvider) -> list[ToolSpec[Any]]:
    async def connect(args: DebuggerArgs, ctx: ToolContext) -> Any:
        metro_port(args.port)
        return connection(await reachable(devices, args.device_id, "debugger-connect"))

    async def status(args: DebuggerArgs, ctx: ToolContext) -> Any:
        metro_port(args.port)
        try:
            device = await reachable(devices, args.device_id, "debugger-status")
            scripts = (
                await device.run_script("document.scripts.length", timeout=STATUS_TIMEOUT_SECONDS)
            ).value
        except (DeviceError, DeviceResolutionError) as exc:
            return not_connected(exc)
        return {
            "status": "connected",
            **connection(device),
            "loadedScripts": scripts if isinstance(scripts, int) else 0,
            "enabledDomains": list(ENABLED_DOMAINS),
            "sourceMapReady": True,
        }

    async def run_expression(args: EvaluateArgs, ctx: ToolContext) -> Any:
        metro_port(args.port)
        device = await reachable(devices, args.device_id, "debugger-evaluate")
        return {"result": await evaluate(device, args.expression), **identity(device)}

    async def registry(args: DebuggerArgs, ctx: ToolContext) -> Any:
        metro_port(args.port)
        try:
            device = await reachable(devices, args.device_id, "debugger-log-registry")
        except (DeviceError, DeviceResolutionError) as exc:
            return not_connected(exc)
        if lacks(device.platform, Capability.EVENT_LOGS):
            raise unsupported(lacking(device, Capability.EVENT_LOGS, "debugger-log-registry"))
        return await log_registry(device)

    return [
        web_spec("debugger-connect", CONNECT_DOC, DebuggerArgs, connect),
        web_spec("debugger-status", STATUS_DOC, DebuggerArgs, status),
        web_spec("debugger-evaluate", EVALUATE_DOC, EvaluateArgs, run_expression),
        web_spec("debugger-log-registry", LOG_REGISTRY_DOC, DebuggerArgs, registry),
    ]
