"""The CLI's errors, as Click exceptions: Click prints ``Error: <message>`` on stderr and exits.

Exit codes (INTERFACE.md §4): 1 a command that failed (a tool-server that refused or could not be
reached, a tool that failed), 2 a usage or path problem. Messages may quote a tool-server's words,
so they are made terminal-safe (``render.terminal_safe``) like every other line the CLI prints.
"""

from __future__ import annotations

import click

from argent.client.base import ToolCallError
from argent.reports.render import terminal_safe


class CommandFailed(click.ClickException):
    """The command ran and failed: exit code 1."""

    exit_code = 1

    def format_message(self) -> str:
        return terminal_safe(self.message)


class UsageProblem(CommandFailed):
    """A problem with what the user typed: exit code 2."""

    exit_code = 2


def call_failed(exc: ToolCallError) -> CommandFailed:
    """A failed call as the CLI's error: bad arguments or an unknown tool are usage problems."""
    return UsageProblem(exc.message) if exc.is_usage else CommandFailed(exc.message)
