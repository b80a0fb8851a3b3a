"""`argent init [DIR]` (INTERFACE.md section 12): a starter project that `argent flow run example`
passes at once, and never a file overwritten."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from argent.cli.init import STARTER
from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e


def test_init_makes_a_project_whose_example_flow_passes(cli: Cli, tmp_path: Path) -> None:
    from argent.devices.chromium import chromium_unavailable_reason

    if (reason := chromium_unavailable_reason()) is not None:
        pytest.skip(reason)
    done = cli.run("init", "starter", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "starter"
    assert done.stdout.splitlines()[-1] == "Next: cd starter && argent flow run example"
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == sorted(
        r for r, _ in STARTER
    )
    run = cli.run("flow", "run", "example", cwd=root)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "5 passed, 0 failed, 0 skipped, 0 errored" in run.stdout


def test_init_here_names_the_next_command_without_cd(cli: Cli, tmp_path: Path) -> None:
    done = cli.run("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "Next: argent flow run example"


@pytest.mark.parametrize("existing", [rel for rel, _ in STARTER])
def test_an_existing_file_is_never_overwritten_and_nothing_is_written(
    cli: Cli, tmp_path: Path, existing: str
) -> None:
    taken = tmp_path / existing
    taken.parent.mkdir(parents=True, exist_ok=True)
    taken.write_text("mine")
    done = cli.run("init", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"Error: {taken} already exists; argent init never overwrites a file. Run it in an empty "
        "directory, or move that file away.\n"
    )
    assert taken.read_text() == "mine"
    others = [tmp_path / rel for rel, _ in STARTER if rel != existing]
    assert not any(p.exists() for p in others)


def test_a_link_in_the_way_is_refused_not_followed(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.yaml"
    flows = tmp_path / "fresh" / ".argent" / "flows"
    flows.mkdir(parents=True)
    os.symlink(target, flows / "example.yaml")  # a dangling link: following it would create elsewhere.yaml
    done = cli.run("init", "fresh", cwd=tmp_path)
    assert done.returncode == 2 and "example.yaml already exists" in done.stderr
    assert not target.exists()
