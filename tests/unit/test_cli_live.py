"""The live status line: shown and replaced on a terminal, absent when piped."""

from __future__ import annotations

import asyncio
import io

from argent.cli.live import CLEAR_LINE, LiveStatus


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_terminal_shows_a_running_line_that_report_lines_replace() -> None:
    out = Tty()
    async with LiveStatus(out) as live:
        live.line("  ✓  1 wait", next_step=2)
        await asyncio.sleep(0.25)
        assert "… step 2 running (" in out.getvalue()
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
