"""The real open-source web apps of the corpus: where each is installed, how it is started on a free
loopback port, when it is ready, and how it is stopped.

Each app runs from its own venv, which ``scripts/install-realapps`` makes under
``.cache/realapps/<app>-<version>/`` from the pins in ``pins/<app>.txt``. What lives here is only
each app's input (a SQLite database's SQL, a small docs tree, a dashboard script); the apps are
theirs. Shared by the tests (``conftest.py``) and ``bench/bench_realapps.py``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from attrs import define, field

from argent.devices.chromium.launcher import processes_naming

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
INPUTS = HERE / "inputs"
FLOWS = HERE / "flows"
INSTALLER = REPO / "scripts" / "install-realapps"
#: How long an app may take from its start to answering its readiness URL (JupyterLab's first
#: start builds its settings and workspace files: several seconds on a busy 2-core machine).
READY_TIMEOUT_SECONDS = 90.0
#: Between two polls of the readiness URL.
READY_POLL_SECONDS = 0.1
#: Free ports tried when the one found free was taken before the app bound it.
PORT_ATTEMPTS = 3
#: How long an app may take to exit after SIGTERM before it is killed.
STOP_TIMEOUT_SECONDS = 15.0
#: The install of every app, cold (about 55 s here, pip downloading side by side).
INSTALL_TIMEOUT_SECONDS = 900.0


class AppUnavailable(Exception):
    """The app could not be installed or started here (the message says why)."""


@define
class App:
    """One real app: its venv's name, the port its docs use (the flows name it; the tests swap it
    for the free port the app gets), and how it starts."""

    name: str
    #: The port a user of the app meets in its docs; a flow's URLs name it.
    default_port: int
    #: The path that answers 200 once the app serves.
    ready_path: str
    #: The argv that starts it on ``port``, given its venv's ``bin`` and a scratch directory
    #: prepared by ``prepare`` (its input).
    argv: Callable[[Path, Path, int], list[str]]
    prepare: Callable[[Path, Path], None] = field(default=lambda _bin, _scratch: None)
    env: Callable[[Path], dict[str, str]] = field(default=lambda _scratch: {})


# --------------------------------------------------------------------------------------------
# The apps and their inputs


def _datasette_prepare(_bin: Path, scratch: Path) -> None:
    path = scratch / "catalog.db"
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    try:
        db.executescript((INPUTS / "datasette" / "catalog.sql").read_text())
        db.commit()
    finally:
        db.close()


def _datasette_argv(bin_: Path, scratch: Path, port: int) -> list[str]:
    return [
        str(bin_ / "datasette"),
        "serve",
        str(scratch / "catalog.db"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def _mkdocs_prepare(bin_: Path, scratch: Path) -> None:
    """``mkdocs build`` of the docs tree into ``scratch/site`` (served as static files)."""
    done = subprocess.run(
        [
            str(bin_ / "mkdocs"),
            "build",
            "--quiet",
            "--config-file",
            str(INPUTS / "mkdocs" / "mkdocs.yml"),
            "--site-dir",
            str(scratch / "site"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise AppUnavailable(f"mkdocs build failed ({done.returncode}): {done.stderr[-2000:]}")


def _mkdocs_argv(bin_: Path, scratch: Path, port: int) -> list[str]:
    return [
        str(bin_ / "python"),
        "-m",
        "http.server",
        str(port),
        "--bind",
        "127.0.0.1",
        "--directory",
        str(scratch / "site"),
    ]


def _streamlit_prepare(_bin: Path, scratch: Path) -> None:
    shutil.copyfile(INPUTS / "streamlit" / "dashboard.py", scratch / "dashboard.py")


def _streamlit_argv(bin_: Path, scratch: Path, port: int) -> list[str]:
    return [
        str(bin_ / "streamlit"), "run", str(scratch / "dashboard.py"),
        "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--global.developmentMode", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip


def _streamlit_env(scratch: Path) -> dict[str, str]:
    return {"HOME": str(scratch)}


def _jupyter_prepare(_bin: Path, scratch: Path) -> None:
    for sub in ("notebooks", "config", "data", "runtime", "settings", "workspaces"):
        (scratch / sub).mkdir(exist_ok=True)


def _jupyter_argv(bin_: Path, scratch: Path, port: int) -> list[str]:
    return [
        str(bin_ / "jupyter-lab"), "--no-browser", "--ip", "127.0.0.1", "--port", str(port),
        "--port-retries", "0", "--IdentityProvider.token=", "--ServerApp.password=", "--allow-root",
        f"--ServerApp.root_dir={scratch / 'notebooks'}",
        f"--LabApp.user_settings_dir={scratch / 'settings'}",
        f"--LabApp.workspaces_dir={scratch / 'workspaces'}",
        # No news feed: there is no internet here, and a test must not depend on one.
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]  # fmt: skip


def _jupyter_env(scratch: Path) -> dict[str, str]:
    return {
        "HOME": str(scratch),
        "JUPYTER_CONFIG_DIR": str(scratch / "config"),
        "JUPYTER_DATA_DIR": str(scratch / "data"),
        "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"),
        "IPYTHONDIR": str(scratch / "ipython"),
    }


APPS: dict[str, App] = {
    "datasette": App("datasette", 8001, "/-/versions.json", _datasette_argv, _datasette_prepare),
    "mkdocs": App("mkdocs", 8000, "/search/search_index.json", _mkdocs_argv, _mkdocs_prepare),
    "streamlit": App(
        "streamlit", 8501, "/_stcore/health", _streamlit_argv, _streamlit_prepare, _streamlit_env
    ),
    "jupyterlab": App("jupyterlab", 8888, "/api/status", _jupyter_argv, _jupyter_prepare, _jupyter_env),
}


# --------------------------------------------------------------------------------------------
# Install, start, stop


def install(*names: str) -> Path:
    """Run the installer for ``names`` (a no-op when they are cached; it holds a lock, so pytest-xdist
    workers may call it together); the cache directory."""
    try:
        done = subprocess.run(
            [str(INSTALLER), *names],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise AppUnavailable(f"scripts/install-realapps {' '.join(names)} did not finish: {e}") from e
    if done.returncode != 0:
        raise AppUnavailable(f"scripts/install-realapps {' '.join(names)} failed:\n{done.stderr[-3000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


def venv_bin(cache: Path, name: str) -> Path:
    """The ``bin`` of ``name``'s venv in ``cache`` (the one directory ``<name>-<version>``)."""
    found = sorted(p for p in cache.glob(f"{name}-*") if (p / ".argent-pins").is_file())
    if not found:
        raise AppUnavailable(f"{name} is not installed in {cache}; run scripts/install-realapps {name}")
    return found[-1] / "bin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@define
class RunningApp:
    """An app serving at ``url`` (``http://127.0.0.1:<port>``)."""

    app: App
    url: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    def rebase(self, text: str) -> str:
        """``text`` (a flow) with the app's default address replaced by the one it serves on."""
        return text.replace(f"http://127.0.0.1:{self.app.default_port}", self.url).replace(
            f"http://localhost:{self.app.default_port}", self.url
        )


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def leftovers(scratch: Path) -> list[int]:
    """Live processes whose command line names ``scratch``: every app's does (its input is there),
    and so do the processes it starts in sessions of their own (JupyterLab's kernels name their
    connection file in the runtime directory)."""
    return processes_naming(str(scratch))


def _stop(proc: subprocess.Popen[bytes], scratch: Path) -> None:
    """SIGTERM to the app's process group, then SIGKILL to whatever is left of it once the leader
    exits or the grace runs out, and to any process of its own session that names ``scratch``."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=STOP_TIMEOUT_SECONDS)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=STOP_TIMEOUT_SECONDS)
    for pid in leftovers(scratch):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _wait_ready(proc: subprocess.Popen[bytes], url: str, name: str, log: Path) -> bool:
    """Poll ``url`` until it answers 200 (True) or the app exits (False); past
    ``READY_TIMEOUT_SECONDS`` the app's log says why it is not there."""
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while not _ready(url):
        if proc.poll() is not None:
            return False
        if time.monotonic() > deadline:
            raise AppUnavailable(
                f"{name} did not answer {url} within {READY_TIMEOUT_SECONDS:.0f} s; its log:\n"
                f"{log.read_text(errors='replace')[-3000:]}"
            )
        time.sleep(READY_POLL_SECONDS)  # the interval between two polls of the URL
    return True


def _start(
    app: App, bin_: Path, scratch: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], int, Path]:
    """``app`` serving on a free loopback port: its process, the port, its log. A port found free
    can be taken before the app binds it: then another port, ``PORT_ATTEMPTS`` in all."""
    for _ in range(PORT_ATTEMPTS):
        port = free_port()
        log = scratch / f"{app.name}-{port}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                app.argv(bin_, scratch, port),
                cwd=scratch,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            ready = _wait_ready(proc, f"http://127.0.0.1:{port}{app.ready_path}", app.name, log)
        except BaseException:
            _stop(proc, scratch)
            raise
        if ready:
            return proc, port, log
        _stop(proc, scratch)
        said = log.read_text(errors="replace")
        if "address already in use" not in said.lower():
            raise AppUnavailable(
                f"{app.name} exited with {proc.returncode} before it served; its log:\n{said[-3000:]}"
            )
    raise AppUnavailable(f"{app.name} found each of {PORT_ATTEMPTS} free ports taken when it started")


@contextlib.contextmanager
def running(app: App | str, cache: Path, scratch: Path) -> Iterator[RunningApp]:
    """``app`` (or the app of that name) from ``cache``, its input in ``scratch``, started on a free
    loopback port; yields once its readiness URL answers 200 (polled, never a fixed sleep); stopped
    with every process it started when the block ends."""
    if isinstance(app, str):
        app = APPS[app]
    bin_ = venv_bin(cache, app.name)
    scratch.mkdir(parents=True, exist_ok=True)
    app.prepare(bin_, scratch)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **app.env(scratch)}
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
    proc, port, log = _start(app, bin_, scratch, env)
    try:
        yield RunningApp(app=app, url=f"http://127.0.0.1:{port}", port=port, proc=proc, log=log)
    finally:
        _stop(proc, scratch)
