"""The directive table: every directive of the flow language, registered once, in registry order.

Each directive is one module of this package (its model, grammar, label, YAML writer, summary and
executor hook; see ``base``). The parser takes the grammar from this table, the writer and the
labels ask the step itself, and the runner maps each model's ``executor`` hook to the code that
carries it out (``argent.runner.handlers``; device directives: ``argent.runner.directives``).

A new directive is one new module here plus its entry in ``DIRECTIVES`` (and, to run, its
executor registered on the runner side).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from argent.flows.directives.assert_ import ASSERT, AssertStep
from argent.flows.directives.await_ import AWAIT, AwaitStep, IdleStep
from argent.flows.directives.base import Directive, EntryAt, Nodes, Step
from argent.flows.directives.dialogs import DIALOGS, DialogsStep
from argent.flows.directives.echo import ECHO, EchoStep
from argent.flows.directives.launch import LAUNCH, ChromiumApp, LaunchStep
from argent.flows.directives.long_press import LONG_PRESS, LongPressStep
from argent.flows.directives.pinch import PINCH, PinchStep
from argent.flows.directives.press import PRESS, PressStep
from argent.flows.directives.rotate import ROTATE, RotateStep
from argent.flows.directives.run import RUN, RunStep
from argent.flows.directives.script import SCRIPT, ScriptStep
from argent.flows.directives.scroll_to import SCROLL_TO, ScrollToStep
from argent.flows.directives.select import SELECT, SelectStep
from argent.flows.directives.snapshot import SNAPSHOT, SnapshotStep
from argent.flows.directives.tap import TAP, TapStep
from argent.flows.directives.tool import TOOL, ToolStep
from argent.flows.directives.type_ import TYPE, TypeStep
from argent.flows.directives.upload import UPLOAD, UploadStep
from argent.flows.directives.wait import WAIT, WaitStep
from argent.flows.directives.when import WHEN, WhenStep

__all__ = [
    "BY_KEY",
    "DEVICE_STEP_TYPES",
    "DIRECTIVES",
    "DIRECTIVE_KEYS",
    "STEP_TYPES",
    "AssertStep",
    "AwaitStep",
    "ChromiumApp",
    "DialogsStep",
    "Directive",
    "EchoStep",
    "EntryAt",
    "IdleStep",
    "LaunchStep",
    "LongPressStep",
    "Nodes",
    "PinchStep",
    "PressStep",
    "RotateStep",
    "RunStep",
    "ScriptStep",
    "ScrollToStep",
    "SelectStep",
    "SnapshotStep",
    "Step",
    "TapStep",
    "ToolStep",
    "TypeStep",
    "UploadStep",
    "WaitStep",
    "WhenStep",
]

#: Every directive, in registry order (the order of "found `x`, `y`" in messages).
DIRECTIVES: tuple[Directive, ...] = (
    ECHO,
    LAUNCH,
    RUN,
    WHEN,
    TOOL,
    SCRIPT,
    TAP,
    LONG_PRESS,
    TYPE,
    PRESS,
    SELECT,
    AWAIT,
    ASSERT,
    WAIT,
    SCROLL_TO,
    PINCH,
    ROTATE,
    SNAPSHOT,
    DIALOGS,
    UPLOAD,
)

#: The directive keys in registry order.
DIRECTIVE_KEYS: tuple[str, ...] = tuple(directive.key for directive in DIRECTIVES)
#: Each directive by its YAML key.
BY_KEY: Mapping[str, Directive] = {directive.key: directive for directive in DIRECTIVES}
#: Every step class.
STEP_TYPES: tuple[type[Any], ...] = tuple(model for directive in DIRECTIVES for model in directive.models)
#: The step classes of the directives that act on a device screen.
DEVICE_STEP_TYPES: tuple[type[Any], ...] = tuple(model for model in STEP_TYPES if model.on_device)
