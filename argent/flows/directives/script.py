"""`script:` — run a local program beside the flow (a path, or `{ path, args?, timeout? }`); the step
passes on exit 0."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from attrs import field, frozen

from argent.flows.canonical import num
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, only_keys
from argent.flows.js import js_json, js_number, tidy
from argent.flows.references import Reference, ScriptFile, ToolFiles
from argent.flows.values import step_line

_NEEDS_PATH = (
    "script needs a path to a script file — e.g. `script: scripts/seed.py` or "
    "`script: { path: scripts/seed.py, args: [--fast] }`"
)


@frozen
class ScriptStep:
    path: str
    args: tuple[str, ...] = ()
    timeout_ms: float | None = None
    #: Written as the bare path when it has no args and no timeout (kept as the author wrote it).
    short: bool = field(default=True, eq=False)
    line: int = step_line()
    kind: ClassVar[str] = "script"
    executor: ClassVar[str] = "script"
    on_device: ClassVar[bool] = False

    def label(self) -> str | None:
        return self.path

    def to_data(self) -> dict[str, Any]:
        if self.short and not self.args and self.timeout_ms is None:
            return {"script": self.path}
        body: dict[str, Any] = {"path": self.path}
        if self.args:
            body["args"] = list(self.args)
        if self.timeout_ms is not None:
            body["timeout"] = num(self.timeout_ms)
        return {"script": body}

    def summary(self) -> str:
        args = f" {js_json(list(self.args))}" if self.args else ""
        timeout = f" (timeout {js_number(self.timeout_ms)}ms)" if self.timeout_ms is not None else ""
        return f"script: {self.path}{args}{timeout}"


def parse(nodes: Nodes, body: Any, line: int) -> ScriptStep:
    path = nodes.string(body)
    if path is not None:
        if not path:
            raise Reject(_NEEDS_PATH)
        return ScriptStep(path=path, short=True, line=line)
    mapping = nodes.mapping(body)
    if mapping is None:
        raise Reject(_NEEDS_PATH)
    only_keys("script", mapping, ("path", "args", "timeout"))
    path = nodes.string(mapping.get("path"))
    if not path:
        raise Reject(_NEEDS_PATH)
    args: tuple[str, ...] = ()
    if "args" in mapping:
        strings = nodes.string_list(mapping["args"])
        if strings is None:
            raise Reject("script.args must be a list of strings")
        args = strings
    timeout: float | int | None = None
    if "timeout" in mapping:
        timeout = nodes.number(mapping["timeout"])
        if timeout is None or not math.isfinite(timeout) or timeout <= 0:
            raise Reject("script.timeout needs a positive number of milliseconds (e.g. `timeout: 30000`)")
        timeout = tidy(timeout)
    return ScriptStep(path=path, args=args, timeout_ms=timeout, short=False, line=line)


def files(step: ScriptStep, tools: ToolFiles) -> tuple[Reference, ...]:
    return (ScriptFile(step.path),)


SCRIPT = Directive(key="script", models=(ScriptStep,), parse=parse, files=files)
