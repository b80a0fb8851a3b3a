"""Real open-source web apps driven by flows written as a user writes them (roles, names, text, key
chords, ``type``, ``select:``; no script, no coordinates), through the real CLI (``argent flow run``,
an embedded tool-server, a browser per flow: Chromium and Firefox, the same flow file on each), each
app from the package registry, started on a free loopback port and stopped with every process it
started."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import ENGINES, Cli, engine_marks, processes_under
from tests.realapps import apps

pytestmark = [pytest.mark.realapps, pytest.mark.e2e]

#: A flow's whole run through the CLI (the browser's start, the app's first load, every step's wait).
FLOW_TIMEOUT_SECONDS = 300
#: Each corpus flow is at least this long (issue 21's proof).
MIN_STEPS = 10

#: What main still lacks for an app's flow on an engine (issue 21, INTERFACE.md section 14; on Firefox,
#: what WebDriver BiDi or Firefox cannot do: docs/engines.md), as a run showed it, by (app, platform);
#: the mark comes off when the feature lands and the flow passes.
MISSING: dict[tuple[str, str], str] = {}


def corpus(name: str, platform: str) -> pytest.ParameterSet:
    marks = engine_marks(platform)
    if (name, platform) in MISSING:
        reason = MISSING[name, platform]
        marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
    return pytest.param(name, platform, marks=marks, id=f"{name}-{platform}")


def _run_flow(
    cli: Cli, project: Path, app: apps.RunningApp, platform: str, private_tmp: Path
) -> subprocess.CompletedProcess[str]:
    name = app.app.name
    text = app.rebase((apps.FLOWS / f"{name}.yaml").read_text())
    assert app.url in text, f"flows/{name}.yaml names no URL at the app's default port {app.app.default_port}"
    (project / ".argent" / "flows" / f"{name}.yaml").write_text(text)
    return cli.run(
        "flow", "run", name, "--platform", platform, "--json",
        timeout=FLOW_TIMEOUT_SECONDS, TMPDIR=str(private_tmp),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "platform"), [corpus(name, platform) for name in apps.APPS for platform in ENGINES]
)
def test_the_flow_a_user_writes_passes_on_the_real_app(
    name: str, platform: str, realapps_cache: Path, cli: Cli, project: Path, tmp_path: Path, private_tmp: Path
) -> None:
    """The same flow file on each engine (``launch: { chromium: ... }`` is the web target every engine
    opens)."""
    with apps.running(name, realapps_cache, tmp_path / name) as app:
        done = _run_flow(cli, project, app, platform, private_tmp)
        report = json.loads(done.stdout) if done.stdout.startswith("{") else {}
        said = (
            done.stdout[-4000:]
            + done.stderr[-2000:]
            + f"\napp log:\n{app.log.read_text(errors='replace')[-2000:]}"
        )
        assert done.returncode == 0, said
    steps = [s for s in report["steps"] if s["kind"] != "echo"]
    # A `when:` whose condition was not met skips itself and its block, as written (JupyterLab's news
    # prompt comes a moment after its start, or not at all, as the machine's load has it).
    unmet = [
        s
        for s in steps
        if s["status"] == "skip" and (s["kind"] == "when" or s.get("reason") == "when block skipped")
    ]
    passed = [s for s in steps if s["status"] == "pass"]
    assert report["ok"] and len(passed) + len(unmet) == len(steps) and len(passed) >= MIN_STEPS, said
    assert report["device"].startswith(f"{platform}-"), report["device"]
    assert processes_under(private_tmp) == []  # the flow's browser is gone, every process of it
    assert apps.leftovers(tmp_path / name) == []  # and so is every process of the app


@pytest.mark.parametrize("name", list(apps.APPS))
def test_each_flow_is_long_and_written_as_a_user_writes_it(name: str) -> None:
    from argent.flows.parse import parse_flow

    text = (apps.FLOWS / f"{name}.yaml").read_text()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("- ")]
    assert len(lines) >= MIN_STEPS + 1  # the launch and at least ten steps
    assert f"http://127.0.0.1:{apps.APPS[name].default_port}" in lines[0]
    for banned in (r"debugger-evaluate", r"\b[xy]:", r"\bscript:", r"\btool:", r"\bcss:"):
        assert not re.search(banned, text), f"flows/{name}.yaml uses {banned}"
    parse_flow(text)


@pytest.mark.parametrize("name", list(apps.APPS))
def test_an_app_serves_on_a_free_loopback_port_and_leaves_no_process(
    name: str, realapps_cache: Path, tmp_path: Path
) -> None:
    scratch = tmp_path / name
    with apps.running(name, realapps_cache, scratch) as app:
        assert app.url == f"http://127.0.0.1:{app.port}"
        with urllib.request.urlopen(app.url + app.app.ready_path, timeout=10) as answer:
            assert answer.status == 200
        assert apps.leftovers(scratch), "the app's command line names its scratch directory"
        group = app.proc.pid
    assert app.proc.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)
    assert apps.leftovers(scratch) == []


def test_an_app_that_exits_before_it_serves_says_so_with_its_log(
    realapps_cache: Path, tmp_path: Path
) -> None:
    broken = apps.App(
        "datasette",
        8001,
        "/-/versions.json",
        lambda bin_, scratch, port: [str(bin_ / "datasette"), "--no-such-flag"],
    )
    with (
        pytest.raises(
            apps.AppUnavailable,
            match=r"(?s)datasette exited with 2 before it served; its log:\n.*No such option",
        ),
        apps.running(broken, realapps_cache, tmp_path / "x"),
    ):
        pass


def test_an_app_whose_port_was_taken_meanwhile_starts_on_another(
    realapps_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a free port has: another process binds it before the app does."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        offered = [int(taken.getsockname()[1])]
        real = apps.free_port
        monkeypatch.setattr(apps, "free_port", lambda: offered.pop() if offered else real())
        with apps.running("datasette", realapps_cache, tmp_path / "d") as app:
            assert app.port != taken.getsockname()[1]
            assert len(list((tmp_path / "d").glob("datasette-*.log"))) == 2
            with urllib.request.urlopen(app.url + "/-/versions.json", timeout=10) as answer:
                assert answer.status == 200


def test_the_installer_finds_every_app_cached_and_names_the_cache(realapps_cache: Path) -> None:
    done = subprocess.run(
        [str(apps.INSTALLER)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{realapps_cache}\n"
    for name in apps.APPS:
        assert f"==> {name}: {apps.venv_bin(realapps_cache, name).parent} (cached)" in done.stderr
    assert "installing" not in done.stderr


def test_the_installer_refuses_an_unknown_app() -> None:
    done = subprocess.run(
        [str(apps.INSTALLER), "wordpress"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: no app 'wordpress' (apps: ")
    assert done.stdout == ""


def test_installers_started_together_install_once_under_the_lock(
    realapps_cache: Path, tmp_path: Path
) -> None:
    """What pytest-xdist workers do: two installers of one app into one empty cache at once. The lock
    makes the second wait; it then finds the venv made and installs nothing."""
    cache = tmp_path / "cache"
    env = {**os.environ, "ARGENT_REALAPPS_CACHE": str(cache)}
    runs = [
        subprocess.Popen(
            [str(apps.INSTALLER), "datasette"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(2)
    ]
    try:
        outs = [run.communicate(timeout=apps.INSTALL_TIMEOUT_SECONDS) for run in runs]
    finally:
        for run in runs:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
    assert [run.returncode for run in runs] == [0, 0], outs
    assert [out for out, _ in outs] == [f"{cache}\n", f"{cache}\n"]
    said = sorted(err for _, err in outs)
    assert sum("==> installing datasette" in err for err in said) == 1, said
    assert sum("(cached)" in err for err in said) == 1, said
    assert (apps.venv_bin(cache, "datasette") / "datasette").is_file()
