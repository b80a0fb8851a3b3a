"""Real open-source web apps from the package registries, installed once (scripts/install-realapps)
and started on loopback by the tests. Marked ``realapps``: ``pytest -m "not realapps"`` leaves them
out. Without the apps (no network for a cold install) they skip, saying why; under ``CI=true`` they
fail instead, so CI never passes by skipping them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli
from tests.realapps import apps


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI must run tests/realapps; scripts/test runs scripts/install-realapps)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def realapps_cache() -> Path:
    """Every app installed (a no-op when cached; the installer's lock serializes xdist workers)."""
    try:
        return apps.install()
    except apps.AppUnavailable as e:
        unavailable(str(e))
        raise AssertionError("unreachable") from e


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".argent" / "flows").mkdir(parents=True)
    return root


@pytest.fixture
def cli(tmp_path: Path, project: Path) -> Cli:
    home = tmp_path / "home"
    home.mkdir()
    return Cli(home=home, cwd=project)


@pytest.fixture
def private_tmp(tmp_path: Path) -> Iterator[Path]:
    """TMPDIR of the commands a test runs: every browser they launch has its home here, so the
    browsers of this test are counted apart from any other on the machine."""
    tmp = tmp_path / "cli-tmp"
    tmp.mkdir()
    yield tmp
