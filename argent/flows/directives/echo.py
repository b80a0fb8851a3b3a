"""`echo: <message>` — print a message at this point of the run (any value, as JavaScript's ``String``)."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from argent.flows.directives.base import Directive, Nodes
from argent.flows.values import step_line


@frozen
class EchoStep:
    message: str
    line: int = step_line()
    kind: ClassVar[str] = "echo"
    executor: ClassVar[str] = "echo"
    on_device: ClassVar[bool] = False

    def label(self) -> str | None:
        return None

    def to_data(self) -> dict[str, Any]:
        return {"echo": self.message}

    def summary(self) -> str:
        return f"echo: {self.message}"


def parse(nodes: Nodes, body: Any, line: int) -> EchoStep:
    return EchoStep(message=nodes.js_string(body), line=line)


ECHO = Directive(key="echo", models=(EchoStep,), parse=parse)
