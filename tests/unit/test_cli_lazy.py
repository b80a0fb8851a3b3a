"""The lazy `argent` group: the help it shows without importing a subcommand is the help they give."""

from __future__ import annotations

import importlib

import click
from click.testing import CliRunner

from argent.cli.main import COMMANDS, LazyGroup, cli


def _command(path: str) -> click.Command:
    module, _, attr = path.partition(":")
    command = getattr(importlib.import_module(module), attr)
    assert isinstance(command, click.Command)
    return command


def test_the_listed_help_is_what_the_commands_say() -> None:
    eager = click.Group("argent", help=cli.help, context_settings=cli.context_settings, params=cli.params)
    for name, (path, _) in COMMANDS.items():
        eager.add_command(_command(path), name)
    lazy = LazyGroup(
        "argent", help=cli.help, context_settings=cli.context_settings, params=cli.params, lazy=COMMANDS
    )
    shown = CliRunner().invoke(lazy, ["--help"], prog_name="argent")
    expected = CliRunner().invoke(eager, ["--help"], prog_name="argent")
    assert shown.exit_code == 0 and expected.exit_code == 0
    assert shown.output == expected.output
    assert "Commands:\n  flow    Run, check and list recorded flows." in shown.output


def test_each_listed_command_is_named_as_listed_and_runs_through_the_group() -> None:
    for name, (path, _) in COMMANDS.items():
        assert _command(path).name == name
    result = CliRunner().invoke(cli, ["flow", "--help"], prog_name="argent")
    assert result.exit_code == 0 and "Run, check and list recorded flows." in result.output
    result = CliRunner().invoke(cli, ["nope"], prog_name="argent")
    assert result.exit_code == 2 and "No such command 'nope'" in result.output
