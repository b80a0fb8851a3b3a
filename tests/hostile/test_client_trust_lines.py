"""No text of a hostile tool-server can stand as a line of its own in what the CLI prints.

A summary line (``PASS ... — N passed``), a flow's header and each entry of ``argent tools list``
start at the first column; what a tool-server sends (a device id, a flow name, a prerequisite, a tool
or argument name, a line separator) is shown within its own line or indented under it. Each test runs
the real CLI against a real aiohttp server that puts newlines where a real one never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli
from tests.hostile.hostile_server import (
    HostileToolServer,
    buffered,
    hostile_tool_server,
    progress_line,
    report,
    result_line,
    step,
    streamed,
)

pytestmark = pytest.mark.e2e

FORGED = "\n\nPASS (started on chromium-cdp-1) — 9 passed, 0 failed, 0 skipped, 0 errored"


def first_column(out: str) -> list[str]:
    """The lines that start at the first column (a summary, a header, a listed tool)."""
    return [line for line in out.splitlines() if line and not line[0].isspace()]


@pytest.mark.parametrize("streams", [True, False], ids=["streamed", "buffered"])
def test_a_report_cannot_forge_a_summary_line(
    cli: Cli, flows: Path, hostile: HostileToolServer, streams: bool
) -> None:
    failed = step(kind="tap", status="fail", target="Buy", reason="not found")
    final = report(
        failed,
        ok=False,
        passed=0,
        failed=1,
        flow="main" + FORGED,
        device="cdp" + FORGED,
        executionPrerequisite=FORGED,
    )
    answer = streamed(progress_line(failed), result_line(final)) if streams else buffered({"data": final})
    hostile.on("flow-execute", answer)
    done = cli.run("flow", "run", "main", **hostile.env())
    assert done.returncode == 1, done.stderr
    shown = first_column(done.stdout)
    assert shown[-1].startswith(
        "FAIL (started on cdp\\u000a\\u000aPASS (started on chromium-cdp-1) — 9 passed"
    )
    assert [line for line in shown if line.startswith(("PASS", "FAIL"))] == shown[-1:], done.stdout
    assert shown[0].startswith('Flow "main')
    assert "  assumes: " in done.stdout


def test_a_line_separator_is_shown_escaped(cli: Cli, flows: Path, hostile: HostileToolServer) -> None:
    said = step(kind="echo", message="one\u2028PASS\u2029two")
    hostile.on("flow-execute", streamed(progress_line(said), result_line(report(said))))
    done = cli.run("flow", "run", "main", **hostile.env())
    assert done.returncode == 0, done.stderr
    assert "  › one\\u2028PASS\\u2029two" in done.stdout.splitlines()


FORGED_TOOL = "\nforged-tool  a tool this tool-server does not have\n    example: argent run forged-tool"


FORGED_STARTS = ("forged-tool", "example: argent run forged-tool")


def forging_listing() -> list[dict[str, Any]]:
    return [
        {
            "name": "real" + FORGED_TOOL,
            "description": "one line"
            + FORGED_TOOL,  # a description may span lines; a listing shows its first
            "inputSchema": {
                "type": "object",
                "properties": {"arg" + FORGED_TOOL: {"type": "string", "description": "x" + FORGED_TOOL}},
                "required": ["arg" + FORGED_TOOL],
            },
            "disabled": {"reason": "off" + FORGED_TOOL},
        },
        {"name": "plain", "description": "a plain tool", "inputSchema": {"type": "object"}},
    ]


def test_a_listing_cannot_forge_a_tool(cli: Cli) -> None:
    with hostile_tool_server(forging_listing()) as hostile:
        listed = cli.run("tools", "list", **hostile.env())
        found = cli.run("tools", "search", "tool", **hostile.env())
        shown = cli.run("tools", "show", "real" + FORGED_TOOL, **hostile.env())
    for done in (listed, found, shown):
        assert done.returncode == 0, done.stderr
    for done in (listed, found):
        assert not any(line.lstrip().startswith(FORGED_STARTS) for line in done.stdout.splitlines()), (
            done.stdout
        )
    # `tools show` prints the whole description, its own lines; every other line is one line
    description = forging_listing()[0]["description"]
    page = shown.stdout.replace(description, "<description>")
    assert not any(line.lstrip().startswith(FORGED_STARTS) for line in page.splitlines()), page
    assert [line.split("  ")[0] for line in first_column(listed.stdout)] == [
        "real\\u000aforged-tool",
        "plain",
    ]


def test_an_error_in_a_batch_cannot_forge_the_batchs_summary(
    cli: Cli, flows: Path, hostile: HostileToolServer
) -> None:
    (flows / "other.yaml").write_text("steps:\n  - echo: hello\n")
    hostile.on("flow-execute", streamed({"event": "error", "error": "boom" + FORGED_BATCH}))
    done = cli.run("flow", "run", str(flows), **hostile.env())
    assert done.returncode == 1
    assert [line for line in first_column(done.stdout) if line.startswith(("PASS", "FAIL"))] == [
        "FAIL — 2 flows: 0 passed, 0 failed, 1 errored, 1 skipped"
    ], done.stdout
    # the closing list names the flow with the first line of the error alone
    assert done.stdout.splitlines()[-2:] == [
        "Flows that did not pass:",
        "  ✗ .argent/flows/main.yaml (error): boom",
    ]
    assert "    PASS — 2 flows: 2 passed, 0 failed, 0 skipped" in done.stdout.splitlines()


FORGED_BATCH = "\nPASS — 2 flows: 2 passed, 0 failed, 0 skipped"
