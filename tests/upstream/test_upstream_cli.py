"""Upstream argent's CLI (0.25.2) against our ``argent server start`` exits as it does against
upstream's own tool-server.

UPSTREAM_EXIT was measured with the same CLI (``node dist/cli.js``, ``ARGENT_TOOLS_URL`` /
``ARGENT_AUTH_TOKEN``) against upstream's own server from the same npm package
(``node dist/tool-server.cjs start``, ``ARGENT_PORT`` / ``ARGENT_AUTH_TOKEN``; no simulators, one
headless Chromium with ``--remote-debugging-port`` for the gesture-scroll call) on Linux, node
20.20.2, 2026-12-03. Where upstream's server answered differently for the same call, the upstream
output is quoted next to the assertion.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import ServerProcess
from tests.upstream.conftest import UpstreamCli, call_ours

UPSTREAM_EXIT = {
    "wrong type (server-side validation)": 2,
    "wrong type, --json": 2,
    "missing required flag (checked by the CLI)": 2,
    "flag of the wrong type (checked by the CLI)": 2,
    "--args not JSON": 2,
    "--args not an object": 2,
    "upstream-declared flag (gesture-scroll --durationMs, real Chromium)": 0,
    "key declared by neither side (list-devices --udid)": 0,
    "runtime error (gesture-tap on a device nothing answers for)": 1,
    "unknown tool": 1,
    "wrong token (run)": 1,
    "wrong token (tools)": 1,
    "ok call (run list-devices)": 0,
    "tools": 0,
}

PROJECT_ROOT_NOT_STRING = {
    "code": "invalid_type",
    "expected": "string",
    "path": ["project_root"],
    "message": "Invalid input: expected string, received number",
}


def _json_object(text: str) -> dict[str, Any]:
    value = json.loads(text)
    assert isinstance(value, dict), text
    return value


def test_a_wrong_type_is_a_usage_error(upstream: UpstreamCli) -> None:
    done = upstream.run("run", "flow-read-prerequisite", "--args", '{"project_root": 5, "name": "smoke"}')
    assert done.returncode == UPSTREAM_EXIT["wrong type (server-side validation)"], done.stderr
    # upstream's own server: the same line, then the tool's help on stdout
    assert (
        done.stderr.splitlines()[0] == "Error: --project_root Invalid input: expected string, received number"
    )
    assert done.stdout.startswith("argent run flow-read-prerequisite [flags]")


def test_a_wrong_type_with_json_prints_one_json_object(upstream: UpstreamCli) -> None:
    done = upstream.run(
        "run",
        "gesture-tap",
        "--json",
        "--args",
        '{"udid": "chromium-cdp-1", "x": "a", "y": [1], "clickCount": 1.5}',
    )
    assert done.returncode == UPSTREAM_EXIT["wrong type, --json"], done.stderr
    assert done.stdout == ""
    # upstream's own server printed exactly this object (its issues' keys in another order)
    assert _json_object(done.stderr) == {
        "error": "--x Invalid input: expected number, received string\n"
        "       --y Invalid input: expected number, received array\n"
        "       --clickCount Invalid input: expected int, received number",
        "missing": [],
        "issues": [
            {
                "code": "invalid_type",
                "expected": "number",
                "path": ["x"],
                "message": "Invalid input: expected number, received string",
            },
            {
                "code": "invalid_type",
                "expected": "number",
                "path": ["y"],
                "message": "Invalid input: expected number, received array",
            },
            {
                "code": "invalid_type",
                "expected": "int",
                "format": "safeint",
                "path": ["clickCount"],
                "message": "Invalid input: expected int, received number",
            },
        ],
    }


def test_usage_errors_the_cli_finds_itself(upstream: UpstreamCli) -> None:
    missing = upstream.run("run", "gesture-tap", "--json", "--udid", "chromium-cdp-1", "--y", "0.5")
    assert missing.returncode == UPSTREAM_EXIT["missing required flag (checked by the CLI)"], missing.stderr
    assert _json_object(missing.stderr) == {
        "error": "missing required flag --x",
        "missing": ["--x"],
        "issues": [],
    }
    wrong = upstream.run("run", "gesture-tap", "--udid", "chromium-cdp-1", "--x", "abc", "--y", "0.5")
    assert wrong.returncode == UPSTREAM_EXIT["flag of the wrong type (checked by the CLI)"], wrong.stderr
    assert wrong.stderr.splitlines()[0] == 'Error: --x expected a number, got "abc"'


@pytest.mark.parametrize(
    ("payload", "case", "said"),
    [
        (
            "{bad",
            "--args not JSON",
            "--args is not valid JSON: Expected property name or '}' in JSON at position 1",
        ),
        ("[1]", "--args not an object", "--args must be a JSON object"),
    ],
)
def test_bad_args_json_is_a_usage_error(upstream: UpstreamCli, payload: str, case: str, said: str) -> None:
    done = upstream.run("run", "list-devices", "--args", payload)
    assert done.returncode == UPSTREAM_EXIT[case], done.stderr
    assert done.stderr.splitlines()[0] == said


@pytest.fixture
def device(our_server: ServerProcess) -> Iterator[str]:
    booted = call_ours(
        our_server, "boot-device", {"url": "data:text/html,<div style='height:5000px'>tall page</div>"}
    )
    try:
        yield str(booted["id"])
    finally:
        call_ours(our_server, "stop-device", {"udid": booted["id"]})


def test_an_upstream_declared_flag_is_taken(upstream: UpstreamCli, device: str) -> None:
    done = upstream.run(
        "run",
        "gesture-scroll",
        "--udid",
        device,
        "--x",
        "0.5",
        "--y",
        "0.5",
        "--deltaY",
        "0.5",
        "--durationMs",
        "100",
    )
    key = "upstream-declared flag (gesture-scroll --durationMs, real Chromium)"
    assert done.returncode == UPSTREAM_EXIT[key], done.stderr
    # upstream's own server printed {"scrolled": true, "timestampMs": ...}
    assert isinstance(_json_object(done.stdout), dict)


def test_a_key_neither_side_declares_stays_a_usage_error_on_purpose(upstream: UpstreamCli) -> None:
    done = upstream.run("run", "list-devices", "--udid", "x")
    # Upstream strips the key and answers 0 (UPSTREAM_EXIT); we refuse a key neither side declares,
    # as a typo, with issues, so its CLI says so and exits 2 (docs/compat.md, "Answered differently").
    assert UPSTREAM_EXIT["key declared by neither side (list-devices --udid)"] == 0
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0] == 'Error: Unrecognized key: "udid"'


def test_a_runtime_error_exits_1(upstream: UpstreamCli) -> None:
    for extra in ((), ("--json",)):
        done = upstream.run(
            "run", "gesture-tap", "--udid", "chromium-cdp-1", "--x", "0.5", "--y", "0.5", *extra
        )
        assert done.returncode == UPSTREAM_EXIT["runtime error (gesture-tap on a device nothing answers for)"]
        # upstream's own server: "[Tool:gesture-tap] Service dependency failed: ... bad port", prose also with --json
        assert "chromium-cdp-1" in done.stderr
        assert done.stdout == ""


def test_an_unknown_tool_exits_1(upstream: UpstreamCli) -> None:
    done = upstream.run("run", "nope")
    assert done.returncode == UPSTREAM_EXIT["unknown tool"]
    assert done.stderr.splitlines()[0] == 'Tool "nope" not found. Run `argent tools` to list available tools.'


def test_a_wrong_token_exits_1(upstream: UpstreamCli) -> None:
    ran = upstream.run("run", "list-devices", token="wrong")
    assert ran.returncode == UPSTREAM_EXIT["wrong token (run)"]
    listed = upstream.run("tools", token="wrong")
    assert listed.returncode == UPSTREAM_EXIT["wrong token (tools)"]
    for done in (ran, listed):
        assert done.stderr.splitlines()[0] == "Error: GET /tools failed: 401 Unauthorized"


def test_an_ok_call_prints_the_result(upstream: UpstreamCli) -> None:
    for extra in ((), ("--json",)):
        done = upstream.run("run", "list-devices", *extra)
        assert done.returncode == UPSTREAM_EXIT["ok call (run list-devices)"], done.stderr
        assert isinstance(_json_object(done.stdout)["devices"], list)


def test_tools_lists_our_tools(upstream: UpstreamCli) -> None:
    done = upstream.run("tools")
    assert done.returncode == UPSTREAM_EXIT["tools"], done.stderr
    names = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    assert {"list-devices", "gesture-tap", "gesture-scroll", "flow-execute"} <= names
    listed = upstream.run("tools", "--json")
    assert listed.returncode == UPSTREAM_EXIT["tools"], listed.stderr
    entries = json.loads(listed.stdout)
    assert {"list-devices", "gesture-tap"} <= {entry["name"] for entry in entries}


def test_upstream_records_with_args_as_json_text_tools_and_directives(
    upstream: UpstreamCli, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Upstream's CLI sends flow-add-step's args as JSON text (its flag ``--args`` is that argument, as its
    schema said): a tool's object and a directive's value (issue 27) are both taken in that form."""
    root = tmp_path_factory.mktemp("upstream-recording")

    def run(tool: str, **args: str) -> dict[str, Any]:
        flags = [
            f"--{key}={value}" for key, value in {"name": "up", "project_root": str(root), **args}.items()
        ]
        done = upstream.run("run", tool, "--json", *flags)
        assert done.returncode == 0, done.stderr
        return _json_object(done.stdout)

    run("flow-start-recording")
    page = "data:text/html,<input id=q autofocus>"
    launched = run("flow-add-step", command="launch", args=json.dumps(page))
    try:
        assert launched["recorded"] == f"1. launch: {page}"
        typed = run(
            "flow-add-step",
            command="type",
            args=json.dumps({"into": {"id": "q"}, "text": "hi", "submit": False}),
        )
        assert typed["recorded"] == '2. type: {"id":"q"} ← "hi"'
        listed = run("flow-add-step", command="list-devices", args="{}")
        assert listed["recorded"] == "3. tool: list-devices {}"
        assert run("flow-finish-recording")["steps"] == 3
    finally:
        upstream.run("run", "stop-device", "--udid", launched["device"])
