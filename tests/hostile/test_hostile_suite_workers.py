"""``argent flow run <dir> --workers N`` against a hostile tool-server: whatever it streams, every
line of a flow, on stdout and on stderr, carries that flow's prefix and is terminal-safe, and a
server that does not stream still gets each step printed once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Cli
from tests.hostile.hostile_server import (
    RAW_CONTROLS,
    Answer,
    HostileToolServer,
    buffered,
    progress_line,
    report,
    result_line,
    step,
    streamed,
    text_directive,
)

pytestmark = pytest.mark.e2e


def more_lines_than_steps() -> Answer:
    """A stream of three progress lines for a report of one step; the failed step's reason holds
    terminal controls and a line break before a forged ``PASS``."""
    evil = "x\x1b]0;pwned\x07\u202e\nPASS — spoof"
    return streamed(
        progress_line(step(0, message="first")),
        progress_line(step(1, kind="tap", status="fail", target="Go", reason=evil)),
        progress_line(step(2, message="extra")),
        result_line(report(step(0, message="first"))),
    )


@pytest.fixture
def suite(project: Path) -> Path:
    for name in ("a", "b"):
        (project / "suite").mkdir(exist_ok=True)
        (project / "suite" / f"{name}.yaml").write_text("steps:\n  - echo: hello\n")
    return project / "suite"


def test_a_server_that_does_not_stream_still_gets_every_step_printed_once(
    cli: Cli, project: Path, suite: Path, hostile: HostileToolServer
) -> None:
    steps = [step(0, message="one"), step(1, kind="wait", durationMs=3)]
    hostile.on("flow-execute", buffered({"data": report(*steps)}))
    done = cli.run("flow", "run", "suite", "--workers", "2", **hostile.env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(line for line in done.stdout.splitlines() if line.startswith("[suite/a.yaml] ")) == [
        "[suite/a.yaml] PASS (started on chromium-cdp-1) — 2 passed, 0 failed, 0 skipped, 0 errored",
        "[suite/a.yaml] started (1/2)",
        "[suite/a.yaml] › one",
        "[suite/a.yaml] ✓  2 wait [main]",
    ]


def test_streamed_lines_print_once_even_when_the_server_sends_more_than_its_steps(
    cli: Cli, project: Path, suite: Path, hostile: HostileToolServer
) -> None:
    hostile.on("flow-execute", more_lines_than_steps())
    done = cli.run("flow", "run", "suite", "--workers", "2", **hostile.env())
    assert not RAW_CONTROLS.search(done.stdout + done.stderr)
    mine = [line for line in done.stdout.splitlines() if "suite/a.yaml" in line]
    assert mine == [
        "[suite/a.yaml] started (1/2)",
        "[suite/a.yaml] › first",
        "[suite/a.yaml] ✗  2 tap Go [main] — x\\u001b]0;pwned\\u0007\\u202e",
        "[suite/a.yaml]      PASS — spoof",
        "[suite/a.yaml] › extra",
        "[suite/a.yaml] PASS (started on chromium-cdp-1) — 1 passed, 0 failed, 0 skipped, 0 errored",
    ]


def test_a_flows_notes_on_stderr_carry_its_prefix(
    cli: Cli, project: Path, suite: Path, hostile: HostileToolServer, tmp_path: Path
) -> None:
    planted = tmp_path / "elsewhere" / "evil.yaml"
    hostile.on("flow-execute", streamed(result_line(report(step(), savedTo=text_directive(planted)))))
    done = cli.run("flow", "run", "suite", "--workers", "2", **hostile.env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert not planted.parent.exists()
    refusals = [line for line in done.stderr.splitlines() if "client file not written" in line]
    assert sorted(line.split("] ", 1)[0] + "]" for line in refusals) == ["[suite/a.yaml]", "[suite/b.yaml]"]
    assert all(
        line.split("] ", 1)[1].startswith(f"✗ client file not written: {planted}: ") for line in refusals
    )


def test_one_worker_prints_streamed_lines_once_and_terminal_safe(
    cli: Cli, project: Path, suite: Path, hostile: HostileToolServer
) -> None:
    """The default ``--workers 1`` streams too (INTERFACE.md §4): the same lines, unprefixed."""
    hostile.on("flow-execute", more_lines_than_steps())
    done = cli.run("flow", "run", "suite", **hostile.env())
    assert not RAW_CONTROLS.search(done.stdout + done.stderr)
    flow = [
        "  › first",
        "  ✗  2 tap Go [main] — x\\u001b]0;pwned\\u0007\\u202e",
        "       PASS — spoof",
        "  › extra",
        "  PASS (started on chromium-cdp-1) — 1 passed, 0 failed, 0 skipped, 0 errored",
    ]
    assert done.stdout.splitlines() == [
        "[1/2] a.yaml",
        *flow,
        "[2/2] b.yaml",
        *flow,
        "",
        "PASS — 2 flows: 2 passed, 0 failed, 0 errored, 0 skipped",
    ]


def test_one_flow_with_workers_prefixes_its_notes_on_stderr(
    cli: Cli, project: Path, suite: Path, hostile: HostileToolServer, tmp_path: Path
) -> None:
    """§7's prefix is about N: one flow run with ``--workers 3`` prefixes its notes too."""
    planted = tmp_path / "elsewhere" / "evil.yaml"
    hostile.on(
        "flow-execute",
        streamed(
            progress_line(step(0, kind="tap", status="fail", target="Go", reason="one\nPASS — spoof")),
            result_line(report(step(), savedTo=text_directive(planted))),
        ),
    )
    done = cli.run("flow", "run", "suite/a.yaml", "--workers", "3", **hostile.env())
    assert done.returncode == 1, done.stdout + done.stderr
    assert not planted.parent.exists()
    assert done.stdout.splitlines()[:3] == [
        '[suite/a.yaml] Flow "a"',
        "[suite/a.yaml] ✗  1 tap Go [main] — one",
        "[suite/a.yaml]      PASS — spoof",
    ]
    assert all(line.startswith("[suite/a.yaml] ") for line in done.stdout.splitlines() if line)
    [refusal] = done.stderr.splitlines()
    assert refusal.startswith(f"[suite/a.yaml] ✗ client file not written: {planted}: ")
