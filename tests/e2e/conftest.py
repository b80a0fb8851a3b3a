"""Real processes: the `argent` CLI and `argent server start`, with a private HOME; and for the
modules that drive the real Chromium, their marks, a Chromium per module and pages on loopback."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio
from aiohttp import web
from attrs import define

if TYPE_CHECKING:
    from argent.devices.chromium import ChromiumDevice, ChromiumDeviceProvider


@define
class Cli:
    home: Path
    cwd: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_")}
        env.update(HOME=str(self.home), PYTHONUNBUFFERED="1", **extra)
        return env

    def run(
        self, *args: str, cwd: Path | None = None, timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "argent", *args],
            cwd=cwd or self.cwd,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def spawn(self, *args: str, cwd: Path | None = None, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "argent", *args],
            cwd=cwd or self.cwd,
            env=self.env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".argent" / "flows").mkdir(parents=True)
    return root


@pytest.fixture
def cli(tmp_path: Path, project: Path) -> Cli:
    home = tmp_path / "home"
    home.mkdir()
    return Cli(home=home, cwd=project)


@define
class ServerProcess:
    proc: subprocess.Popen[str]
    url: str
    token: str
    banner: list[str]

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)


def start_server_process(cli: Cli, *extra: str, **env: str) -> ServerProcess:
    """Start `argent server start --port 0 ...` and read its banner (one line, two with auth)."""
    proc = cli.spawn("server", "start", "--port", "0", *extra, **env)
    assert proc.stdout is not None
    expected = 1 if "--no-auth" in extra else 2
    lines = [proc.stdout.readline().rstrip("\n") for _ in range(expected)]
    if not lines[0].startswith("Tools server listening on "):
        proc.kill()
        raise AssertionError(f"no banner: {lines} {proc.stderr.read() if proc.stderr else ''}")
    url = lines[0].removeprefix("Tools server listening on ")
    token = lines[1].split("argent://", 1)[1].split("@", 1)[0] if expected == 2 else ""
    return ServerProcess(proc=proc, url=url, token=token, banner=lines)


@pytest.fixture
def server(cli: Cli) -> Iterator[ServerProcess]:
    running = start_server_process(cli)
    yield running
    running.stop(signal.SIGKILL)


def read_until(stream: Any, predicate: Any, timeout: float = 30) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if predicate(line):
            return lines
    raise AssertionError(f"did not see the expected line; got {lines}")


# --------------------------------------------------------------------------------------------
# Chromium

#: A page with a heading and a button that changes its own text (a flow taps it, then asserts).
SHOP_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>
<style>body { font-family: sans-serif; margin: 0; padding: 16px; } h1 { color: #123456; }</style></head>
<body><h1>Shop</h1>
<button id="add" onclick="this.textContent = 'In the cart'">Add to cart</button>
</body></html>
"""


def chromium_marks() -> list[pytest.MarkDecorator]:
    """The ``pytestmark`` of a module that runs the real Chromium: e2e, and skipped, saying why,
    where none can run here (no binary, a sandbox that forbids it)."""
    chromium = pytest.importorskip("argent.devices.chromium")
    reason = chromium.chromium_unavailable_reason()
    return [pytest.mark.e2e, pytest.mark.skipif(reason is not None, reason=str(reason))]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def provider() -> AsyncIterator[ChromiumDeviceProvider]:
    """The module's Chromium provider: every browser it boots closes with the module."""
    from argent.devices.chromium import ChromiumDeviceProvider

    devices = ChromiumDeviceProvider()
    try:
        yield devices
    finally:
        await devices.close_all()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def device(provider: ChromiumDeviceProvider) -> ChromiumDevice:
    """One Chromium booted for the module, shared by the tests that leave it alive."""
    return await provider.boot()


def pages_app(pages: dict[str, str], *routes: web.RouteDef) -> web.Application:
    """An app serving each HTML page of ``pages`` at its path (404 for any other), after
    ``routes`` (registered first, so a page path cannot shadow them)."""

    async def page(request: web.Request) -> web.Response:
        body = pages.get(request.path)
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.add_routes(routes)
    app.router.add_get("/{name}", page)
    return app


@contextlib.asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[str]:
    """``app`` on a free loopback port while the block runs; its base URL."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


# --------------------------------------------------------------------------------------------
# Every engine


def group_alive(pgid: int) -> list[int]:
    """The live (non-zombie) processes of process group ``pgid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            found.append(int(entry))
    return found


def processes_under(tmp: Path) -> list[int]:
    """The live (non-zombie) processes whose command line or environment names ``tmp``: the TMPDIR of
    the commands a test ran, under which each browser they launch has its home. Chromium's every
    process names its home on its command line; Firefox's content processes name only the binary and
    their handles there, but inherit the browser's TMPDIR (its home's ``tmp``)."""
    needle = str(tmp).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            proc = Path("/proc", entry)
            if needle not in proc.joinpath("cmdline").read_bytes() + proc.joinpath("environ").read_bytes():
                continue
            state = proc.joinpath("stat").read_bytes().rsplit(b")", 1)[1].split()[:1]
        except (OSError, IndexError):
            continue
        if state != [b"Z"]:
            found.append(int(entry))
    return found


def engine_marks(platform: str) -> list[pytest.MarkDecorator]:
    """The marks of a test (or a parameter) that runs the real browser of ``platform``: e2e, and
    skipped, saying why, where its binary is missing."""
    from argent.devices.registry import engine_named

    engine = engine_named(platform)
    assert engine is not None, platform
    reason = engine.unavailable_reason()
    return [pytest.mark.e2e, pytest.mark.skipif(reason is not None, reason=str(reason))]


def firefox_marks() -> list[pytest.MarkDecorator]:
    """The ``pytestmark`` of a module that runs the real Firefox."""
    return engine_marks("firefox")


def on_engines(*platforms: str) -> list[Any]:
    """``pytest.param`` per engine platform (each with its marks), for ``parametrize``."""
    return [pytest.param(platform, marks=engine_marks(platform), id=platform) for platform in platforms]


#: The engines the flow e2e tests run on.
ENGINES = ("chromium", "firefox")
