"""The CLI's errors, as Click exceptions: Click prints ``Error: <message>`` on stderr and exits.

Exit codes (INTERFACE.md §4): 1 a command that failed (a tool-server that refused or could not be
reached, a tool that failed), 2 a usage or path problem. Messages may quote a tool-server's words,
so they are made terminal-safe (``render.terminal_safe``) like every other line the CLI prints.
"""

from __future__ import annotations

import click

from argent.client.base import ToolCallError
from argent.reports.render import hang, terminal_safe


class CommandFailed(click.ClickException):
    """The command ran and failed: exit code 1."""

    exit_code = 1

    def format_message(self) -> str:
        return terminal_safe(self.message)


class UsageProblem(CommandFailed):
    """A problem with what the user typed: exit code 2."""

    exit_code = 2


#: Where Click's ``Error: `` prefix ends: a tool-server's message that spans lines continues there.
SERVER_MESSAGE_INDENT = " " * len("Error: ")


def server_message(exc: ToolCallError) -> str:
    """A tool-server's error message for ``Error: ``, each line after its first indented under it: a
    server (a hostile one, or a script's stderr tail) cannot start a line of its own, say a ``PASS``.
    The client's own hint (where a refused token comes from) keeps its line of its own."""
    said = hang(exc.said, SERVER_MESSAGE_INDENT)
    return said if exc.hint is None else f"{said}\n{exc.hint}"


def call_failed(exc: ToolCallError) -> CommandFailed:
    """A failed call as the CLI's error: bad arguments or an unknown tool are usage problems."""
    message = server_message(exc)
    return UsageProblem(message) if exc.is_usage else CommandFailed(message)
