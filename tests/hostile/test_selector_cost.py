"""Selectors whose cost is far larger than their size, against a real `argent server start` and Chromium.

A few bytes of flow select on a page the caller controls (a `data:` URL): a text pattern that backtracks
catastrophically, and scopes that compare every element with every other one (12,000 elements: 144M pairs,
minutes of Python). Each must end its step within seconds with an error naming what was too costly, while
`/healthz` answers within a second throughout (five times an idle answer on a loaded machine), and the server still serves a normal flow afterwards.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from argent.devices.chromium.launcher import find_chromium
from tests.hostile.conftest import Probe

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(find_chromium() is None, reason="needs Chromium")]

#: Text a backtracking engine needs 2**60 steps to reject with the pattern below.
BACKTRACKING_PAGE = "data:text/html,<p>" + "a" * 60 + "b</p>"
BACKTRACKING_PATTERN = "^(a|aa)+$"
#: 12,000 small disjoint buttons, none inside another: a scope compares each with each.
CROWDED_PAGE = (
    "data:text/html,<body style='margin:0'><script>"
    "for (let i = 0; i < 12000; i++) { const b = document.createElement('button'); b.textContent = 'b' + i;"
    " b.style.cssText = 'position:absolute;padding:0;border:0;font-size:1px;width:6px;height:5px;left:' +"
    " (i % 120) * 8 + 'px;top:' + Math.floor(i / 120) * 7 + 'px'; document.body.appendChild(b); }"
    "</script></body>"
)
#: The step ends within this (the issue's bound for a call that hits a limit).
STEP_ENDS_WITHIN_SECONDS = 30.0


#: /healthz answers within this while a selector runs, on a machine whose own load keeps an idle
#: server's answers under a fifth of it (a loaded machine is allowed five times its idle slowest).
HEALTHZ_WHILE_SELECTING_SECONDS = 1.0
IDLE_HEALTHZ_PROBES = 20


def healthz_bound(probe: Probe) -> float:
    """The slowest /healthz allowed while the selector runs: 1 s, or on a loaded machine five times
    the slowest of ``IDLE_HEALTHZ_PROBES`` answers of the idle server (a freeze lasts minutes)."""
    idle = 0.0
    for _ in range(IDLE_HEALTHZ_PROBES):
        idle = max(idle, probe.healthz_seconds())
        time.sleep(0.05)
    return max(HEALTHZ_WHILE_SELECTING_SECONDS, 5 * idle)


def run_flow_probing(probe: Probe, name: str, text: str) -> subprocess.CompletedProcess[str]:
    """Run the flow over a link with the real CLI; /healthz must answer promptly until it ends."""
    flows = probe.project / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / f"{name}.yaml").write_text(text)
    bound = healthz_bound(probe)
    proc = probe.cli.spawn("flow", "run", name, ARGENT_TOOLS_URL=probe.url, ARGENT_AUTH_TOKEN=probe.token)
    t0 = time.monotonic()
    slowest = 0.0
    while proc.poll() is None:
        assert time.monotonic() - t0 < STEP_ENDS_WITHIN_SECONDS + 20, "the flow never ended"
        slowest = max(slowest, probe.healthz_seconds())
        time.sleep(0.05)
    out, err = proc.communicate()
    assert slowest < bound, f"/healthz took {slowest:.2f}s while the selector ran (bound {bound:.2f}s)"
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_backtracking_text_pattern_ends_its_step_and_never_freezes_the_server(
    hostile_server: Probe,
) -> None:
    flow = (
        "steps:\n"
        f'  - launch: {{ chromium: "{BACKTRACKING_PAGE}" }}\n'
        f"  - await: {{ visible: {{ text: {{ matches: '{BACKTRACKING_PATTERN}' }} }}, timeout: 2000 }}\n"
    )
    done = run_flow_probing(hostile_server, "backtracking", flow)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"/{BACKTRACKING_PATTERN}/" in done.stdout and "backtrack" in done.stdout, done.stdout
    hostile_server.assert_still_fine()


@pytest.mark.parametrize("scope", ["within", "after", "next"])
def test_a_scope_over_every_element_ends_its_step_and_never_freezes_the_server(
    hostile_server: Probe, scope: str
) -> None:
    flow = (
        "steps:\n"
        f'  - launch: {{ chromium: "{CROWDED_PAGE}" }}\n'
        f"  - await: {{ visible: {{ role: button, {scope}: {{ role: button }} }}, timeout: 15000 }}\n"
    )
    done = run_flow_probing(hostile_server, f"crowded-{scope}", flow)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "selector" in done.stdout and "too costly" in done.stdout, done.stdout
    hostile_server.assert_still_fine()


def test_an_ordinary_pattern_and_scope_still_match(hostile_server: Probe, tmp_path: Path) -> None:
    flow = (
        "steps:\n"
        '  - launch: { chromium: "data:text/html,<div><h1>Order 42</h1><p>Total</p><button>Pay</button></div>" }\n'
        "  - await: { visible: { text: { matches: 'Order [0-9]+$' } }, timeout: 5000 }\n"
        "  - await: { visible: { text: Pay, after: { text: Total } }, timeout: 5000 }\n"
    )
    done = run_flow_probing(hostile_server, "ordinary", flow)
    assert done.returncode == 0, done.stdout + done.stderr
