"""What the CLI prints from a tool-server never carries a character a terminal acts on."""

from __future__ import annotations

import io
import json

import pytest

from argent.cli.live import CLEAR_LINE, LiveStatus
from argent.reports.render import json_text, step_lines, summary_line, terminal_safe


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J", "\\u001b[2J"),
        ("\x07\x08\x00\r", "\\u0007\\u0008\\u0000\\u000d"),
        ("\x7f\x85\x9b\x9f", "\\u007f\\u0085\\u009b\\u009f"),
        ("a\u202eb\u2066c\u200fd\u061c", "a\\u202eb\\u2066c\\u200fd\\u061c"),
        ("lone \ud800", "lone \\ud800"),
    ],
)
def test_terminal_controls_are_shown_escaped(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown


def test_text_without_controls_is_left_as_it_is() -> None:
    text = "line one\n\ttab é ✓ 日本 🙂 \\u001b"
    assert terminal_safe(text) is text


def test_json_text_stays_valid_json_of_the_same_value() -> None:
    value = {"reason": "\x1b[31m\x85\u202e\ud800\x7f", "é": ["✓"]}
    text = json_text(value)
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in text.replace("\n", ""))
    assert json.loads(text) == value


def test_a_live_line_is_escaped_and_the_status_line_keeps_its_own_sequence() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    live = LiveStatus(out, enabled=True)
    live._shown = True  # a status line is on screen
    live.line("\x1b]0;title\x07")
    assert out.getvalue() == CLEAR_LINE + "\\u001b]0;title\\u0007\n"


def test_malformed_reports_render_without_a_crash() -> None:
    assert step_lines({"index": "x", "kind": "tap", "status": "fail", "artifacts": ["a"]}, "m") == [
        "  ✗  1 tap"
    ]
    assert step_lines(["not a step"], "m") == ["  ? ['not a step']"]
    bad = {"ok": False, "passed": "1", "failed": None, "steps": [1, {"status": "pass", "warning": "w"}]}
    assert summary_line(bad) == "FAIL — 0 passed, 0 failed, 0 skipped, 0 errored, 1 warning"
