"""The connection cap against the process's file-descriptor limit (in a child process: it changes the limit)."""

from __future__ import annotations

import json
import subprocess
import sys

from argent.limits import FD_RESERVE

PROBE = """
import json, resource, sys
from argent.server.connections import fit_connections_to_fd_limit
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), int(sys.argv[2])))
cap = fit_connections_to_fd_limit(int(sys.argv[3]))
print(json.dumps([cap, resource.getrlimit(resource.RLIMIT_NOFILE)[0]]))
"""


def fit(soft: int, hard: int, wanted: int) -> tuple[int, int]:
    """(the cap, the soft limit afterwards) in a process started with these limits."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(soft), str(hard), str(wanted)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    cap, after = json.loads(done.stdout)
    return cap, after


def test_the_soft_limit_is_raised_so_the_cap_fits() -> None:
    assert fit(256, 8192, 2000) == (2000, 2000 + FD_RESERVE)


def test_a_low_hard_limit_lowers_the_cap_instead_of_running_out_of_descriptors() -> None:
    cap, after = fit(256, 1024, 4096)
    assert after == 1024
    assert cap == 1024 - FD_RESERVE


def test_a_roomy_limit_is_left_alone() -> None:
    assert fit(8192, 8192, 1000) == (1000, 8192)
