"""The pytest plugin on the real headless Chromium: a flow item that launches the browser, snapshots
adopted with ``--argent-update-baselines`` then compared, ``argent_run_flow`` launching from a plain
test, and no Chromium left behind by the pytest run (its tool-servers stop with it)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from argent.devices.chromium.launcher import processes_naming
from argent.devices.registry import engine_named
from tests.e2e.conftest import ENGINES, SHOP_PAGE, chromium_marks, on_engines

pytest_plugins = ["pytester"]

pytestmark = chromium_marks()

SHOP = (
    "steps:\n  - launch: { chromium: ../../site }\n  - tap: Add to cart\n"
    "  - assert: { visible: In the cart }\n  - snapshot: cart\n"
)
PLAIN_TEST = """
import pytest

@pytest.mark.asyncio
async def test_launching_from_a_plain_test(argent_run_flow):
    result = await argent_run_flow("shop")
    assert [(s["kind"], s["status"]) for s in result["steps"]] == [
        ("launch", "pass"), ("tap", "pass"), ("assert", "pass"), ("snapshot", "pass")
    ], result
    assert result["device"].startswith("chromium-cdp-")
"""


def browsers(tmp: Path) -> list[int]:
    return processes_naming(str(tmp))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> pytest.Pytester:
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    for name in list(os.environ):
        if name.startswith("ARGENT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "300")
    pytester.makepyprojecttoml(
        "[tool.pytest.ini_options]\nargent_flows = ['.argent/flows']\n"
        "asyncio_default_fixture_loop_scope = 'function'\n"
    )
    write(pytester.path / "site" / "index.html", SHOP_PAGE)
    write(pytester.path / ".argent" / "flows" / "shop.yaml", SHOP)
    return pytester


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TMPDIR of the pytest runs: each Chromium they launch has its home here, counted apart."""
    tmp = tmp_path / "run-tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    return tmp


@pytest.mark.parametrize("platform", on_engines(*ENGINES))
def test_a_launching_flow_item_adopts_then_compares_its_snapshot(
    project: pytest.Pytester, private_tmp: Path, platform: str
) -> None:
    engine = engine_named(platform)
    assert engine is not None
    on = ("--argent-platform", platform)
    baseline = (
        project.path / ".argent" / "flows" / "__baselines__" / "shop" / f"cart__{platform}-1000x800.png"
    )
    missing = project.runpytest_subprocess("-p", "no:cacheprovider", *on, timeout=180)
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(
        [
            "*_ flow .argent/flows/shop.yaml _*",
            'Flow "shop"',
            "  ✓  1 launch",
            '  ✓  2 tap "Add to cart"',
            '  ✓  3 assert visible "In the cart"',
            '  ✗  4 snapshot "cart" — no baseline for "cart" on this device class — *',
            f"       current: *cart__{platform}-1000x800-current.png",
            "",
            f"FAIL (started on {engine.id_prefix}*) — 3 passed, 1 failed, 0 skipped, 0 errored",
        ]
    )
    assert not baseline.exists()

    adopted = project.runpytest_subprocess(
        "-p", "no:cacheprovider", *on, "--argent-update-baselines", timeout=180
    )
    adopted.assert_outcomes(passed=1)
    assert baseline.is_file()

    project.makepyfile(test_plain=PLAIN_TEST.replace("chromium-cdp-", engine.id_prefix))
    # Two xdist workers, each launching its own browser from its own tool-server at the same time.
    workers = ("-n", "2") if os.environ.get("CI") == "true" or importlib.util.find_spec("xdist") else ()
    compared = project.runpytest_subprocess("-p", "no:cacheprovider", "-rA", *on, *workers, timeout=180)
    compared.assert_outcomes(passed=2)
    assert browsers(private_tmp) == []
    # What stays is the prepared profile an engine copies per browser (Firefox's), never a browser's home.
    homes = [n for n in os.listdir(private_tmp) if n.startswith("argent-") and "-template-" not in n]
    assert homes == []


ARRIVE = """\
import os, sys, time
with open(sys.argv[1], "w") as fh:
    fh.write(str(os.getpid()))
time.sleep(120)
"""


def test_an_interrupted_run_leaves_no_chromium_and_no_script_behind(
    project: pytest.Pytester, private_tmp: Path
) -> None:
    """Ctrl-C in the middle of a flow item: pytest stops as interrupted, the call is cancelled, the
    in-process tool-server aborts the run and stops, and its browser and the step's script go."""
    arrived = project.path / "arrived"
    write(project.path / "arrive.py", ARRIVE)
    write(
        project.path / ".argent" / "flows" / "shop.yaml",
        f"steps:\n  - launch: {{ chromium: ../../site }}\n  - script: {{ path: ../../arrive.py, args: [{arrived}] }}\n",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
        cwd=project.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not arrived.exists() or not arrived.read_text():  # no event to wait on: the file is the sign
            assert proc.poll() is None and time.monotonic() < deadline, "the flow never reached its script"
            time.sleep(0.05)
        assert browsers(private_tmp) != []
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out
    assert browsers(private_tmp) == []
    script = int(arrived.read_text())
    assert (
        not Path(f"/proc/{script}").exists()
        or Path(f"/proc/{script}/stat").read_text().split(") ")[1][0] == "Z"
    )
