"""Every argument upstream argent 0.25.2 declares for a device tool we share is accepted (honoured, or
ignored with a note), a key neither side declares stays a 400 naming what the tool takes, and each
entry carries upstream's alwaysLoad / searchHint. Upstream's schemas: tests/fixtures/upstream_device_tools.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from argent.errors import InvalidToolInputError
from argent.tools.args import ignored_notes, structure_args, wire_name
from argent.tools.device_tools import DEVICE_TOOLS
from argent.tools.registry import ToolRegistry

UPSTREAM = json.loads((Path(__file__).parents[1] / "fixtures" / "upstream_device_tools.json").read_text())[
    "tools"
]
OURS = {tool.name: tool for tool in DEVICE_TOOLS}
#: Upstream arguments that mean nothing on a Chromium device: accepted, and a note says so (the table
#: of docs/compat.md). Every other upstream argument is carried out.
IGNORED = {
    "boot-device": {
        "udid",
        "avdName",
        "vvdImage",
        "bootTimeoutMs",
        "force",
        "sound",
        "headless",
        "electronAppPath",
        "electronPort",
        "electronArgs",
    },
    "open-url": {"bundleId"},
    "describe": {"bundleId"},
    "await-ui-element": {"bundleId"},
    "screenshot": {"rotation", "includeImageInContext", "downscaler"},
    "screenshot-diff": {"udid", "captureBaseline", "captureCurrent", "rotation", "outputDir"},
}
SAMPLES: dict[str, Any] = {
    "string": "x",
    "integer": 31000,
    "number": 0.5,
    "boolean": True,
    "array": ["--a"],
    "object": {"text": "x"},
}


def sample(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][0]
    return SAMPLES[prop.get("type", "string")]


def test_every_shared_tool_is_ours() -> None:
    assert set(UPSTREAM) <= set(OURS)


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_every_upstream_argument_is_accepted(name: str) -> None:
    cls = OURS[name].args_type
    ours = {wire_name(f) for f in attrs.fields(cls)}
    declared = set(UPSTREAM[name]["properties"])
    assert declared <= ours, f"{name} lacks {sorted(declared - ours)}"
    required = {wire_name(f): f for f in attrs.fields(cls) if f.default is attrs.NOTHING}
    for key, prop in UPSTREAM[name]["properties"].items():
        props = UPSTREAM[name]["properties"]
        raw = {k: sample(props[k]) if k in props else SAMPLES["string"] for k in required}
        raw[key] = "chromium-cdp-1" if key == "udid" else sample(prop)
        if name == "await-ui-element":
            raw["selector"] = {"text": "x"}
        args = structure_args(name, raw, cls, say_accepted=True)
        notes = ignored_notes(args)
        if key in IGNORED.get(name, set()):
            assert len(notes) == 1 and notes[0].startswith(f"{key} was ignored: "), (name, key, notes)
        else:
            assert notes == [], (name, key, notes)


@pytest.mark.parametrize(
    ("name", "key"), [("list-devices", "udid"), ("gesture-tap", "durationMs"), ("keyboard", "bogus")]
)
def test_a_key_neither_side_declares_is_a_400_naming_what_the_tool_takes(name: str, key: str) -> None:
    registry = ToolRegistry([tool.spec(None) for tool in DEVICE_TOOLS])  # type: ignore[arg-type]
    with pytest.raises(InvalidToolInputError) as caught:
        registry.parse_args(
            name, {"udid": "d", "x": 0.5, "y": 0.5, key: 1} if name != "list-devices" else {key: "d"}
        )
    message = caught.value.message
    unknown = message.split("unknown argument ", 1)[1].split(" (", 1)[0].split(", ")
    assert caught.value.status == 400 and key in unknown
    if name == "list-devices":
        assert message == "Invalid arguments for list-devices: unknown argument udid (it takes no arguments)"
    else:
        assert "(it takes udid, " in message


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_entries_carry_upstreams_always_load_and_search_hint(name: str) -> None:
    entry = OURS[name].spec(None).entry()  # type: ignore[arg-type]
    assert (entry.always_load, entry.search_hint) == (
        UPSTREAM[name]["alwaysLoad"],
        UPSTREAM[name]["searchHint"],
    )


def test_a_device_id_upstream_declares_on_a_device_free_tool_stays_out_of_its_parameters() -> None:
    """A flow's screenshot-diff and boot-device steps need no device: their udid is accepted, not listed."""
    for name in ("screenshot-diff", "boot-device"):
        spec = OURS[name].spec(None)  # type: ignore[arg-type]
        assert "udid" not in spec.params and "udid" not in spec.input_schema()["properties"]
