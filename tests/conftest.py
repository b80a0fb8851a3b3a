"""Suite-wide checks: in CI the real parts (Chromium, nginx) must be here, never skipped."""

from __future__ import annotations

import os
import shutil
import signal

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # A suite started in the background by a non-interactive shell (`cmd &`, nohup) inherits SIGINT
    # ignored, and every process it spawns would too: the tests that interrupt a real CLI or server
    # with Ctrl-C would then wait for nothing. Catching it here gives children the default again.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("CI") != "true":
        return
    from argent.devices.chromium.launcher import find_chromium

    missing = []
    if find_chromium() is None:
        missing.append("chromium")
    if shutil.which("nginx") is None and not os.path.exists("/usr/sbin/nginx"):
        missing.append("nginx")
    if missing:
        pytest.exit(
            f"CI needs {', '.join(missing)}; scripts/install-system-deps installs them (as root).",
            returncode=3,
        )
