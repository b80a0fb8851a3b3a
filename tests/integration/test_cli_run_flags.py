"""`argent run <tool>`: the flags come from the tool's schema and Click parses them.

A real tool-server listing (a hostile server in a thread records each call's body) and the real
CLI in process: what reaches the server is exactly what the flags said, and a bad flag never
reaches it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from argent.cli.main import cli
from tests.hostile.hostile_server import HostileToolServer, buffered, hostile_tool_server

SHAPE: dict[str, Any] = {
    "name": "shape",
    "description": "Every kind of argument.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "description": "How many."},
            "ratio": {"type": "number"},
            "on": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "nums": {"type": "array", "items": {"type": "integer"}},
            "opts": {"type": "object"},
            "projectRoot": {"type": "string", "description": "Where \x1b]0;pwned\x07 it is."},
            "a b": {"type": "string"},
            "json": {"type": "string"},
        },
        "required": ["projectRoot"],
    },
}
PLAIN: dict[str, Any] = {"name": "plain", "description": "No arguments.", "inputSchema": {"type": "object"}}


@pytest.fixture(scope="module")
def server() -> Iterator[HostileToolServer]:
    with hostile_tool_server([SHAPE, PLAIN]) as hostile:
        hostile.on("shape", buffered({"data": {"ok": True}}))
        hostile.on("plain", buffered({"data": "done"}))
        yield hostile


@pytest.fixture
def run(server: HostileToolServer) -> Iterator[Any]:
    def invoke(*args: str, stdin: str | None = None) -> Result:
        return CliRunner().invoke(cli, ["run", *args], env=server.env(), input=stdin, prog_name="argent")

    server.calls.clear()
    yield invoke


def called(server: HostileToolServer) -> dict[str, Any]:
    [(name, body)] = server.calls
    assert name == "shape"
    assert isinstance(body, dict)
    return body


def test_every_kind_of_flag_reaches_the_tool_as_its_json_type(run: Any, server: HostileToolServer) -> None:
    done = run(
        "shape",
        *("--count", "3", "--ratio", "1.5", "--on", "--mode", "fast"),
        *("--tags", "a", "--tags", "b", "--nums", "1", "--nums=2", "--opts", '{"k": [1]}'),
        *("--project-root", "/p"),
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"ok": True}
    assert called(server) == {
        "count": 3,
        "ratio": 1.5,
        "on": True,
        "mode": "fast",
        "tags": ["a", "b"],
        "nums": [1, 2],
        "opts": {"k": [1]},
        "projectRoot": "/p",
    }


@pytest.mark.parametrize(
    ("flags", "on"),
    [
        (["--on"], True),
        (["--on", "false"], False),
        (["--on=0"], False),
        (["--no-on"], False),
        (["--on", "--no-on"], False),
        (["--no-on", "--on"], True),
    ],
)
def test_a_boolean_is_a_bare_flag_a_value_or_its_no_form_and_the_last_wins(
    run: Any, server: HostileToolServer, flags: list[str], on: bool
) -> None:
    done = run("shape", "--project-root", "/p", *flags)
    assert done.exit_code == 0, done.output
    assert called(server) == {"projectRoot": "/p", "on": on}


def test_flags_match_whatever_their_case_dash_or_underscore_and_a_later_one_wins(
    run: Any, server: HostileToolServer
) -> None:
    done = run("shape", "--project_root=/a", "--projectRoot", "/b", "--COUNT", "2")
    assert done.exit_code == 0, done.output
    assert called(server) == {"projectRoot": "/b", "count": 2}


def test_json_forms_give_the_whole_value(run: Any, server: HostileToolServer) -> None:
    done = run("shape", "--project-root", "/p", "--tags-json", '["x", "y"]', "--count-json", "7")
    assert done.exit_code == 0, done.output
    assert called(server) == {"projectRoot": "/p", "tags": ["x", "y"], "count": 7}


def test_args_merge_under_the_flags_and_carry_what_has_no_flag(run: Any, server: HostileToolServer) -> None:
    whole = json.dumps({"count": 1, "projectRoot": "/a", "a b": 2, "json": "j"})
    done = run("shape", "--args", whole, "--count", "5")
    assert done.exit_code == 0, done.output
    assert called(server) == {"count": 5, "projectRoot": "/a", "a b": 2, "json": "j"}


def test_args_from_stdin(run: Any, server: HostileToolServer) -> None:
    done = run("shape", "--args", "-", stdin='{"projectRoot": "/in"}')
    assert done.exit_code == 0, done.output
    assert called(server) == {"projectRoot": "/in"}


def test_json_and_args_before_the_tool_name_still_count(run: Any, server: HostileToolServer) -> None:
    done = run("--json", "--args", '{"projectRoot": "/p"}', "plain")
    assert done.exit_code == 0, done.output
    assert done.stdout == '"done"\n'
    assert server.calls == [("plain", {"projectRoot": "/p"})]


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--count", "x"], "Invalid value for '--count': 'x' is not a valid integer"),
        (["--ratio", "1e999"], "Invalid value for '--ratio': '1e999' is not a finite number"),
        (["--mode", "medium"], "Invalid value for '--mode': 'medium' is not one of 'fast', 'slow'"),
        (["--on", "maybe"], "Invalid value for '--on': expected true or false, got 'maybe'"),
        (["--opts", "{nope"], "Invalid value for '--opts': expected JSON: Expecting property name"),
        (["--count"], "Option '--count' requires an argument"),
        (["stray"], "Got unexpected extra argument (stray)"),
        (
            ["--bogus_Flag=1"],
            "Error: unknown flag --bogus_Flag (this tool takes: --count, --mode, --nums, --on, --opts, "
            "--project-root, --ratio, --tags)",
        ),
    ],
)
def test_a_bad_flag_is_a_usage_error_and_nothing_is_called(
    run: Any, server: HostileToolServer, flags: list[str], needle: str
) -> None:
    done = run("shape", "--project-root", "/p", *flags)
    assert done.exit_code == 2
    assert needle in done.stderr
    assert server.calls == []


def test_an_unknown_flag_points_at_the_tools_help(run: Any) -> None:
    done = run("plain", "--x", "1")
    assert done.exit_code == 2
    assert done.stderr == (
        "Usage: argent run plain [OPTIONS]\n"
        "Try 'argent run plain --help' for help.\n\n"
        "Error: unknown flag --x (this tool takes: none)\n"
    )


def test_a_missing_required_argument_names_its_flag_and_an_example(
    run: Any, server: HostileToolServer
) -> None:
    done = run("shape", "--count", "1")
    assert done.exit_code == 2
    assert done.stderr == (
        "Error: shape requires --project-root\nExample: argent run shape --project-root <projectRoot>\n"
    )
    assert server.calls == []


def test_help_lists_the_tools_arguments_safely_and_calls_nothing(run: Any, server: HostileToolServer) -> None:
    done = run("shape", "--help")
    assert done.exit_code == 0, done.output
    shown = done.stdout
    assert shown.startswith("Usage: argent run shape [OPTIONS]\n")
    assert "Every kind of argument." in shown
    for option in ("--count INTEGER", "--ratio NUMBER", "--on [true|false]", "--no-on", "--mode [fast|slow]"):
        assert option in shown
    assert "--project-root TEXT" in shown and "[required]" in shown
    assert "--tags-json JSON" in shown and "--count-json" not in shown
    assert "\x1b" not in shown and "\\u001b]0;pwned\\u0007" in shown
    assert "Pass these in --args: a b, json" in shown
    assert "Example: argent run shape --project-root <projectRoot>" in shown
    assert server.calls == []


def test_an_unknown_tool_is_a_usage_error(run: Any) -> None:
    done = run("nope", "--x", "1")
    assert done.exit_code == 2
    assert done.stderr == 'Error: Tool "nope" not found. Run `argent tools list` to see the tools.\n'


@pytest.mark.parametrize(("status", "code"), [(400, 2), (404, 2), (500, 1)])
def test_a_refused_call_prints_the_servers_error_and_exits_by_its_kind(
    run: Any, server: HostileToolServer, status: int, code: int
) -> None:
    server.on("plain", buffered({"error": "no \x1b[31mway"}, status=status))
    try:
        done = run("plain")
    finally:
        server.on("plain", buffered({"data": "done"}))
    assert done.exit_code == code
    assert done.stdout == ""
    assert done.stderr == "Error: no \\u001b[31mway\n"
