"""The policy one call runs under: which tools its token may call, where it may work and read,
whether flows come from this host's disk, whether `script:` steps run.

The tool-server builds one ``CallPolicy`` per call (from its ``--config``, for the caller's token)
and hands it to the tools in ``ToolContext.policy``; every path by which a call reaches a tool or
this host's files consults it: ``ToolRegistry.precheck`` before a tool starts, the `tool:` steps of
a run (through the invokers), and ``PolicyDiskFlowFiles`` for every flow, fragment, nested flow and
baseline a run on this host's disk touches.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
from collections.abc import Hashable, Mapping
from urllib.parse import unquote

from attrs import field, frozen

from argent.devices.caller import DeviceCaller
from argent.errors import LOCAL_FLOWS_DISABLED, SCRIPTS_DISABLED, TOOL_NOT_ALLOWED, PolicyRefusal
from argent.flows.graph import FlowGraph
from argent.flows.references import ScriptFile
from argent.flows.write import STEP_LINE, render_step
from argent.limits import DEFAULT_DEVICES_PER_TOKEN
from argent.runner.files import DiskFlowFiles, FlowFileError, FlowRef
from argent.runner.reach import PreparedRun
from argent.tools.workspace import check_read, check_workspace, may_read, unsafe_directories

NOT_ALLOWED = 'tool "{tool}" is not allowed: guard "{guard}" did not pass'
NEEDS_TOKEN = (
    'needs a token whose tools include "{tool}" (guard "{guard}" did not pass; this token may call: {tools})'
)
NEEDS_SCRIPTS = "needs scripts: true in the tool-server's config (this tool-server runs no scripts)"
NO_LOCAL_FLOWS = (
    "{tool} would read a flow from the tool-server's disk, and this tool-server serves flows only from "
    "the files a client sends (local_flows: false in its config). Link to it (argent link <url>) and "
    "call it with project_root and name: the client sends the flow with the call."
)
NO_SCRIPTS = (
    "This tool-server runs no script: step (scripts: false in its config), and this flow has:\n{lines}\n"
    "Remove the script: steps, or run the flow on a tool-server that allows scripts."
)
NO_SCRIPT_RECORDING = (
    "flow-add-script is refused: this tool-server runs no script (scripts: false in its config). "
    "Record the other steps here, and add the script: step to the flow file by hand."
)
SCRIPT_STEP_REFUSED = "this tool-server runs no script: step (scripts: false in its config)"
SCRIPT_REASON = "scripts are off on this tool-server"


@frozen
class CallPolicy:
    """The rules of one call. The defaults are a server without ``--config``: every tool, anywhere
    safe, flows from disk and scripts allowed; the unsafe directories are refused always."""

    unsafe: Mapping[str, str] = field(factory=unsafe_directories)
    #: Real paths a co-located ``project_root`` (and a file read on this host) must lie under.
    project_roots: tuple[str, ...] = ()
    local_flows: bool = True
    scripts: bool = True
    #: The guard of the caller's token (``token:<name>``) and the tool names or globs it allows.
    guard: str | None = None
    tools: tuple[str, ...] | None = None
    #: Chromium devices the caller may hold at once (``limits.devices_per_token``).
    devices_per_token: int = DEFAULT_DEVICES_PER_TOKEN
    #: With named tokens: may a token restart (truncate) a saved flow it did not record?
    overwrite_flows: bool = False
    _disk_files: list[PolicyDiskFlowFiles] = field(factory=list, init=False, repr=False, eq=False)

    # -- devices ------------------------------------------------------------------------------

    def device_caller(self) -> DeviceCaller:
        """The caller as the devices see it: a named token owns the devices it boots."""
        return DeviceCaller(owner=self.guard, max_devices=self.devices_per_token)

    # -- tools --------------------------------------------------------------------------------

    def allows(self, tool: str) -> bool:
        return self.tools is None or any(fnmatch.fnmatchcase(tool, glob) for glob in self.tools)

    def tool_refusal(self, tool: str) -> PolicyRefusal | None:
        """403 ``TOOL_NOT_ALLOWED`` with the guard's fixed sentence when the token may not call ``tool``."""
        if self.allows(tool):
            return None
        return PolicyRefusal(NOT_ALLOWED.format(tool=tool, guard=self.guard), error_code=TOOL_NOT_ALLOWED)

    def check_tool(self, tool: str) -> None:
        """Raise the refusal of ``tool``; nothing runs."""
        refusal = self.tool_refusal(tool)
        if refusal is not None:
            raise refusal

    def disabled_reason(self, tool: str) -> str | None:
        """Why ``GET /tools`` lists ``tool`` as disabled for this caller: what it needs."""
        if not self.allows(tool):
            return NEEDS_TOKEN.format(
                tool=tool, guard=self.guard, tools=", ".join(self.tools or ()) or "none"
            )
        if tool == "flow-add-script" and not self.scripts:
            return NEEDS_SCRIPTS
        return None

    # -- this host's disk ---------------------------------------------------------------------

    def check_local_flows(self, tool: str) -> None:
        if not self.local_flows:
            raise PolicyRefusal(NO_LOCAL_FLOWS.format(tool=tool), error_code=LOCAL_FLOWS_DISABLED)

    async def check_workspace(self, project_root: str) -> None:
        await asyncio.to_thread(self.check_workspace_sync, project_root)

    def check_workspace_sync(self, project_root: str) -> None:
        """``check_workspace`` in the calling thread (a worker thread: it touches the disk)."""
        check_workspace(project_root, self.unsafe, self.project_roots)

    @property
    def disk_reads(self) -> bool:
        """Whether a call may read files of this host at all: not on a link-only server (no flows
        from its disk) that names no project roots — there is no project on its disk to read."""
        return self.local_flows or bool(self.project_roots)

    async def check_read(self, path: str) -> None:
        await asyncio.to_thread(self.check_read_sync, path)

    def check_read_sync(self, path: str) -> None:
        """``check_read`` in the calling thread (a worker thread: it touches the disk)."""
        check_read(path, self.unsafe, self.project_roots, disk=self.disk_reads)

    def may_read_sync(self, path: str) -> bool:
        """``may_read`` in the calling thread (a worker thread: it touches the disk)."""
        return self.disk_reads and may_read(path, self.unsafe, self.project_roots)

    @property
    def read_rules(self) -> Hashable:
        """What the workspace and read checks depend on besides the file system (the token plays no part)."""
        return (self.project_roots, self.disk_reads, _unsafe_key(self.unsafe))

    def may_load_sync(self, url: str) -> bool:
        """Whether a page may load the ``file:`` URL ``url`` (a navigation, a link, a frame, an image):
        the device asks it of every local file its page requests. In a worker thread (disk)."""
        path = page_path(url, None)
        return path is None or self.may_read_sync(path)

    async def check_page(self, target: str, flow_dir: str | None = None) -> None:
        """A page the browser would read from this host's disk obeys the rules of a file a tool reads
        (``file:///proc/self/environ`` on a screenshot would show the server's secrets)."""
        path = page_path(target, flow_dir)
        if path is not None:
            await self.check_read(path)

    def check_scripts_recording(self) -> None:
        if not self.scripts:
            raise PolicyRefusal(NO_SCRIPT_RECORDING, error_code=SCRIPTS_DISABLED)

    def disk_files(self) -> PolicyDiskFlowFiles:
        """This host's files as this policy lets a call reach them: one object per policy, so the
        precheck and the run of a call share what was read ahead (a call has a policy of its own)."""
        if not self._disk_files:
            self._disk_files.append(PolicyDiskFlowFiles(self))
        return self._disk_files[0]


_URL_NOISE = re.compile(r"[\t\n\r]")
_URL_EDGES = "".join(chr(c) for c in range(0x21))
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_VIEW_SOURCE = "view-source"
#: Targets that read no local file; any other ``x:`` text is a path, as ``resolve_launch_target`` reads it.
_OTHER_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|data:|about:)", re.IGNORECASE)


def _file_url_path(rest: str) -> str:
    """The local path of a ``file:`` URL's remainder, read the way Chromium reads it: backslashes are
    slashes, any number of slashes (or none) may lead, a host (``//localhost``) is dropped."""
    rest = rest.replace("\\", "/")
    rest = re.split(r"[?#]", rest, maxsplit=1)[0]
    if rest.startswith("//"):
        after_host = rest[2:].lstrip("/") if rest.startswith("///") else rest[2:].partition("/")[2]
        rest = after_host
    return "/" + unquote(rest).lstrip("/")


def page_path(target: str, flow_dir: str | None) -> str | None:
    """The file on this host a chromium launch target makes the browser read (a ``file:`` URL in any
    of the spellings Chromium accepts, also behind ``view-source:``, or a path, relative ones beside
    the flow); None for a target that reads no local file."""
    text = _URL_NOISE.sub("", target).strip(_URL_EDGES)
    while (scheme := _SCHEME.match(text)) is not None and scheme.group(1).lower() == _VIEW_SOURCE:
        text = text[scheme.end() :].strip(_URL_EDGES)
    if scheme is not None and scheme.group(1).lower() == "file":
        return _file_url_path(text[scheme.end() :])
    if not text or _OTHER_URL.match(text):
        return None
    path = os.path.expanduser(text)
    if not os.path.isabs(path):
        return os.path.join(flow_dir, path) if flow_dir is not None else None
    return path


#: The unsafe directories of each policy seen, as a set (held with the mapping, so its id stays its own).
_UNSAFE_KEYS: dict[int, tuple[Mapping[str, str], frozenset[tuple[str, str]]]] = {}


def _unsafe_key(unsafe: Mapping[str, str]) -> frozenset[tuple[str, str]]:
    """``unsafe`` as a hashable value, made once per mapping (a server's is fixed when it starts)."""
    kept = _UNSAFE_KEYS.get(id(unsafe))
    if kept is None or kept[0] is not unsafe:
        if len(_UNSAFE_KEYS) >= 64:
            _UNSAFE_KEYS.clear()
        kept = _UNSAFE_KEYS[id(unsafe)] = (unsafe, frozenset(unsafe.items()))
    return kept[1]


class PolicyDiskFlowFiles(DiskFlowFiles):
    """This host's flow files, as a call's policy lets it reach them: every flow, fragment, nested
    flow and baseline is checked before it is touched, and `script:` steps may be switched off.

    ``prepared``: the run the call's checks resolved and walked (its flow and graph), for the run of
    the same call to take (``take_prepared``) rather than resolve again."""

    prepared: PreparedRun | None = None

    def __init__(self, policy: CallPolicy) -> None:
        self.policy = policy

    def take_prepared(self) -> PreparedRun | None:
        prepared, self.prepared = self.prepared, None
        return prepared

    @property
    def script_refusal(self) -> str | None:
        """Why a `script:` step of this run must not run (None: it may)."""
        return None if self.policy.scripts else SCRIPT_STEP_REFUSED

    def _read_rules(self) -> Hashable:
        """The rules of ``_readable_sync`` and the workspace check (the call's token plays no part)."""
        return self.policy.read_rules

    def _readable_sync(self, path: str) -> None:
        """A refused file fails like one the system cannot read: its step reports the refusal."""
        try:
            self.policy.check_read_sync(path)
        except PolicyRefusal as exc:
            raise FlowFileError(exc.message) from None

    def _locate_sync(self, path: str) -> FlowRef:
        self.policy.check_read_sync(path)
        return super()._locate_sync(path)

    def _named_flow_sync(self, project_root: str, name: str) -> FlowRef:
        self.policy.check_workspace_sync(project_root)
        return super()._named_flow_sync(project_root, name)


def refuse_script_steps(graph: FlowGraph[FlowRef]) -> None:
    """Before a run on this host's disk starts: 403 ``SCRIPTS_DISABLED`` when the flow, or a flow it
    reaches through `run:` or a nested flow-execute (its graph, to the depth of a run), has a `script:`
    step."""
    lines = [
        STEP_LINE.format(
            n=edge.n, path=file.handle.canonical, step=render_step(edge.step), reason=SCRIPT_REASON
        )
        for file in graph.traverse()
        for edge in file.edges
        if isinstance(edge.ref, ScriptFile)
    ]
    if lines:
        raise PolicyRefusal(NO_SCRIPTS.format(lines="\n".join(lines)), error_code=SCRIPTS_DISABLED)
