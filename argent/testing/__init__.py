"""The pytest plugin ``argent`` (entry point group ``pytest11``; INTERFACE.md §8).

Installing argent registers it in every pytest run, so it does nothing unless asked, and importing
it stays cheap: what runs flows is imported when a flow item or a fixture first needs it.

- ``--argent-flows DIR`` (repeatable) or the ini key ``argent_flows``: every flow file under DIR,
  subdirectories included, is a test item ``<path>::<flow stem>`` (``items``), run through the
  tool-server of this process (``runs``): the configured link, else one started in process.
- ``--argent-update-baselines``, ``--argent-device ID``, ``--argent-platform P``: for those runs,
  and the defaults of ``argent_run_flow``. ``--argent-platform`` is repeatable: with more than one,
  each flow file is one item per platform, its id ending with ``[<platform>]``.
- Fixtures ``argent_server`` and ``argent_run_flow`` (``fixtures``), built on pytest-aiohttp.

Under pytest-xdist each worker collects and runs on its own, so each has its own tool-server.
"""

from __future__ import annotations

import os
import warnings
from importlib.util import find_spec
from pathlib import Path

import pytest

from argent.devices.registry import ID_EXAMPLES, PLATFORMS
from argent.testing.items import FlowDirectory
from argent.testing.options import SESSION, flow_dirs, is_inside

if find_spec("pytest_aiohttp") is not None and find_spec("pytest_asyncio") is not None:
    from argent.testing.fixtures import argent_run_flow, argent_server
else:  # pragma: no cover - the test extra always has pytest-aiohttp
    from argent.testing.missing import argent_run_flow, argent_server

__all__ = ["argent_run_flow", "argent_server"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("argent", "argent flows")
    group.addoption(
        "--argent-flows",
        action="append",
        default=[],
        metavar="DIR",
        help="Collect every flow file under DIR (subdirectories included) as a test item; repeatable.",
    )
    group.addoption(
        "--argent-update-baselines",
        action="store_true",
        default=False,
        help="Adopt the current screen as the snapshot baselines of the flows run.",
    )
    group.addoption("--argent-device", metavar="ID", help=f"Device id the flows run on, e.g. {ID_EXAMPLES}.")
    group.addoption(
        "--argent-platform",
        action="append",
        default=[],
        choices=PLATFORMS,
        help="Platform of the flow runs; repeat it to run every flow once per platform (item ids end with "
        "[<platform>]).",
    )
    parser.addini(
        "argent_flows",
        type="paths",
        default=[],
        help="Directories whose flow files are test items (relative to the ini file), as --argent-flows.",
    )


#: pytest-asyncio's notice, at configure time, that a project left its fixture loop scope unset.
_LOOP_SCOPE_UNSET = r'The configuration option "asyncio_default_fixture_loop_scope" is unset'


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    flow_dirs(config)  # a flow directory that is not one is a usage error before anything runs
    # Installing argent-flows[pytest] brings pytest-asyncio, which warns in every run of a project
    # whose config does not set its loop scope, even one with no async code of its own (only flows):
    # argent's own async fixtures name their loop scope, so the notice concerns nothing we brought.
    try:
        scope = config.getini("asyncio_default_fixture_loop_scope")
    except ValueError:  # pytest-asyncio is not installed: nothing warns
        return
    if not scope:
        warnings.filterwarnings("ignore", message=_LOOP_SCOPE_UNSET, category=pytest.PytestDeprecationWarning)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """Add each flow directory to what pytest collects, unless an argument already names it or a
    path inside it (then that argument says which of its flows to run)."""
    config = session.config
    invoked = config.invocation_params.dir
    named = [Path(os.path.abspath(invoked / arg.split("::", 1)[0])) for arg in config.args]
    for directory in flow_dirs(config):
        if not any(is_inside(path, directory) for path in named):
            config.args.append(str(directory))


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The directories above a flow directory are entered even where ``norecursedirs`` would skip
    them (``.argent``), so a flow directory below an argument is collected."""
    dirs = flow_dirs(config)
    if dirs and any(is_inside(d, collection_path) for d in dirs) and collection_path.is_dir():
        return False
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if any(is_inside(path, d) for d in flow_dirs(parent.config)):
        return FlowDirectory.from_parent(parent, path=path)
    return None


def pytest_sessionfinish(session: pytest.Session) -> None:
    if SESSION in session.config.stash:
        from argent.testing.runs import close_flow_session

        close_flow_session(session.config)
