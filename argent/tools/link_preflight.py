"""The preflight of a run over a link: refuse, before the first step, what a link cannot run.

Over a link the runner has only the files the client sent with the call. Before the first
step it checks the flow and every flow member it can reach (`run:` fragments and nested
flows, breadth first, to the depth of a `run:` chain). Each of these stops the run with
``FLOW_FILE_INVALID``, and the error lists every step that caused it:

- a `script:` step;
- a `tool:` step that records a flow;
- a `tool: flow-execute` step that does not name its flow with ``name`` and an absolute
  ``project_root`` without a ``..`` segment;
- a `tool:` step with a file input that is not a file argument (a directory, an app, an output
  directory, a path built from several arguments, a relative path, a file that is not .png/.yaml);
- a refused flow member.

A client that sent no members (older than this tool-server) sent no file but the flow file:
its `run:`, `snapshot:`, nested-flow and file-argument steps are rejected too, and the error
adds what this tool-server runs and that the client needs an update.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from argent.errors import FlowError
from argent.flows.js import js_string
from argent.flows.model import Flow, RunStep, ScriptStep, SnapshotStep, Step, ToolStep, walk_steps
from argent.flows.write import step_to_data
from argent.limits import MAX_RUN_DEPTH
from argent.link.models import FileInputSpec
from argent.link.rules import FLOW_EXECUTE, RECORDING_TOOLS, classify_file_inputs, nested_flow_ref
from argent.runner.files import FlowFiles, FlowRef
from argent.runner.load import read_flow_or_none

HEADER = (
    "This flow cannot run over a link: the tool-server runs a flow only from the files that the client "
    "sends with the call, and these steps need more:"
)
STEP_LINE = "step {n} in {path}: {step} — {reason}"
SCRIPT_REASON = "a replay over a link runs no script: step"
RECORDING_REASON = "a replay over a link records no flow"
NESTED_REASON = (
    "a nested flow-execute over a link must name its flow with name and an absolute project_root "
    "without a .. segment"
)
REFUSED_REASON = "the client did not send the flow: {error}"
OLDER_REASONS = {
    "run": "the client sent no fragments with the call",
    "snapshot": "the client sent no baselines with the call",
    "nested": "the client sent no nested flows with the call",
    "tool": "the client sent no file arguments with the call",
}
OLDER_WHAT = {
    "run": "run: steps for a client that sends their fragments with the call",
    "snapshot": "snapshot: steps for a client that sends their baselines with the call",
    "nested": "tool: flow-execute steps that name a flow with name, for a client that sends those flows with the call",
    "tool": "tool: steps with file arguments for a client that sends them with the call",
}
OLDER_CLIENT = "This tool-server runs {what}. Update the argent CLI or MCP adapter on the client."

#: The file-input specs (wire form) a tool declares; None for a tool this server does not have.
InputsOf = Callable[[str], Iterable[FileInputSpec | Mapping[str, Any]] | None]


class LinkFiles(FlowFiles, Protocol):
    """The files of a call over a link, as the preflight needs them."""

    @property
    def sent_members(self) -> bool:
        """False for a client that sent only the flow file (no members field)."""
        ...

    def refusal(self, ref: FlowRef) -> str | None:
        """The client's reason when the flow member of ``ref`` is refused, else None."""
        ...


# --------------------------------------------------------------------------------------------
# Rendering a step on one line, as flow-style YAML


_PLAIN = re.compile(r"^[A-Za-z0-9_./~@+$-](?:[A-Za-z0-9_./~@+$ :-]*[A-Za-z0-9_./~@+$-])?$")
_RESERVED = frozenset({"true", "false", "null", "yes", "no", "on", "off", "~"})


def _inline(value: Any) -> str:
    if value is None or isinstance(value, bool | int | float):
        return js_string(value)
    if isinstance(value, str):
        plain = (
            _PLAIN.match(value) is not None
            and ": " not in value
            and value.lower() not in _RESERVED
            and not re.fullmatch(r"[-+]?[0-9.]+(e[-+]?[0-9]+)?", value, re.IGNORECASE)
        )
        return value if plain else json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_inline(str(k))}: {_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_inline(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def render_step(step: Step) -> str:
    """A step as one line of flow-style YAML: ``script: { path: ../x.mjs }``, ``run: a.yaml``."""
    data = step_to_data(step)
    if isinstance(step, ScriptStep) and not isinstance(data.get("script"), Mapping):
        data = {"script": {"path": step.path}}
    return ", ".join(f"{key}: {_inline(value)}" for key, value in data.items() if key != "steps")


# --------------------------------------------------------------------------------------------
# The check


class _Preflight:
    def __init__(self, files: LinkFiles, inputs_of: InputsOf) -> None:
        self.files = files
        self.inputs_of = inputs_of
        self.lines: list[str] = []
        self.older: list[str] = []
        self.queue: deque[tuple[FlowRef, Flow, int]] = deque()
        self.seen: set[str] = set()

    def offend(self, n: int, ref: FlowRef, step: Step, reason: str) -> None:
        self.lines.append(STEP_LINE.format(n=n, path=ref.canonical, step=render_step(step), reason=reason))

    def older_client(self, n: int, ref: FlowRef, step: Step, kind: str) -> None:
        self.offend(n, ref, step, OLDER_REASONS[kind])
        if kind not in self.older:
            self.older.append(kind)

    async def reach(self, ref: FlowRef, level: int) -> None:
        """Queue a reached flow member for checking (a missing or unparsable one is the step's to report)."""
        if level > MAX_RUN_DEPTH or ref.canonical in self.seen:
            return
        flow = await read_flow_or_none(self.files, ref)
        if flow is None:
            return
        self.seen.add(ref.canonical)
        self.queue.append((ref, flow, level))

    async def check_file(self, ref: FlowRef, flow: Flow, level: int) -> None:
        members = self.files.sent_members
        for n, step in enumerate(walk_steps(flow.steps), start=1):
            if isinstance(step, ScriptStep):
                self.offend(n, ref, step, SCRIPT_REASON)
            elif isinstance(step, SnapshotStep):
                if not members:
                    self.older_client(n, ref, step, "snapshot")
            elif isinstance(step, RunStep):
                if not members:
                    self.older_client(n, ref, step, "run")
                    continue
                target = await self.files.fragment(ref, step.target)
                refusal = self.files.refusal(target)
                if refusal is not None:
                    self.offend(n, ref, step, REFUSED_REASON.format(error=refusal))
                else:
                    await self.reach(target, level + 1)
            elif isinstance(step, ToolStep):
                await self.check_tool(n, ref, step, level)

    async def check_tool(self, n: int, ref: FlowRef, step: ToolStep, level: int) -> None:
        tool = step.tool if isinstance(step.tool, str) else str(step.tool)
        if tool in RECORDING_TOOLS:
            self.offend(n, ref, step, RECORDING_REASON)
            return
        if tool == FLOW_EXECUTE:
            nested = nested_flow_ref(step.args)
            if nested is None:
                self.offend(n, ref, step, NESTED_REASON)
                return
            if not self.files.sent_members:
                self.older_client(n, ref, step, "nested")
                return
            try:
                target = await self.files.named_flow(nested.project_root, nested.name)
            except Exception:
                return
            refusal = self.files.refusal(target)
            if refusal is not None:
                self.offend(n, ref, step, REFUSED_REASON.format(error=refusal))
            else:
                await self.reach(target, level + 1)
            return
        file_args, others = classify_file_inputs(self.inputs_of(tool), step.args)
        for other in others:
            self.offend(n, ref, step, f"a replay over a link sends only file arguments, and {other.why}")
        if file_args and not self.files.sent_members:
            self.older_client(n, ref, step, "tool")

    def message(self) -> str:
        text = "\n".join([HEADER, *self.lines])
        if self.older:
            what = ", and ".join(OLDER_WHAT[kind] for kind in self.older)
            text += "\n" + OLDER_CLIENT.format(what=what)
        return text


async def check_linked_flow(flow: Flow, ref: FlowRef, files: LinkFiles, inputs_of: InputsOf) -> None:
    """Raise ``FlowError`` (``FLOW_FILE_INVALID``) when the run over a link must not start."""
    check = _Preflight(files, inputs_of)
    check.seen.add(ref.canonical)
    check.queue.append((ref, flow, 1))
    while check.queue:
        current, current_flow, level = check.queue.popleft()
        await check.check_file(current, current_flow, level)
    if check.lines:
        raise FlowError(check.message())
