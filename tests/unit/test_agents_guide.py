"""The guide for agents (issue 27): one file, docs/agents.md, served as `argent mcp`'s instructions; its
examples are what flow-add-step takes; every tool says what a recording writes for a call of it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from argent.devices.chromium import ChromiumDeviceProvider
from argent.link.rules import RECORDING_TOOLS
from argent.mcp.server import instructions
from argent.tools.builtin import build_registry
from argent.tools.recording_directives import RECORDABLE_DIRECTIVES, directive_value, parse_directive

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "agents.md"


def test_the_doc_and_the_instructions_are_one_file() -> None:
    assert DOC.is_symlink() and DOC.resolve() == (REPO / "argent" / "mcp" / "agents.md").resolve()
    assert instructions() == DOC.read_text()
    assert instructions().startswith("# Recording and repairing flows: a guide for agents\n")


#: "- `type` `{...}`" and "`await` `{...}`": a directive and the value the guide gives it.
EXAMPLE = re.compile(r"`(" + "|".join(map(re.escape, RECORDABLE_DIRECTIVES)) + r")` `([{\"][^`]*)`")


async def test_each_example_of_the_guide_is_a_value_flow_add_step_takes() -> None:
    examples = EXAMPLE.findall(DOC.read_text())
    assert {command for command, _ in examples} >= {"type", "tap", "press", "select", "scroll-to", "await"}
    for command, text in examples:
        json.loads(text)  # valid JSON, as an agent would send it
        await parse_directive(command, directive_value(command, text))


@pytest.fixture(scope="module")
def registry() -> object:
    return build_registry(devices=ChromiumDeviceProvider())


def test_every_tool_says_what_a_recording_writes_for_it(registry: object) -> None:
    tools = {spec.name: spec.description for spec in registry}  # type: ignore[attr-defined]
    assert len(tools) > 20
    for name, description in tools.items():
        if name in RECORDING_TOOLS:
            assert "Recorded by flow-add-step as" not in description
        else:
            assert description.count("Recorded by flow-add-step as ") == 1, name
    assert tools["open-url"].endswith(
        "Recorded by flow-add-step as `launch: { chromium: <url> }` (a page of the project by its path relative "
        "to the flow file)."
    )
    assert "`press: <keys>` for a key or a chord" in tools["keyboard"]
    assert "`tap: <selector>` naming the tapped element alone" in tools["gesture-tap"]
    assert tools["describe"].endswith(
        "Recorded by flow-add-step as a `tool: describe` step with its arguments (its device id left out: a replay "
        "binds its own)."
    )
    assert "command is a flow directive — tap, type, press, select, scroll-to" in tools["flow-add-step"]
