"""What the plugin's options and pytest's config say: the flow directories and the project root,
kept in the config's stash; the one place the items, the runs and the fixtures read them from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FLOW_DIRS = pytest.StashKey[list[Path]]()
PROJECT_ROOT = pytest.StashKey[Path]()
#: The ``runs.FlowSession`` of this process, once a flow item ran.
SESSION = pytest.StashKey[object]()


def is_inside(path: Path, directory: Path) -> bool:
    """``path`` is ``directory`` or below it (lexically, both absolute)."""
    return path == directory or directory in path.parents


def flow_dirs(config: pytest.Config) -> list[Path]:
    """The flow directories of the run: ``--argent-flows`` (relative to where pytest was started),
    then the ini ``argent_flows`` (relative to the ini file); absolute, each once."""
    cached = config.stash.get(FLOW_DIRS, None)
    if cached is not None:
        return cached
    invoked = config.invocation_params.dir
    found: list[Path] = []
    given: list[Path] = [invoked / d for d in config.getoption("argent_flows") or []]
    given += list(config.getini("argent_flows"))
    for directory in given:
        absolute = Path(os.path.abspath(directory))
        if not absolute.is_dir():
            raise pytest.UsageError(f"argent flows: {absolute} is not a directory of flows.")
        if absolute not in found:
            found.append(absolute)
    config.stash[FLOW_DIRS] = found
    return found


def project_root(config: pytest.Config) -> Path:
    """The project root of the runs, as the CLI finds it from the directory pytest started in."""
    from argent.cli.targets import find_project_root

    root = config.stash.get(PROJECT_ROOT, None)
    if root is None:
        root = config.stash[PROJECT_ROOT] = find_project_root(config.invocation_params.dir)
    return root


def shares_a_link(linked: bool) -> bool:
    """Whether other pytest-xdist workers of this run call the same tool-server with the same token
    (over the configured link; without one each worker has its own): a browser one of them holds may
    be what the tool-server refuses this one (``TOO_MANY_DEVICES``), and its end frees it."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    return linked and workers.isdigit() and int(workers) > 1


def platforms(config: pytest.Config) -> list[str]:
    """``--argent-platform`` as given (repeatable), each once, in order."""
    given = config.getoption("argent_platform", None) or []
    return list(dict.fromkeys([given] if isinstance(given, str) else given))
