"""`tool: <name>` (+ `args:`, `delayMs:`) — call a tool of the tool-server. Not validated at parse
time: name, args and delay are kept as written (the run reports what is wrong with them)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from attrs import field, frozen

from argent.flows.canonical import js_truthy
from argent.flows.directives.base import Directive, EntryAt, Nodes
from argent.flows.grammar import Reject, unknown_keys
from argent.flows.js import js_json, js_string, js_to_number
from argent.flows.references import FLOW_EXECUTE, NestedFlow, Reference, ToolFile, ToolFiles
from argent.flows.values import step_line

_OPTIONS: tuple[str, ...] = ("args", "delayMs")


@frozen
class ToolStep:
    """`tool:` steps are not validated at parse time: name, args and delay are kept as written."""

    tool: Any
    args: Any = field(factory=dict, hash=False)
    delay_ms: Any = None
    line: int = step_line()
    kind: ClassVar[str] = "tool"
    executor: ClassVar[str] = "tool"
    #: Whether the tool takes a device is the tool-server's to say: the runner decides.
    on_device: ClassVar[bool] = False

    def label(self) -> str | None:
        return None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"tool": self.tool}
        if self.args is not None and self.args != {}:
            data["args"] = self.args
        if self.delay_ms is not None:
            data["delayMs"] = self.delay_ms
        return data

    def summary(self) -> str:
        delay = ""
        number = js_to_number(self.delay_ms)
        if js_truthy(self.delay_ms) and math.isfinite(number) and number >= 1:
            delay = f" (after {js_string(self.delay_ms)}ms)"
        return f"tool: {js_string(self.tool)} {js_json(self.args)}{delay}"


def parse_entry(nodes: Nodes, at: EntryAt) -> ToolStep:
    entry = at.entry
    extra = [key for key in entry if key not in ("tool", *_OPTIONS)]
    if extra:
        raise Reject(
            f"a `tool` step has {unknown_keys(extra, _OPTIONS)} — a tool step takes only `tool`, `args`, `delayMs`"
        )
    counter = [0]
    name = nodes.plain(entry["tool"], counter)
    args_node = entry.get("args")
    args: Any = {}
    if args_node is not None:
        args = nodes.plain(args_node, counter)
        if args is None:
            args = {}
    delay = nodes.plain(entry["delayMs"], counter) if "delayMs" in entry else None
    nodes.spend_args(counter[0])
    return ToolStep(tool=name, args=args, delay_ms=delay, line=at.line)


def files(step: ToolStep, tools: ToolFiles) -> tuple[Reference, ...]:
    """`tool: flow-execute` runs a nested flow (and has no file argument); any other tool, the
    arguments its file inputs name (``tools`` knows them)."""
    tool = step.tool if isinstance(step.tool, str) else str(step.tool)
    if tool == FLOW_EXECUTE:
        return (NestedFlow.of_args(step.args),)
    return tuple(ToolFile(tool, argument, path) for argument, path in tools(tool, step.args))


TOOL = Directive(key="tool", models=(ToolStep,), parse_entry=parse_entry, files=files)
