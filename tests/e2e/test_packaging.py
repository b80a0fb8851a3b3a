"""The distribution a user installs: `argent-flows`, built as sdist and wheel, checked as the package
index checks it, installed from the wheel into a fresh venv, and run there (a flow on real Chromium).

The name `argent` on the package index belongs to an unrelated project; the import package and the
command stay `argent` (INTERFACE.md section 12).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from argent.devices.chromium import chromium_unavailable_reason

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "argent-flows"
FLOW = """\
steps:
  - launch: page.html
  - assert: { visible: { text: Installed from the wheel } }
  - tap: Press me
  - assert: { text: { in: { id: out }, equals: pressed } }
"""
PAGE = """<!doctype html><meta charset="utf-8"><p>Installed from the wheel</p>
<button onclick="document.getElementById('out').textContent = 'pressed'">Press me</button><p id="out"></p>
"""


def _run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"{args!r} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, ROOT)
    return out


def test_the_sdist_and_wheel_are_argent_flows_and_pass_twine_check(dist: Path) -> None:
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    assert [w.name.split("-")[0] for w in wheels] == ["argent_flows"]
    assert [s.name.rsplit("-", 1)[0] for s in sdists] == ["argent_flows"]
    out = _run(sys.executable, "-m", "twine", "check", "--strict", *wheels, *sdists)
    assert out.count("PASSED") == 2
    with zipfile.ZipFile(wheels[0]) as whl:
        names = set(whl.namelist())
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        headers = whl.read(meta).decode()
        entry_points = whl.read(meta.replace("METADATA", "entry_points.txt")).decode()
    assert f"Name: {DISTRIBUTION}\n" in headers
    # The page-side scripts ship inside the package (a wheel without them drives no browser).
    assert {n for n in names if n.endswith(".js")}, "the wheel carries no page-side script"
    # ... and the guide for agents that `argent mcp` serves as its instructions (docs/agents.md is it).
    assert "argent/mcp/agents.md" in names
    assert "argent.cli.main:main" in entry_points and "argent = argent.testing" in entry_points


def test_the_wheel_installs_into_a_fresh_venv_and_runs_a_flow(dist: Path, tmp_path: Path) -> None:
    if (reason := chromium_unavailable_reason()) is not None:
        pytest.skip(reason)
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    py = venv / "bin" / "python"
    (wheel,) = dist.glob("*.whl")
    _run(py, "-m", "pip", "install", "--disable-pip-version-check", "-q", wheel)
    shown = _run(py, "-m", "pip", "show", DISTRIBUTION)
    assert f"Name: {DISTRIBUTION}" in shown
    project = tmp_path / "project"
    flows = project / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "smoke.yaml").write_text(FLOW)
    (flows / "page.html").write_text(PAGE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_") or k == "ARGENT_CHROMIUM"}
    env["HOME"] = str(tmp_path / "home")
    out = _run(venv / "bin" / "argent", "flow", "run", "smoke", cwd=project, env=env)
    assert "4 passed, 0 failed, 0 skipped, 0 errored" in out, out
    # The command runs the installed copy, not this checkout.
    where = _run(py, "-c", "import argent, sys; sys.stdout.write(argent.__file__)", cwd=tmp_path)
    assert where.startswith(str(venv)), where
