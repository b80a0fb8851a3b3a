"""`run: <fragment>` — run the steps of another flow file in place, by a path relative to the file
that names it (a bare sibling name gets its `.yaml`)."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from attrs import frozen

from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject
from argent.flows.names import FLOW_FILE_NAME_PATTERN_TEXT, FLOW_FILE_NAME_RE
from argent.flows.references import Fragment, Reference, ToolFiles
from argent.flows.values import step_line


@frozen
class RunStep:
    """`run:` a fragment, by a path relative to the file that names it (always ends in .yaml)."""

    target: str
    line: int = step_line()
    kind: ClassVar[str] = "run"
    executor: ClassVar[str] = "run"
    on_device: ClassVar[bool] = False

    def label(self) -> str | None:
        return self.target

    def to_data(self) -> dict[str, Any]:
        return {"run": self.target}

    def summary(self) -> str:
        return f"run: {self.target}"


def parse(nodes: Nodes, body: Any, line: int) -> RunStep:
    return RunStep(target=_run_target(nodes, body), line=line)


def _run_target(nodes: Nodes, body: Any) -> str:
    if body is None or nodes.scalar(body) is None:
        raise Reject(
            "`run` has no target — give it a YAML path relative to this flow's file, e.g. "
            "`run: fragments/login.yaml`"
        )
    target = nodes.string(body)
    if target is None:
        raise Reject(
            "a `run` target must be a YAML path string relative to this flow's file, e.g. "
            "`run: fragments/login.yaml`"
        )
    if "\\" in target:
        raise Reject("a `run` path uses forward slashes, e.g. `run: fragments/login.yaml`")
    if target.startswith("/") or re.match(r"[A-Za-z]:", target):
        raise Reject("a `run` path must be relative to the flow file that references it")
    if not target.endswith(".yaml"):
        completed = target + ".yaml"
        if FLOW_FILE_NAME_RE.match(completed.rsplit("/", 1)[-1]):
            target = completed
    if not target.endswith(".yaml"):
        if target.lower().endswith(".yaml"):
            raise Reject("a `run` path must use the lowercase .yaml extension")
        raise Reject("a `run` path must end in .yaml, or name a sibling flow (`run: login`)")
    if not FLOW_FILE_NAME_RE.match(target.rsplit("/", 1)[-1]):
        raise Reject(
            f"a `run` target's filename must match {FLOW_FILE_NAME_PATTERN_TEXT} — letters, digits, "
            "underscore, hyphen before the .yaml"
        )
    return target


def files(step: RunStep, tools: ToolFiles) -> tuple[Reference, ...]:
    return (Fragment(step.target),)


RUN = Directive(key="run", models=(RunStep,), parse=parse, files=files)
