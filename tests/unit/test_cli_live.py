"""The live status line: shown and replaced on a terminal, absent when piped; it names the step that
runs (from the flow's plan), times that step alone, and never names a step past the last one."""

from __future__ import annotations

import asyncio
import io

import pytest

from argent.cli.live import CLEAR_LINE, LiveStatus


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)


async def test_terminal_shows_a_running_line_that_report_lines_replace() -> None:
    out = Tty()
    async with LiveStatus(out) as live:
        live.line("  ✓  1 wait", next_step=2)
        while "… step 2 running (" not in out.getvalue():
            await asyncio.sleep(0.01)
        live.line("  ✓  2 wait", next_step=3)
    text = out.getvalue()
    before, after = text.split("  ✓  2 wait\n", 1)
    assert before.endswith(CLEAR_LINE)  # the status line was wiped before the report line
    assert after == "" or after.endswith(CLEAR_LINE)  # and nothing transient is left at the end


async def test_piped_output_gets_plain_lines_only() -> None:
    out = io.StringIO()
    async with LiveStatus(out) as live:
        live.line("  ✓  1 wait")
        await asyncio.sleep(0.25)
    assert out.getvalue() == "  ✓  1 wait\n"


def test_the_line_names_the_running_step_and_times_it_alone() -> None:
    clock = Clock()
    live = LiveStatus(Tty(), plan=["launch", 'tap "Save"', "wait"], clock=clock)
    clock.now += 2.0
    assert live.status() == "  … step 1 launch (2.0s)"
    live.reported(0, "launch")
    clock.now += 0.5
    assert live.status() == '  … step 2 tap "Save" (0.5s)'  # the clock restarted with step 2
    live.reported(1, "tap")
    clock.now += 3.2
    assert live.status() == "  … step 3 wait (3.2s)"


def test_past_the_last_step_it_is_finishing_never_a_step_that_does_not_exist() -> None:
    clock = Clock()
    live = LiveStatus(Tty(), plan=["wait", "wait"], clock=clock)
    live.reported(0, "wait")
    live.reported(1, "wait")
    clock.now += 0.3
    assert live.status() == "  … finishing (0.3s)"
    assert "step 3" not in live.status()


def test_a_line_the_plan_did_not_foresee_ends_the_plan() -> None:
    """A nested run numbers steps the plan cannot know: the line falls back to numbers, never naming
    a wrong step."""
    clock = Clock()
    live = LiveStatus(Tty(), plan=["tool flow-execute", 'tap "Save"'], clock=clock)
    live.reported(0, "tool")
    live.reported(1, "launch")  # the nested flow's first step, not the plan's tap
    assert live.plan is None
    assert live.status() == "  … step 3 running (0.0s)"


def test_a_long_step_name_is_cut_to_fit() -> None:
    live = LiveStatus(Tty(), plan=["tap " + "x" * 200], clock=Clock())
    assert live.status().startswith("  … step 1 tap xxx") and "…" in live.status()[8:]
    assert len(live.status()) < 90


async def test_colour_marks_the_lines_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR")
    out = Tty()
    live = LiveStatus(out, enabled=False)
    live.line("  ✓  1 wait")
    assert out.getvalue() == "  \x1b[32m✓\x1b[0m  1 wait\n"
