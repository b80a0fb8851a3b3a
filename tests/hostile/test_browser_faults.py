"""A browser that dies or hangs under a real `argent server start` (issue 24 item 5).

The browser is a real headless Chromium the server launched; the test finds it among the server's
children and SIGKILLs it mid-flow, or SIGSTOPs it under a device call. Each fault must end as a
step or call error that says what happened (the signal; "stopped answering" within the bound named
``BROWSER_ANSWER_SECONDS``), the dead device must leave `list-devices`, nothing of it may remain (no
zombie child of the server, no temp profile), the next `launch:` boots a new browser, and `/healthz`
answers within a second throughout.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from argent.devices.chromium.launcher import find_chromium
from argent.limits import BROWSER_ANSWER_SECONDS
from tests.hostile.conftest import Probe

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(find_chromium() is None, reason="needs Chromium")]

PAGE = "data:text/html,<h1>Fault page</h1>"
#: A flow whose third step waits (a minute at most) for what never shows: the browser dies under it.
WAITING_FLOW = f"""steps:
  - launch: {{ chromium: "{PAGE}" }}
  - echo: launched
  - await: {{ visible: Never shown, timeout: 60000 }}
  - echo: unreachable
"""
#: The same start, then what a live browser shows.
PASSING_FLOW = f"""steps:
  - launch: {{ chromium: "{PAGE}" }}
  - assert: {{ visible: Fault page }}
"""


def children(pid: int) -> list[tuple[int, str, str]]:
    """(pid, state, command line) of each child of ``pid``, zombies included (Linux ``/proc``)."""
    found: list[tuple[int, str, str]] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[-1].split()
            cmdline = (
                Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            )
        except OSError:
            continue
        if int(stat[1]) == pid:
            found.append((int(entry), stat[0].decode(), cmdline))
    return found


def browsers(probe: Probe) -> list[int]:
    """The Chromium browser processes the server launched (its direct children; the helpers are theirs)."""
    return [
        pid
        for pid, state, cmd in children(probe.server.proc.pid)
        if state != "Z" and "--user-data-dir" in cmd
    ]


def zombies(probe: Probe) -> list[tuple[int, str, str]]:
    return [child for child in children(probe.server.proc.pid) if child[1] == "Z"]


def profiles(probe: Probe) -> list[str]:
    return sorted(p.name for p in probe.tmp_dir.iterdir() if p.name.startswith("argent-chromium-"))


def listed(probe: Probe) -> list[str]:
    status, body = probe.call("list-devices", {})
    assert status == 200, body
    return [str(d["id"]) for d in body["data"]["devices"]]


def while_healthy(probe: Probe, action: Callable[[], Any]) -> Any:
    """Run ``action`` in a thread while this one asserts `/healthz` answers within a second."""
    result: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(action())
        except BaseException as exc:
            failure.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    checks = 0
    while worker.is_alive() or checks == 0:
        probe.assert_healthy()
        checks += 1
        worker.join(timeout=0.2)  # pacing the probe; the join is the event it waits for
    if failure:
        raise failure[0]
    return result[0]


def test_a_browser_killed_mid_flow_fails_its_step_and_the_next_launch_boots_a_new_one(
    hostile_server: Probe,
) -> None:
    probe = hostile_server
    flows = probe.project / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / "waits.yaml").write_text(WAITING_FLOW)
    (flows / "passes.yaml").write_text(PASSING_FLOW)
    run = probe.cli.spawn("flow", "run", "waits", ARGENT_TOOLS_URL=probe.url, ARGENT_AUTH_TOKEN=probe.token)
    assert run.stdout is not None
    lines: list[str] = []
    for line in run.stdout:  # each step's line as its progress arrives
        lines.append(line)
        if "launched" in line:
            break
    assert any("launched" in line for line in lines), lines
    [browser] = browsers(probe)
    os.kill(browser, signal.SIGKILL)

    def finish() -> tuple[int, str]:
        out, err = run.communicate(timeout=60)
        return run.returncode, "".join(lines) + out + err

    code, output = while_healthy(probe, finish)
    assert code == 1, output
    [step] = [line for line in output.splitlines() if "3 await" in line]
    # The wait ends at the death (an error of the step), not a minute later as an unreadable tree.
    assert "exited (killed by signal SIGKILL)" in step and "boot a new one" in step, output
    assert "unreadable" not in step and "1 errored" in output, output
    assert browsers(probe) == [] and zombies(probe) == [] and profiles(probe) == []
    assert listed(probe) == []

    again = probe.cli.run("flow", "run", "passes", ARGENT_TOOLS_URL=probe.url, ARGENT_AUTH_TOKEN=probe.token)
    assert again.returncode == 0, again.stdout + again.stderr
    assert zombies(probe) == [] and profiles(probe) == []
    probe.assert_still_fine()


def test_a_stopped_browser_is_reported_within_its_bound_and_reaped(hostile_server: Probe) -> None:
    probe = hostile_server
    status, body = probe.call("boot-device", {"platform": "chromium", "url": PAGE}, timeout=60)
    assert status == 200, body
    device = str(body["data"]["id"])
    [browser] = browsers(probe)
    assert listed(probe) == [device]
    os.kill(browser, signal.SIGSTOP)

    status, body = while_healthy(probe, lambda: probe.call("screenshot", {"udid": device}, timeout=60))
    assert status != 200, body
    message = str(body)
    assert f"Chromium ({device}) stopped answering: its browser process (its process is stopped)" in message
    assert f"gave no answer within {BROWSER_ANSWER_SECONDS:g}s (BROWSER_ANSWER_SECONDS)" in message

    assert listed(probe) == []
    assert browsers(probe) == [] and zombies(probe) == [] and profiles(probe) == []
    status, body = probe.call("boot-device", {"platform": "chromium", "url": PAGE}, timeout=60)
    assert status == 200, body
    assert str(body["data"]["id"]) != device
    probe.call("stop-device", {"udid": str(body["data"]["id"])})
    probe.assert_still_fine()
