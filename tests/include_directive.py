"""`include: <fragment>` — a directive that exists only in the tests, to prove that a directive that
names a file is one module plus its table entry (issue 26): the client sends the file it names, the
link preflight checks it and the checks before a run read it, with no other edit anywhere.

It names a flow file beside the file that names it, as `run:` does (a ``Fragment``); no runner
carries it out (its step reports that), which the tests that use it never need."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import pytest
from attrs import frozen

from argent.flows import directives, parse
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject
from argent.flows.load import PARSED_FLOWS
from argent.flows.references import Fragment, Reference, ToolFiles
from argent.flows.values import step_line


@frozen
class IncludeStep:
    target: str
    line: int = step_line()
    kind: ClassVar[str] = "include"
    executor: ClassVar[str] = "include"
    on_device: ClassVar[bool] = False

    def label(self) -> str | None:
        return self.target

    def to_data(self) -> dict[str, Any]:
        return {"include": self.target}

    def summary(self) -> str:
        return f"include: {self.target}"


def parse_include(nodes: Nodes, body: Any, line: int) -> IncludeStep:
    target = nodes.string(body)
    if not target or not target.endswith(".yaml"):
        raise Reject("`include` needs a .yaml path relative to this flow's file")
    return IncludeStep(target=target, line=line)


def files(step: IncludeStep, tools: ToolFiles) -> tuple[Reference, ...]:
    return (Fragment(step.target),)


INCLUDE = Directive(key="include", models=(IncludeStep,), parse=parse_include, files=files)


@contextmanager
def registered(monkeypatch: pytest.MonkeyPatch, entry: Directive = INCLUDE) -> Iterator[None]:
    """The directive table with ``entry`` at its end, as its entry in ``DIRECTIVES`` would make it
    (the parser reads the table's keys where it imported them)."""
    table = (*directives.DIRECTIVES, entry)
    keys = tuple(d.key for d in table)
    by_key = {d.key: d for d in table}
    monkeypatch.setattr(directives, "DIRECTIVES", table)
    monkeypatch.setattr(directives, "DIRECTIVE_KEYS", keys)
    monkeypatch.setattr(directives, "BY_KEY", by_key)
    monkeypatch.setattr(directives, "STEP_TYPES", (*directives.STEP_TYPES, *entry.models))
    monkeypatch.setattr(parse, "DIRECTIVE_KEYS", keys)
    monkeypatch.setattr(parse, "BY_KEY", by_key)
    PARSED_FLOWS.clear()
    try:
        yield
    finally:
        PARSED_FLOWS.clear()
