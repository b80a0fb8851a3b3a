"""Running a tool-server in the foreground until a signal, an idle timeout, or a caller says stop."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from collections.abc import Callable, Iterator

from aiohttp import web

from argent.cpu import prompt_gil_handoff
from argent.limits import LISTEN_BACKLOG
from argent.server.app import claim_tmp_dir, create_app
from argent.server.call_log import CALL_LOGGER, ToolCallLog
from argent.server.config import ServerConfig
from argent.server.connections import GuardedAppRunner
from argent.server.heap import keep_freed_heap
from argent.server.keys import ACTIVITY
from argent.tools.registry import ToolRegistry

#: How long running calls get to finish (reporting `run aborted`) once shutdown starts.
SHUTDOWN_GRACE_SECONDS = 10.0


def format_origin(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class RunningServer:
    """A started tool-server: its real port, and a way to stop it."""

    def __init__(self, runner: web.AppRunner, config: ServerConfig, port: int) -> None:
        self.runner = runner
        self.config = config
        self.port = port
        self.stopped = asyncio.Event()

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.config.host in ("0.0.0.0", "") else self.config.host
        host = "::1" if host in ("::", "::0") else host
        return f"http://{format_origin(host, self.port)}"

    async def stop(self) -> None:
        """Stop accepting, abort running flows, delete pending uploads and temp files."""
        if not self.stopped.is_set():
            self.stopped.set()
            await self.runner.cleanup()


async def start_server(config: ServerConfig, registry: ToolRegistry | None = None) -> RunningServer:
    keep_freed_heap()  # the reads of an upload reuse warm memory (argent/server/heap.py)
    app = create_app(config, registry)
    claim_tmp_dir(app)
    runner = GuardedAppRunner(
        app,
        config,
        handle_signals=False,
        # A client that hangs up cancels its call's handler, which aborts the run (routes._invoke).
        handler_cancellation=True,
        shutdown_timeout=SHUTDOWN_GRACE_SECONDS,
        access_log_class=ToolCallLog,
        access_log=CALL_LOGGER if config.log_calls else None,
    )
    await runner.setup()
    site = web.TCPSite(runner, config.host or None, config.port, backlog=LISTEN_BACKLOG)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    port = int(runner.addresses[0][1])
    return RunningServer(runner, config, port)


async def serve_forever(
    server: RunningServer,
    *,
    on_idle: Callable[[], None] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Block until SIGINT/SIGTERM or the idle timeout, then stop gracefully.

    ``on_ready`` (the banner) runs once the signal handlers are in place, so a signal sent as
    soon as the banner is read already stops the server gracefully."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    idle = asyncio.create_task(_idle_watch(server, stop, on_idle))
    try:
        # CPU-heavy work in threads never holds the loop's GIL for long, nor do full collections walk
        # what the server loaded.
        with prompt_gil_handoff(), _startup_frozen():
            if on_ready is not None:
                on_ready()
            await stop.wait()
    finally:
        idle.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await idle
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await server.stop()


@contextlib.contextmanager
def _startup_frozen() -> Iterator[None]:
    """What is loaded before serving lives as long as the server: a full collection (which holds the
    GIL, so stalls the loop) need not walk it again. Unfrozen afterwards, for a caller that goes on."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def _idle_watch(server: RunningServer, stop: asyncio.Event, on_idle: Callable[[], None] | None) -> None:
    minutes = server.config.idle_timeout_minutes
    if minutes <= 0:
        return
    limit = minutes * 60
    activity = server.runner.app[ACTIVITY]
    while True:
        await asyncio.sleep(min(60.0, max(0.05, limit / 4)))
        if activity.idle_for() >= limit:
            if on_idle:
                on_idle()
            stop.set()
            return
