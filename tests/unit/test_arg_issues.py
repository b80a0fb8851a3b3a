"""Argument-validation 400s carry upstream's ``issues`` and ``message``, read from cattrs' structured
errors. Every expected body below is what upstream argent 0.25.2's tool-server answered for the
same arguments (``node dist/tool-server.cjs start`` from ``npm pack @swmansion/argent@0.25.2``,
``POST /tools/<tool>``), minus its ``error`` (a JSON dump of the issues; ours stays prose)."""

from __future__ import annotations

import json
from typing import Any, Literal

import attrs
import pytest

from argent.errors import InvalidToolInputError
from argent.limits import MAX_ARG_ISSUES
from argent.link import issues
from argent.link.codec import read_answer, to_wire
from argent.link.models import ErrorBody
from argent.tools.args import arg, bounded, structure_args


@attrs.frozen
class Prereq:  # upstream flow-read-prerequisite, the fields that matter here
    project_root: str = arg()
    name: str | None = arg(None)


@attrs.frozen
class Tap:  # upstream gesture-tap
    udid: str = arg()
    x: float = arg()
    y: float = arg()
    click_count: int = attrs.field(
        default=1, kw_only=True, metadata={"wire": "clickCount"}, validator=bounded(1, 10)
    )


@attrs.frozen
class Selector:
    text: str | None = arg(None)
    identifier: str | None = arg(None)


@attrs.frozen
class Await:  # upstream await-ui-element
    udid: str = attrs.field(kw_only=True, validator=bounded(1))
    condition: Literal["exists", "visible", "hidden", "text"] = arg()
    selector: Selector = arg()


@attrs.frozen
class Script:
    args: list[str] | None = arg(None)


def _refusal(raw: Any, cls: type) -> dict[str, Any]:
    with pytest.raises(InvalidToolInputError) as caught:
        structure_args("t", raw, cls)
    wire = to_wire(caught.value.schema_body())
    assert isinstance(wire.pop("error"), str)
    return wire  # type: ignore[no-any-return]


def _type_issue(path: list[Any], expected: str, received: str, **extra: Any) -> dict[str, Any]:
    return {
        "code": "invalid_type",
        "path": path,
        "message": f"Invalid input: expected {expected}, received {received}",
        "expected": expected,
        **extra,
    }


CONDITIONS = ["exists", "visible", "hidden", "text"]
ONE_OF = 'Invalid option: expected one of "exists"|"visible"|"hidden"|"text"'


@pytest.mark.parametrize(
    ("raw", "cls", "message", "found"),
    [
        (
            {"project_root": 5, "name": "smoke"},
            Prereq,
            "`project_root`: Invalid input: expected string, received number. You sent: `project_root`, `name`.",
            [_type_issue(["project_root"], "string", "number")],
        ),
        (
            {"name": "smoke"},
            Prereq,
            "`project_root` is required (string) and was not provided. You sent: `name`.",
            [_type_issue(["project_root"], "string", "undefined")],
        ),
        (
            {},
            Prereq,
            "`project_root` is required (string) and was not provided.",
            [_type_issue(["project_root"], "string", "undefined")],
        ),
        (
            {"udid": "chromium-cdp-1", "x": "a", "y": [1]},
            Tap,
            "`x`: Invalid input: expected number, received string; "
            "`y`: Invalid input: expected number, received array. You sent: `udid`, `x`, `y`.",
            [_type_issue(["x"], "number", "string"), _type_issue(["y"], "number", "array")],
        ),
        (
            {"udid": "x", "x": None, "y": 0.5},
            Tap,
            "`x`: Invalid input: expected number, received null. You sent: `udid`, `x`, `y`.",
            [_type_issue(["x"], "number", "null")],
        ),
        (
            {"udid": "x", "x": 0.5, "y": 0.5, "clickCount": 1.5},
            Tap,
            "`clickCount`: Invalid input: expected int, received number. You sent: `udid`, `x`, `y`, `clickCount`.",
            [_type_issue(["clickCount"], "int", "number", format="safeint")],
        ),
        (
            {"udid": "x", "x": 0.5, "y": 0.5, "clickCount": True},
            Tap,
            "`clickCount`: Invalid input: expected number, received boolean. You sent: `udid`, `x`, `y`, `clickCount`.",
            [_type_issue(["clickCount"], "number", "boolean")],
        ),
        (
            {"udid": "x", "x": 0.5, "y": 0.5, "clickCount": 0},
            Tap,
            "`clickCount`: Too small: expected number to be >=1. You sent: `udid`, `x`, `y`, `clickCount`.",
            [
                {
                    "code": "too_small",
                    "path": ["clickCount"],
                    "message": "Too small: expected number to be >=1",
                    "origin": "number",
                    "minimum": 1,
                    "inclusive": True,
                }
            ],
        ),
        (
            {"udid": "x", "x": 0.5, "y": 0.5, "clickCount": 11},
            Tap,
            "`clickCount`: Too big: expected number to be <=10. You sent: `udid`, `x`, `y`, `clickCount`.",
            [
                {
                    "code": "too_big",
                    "path": ["clickCount"],
                    "message": "Too big: expected number to be <=10",
                    "origin": "number",
                    "maximum": 10,
                    "inclusive": True,
                }
            ],
        ),
        (
            {"udid": "x", "x": 0.5, "y": 0.5, "bogus": 1, "other": 2},
            Tap,
            "unknown parameters `bogus`, `other`. You sent: `udid`, `x`, `y`, `bogus`, `other`.",
            [
                {
                    "code": "unrecognized_keys",
                    "path": [],
                    "message": 'Unrecognized keys: "bogus", "other"',
                    "keys": ["bogus", "other"],
                }
            ],
        ),
        (
            {"udid": "x", "condition": "nope", "selector": {"text": "a"}},
            Await,
            f"`condition`: {ONE_OF}. You sent: `udid`, `condition`, `selector`.",
            [{"code": "invalid_value", "path": ["condition"], "message": ONE_OF, "values": CONDITIONS}],
        ),
        (
            {"udid": "x", "selector": {"text": "a"}},
            Await,
            "`condition` is required and was not provided. You sent: `udid`, `selector`.",
            [{"code": "invalid_value", "path": ["condition"], "message": ONE_OF, "values": CONDITIONS}],
        ),
        (
            {"udid": "x", "condition": "exists", "selector": {"text": "a", "bad": 1}},
            Await,
            "unknown parameter `selector.bad`. You sent: `udid`, `condition`, `selector`.",
            [
                {
                    "code": "unrecognized_keys",
                    "path": ["selector"],
                    "message": 'Unrecognized key: "bad"',
                    "keys": ["bad"],
                }
            ],
        ),
        (
            {"udid": "x", "condition": "exists", "selector": 5},
            Await,
            "`selector`: Invalid input: expected object, received number. You sent: `udid`, `condition`, `selector`.",
            [_type_issue(["selector"], "object", "number")],
        ),
        (
            {"udid": "", "condition": "exists", "selector": {}},
            Await,
            "`udid`: Too small: expected string to have >=1 characters. You sent: `udid`, `condition`, `selector`.",
            [
                {
                    "code": "too_small",
                    "path": ["udid"],
                    "message": "Too small: expected string to have >=1 characters",
                    "origin": "string",
                    "minimum": 1,
                    "inclusive": True,
                }
            ],
        ),
        (
            [1],
            Prereq,
            "`(root)`: Invalid input: expected object, received array.",
            [_type_issue([], "object", "array")],
        ),
    ],
)
def test_a_refusal_carries_upstreams_issues_and_message(
    raw: Any, cls: type, message: str, found: list[dict[str, Any]]
) -> None:
    assert _refusal(raw, cls) == {"message": message, "issues": found}


def test_a_string_is_not_taken_for_a_list_of_its_characters() -> None:
    # cattrs' own list hook read "abc" as ["a", "b", "c"]
    assert _refusal({"args": "abc"}, Script)["issues"] == [_type_issue(["args"], "array", "string")]


def test_a_bad_list_item_is_named_by_its_index() -> None:
    body = _refusal({"args": ["ok", 5, "ok", None]}, Script)
    assert body["issues"] == [
        _type_issue(["args", 1], "string", "number"),
        _type_issue(["args", 3], "string", "null"),
    ]
    assert body["message"].startswith("`args.1`: Invalid input: expected string, received number; `args.3`:")


def test_the_error_text_stays_ours_and_names_the_bound() -> None:
    with pytest.raises(InvalidToolInputError) as caught:
        structure_args("gesture-tap", {"udid": "x", "x": 0.5, "y": 0.5, "clickCount": 0}, Tap)
    assert (
        caught.value.message
        == "Invalid arguments for gesture-tap: clickCount: Too small: expected number to be >=1"
    )


def test_a_rule_of_the_args_class_keeps_its_words_as_a_custom_issue() -> None:
    @attrs.frozen
    class OneSource:
        name: str | None = arg(None)
        flow_path: str | None = arg(None)

        def __attrs_post_init__(self) -> None:
            if (self.name is None) == (self.flow_path is None):
                raise InvalidToolInputError("Pass exactly one flow source: name or flow_path.")

    with pytest.raises(InvalidToolInputError) as caught:
        structure_args("t", {}, OneSource)
    assert caught.value.message == "Pass exactly one flow source: name or flow_path."
    assert to_wire(caught.value.body()) == {
        "error": "Pass exactly one flow source: name or flow_path.",
        "error_code": "TOOL_INPUT_INVALID",
        "error_kind": "validation",
        "message": "Pass exactly one flow source: name or flow_path.",
        "issues": [
            {"code": "custom", "path": [], "message": "Pass exactly one flow source: name or flow_path."}
        ],
    }


def test_a_tool_rule_raised_with_a_message_only_is_one_custom_issue() -> None:
    exc = InvalidToolInputError("Pass exactly one of text or key.")
    assert to_wire(exc.body())["issues"] == [
        {"code": "custom", "path": [], "message": "Pass exactly one of text or key."}
    ]


def test_the_message_names_at_most_24_sent_keys() -> None:
    sent = {f"k{i}": i for i in range(30)}
    text = issues.describe([issues.unrecognized_keys([], list(sent))], sent)
    assert text.endswith("`k22`, `k23`, ….")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["chromium"], 'Invalid input: expected "chromium"'),
        ([1, 2.0, True], "Invalid option: expected one of 1|2|true"),
    ],
)
def test_invalid_value_words_as_zod(values: list[Any], message: str) -> None:
    assert issues.invalid_value(["p"], values).message == message


def test_a_body_of_bad_list_items_names_the_first_hundred_and_stops_checking() -> None:
    body = _refusal({"args": [1] * 200_000}, Script)
    assert len(body["issues"]) == MAX_ARG_ISSUES
    assert body["issues"][-1]["path"] == ["args", MAX_ARG_ISSUES - 1]
    assert len(json.dumps(body)) < 50_000  # was 48 MB for this 1.2 MB body, built in 45 s


def test_a_body_of_unknown_keys_names_the_first_hundred_as_sent() -> None:
    raw = {"udid": "x", "x": 0.5, "y": 0.5, **{f"k{i}": 1 for i in range(200_000)}}
    with pytest.raises(InvalidToolInputError) as caught:
        structure_args("t", raw, Tap)
    (issue,) = caught.value.issues
    assert issue.keys == [f"k{i}" for i in range(MAX_ARG_ISSUES)]
    assert issue.message.endswith('"k99", …')
    assert caught.value.message.endswith("k98, k99, …")
    assert len(json.dumps(to_wire(caught.value.body()))) < 10_000


def test_a_client_reads_upstreams_400_body_and_ignores_malformed_issues() -> None:
    upstream_body = {
        "error": '[\n  {\n    "expected": "string", ...',
        "message": "`project_root`: Invalid input: expected string, received number. You sent: `project_root`.",
        "issues": [
            {
                "expected": "string",
                "code": "invalid_type",
                "path": ["project_root"],
                "message": "Invalid input: expected string, received number",
            }
        ],
    }
    body = read_answer(upstream_body, ErrorBody)
    assert body.issues == [issues.invalid_type(["project_root"], "string", 5)]
    assert to_wire(body) == upstream_body
    assert read_answer({"error": "x", "issues": "not a list"}, ErrorBody) == ErrorBody("x")
