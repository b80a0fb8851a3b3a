"""Tool arguments: the JSON Schema derived from an attrs class, and strict validation."""

from __future__ import annotations

from typing import Literal

import attrs
import pytest

from argent.errors import InvalidToolInputError
from argent.tools.args import arg, json_schema, structure_args, unstructure_args


@attrs.frozen
class Sample:
    project_root: str = arg(doc="Absolute project root.")
    name: str | None = arg(None, doc="Flow name.")
    update_baselines: bool | None = arg(None, wire="updateBaselines")
    platform: Literal["ios", "chromium"] | None = arg(None)
    times: int = arg(1)
    scale: float | None = arg(None)
    tags: list[str] | None = arg(None)


def test_schema_is_a_top_level_object_with_wire_names_required_and_docs() -> None:
    schema = json_schema(Sample)
    assert schema["type"] == "object"
    assert schema["required"] == ["project_root"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert props["project_root"] == {"type": "string", "description": "Absolute project root."}
    assert props["updateBaselines"] == {"type": "boolean"}
    assert "update_baselines" not in props
    assert props["platform"] == {"type": "string", "enum": ["ios", "chromium"]}
    assert props["times"] == {"type": "integer", "default": 1}
    assert props["scale"] == {"type": "number"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}


def test_valid_args_structure_with_wire_names() -> None:
    value = structure_args("t", {"project_root": "/p", "updateBaselines": True, "scale": 2}, Sample)
    assert value == Sample(project_root="/p", update_baselines=True, scale=2)
    assert unstructure_args(value) == {"project_root": "/p", "updateBaselines": True, "times": 1, "scale": 2}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"project_root": 5}, "Invalid arguments for t: project_root: expected a string, got number"),
        ({}, "Invalid arguments for t: project_root is required"),
        ({"project_root": "/p", "bogus": 1}, "Invalid arguments for t: unknown argument bogus"),
        (
            {"project_root": "/p", "updateBaselines": "yes"},
            "Invalid arguments for t: updateBaselines: expected a boolean, got string",
        ),
        (
            {"project_root": "/p", "platform": "windows"},
            "Invalid arguments for t: platform: must be one of ios, chromium, got 'windows'",
        ),
        (
            {"project_root": "/p", "times": True},
            "Invalid arguments for t: times: expected an integer, got boolean",
        ),
        (
            {"project_root": "/p", "times": 1.5},
            "Invalid arguments for t: times: expected an integer, got number",
        ),
        ([1, 2], "Arguments for t must be a JSON object, got array."),
        ("text", "Arguments for t must be a JSON object, got string."),
    ],
)
def test_invalid_args_name_the_problem_without_coercion(raw: object, message: str) -> None:
    with pytest.raises(InvalidToolInputError) as caught:
        structure_args("t", raw, Sample)
    assert caught.value.message == message
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("win\ndows", "'win\\ndows'"),  # a regex over cattrs' text missed a value with a newline
        ("x] not in literal typing.Literal['ios'", "\"x] not in literal typing.Literal['ios'\""),
    ],
)
def test_a_value_outside_a_literal_is_named_from_the_structured_error(value: str, shown: str) -> None:
    with pytest.raises(InvalidToolInputError) as caught:
        structure_args("t", {"project_root": "/p", "platform": value}, Sample)
    assert (
        caught.value.message
        == f"Invalid arguments for t: platform: must be one of ios, chromium, got {shown}"
    )
