"""`argent flow run|list`, `argent tools`, `argent run` as a user runs them: real processes, real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import ENGINES, Cli, on_engines

pytestmark = pytest.mark.e2e


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_saved_flow_runs_with_a_line_per_step_and_a_summary(cli: Cli, project: Path) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "checkout.yaml", "steps:\n  - echo: Checking out\n  - run: frag\n  - wait: 5\n")
    write(flows / "frag.yaml", "steps:\n  - echo: in the fragment\n")
    done = cli.run("flow", "run", "checkout")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        'Flow "checkout"',
        "  › Checking out",
        "  ✓  2 run frag.yaml [frag]",
        "    › in the fragment",
        "  ✓  4 wait",
        "",
        "PASS — 2 passed, 0 failed, 0 skipped, 0 errored",
    ]
    assert done.stderr == ""


def test_failed_flow_exits_1_and_skips_the_rest(cli: Cli, project: Path) -> None:
    write(
        project / ".argent" / "flows" / "broken.yaml",
        "steps:\n  - tool: flow-read-prerequisite\n    args: { name: gone }\n  - echo: never\n  - wait: 1\n",
    )
    done = cli.run("flow", "run", "broken")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[1] == (
        "  ✗  1 tool flow-read-prerequisite — Invalid arguments for flow-read-prerequisite: project_root is required"
    )
    assert lines[2] == "  · › never"
    assert lines[3] == "  ·  3 wait"
    assert lines[-1] == "FAIL — 0 passed, 0 failed, 1 skipped, 1 errored"


def test_parse_error_exits_1_with_one_clear_line(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "bad.yaml", "steps:\n  - echo: ok\n  - snapshoot: home\n")
    done = cli.run("flow", "run", "bad")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        "Error: not started: 1 problem found before any device started:\n"
        "       .argent/flows/bad.yaml:3: step 2: unrecognized step kind (did you mean `snapshot`?). "
        "See docs/flows.md for every directive and its keys.\n"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00binary", "not UTF-8 text"),
        (b"steps: " + b"[" * 5000 + b"]" * 5000 + b"\n", "the YAML nests too deeply"),
        (b"steps: ][\n", "a closing `]` here has no opening `[` before it"),
        (
            b"a: &a [x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nsteps: *c\n",
            "unknown keys `a`, `b`, `c`",
        ),
    ],
)
def test_hostile_flow_files_fail_cleanly(cli: Cli, project: Path, content: bytes, expected: str) -> None:
    (project / ".argent" / "flows" / "hostile.yaml").write_bytes(content)
    done = cli.run("flow", "run", "hostile")
    assert done.returncode == 1
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 3


def test_a_50_mb_flow_file_is_refused(cli: Cli, project: Path) -> None:
    big = project / ".argent" / "flows" / "huge.yaml"
    with big.open("wb") as fh:
        fh.write(b"steps:\n")
        line = b"  - echo: " + b"x" * 1000 + b"\n"
        for _ in range(50 * 1024):
            fh.write(line)
    done = cli.run("flow", "run", "huge", timeout=120)
    assert done.returncode in (1, 2)
    assert "32 MiB" in done.stderr or "32 MB" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nope", "Flow file not found: "),
        ("../x.yaml", 'Flow path must not contain ".." segments'),
        ("Checkout.YAML", "Flow extension must be lowercase .yaml, not .YAML: Checkout.YAML"),
        ("bad name", 'Flow name must contain only letters, numbers, "_", or "-": bad name'),
        ("flow.yml", "Flow path must end in .yaml: flow.yml"),
        (
            ".yaml",
            'Flow filename must have a non-empty name containing only letters, numbers, "_", or "-": .yaml',
        ),
    ],
)
def test_path_problems_exit_2_before_anything_runs(cli: Cli, ref: str, message: str) -> None:
    done = cli.run("flow", "run", ref)
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stdout == ""


def test_a_path_to_a_saved_name_suggests_the_name(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "saved.yaml", "steps: []\n")
    done = cli.run("flow", "run", "saved.yaml")
    assert done.returncode == 2
    assert "Flow file not found: " in done.stderr
    assert "did you mean: argent flow run saved" in done.stderr


def test_an_unknown_name_says_none_is_saved_there(cli: Cli, project: Path) -> None:
    done = cli.run("flow", "run", "nope")
    assert done.returncode == 2
    assert done.stderr == (
        f"Error: Flow file not found: {project / '.argent' / 'flows' / 'nope.yaml'}\n"
        'No flow named "nope" is saved there — run `argent flow list` to see the saved flows.\n'
    )


def test_a_miscased_name_is_not_found_and_suggests_the_saved_spelling(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "checkout.yaml", "steps: []\n")
    done = cli.run("flow", "run", "Checkout")
    assert done.returncode == 2
    assert done.stderr == (
        f"Error: Flow file not found: {project / '.argent' / 'flows' / 'Checkout.yaml'}\n"
        'No flow named "Checkout" is saved there — run `argent flow list` to see the saved flows.\n'
        "Did you mean: argent flow run checkout\n"
    )
    by_path = cli.run("flow", "run", ".argent/flows/CheckOut.yaml")
    assert by_path.returncode == 2
    assert by_path.stderr == (
        f"Error: Flow file not found: {project / '.argent' / 'flows' / 'CheckOut.yaml'}\n"
        "Did you mean: argent flow run .argent/flows/checkout.yaml\n"
    )


def test_directory_run_continues_past_an_invalid_file(cli: Cli, project: Path) -> None:
    suite = project / "suite"
    write(suite / "a-login.yaml", "steps:\n  - echo: a\n")
    write(suite / "b-broken.yaml", "steps:\n  - bogus: line\n")
    write(suite / "c-checkout.yaml", "steps:\n  - wait: 1\n")
    write(suite / "ignored.yml", "steps: []\n")
    write(suite / "sub" / "d-nested.yaml", "steps: []\n")
    done = cli.run("flow", "run", "suite")
    assert done.returncode == 1
    out = done.stdout.splitlines()
    assert out[0] == "[1/3] a-login.yaml"
    assert "[2/3] b-broken.yaml" in out
    assert "[3/3] c-checkout.yaml" in out
    assert out[out.index("[2/3] b-broken.yaml") + 1 : out.index("[3/3] c-checkout.yaml")] == [
        "  ✗ not started: 1 problem found before any device started:",
        "    suite/b-broken.yaml:2: step 1: unrecognized step kind. See docs/flows.md for every directive and its keys.",
    ]
    assert out[-4:] == [
        "",
        "FAIL — 3 flows: 2 passed, 0 failed, 1 errored, 0 skipped",
        "Flows that did not pass:",
        "  ✗ suite/b-broken.yaml (error): not started: 1 problem found before any device started: "
        "suite/b-broken.yaml:2: step 1: unrecognized step kind. See docs/flows.md for every directive and its keys.",
    ]


def test_recursive_directory_run_skips_hidden_and_node_modules(cli: Cli, project: Path) -> None:
    suite = project / "suite"
    write(suite / "a.yaml", "steps: []\n")
    write(suite / "sub" / "c-search.yaml", "steps: []\n")
    write(suite / ".hidden" / "h.yaml", "steps: []\n")
    write(suite / "node_modules" / "n.yaml", "steps: []\n")
    done = cli.run("flow", "run", "suite", "-r", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [Path(f["path"]).relative_to(suite).as_posix() for f in report["flows"]] == [
        "a.yaml",
        "sub/c-search.yaml",
    ]
    assert (report["ok"], report["total"], report["passed"]) == (True, 2, 2)


def test_json_prints_the_result_object(cli: Cli, project: Path) -> None:
    write(
        project / ".argent" / "flows" / "j.yaml",
        "executionPrerequisite: ready\nsteps:\n  - echo: hi\n  - wait: 1\n",
    )
    done = cli.run("flow", "run", "j", "--json")
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["flow"] == "j" and result["ok"] is True and result["device"] == ""
    assert result["executionPrerequisite"] == "ready"
    assert [s["kind"] for s in result["steps"]] == ["echo", "wait"]
    assert (result["passed"], result["failed"], result["skipped"], result["errored"]) == (1, 0, 0, 0)


def test_device_steps_without_a_device_fail_with_a_clear_reason(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "tapper.yaml", "steps:\n  - tap: Save\n")
    done = cli.run("flow", "run", "tapper")
    assert done.returncode == 1
    assert "No booted device found" in done.stderr
    assert "Traceback" not in done.stderr


def test_platform_guard_runs_device_free_with_platform(cli: Cli, project: Path) -> None:
    flow = "steps:\n  - when: { platform: chromium }\n    steps:\n      - echo: web\n  - when: { platform: ios }\n    steps:\n      - echo: phone\n"
    write(project / ".argent" / "flows" / "guarded.yaml", flow)
    done = cli.run("flow", "run", "guarded", "--platform", "chromium", "--json")
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)["steps"]
    assert [(s["kind"], s["status"]) for s in steps] == [
        ("when", "pass"),
        ("echo", "pass"),
        ("when", "skip"),
        ("echo", "skip"),
    ]


def test_flow_list(cli: Cli, project: Path) -> None:
    flows = project / ".argent" / "flows"
    write(flows / "b.yaml", "steps: []\n")
    write(flows / "sub" / "a.yaml", "steps: []\n")
    write(flows / "__baselines__" / "b" / "x.yaml", "steps: []\n")
    write(flows / "bad name.yaml", "steps: []\n")
    done = cli.run("flow", "list")
    assert done.returncode == 0
    assert done.stdout.splitlines() == [".argent/flows/b.yaml", ".argent/flows/sub/a.yaml"]


def test_tools_list_show_search(cli: Cli) -> None:
    listed = cli.run("tools", "list")
    assert listed.returncode == 0
    assert "flow-execute" in listed.stdout
    # the example names what the derived flow_file input is built from: a runnable call
    assert (
        "    example: argent run flow-execute --project-root /abs/path --name <name>"
        in listed.stdout.splitlines()
    )
    shown = cli.run("tools", "show", "flow-execute")
    assert shown.returncode == 0
    assert "--update-baselines" in shown.stdout and "(required)" in shown.stdout
    found = cli.run("tools", "search", "prerequisite")
    assert "flow-read-prerequisite" in found.stdout
    missing = cli.run("tools", "show", "nope")
    assert missing.returncode == 2


def test_run_tool_with_flags_and_errors(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "pre.yaml", "executionPrerequisite: signed in\nsteps: []\n")
    done = cli.run("run", "flow-read-prerequisite", "--name", "pre", "--project-root", str(project))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"flow": "pre", "executionPrerequisite": "signed in"}
    assert cli.run("run", "nope").returncode == 2
    bad = cli.run("run", "flow-read-prerequisite", "--args", "{nope")
    assert bad.returncode == 2 and "--args is not valid JSON" in bad.stderr
    missing = cli.run("run", "flow-read-prerequisite", "--name", "pre")
    assert missing.returncode == 2 and "requires --project-root" in missing.stderr
    unknown = cli.run("run", "flow-read-prerequisite", "--project-root", str(project), "--bogus", "1")
    assert unknown.returncode == 2 and "unknown flag --bogus" in unknown.stderr


@pytest.mark.parametrize("platform", on_engines(*ENGINES))
def test_demo_examples_pass(cli: Cli, platform: str) -> None:
    """The bundled examples on each engine, the shop against that engine's own baselines."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    flows = str(examples / ".argent" / "flows")
    done = cli.run("flow", "run", flows, "--project-root", str(examples), "--platform", platform, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("PASS — ")
    assert f"started on {platform}-" in done.stdout


def test_run_with_json_prints_its_notes_as_warning_objects_on_stderr(cli: Cli, project: Path) -> None:
    args = ("run", "flow-start-recording", "--name", "rec", "--project-root", str(project))
    done = cli.run(*args, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["message"] == 'Started recording "rec" flow'
    [note] = [json.loads(line) for line in done.stderr.splitlines()]
    assert note == {
        "warning": "note: no tool-server is linked, so flow-start-recording runs on an embedded tool-server "
        "that stops when this command ends, and a recording does not outlive it. To record across "
        "commands, start one with `argent server start` and `argent link` to it (or set ARGENT_TOOLS_URL)."
    }
    plain = cli.run(*args)
    assert plain.returncode == 0, plain.stderr
    assert plain.stderr == note["warning"] + "\n"


def test_an_unknown_tool_step_says_the_tool_does_not_exist(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "typo.yaml", "steps:\n  - tool: flow-lst\n  - echo: after\n")
    done = cli.run("flow", "run", "typo")
    assert done.returncode == 1
    assert done.stdout.splitlines()[1] == '  ✗  1 tool flow-lst — Tool "flow-lst" not found'
    assert "No booted device" not in done.stdout + done.stderr


@pytest.mark.parametrize("target", ["page.html", "PAGE.HTM"])
def test_a_bare_web_launch_without_platform_runs_on_chromium(cli: Cli, project: Path, target: str) -> None:
    """INTERFACE.md section 11: `launch: <page>` with no `--platform` and no booted device runs on
    chromium (it used to answer "No booted device found. Pass a device id or platform explicitly.")."""
    from argent.devices.chromium import chromium_unavailable_reason

    if (reason := chromium_unavailable_reason()) is not None:
        pytest.skip(reason)
    flows = project / ".argent" / "flows"
    write(flows / target, "<!doctype html><p>On the page</p>")
    write(flows / "web.yaml", f"steps:\n  - launch: {target}\n  - assert: {{ visible: On the page }}\n")
    done = cli.run("flow", "run", "web", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["device"].startswith("chromium-cdp-") and result["passed"] == 2


def test_a_bare_app_id_launch_still_needs_a_device(cli: Cli, project: Path) -> None:
    write(project / ".argent" / "flows" / "app.yaml", "steps:\n  - launch: com.example.shop\n")
    done = cli.run("flow", "run", "app")
    assert done.returncode == 1
    assert "No booted device found. Pass a device id or platform explicitly." in done.stderr
