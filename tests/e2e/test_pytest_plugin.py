"""The pytest plugin ``argent`` (INTERFACE.md §8) as a user's project meets it: real pytest runs in
a temp project that has no conftest (``pytester``: runs that run flows in a subprocess, collections
in process), the plugin found through its ``pytest11`` entry point, the flows run on real tool-servers."""

from __future__ import annotations

import configparser
import importlib.metadata
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, start_server_process

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]
PASSING = "steps:\n  - echo: hello\n  - wait: 1\n"
#: A flow whose second step errors as it runs (a call no check before the run can judge).
FAILING = "steps:\n  - wait: 1\n  - tool: flow-read-prerequisite\n    args: { name: gone }\n  - wait: 1\n"
INVALID = "steps:\n  - bogus: line\n"


@pytest.fixture
def project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> pytest.Pytester:
    """A project with flows and no conftest; routing as on a machine without a link (an empty HOME
    of its own, so no ~/.argent/link.json)."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    for name in list(os.environ):
        if name.startswith("ARGENT_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "300")  # the short summary lines are not cut
    pytester.makepyprojecttoml("[tool.pytest.ini_options]\nasyncio_default_fixture_loop_scope = 'function'\n")
    write(pytester.path / ".argent" / "flows" / "a-pass.yaml", PASSING)
    write(pytester.path / ".argent" / "flows" / "b-fail.yaml", FAILING)
    return pytester


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


# --------------------------------------------------------------------------------------------
# Installation


def test_the_entry_point_is_declared_and_installed() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["options.entry_points"]["pytest11"].split() == ["argent", "=", "argent.testing"]
    installed = importlib.metadata.entry_points(group="pytest11", name="argent")
    assert [ep.value for ep in installed] == ["argent.testing"], "reinstall argent: pip install -e '.[test]'"


def test_it_does_nothing_unless_asked(project: pytest.Pytester) -> None:
    project.makepyfile(test_plain="def test_plain():\n    pass\n")
    done = project.runpytest_inprocess("--co", "-q")
    assert collected(done) == ["test_plain.py::test_plain"]
    helped = project.runpytest_inprocess("--help")
    for option in (
        "--argent-flows=DIR",
        "--argent-update-baselines",
        "--argent-device=ID",
        "--argent-platform",
    ):
        assert option in helped.stdout.str()
    assert "argent_flows (paths):" in helped.stdout.str()


def test_a_bare_pytest_ini_runs_flows_with_no_warning(tmp_path: Path) -> None:
    """A project with only flows and a bare ``pytest.ini``: no warning of ours or of the dependencies
    argent-flows[pytest] brings (pytest-asyncio warns of an unset loop scope by default); the notice
    still reaches a project that has async code of its own only through its own config."""
    project = tmp_path / "proj"
    write(project / "pytest.ini", "[pytest]\n")
    write(project / "flows" / "hello.yaml", PASSING)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGENT_", "PYTEST_"))}
    env.update(HOME=str(tmp_path / "home"), COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--argent-flows", "flows", "-p", "no:cacheprovider"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "warning" not in (done.stdout + done.stderr).lower(), done.stdout + done.stderr


# --------------------------------------------------------------------------------------------
# Collection


def test_every_flow_file_under_the_dirs_is_an_item_named_by_its_path(project: pytest.Pytester) -> None:
    flows = project.path / ".argent" / "flows"
    write(flows / "sub" / "deeper" / "c.yaml", PASSING)
    write(flows / "__baselines__" / "a-pass" / "x.yaml", PASSING)
    write(flows / ".hidden" / "h.yaml", PASSING)
    write(flows / "node_modules" / "n.yaml", PASSING)
    write(flows / "Not a flow.yaml", PASSING)
    write(flows / "notes.yml", PASSING)
    write(flows / "test_helper.py", "def test_never():\n    pass\n")
    write(project.path / "e2e" / "checkout.yaml", PASSING)
    project.makepyfile(test_plain="def test_plain():\n    pass\n")
    done = project.runpytest_inprocess(
        "--co", "-q", "--argent-flows", ".argent/flows", "--argent-flows", "e2e"
    )
    assert collected(done) == [  # in pytest's order: the project dir holds them all
        ".argent/flows/a-pass.yaml::a-pass",
        ".argent/flows/b-fail.yaml::b-fail",
        ".argent/flows/sub/deeper/c.yaml::c",
        "e2e/checkout.yaml::checkout",
        "test_plain.py::test_plain",
    ]
    ignored = project.runpytest_inprocess(
        "--co", "-q", "--argent-flows", ".argent/flows", "--ignore", ".argent/flows/sub", "test_plain.py"
    )
    assert collected(ignored) == [
        "test_plain.py::test_plain",
        ".argent/flows/a-pass.yaml::a-pass",
        ".argent/flows/b-fail.yaml::b-fail",
    ]


def test_the_ini_key_is_relative_to_the_ini_file_and_an_argument_inside_picks_flows(
    project: pytest.Pytester,
) -> None:
    project.makepyprojecttoml(
        "[tool.pytest.ini_options]\nargent_flows = ['.argent/flows']\n"
        "asyncio_default_fixture_loop_scope = 'function'\n"
    )
    tests = project.mkdir("tests")
    write(tests / "test_unit.py", "def test_unit():\n    pass\n")
    everything = project.runpytest_inprocess("--co", "-q")
    assert collected(everything) == [
        ".argent/flows/a-pass.yaml::a-pass",
        ".argent/flows/b-fail.yaml::b-fail",
        "tests/test_unit.py::test_unit",
    ]
    one = project.runpytest_inprocess("--co", "-q", ".argent/flows/b-fail.yaml")
    assert collected(one) == [".argent/flows/b-fail.yaml::b-fail"]
    by_id = project.runpytest_inprocess("--co", "-q", ".argent/flows/a-pass.yaml::a-pass", "tests")
    assert collected(by_id) == [".argent/flows/a-pass.yaml::a-pass", "tests/test_unit.py::test_unit"]
    picked = project.runpytest_inprocess("--co", "-q", "-k", "fail")
    assert collected(picked) == [".argent/flows/b-fail.yaml::b-fail"]
    os.chdir(tests)  # pytester restores the working directory
    below = project.runpytest_subprocess("-q", "-k", "pass or unit")
    below.assert_outcomes(passed=2)


def test_a_flow_dir_that_is_not_a_directory_is_a_usage_error(project: pytest.Pytester) -> None:
    done = project.runpytest_inprocess("--argent-flows", "missing")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    assert f"argent flows: {project.path / 'missing'} is not a directory of flows." in done.stderr.str()


# --------------------------------------------------------------------------------------------
# Running


def test_passing_and_failing_flows_with_the_step_lines_the_cli_prints(project: pytest.Pytester) -> None:
    write(project.path / ".argent" / "flows" / "c-invalid.yaml", INVALID)
    done = project.runpytest_subprocess("--argent-flows", ".argent/flows", "-rA", "--junitxml", "j.xml")
    done.assert_outcomes(passed=1, failed=2)
    assert done.ret == pytest.ExitCode.TESTS_FAILED
    cli = subprocess.run(
        [sys.executable, "-m", "argent", "flow", "run", ".argent/flows/b-fail.yaml"],
        cwd=project.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 1
    printed = cli.stdout.splitlines()  # Flow "b-fail", the three step lines, "", the summary
    assert printed[0] == 'Flow "b-fail"' and len(printed) == 6
    out = done.outlines
    section = out.index(printed[0])
    assert out[section - 1].startswith("_") and " flow .argent/flows/b-fail.yaml " in out[section - 1]
    assert out[section : section + 6] == printed
    failing_step = printed[2]
    assert failing_step == (
        "  ✗  2 tool flow-read-prerequisite — Invalid arguments for flow-read-prerequisite: project_root is required"
    )
    assert f"FAILED .argent/flows/b-fail.yaml::b-fail - {failing_step.strip()}" in out
    invalid = [
        line for line in out if line.startswith(("Error: not started", "       .argent/flows/c-invalid"))
    ]
    assert invalid == [
        "Error: not started: 1 problem found before any device started:",
        "       .argent/flows/c-invalid.yaml:2: step 1: unrecognized step kind. See docs/flows.md for every "
        "directive and its keys.",
    ]
    assert "PASSED .argent/flows/a-pass.yaml::a-pass" in out
    # pytest's own JUnit report carries the same: the failing step as the message, every line in the text
    cases = {case.get("name"): case for case in ET.parse(project.path / "j.xml").iter("testcase")}
    assert list(cases) == ["a-pass", "b-fail", "c-invalid"]
    failure = cases["b-fail"].find("failure")
    assert failure is not None and failure.get("message") == failing_step.strip()
    assert (failure.text or "").splitlines() == printed


def test_a_failure_shows_what_a_terminal_would_act_on_as_escapes(project: pytest.Pytester) -> None:
    write(
        project.path / ".argent" / "flows" / "b-fail.yaml",
        'steps:\n  - echo: "\\e]0;pwned\\a\\u202e"\n  - tool: flow-read-prerequisite\n    args: { name: gone }\n',
    )
    done = project.runpytest_subprocess("--argent-flows", ".argent/flows", "-k", "fail")
    done.assert_outcomes(failed=1)
    text = done.stdout.str()
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    done.stdout.fnmatch_lines(
        ['Flow "b-fail"', "  › \\u001b]0;pwned\\u0007\\u202e", "  ✗  2 tool flow-read-prerequisite*"]
    )


def test_the_run_options_reach_the_flows(project: pytest.Pytester) -> None:
    write(project.path / ".argent" / "flows" / "tapper.yaml", "steps:\n  - tap: Save\n")
    device = project.runpytest_subprocess(
        "--argent-flows", ".argent/flows", "-k", "tapper", "--argent-device", "chromium-cdp-1"
    )
    device.assert_outcomes(failed=1)
    # an explicit device is looked up at the first step that acts on it: that step reports it
    device.stdout.fnmatch_lines(['*1 tap "Save" — No device "chromium-cdp-1" found*'])
    platform = project.runpytest_subprocess(
        "--argent-flows", ".argent/flows", "-k", "tapper", "--argent-platform", "ios"
    )
    platform.stdout.fnmatch_lines(["Error: No booted ios device found. *"])
    bad = project.runpytest_inprocess("--co", "--argent-flows", ".argent/flows", "--argent-platform", "beos")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR


def test_under_xdist_each_worker_runs_flows_on_its_own_tool_server(project: pytest.Pytester) -> None:
    if os.environ.get("CI") != "true":  # CI installs the test extra, which has pytest-xdist
        pytest.importorskip("xdist")
    flows = project.path / ".argent" / "flows"
    (flows / "b-fail.yaml").unlink()
    # A co-located script step runs in the tool-server's process: its parent is the pytest worker.
    write(
        project.path / "whose.py",
        "import os, sys\nopen(sys.argv[1] + f'/{os.getpid()}', 'w').write(str(os.getppid()))\n",
    )
    seen = project.mkdir("seen")
    for i in range(6):
        write(flows / f"f{i}.yaml", f"steps:\n  - script: {{ path: ../../whose.py, args: ['{seen}'] }}\n")
    project.makepyfile(
        test_fixture="""
        import aiohttp, os, pytest

        @pytest.mark.asyncio
        @pytest.mark.parametrize("n", range(2))
        async def test_server(argent_server, n):
            async with aiohttp.ClientSession() as s, s.get(argent_server.url + "/healthz") as r:
                assert (await r.json())["ok"] is True
        """
    )
    done = project.runpytest_subprocess("-n", "2", "--argent-flows", ".argent/flows")
    done.assert_outcomes(passed=9)
    servers = {p.read_text() for p in seen.iterdir()}
    assert len(list(seen.iterdir())) == 6
    assert len(servers) == 2 and str(os.getpid()) not in servers, servers


# --------------------------------------------------------------------------------------------
# Fixtures from a plain test function (the project's asyncio mode is strict)


FIXTURE_TESTS = """
import aiohttp, pytest
from argent.testing.fixtures import FlowNotRun

pytestmark = pytest.mark.asyncio


async def test_argent_server_is_a_real_tool_server(argent_server):
    async with aiohttp.ClientSession() as s:
        async with s.get(argent_server.url + "/healthz") as r:
            assert r.status == 200 and (await r.json())["ok"] is True
        async with s.get(argent_server.url + "/tools") as r:
            assert r.status == 401
        auth = {"Authorization": "Bearer " + argent_server.token}
        async with s.get(argent_server.url + "/tools", headers=auth) as r:
            names = [t["name"] for t in (await r.json())["tools"]]
            assert "flow-execute" in names


async def test_argent_run_flow_returns_the_result_passed_or_not(argent_run_flow):
    passed = await argent_run_flow("a-pass")
    assert passed["ok"] is True and passed["passed"] == 1
    failed = await argent_run_flow(".argent/flows/b-fail.yaml", project_root=PROJECT_ROOT)
    assert failed["ok"] is False and [s["status"] for s in failed["steps"]] == ["pass", "error", "skip"]
    assert "project_root is required" in failed["steps"][1]["reason"]


async def test_argent_run_flow_raises_only_when_the_flow_cannot_run(argent_run_flow):
    with pytest.raises(FlowNotRun, match="Flow file not found"):
        await argent_run_flow("absent")
    with pytest.raises(FlowNotRun, match="step 1: unrecognized step kind") as invalid:
        await argent_run_flow(".argent/flows/c-invalid.yaml")
    assert invalid.value.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    with pytest.raises(FlowNotRun, match="is a directory of flows"):
        await argent_run_flow(".argent/flows")


async def test_the_server_is_the_tests_own(argent_server, argent_run_flow):
    assert (await argent_run_flow("a-pass"))["ok"] is True
    async with aiohttp.ClientSession() as s:
        async with s.get(argent_server.url + "/healthz") as r:
            assert r.status == 200
"""


def test_the_fixtures_from_plain_test_functions(project: pytest.Pytester) -> None:
    write(project.path / ".argent" / "flows" / "c-invalid.yaml", INVALID)
    project.makepyfile(test_fixtures=FIXTURE_TESTS.replace("PROJECT_ROOT", repr(str(project.path))))
    done = project.runpytest_subprocess("-p", "no:cacheprovider")
    done.assert_outcomes(passed=4)


def test_flow_items_and_the_fixture_go_over_a_configured_link(
    project: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Routing as the CLI's: with ARGENT_TOOLS_URL the flows run over the link (members sent), where
    a script step stops the run before its first step, as the seed says."""
    home = tmp_path / "home"
    home.mkdir()
    server = start_server_process(Cli(home=home, cwd=project.path))
    try:
        write(project.path / "seed.py", "print('seeded')\n")
        write(project.path / ".argent" / "flows" / "c-script.yaml", "steps:\n  - script: ../../seed.py\n")
        project.makepyfile(
            test_linked="""
            import pytest
            from argent.testing.fixtures import FlowNotRun

            @pytest.mark.asyncio
            async def test_linked(argent_run_flow):
                assert (await argent_run_flow("a-pass"))["ok"] is True
                with pytest.raises(FlowNotRun, match="This flow cannot run over a link"):
                    await argent_run_flow("c-script")
            """
        )
        with monkeypatch.context() as linked:
            linked.setenv("ARGENT_TOOLS_URL", server.url)
            linked.setenv("ARGENT_AUTH_TOKEN", server.token)
            done = project.runpytest_subprocess("--argent-flows", ".argent/flows")
        done.assert_outcomes(passed=2, failed=2)
        done.stdout.fnmatch_lines(
            [
                "*_ flow .argent/flows/c-script.yaml _*",
                "Error: This flow cannot run over a link: *",
                # Its later lines under "Error: ", as `argent flow run` prints them.
                "       step 1 in *c-script.yaml: script: { path: ../../seed.py } — a replay over a link runs no script: step",
            ]
        )
        local = project.runpytest_subprocess("--argent-flows", ".argent/flows", "-k", "script or linked")
        local.assert_outcomes(passed=1, failed=1)  # co-located the script runs, and the fixture's check fails
        local.stdout.fnmatch_lines(["*DID NOT RAISE*"])
    finally:
        server.stop()
