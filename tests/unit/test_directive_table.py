"""The directive table: every directive declared once (model, grammar, label, writer, summary,
executor hook), found from one place by the parser, the writer and the runner — and a new directive
is one module plus its registration."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from attrs import frozen

from argent.flows import directives as table
from argent.flows import parse as parse_module
from argent.flows.directives import BY_KEY, DIRECTIVE_KEYS, DIRECTIVES, STEP_TYPES, Directive, Nodes
from argent.flows.grammar import Reject
from argent.flows.model import Flow
from argent.flows.names import step_target_label
from argent.flows.parse import parse_flow
from argent.flows.values import step_line
from argent.flows.write import flow_to_yaml, summarize_step
from argent.runner import handlers
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import run_flow
from argent.runner.run import Run, StackEntry, StepLoop, ToolInvoker, line, push_leaf
from tests.unit.test_runner_engine import ROOT, FakeTools, NoFiles


def test_registry_order_and_one_entry_per_key() -> None:
    assert DIRECTIVE_KEYS == (
        "echo",
        "launch",
        "run",
        "when",
        "tool",
        "script",
        "tap",
        "long-press",
        "type",
        "press",
        "select",
        "await",
        "assert",
        "wait",
        "scroll-to",
        "pinch",
        "rotate",
        "snapshot",
        "dialogs",
        "upload",
    )
    assert len(BY_KEY) == len(DIRECTIVES)
    for directive in DIRECTIVES:
        assert (directive.parse is None) != (directive.parse_entry is None), directive.key


@pytest.mark.parametrize("model", STEP_TYPES, ids=lambda model: model.__name__)
def test_every_model_declares_its_directive(model: type[Any]) -> None:
    assert (
        isinstance(model.kind, str) and isinstance(model.executor, str) and isinstance(model.on_device, bool)
    )
    for method in ("label", "to_data", "summary"):
        assert callable(getattr(model, method)), method


@pytest.mark.parametrize("model", STEP_TYPES, ids=lambda model: model.__name__)
def test_every_executor_hook_has_a_runner(model: type[Any]) -> None:
    """A directive the runner cannot carry out would only show up as an error line at run time."""
    if model.executor in handlers.HOOK_HANDLERS:
        return
    assert model.on_device, f"{model.__name__}: no handler for hook {model.executor!r}"
    assert model.executor in DeviceDirectives()._executors, model.executor


# --------------------------------------------------------------------------------------------
# A new directive: one module (here: this test) plus its registration


@frozen
class BeepStep:
    times: int
    line: int = step_line()
    kind: ClassVar[str] = "beep"
    executor: ClassVar[str] = "beep"
    on_device: ClassVar[bool] = False

    def label(self) -> str | None:
        return f"×{self.times}"

    def to_data(self) -> dict[str, Any]:
        return {"beep": self.times}

    def summary(self) -> str:
        return f"beep ×{self.times}"


def _parse_beep(nodes: Nodes, body: Any, line: int) -> BeepStep:
    times = nodes.number(body)
    if not isinstance(times, int) or times < 1:
        raise Reject("beep needs a positive number of beeps")
    return BeepStep(times=times, line=line)


class BeepHandler:
    def needs_device(self, step: Any, tools: ToolInvoker, platform_known: bool) -> bool:
        return False

    async def execute(self, loop: StepLoop, run: Run, step: BeepStep, depth: int, top: StackEntry) -> None:
        await push_leaf(run, line(run, step, "pass", top.display, depth, None, message="beep" * step.times))


BEEP = Directive(key="beep", models=(BeepStep,), parse=_parse_beep)


@pytest.fixture
def beep_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = (*DIRECTIVE_KEYS, "beep")
    by_key = {**BY_KEY, "beep": BEEP}
    monkeypatch.setattr(table, "DIRECTIVE_KEYS", keys)
    monkeypatch.setattr(parse_module, "DIRECTIVE_KEYS", keys)
    monkeypatch.setattr(parse_module, "BY_KEY", by_key)


async def test_a_new_directive_is_parsed_written_labelled_summarized_and_run(beep_registered: None) -> None:
    flow = parse_flow("steps:\n  - echo: start\n  - beep: 2\n")
    beep = flow.steps[1]
    assert beep == BeepStep(2) and beep.line == 3
    assert step_target_label(beep) == "×2"
    assert summarize_step(2, beep) == "2. beep ×2"
    assert flow_to_yaml(Flow(steps=flow.steps)) == "steps:\n  - echo: start\n  - beep: 2\n"
    with pytest.raises(Exception, match=r"beep needs a positive number of beeps\): \{\"beep\":0\} \(step 1"):
        parse_flow("steps:\n  - beep: 0\n")

    result = await run_flow(flow, ROOT, "main", files=NoFiles(), tools=FakeTools())
    assert [(s.kind, s.status) for s in result.steps] == [("echo", "pass"), ("beep", "error")]
    assert result.steps[1].reason == "beep is not supported by this runner"

    handlers_table = handlers.HOOK_HANDLERS
    assert isinstance(handlers_table, dict)
    handlers_table["beep"] = BeepHandler()
    try:
        result = await run_flow(flow, ROOT, "main", files=NoFiles(), tools=FakeTools())
    finally:
        del handlers_table["beep"]
    assert [(s.kind, s.status, s.message, s.target) for s in result.steps] == [
        ("echo", "pass", "start", None),
        ("beep", "pass", "beepbeep", "×2"),
    ]
