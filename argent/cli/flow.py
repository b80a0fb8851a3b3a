"""`argent flow run` and `argent flow list`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from argent.cli.flow_run import FlowRunCommand
from argent.cli.local import chosen_route, local_option
from argent.cli.suite import SuiteOptions, across_platforms, run_flows, suite_options
from argent.cli.targets import (
    UsageProblem,
    find_project_root,
    list_saved_flows,
    resolve_flow_ref,
)
from argent.devices.registry import ID_EXAMPLES, PLATFORMS
from argent.driver import run_options
from argent.reports.render import echo

EXIT_OK, EXIT_FAILED = 0, 1


@click.group()
def flow() -> None:
    """Run, check and list recorded flows."""


def _project_root(option: str | None) -> Path:
    if option:
        root = Path(option).expanduser()
        if not root.is_dir():
            raise UsageProblem(f"--project-root is not a directory: {root}")
        return root.resolve()
    return find_project_root(Path.cwd())


@flow.command("run")
@click.argument("ref", metavar="<name|path.yaml|dir>")
@click.option(
    "--project-root",
    type=click.Path(file_okay=False),
    help="Project directory (default: nearest ancestor with .argent, .git or pyproject.toml).",
)
@click.option("--device", help=f"Device id to run on, e.g. {ID_EXAMPLES}.")
@click.option(
    "--platform",
    "platforms",
    type=click.Choice(PLATFORMS),
    multiple=True,
    help="Platform of the run; repeat it to run every flow once per platform (e.g. --platform chromium "
    "--platform firefox).",
)
@click.option("--update-baselines", is_flag=True, help="Adopt the current screen as the snapshot baselines.")
@click.option("--output", type=click.Path(file_okay=False), help="Copy the images of failed snapshots here.")
@click.option("-r", "--recursive", is_flag=True, help="With a directory: include its subdirectories.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@local_option
@suite_options
def run_command(
    ref: str,
    project_root: str | None,
    device: str | None,
    platforms: tuple[str, ...],
    update_baselines: bool,
    output: str | None,
    recursive: bool,
    as_json: bool,
    suite: SuiteOptions,
) -> None:
    """Run a saved flow by name, a flow file, or every flow of a directory.

    Exit codes: 0 all passed, 1 a flow failed or errored, 2 usage or path error.
    """
    root = _project_root(project_root)
    targets = resolve_flow_ref(ref, root, recursive=recursive)
    chosen = tuple(dict.fromkeys(platforms))  # each once, in the order given
    if len(chosen) > 1:
        targets = across_platforms(targets, chosen)
    one = chosen[0] if len(chosen) == 1 else None
    options = run_options(device=device, platform=one, update_baselines=update_baselines)
    runner = FlowRunCommand(root, options, as_json=as_json, output=output, route=chosen_route())
    click.get_current_context().exit(run_flows(runner, targets, suite, ref=ref))


@flow.command("check")
@click.argument("ref", metavar="<name|path.yaml|dir>")
@click.option(
    "--project-root",
    type=click.Path(file_okay=False),
    help="Project directory (default: nearest ancestor with .argent, .git or pyproject.toml).",
)
@click.option("-r", "--recursive", is_flag=True, help="With a directory: include its subdirectories.")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON on stdout.")
@local_option
def check(ref: str, project_root: str | None, recursive: bool, as_json: bool) -> None:
    """Check flows and every file they reach, without starting a device.

    One line per problem: <path>:<line>: <what is wrong>. <what to do>.
    Exit codes: 0 every flow valid, 1 a problem found, 2 usage or path error.
    """
    from argent.cli.check import check_command

    root = _project_root(project_root)
    targets = resolve_flow_ref(ref, root, recursive=recursive, command="check")
    selected = [targets] if not isinstance(targets, list) else targets
    local = chosen_route() is not None
    click.get_current_context().exit(check_command(selected, root, as_json=as_json, local=local))


@flow.command("list")
@click.option("--project-root", type=click.Path(file_okay=False), help="Project directory.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def list_command(project_root: str | None, as_json: bool) -> None:
    """List the saved flows in .argent/flows."""
    root = _project_root(project_root)
    names = list_saved_flows(root)
    if as_json:
        echo(json.dumps(names))
    elif not names:
        echo("No flows found in .argent/flows")
    else:
        for name in names:
            echo(name)
