"""Suites across engines (INTERFACE.md section 11) on real Chromium and Firefox, through the real CLI and
the pytest plugin: every flow once per platform, each run named ``<flow path> [<platform>]`` in the
lines, JUnit, the HTML report and ``--json``; ``--shard`` over the runs; each engine its own baseline;
``launch:`` keys, ``when: { platform }`` and ``script:`` endpoints per engine; pinch refused naming it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.conftest import SHOP_PAGE, Cli, engine_marks, group_alive, start_server_process
from tests.e2e.test_cli_suite import junit, write

pytestmark = [*engine_marks("chromium"), *engine_marks("firefox")]

pytest_plugins = ["pytester"]

ENDPOINTS = """\
import os, sys
device = os.environ["ARGENT_DEVICE"]
with open(sys.argv[1] + "-" + device.split("-")[0], "w") as fh:
    fh.write(os.environ.get("ARGENT_BIDI_URL", "-") + " " + os.environ.get("ARGENT_CDP_URL", "-"))
"""

SHOP = """\
steps:
  - launch: { chromium: ../site }
  - tap: Add to cart
  - assert: { visible: In the cart }
  - snapshot: cart
  - when: { platform: firefox }
    steps:
      - script: { path: ../endpoints.py, args: [{out}] }
  - when: { platform: chromium }
    steps:
      - script: { path: ../endpoints.py, args: [{out}] }
"""

OWN_KEY = """\
steps:
  - launch: { chromium: site, firefox: fox }
  - assert: { visible: {text} }
"""


@pytest.fixture
def suite(project: Path) -> Path:
    write(project / "site" / "index.html", SHOP_PAGE)
    write(project / "fox" / "index.html", "<title>Fox</title><h1>Only on Firefox</h1>")
    write(project / "endpoints.py", ENDPOINTS)
    flows = project / "suite"
    write(flows / "a-shop.yaml", SHOP.replace("{out}", str(project / "seen")))
    write(flows / "b-pinch.yaml", "steps:\n  - launch: ../site\n  - pinch: { scale: 2 }\n")
    return flows


def test_a_suite_across_engines_runs_each_flow_once_per_platform(
    cli: Cli, project: Path, suite: Path
) -> None:
    both = ("--platform", "chromium", "--platform", "firefox")
    adopted = cli.run("flow", "run", "suite/a-shop.yaml", *both, "--update-baselines", timeout=180)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    assert "[1/2] suite/a-shop.yaml [chromium]" in adopted.stdout
    assert "[2/2] suite/a-shop.yaml [firefox]" in adopted.stdout
    baselines = sorted(p.name for p in (suite / "__baselines__" / "a-shop").iterdir())
    assert baselines == ["cart__chromium-1000x800.png", "cart__firefox-1000x800.png"]
    bidi = (project / "seen-firefox").read_text().split()
    cdp = (project / "seen-chromium").read_text().split()
    assert bidi[0].startswith("ws://127.0.0.1:") and bidi[0].endswith("/session") and bidi[1] == "-"
    assert cdp[0] == "-" and cdp[1].startswith("ws://127.0.0.1:")

    done = cli.run(
        "flow", "run", "suite", *both, "--junit-xml", "j.xml", "--html", "report", "--json", timeout=240
    )
    assert done.returncode == 1, done.stdout + done.stderr
    flows = json.loads(done.stdout)["flows"]
    assert [(Path(f["path"]).name, f["platform"], f["status"]) for f in flows] == [
        ("a-shop.yaml", "chromium", "pass"),
        ("a-shop.yaml", "firefox", "pass"),
        ("b-pinch.yaml", "chromium", "fail"),
        ("b-pinch.yaml", "firefox", "fail"),
    ]
    pinch = flows[3]["report"]["steps"][1]
    assert pinch["reason"].startswith(
        "pinch is unsupported on firefox — a Firefox page gets mouse and keyboard input only"
    )
    cases = junit(project / "j.xml").findall(".//testcase")
    assert [c.get("name") for c in cases] == [
        "suite/a-shop.yaml [chromium]",
        "suite/a-shop.yaml [firefox]",
        "suite/b-pinch.yaml [chromium]",
        "suite/b-pinch.yaml [firefox]",
    ]
    html = (project / "report" / "index.html").read_text()
    assert "suite/a-shop.yaml [firefox]" in html and "suite/b-pinch.yaml [chromium]" in html

    # --shard splits the (flow, platform) runs; --workers prefixes each line with the run's name.
    second = cli.run("flow", "run", "suite", *both, "--shard", "2/2", "--workers", "2", timeout=240)
    lines = second.stdout.splitlines()
    assert {line.split("] ", 1)[0] + "]" for line in lines if line.startswith("[")} == {
        "[suite/a-shop.yaml [firefox]]",
        "[suite/b-pinch.yaml [firefox]]",
    }


def test_an_engine_uses_its_own_launch_key_else_the_chromium_target(
    cli: Cli, project: Path, suite: Path
) -> None:
    write(project / "own.yaml", OWN_KEY.replace("{text}", "Only on Firefox"))
    on_firefox = cli.run("flow", "run", "own.yaml", "--platform", "firefox", timeout=120)
    assert on_firefox.returncode == 0, on_firefox.stdout + on_firefox.stderr
    assert "started on firefox-bidi-" in on_firefox.stdout
    write(
        project / "own.yaml",
        OWN_KEY.replace("{text}", "In the cart").replace("assert", "tap: Add to cart\n  - assert"),
    )
    on_chromium = cli.run("flow", "run", "own.yaml", timeout=120)
    assert on_chromium.returncode == 0, on_chromium.stdout + on_chromium.stderr
    assert "started on chromium-cdp-" in on_chromium.stdout


def test_a_missing_firefox_names_the_variable_and_the_package(cli: Cli, project: Path, suite: Path) -> None:
    done = cli.run(
        "flow",
        "run",
        "suite/a-shop.yaml",
        "--platform",
        "firefox",
        timeout=60,
        ARGENT_FIREFOX="/nonexistent/ff",
    )
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert 'ARGENT_FIREFOX="/nonexistent/ff" is not an executable file' in out
    assert "apt-get install firefox-esr" in out and "Traceback" not in out


def test_the_pytest_plugin_runs_each_flow_item_once_per_platform(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    for name in list(os.environ):
        if name.startswith("ARGENT_"):
            monkeypatch.delenv(name)
    pytester.makepyprojecttoml(
        "[tool.pytest.ini_options]\nargent_flows = ['.argent/flows']\n"
        "asyncio_default_fixture_loop_scope = 'function'\n"
    )
    write(pytester.path / "site" / "index.html", SHOP_PAGE)
    write(
        pytester.path / ".argent" / "flows" / "shop.yaml",
        "steps:\n  - launch: { chromium: ../../site }\n  - tap: Add to cart\n  - snapshot: cart\n",
    )
    both = ("--argent-platform", "chromium", "--argent-platform", "firefox")
    adopted = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-v", *both, "--argent-update-baselines"
    )
    adopted.assert_outcomes(passed=2)
    adopted.stdout.fnmatch_lines(
        ["*shop.yaml::shop[[]chromium[]] PASSED*", "*shop.yaml::shop[[]firefox[]] PASSED*"]
    )
    shots = sorted(p.name for p in (pytester.path / ".argent" / "flows" / "__baselines__" / "shop").iterdir())
    assert shots == ["cart__chromium-1000x800.png", "cart__firefox-1000x800.png"]
    only = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", *both, "-k", "firefox")
    only.assert_outcomes(passed=1, deselected=1)


def test_the_firefox_a_tool_server_booted_goes_when_the_server_exits(cli: Cli) -> None:
    server = start_server_process(cli)
    try:
        env = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token}
        booted = cli.run("run", "boot-device", "--platform", "firefox", "--json", timeout=120, **env)
        assert booted.returncode == 0, booted.stderr
        device = json.loads(booted.stdout)
        assert device["id"].startswith("firefox-bidi-")
        group = os.getpgid(device["pid"])
        listed = json.loads(cli.run("run", "list-devices", "--json", **env).stdout)["devices"]
        assert [(d["id"], d["platform"]) for d in listed] == [(device["id"], "firefox")]
        assert group_alive(group)
    finally:
        assert server.stop() == 0
    assert group_alive(group) == []
