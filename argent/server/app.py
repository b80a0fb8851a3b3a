"""The aiohttp application factory of the tool-server."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import shutil
from collections.abc import AsyncIterator

from aiohttp import web

from argent.devices.hub import DeviceHub
from argent.server.config import ServerConfig
from argent.server.guards import json_errors
from argent.server.keys import (
    ACTIVITY,
    ARTIFACTS_DIR,
    CONFIG,
    DEVICES,
    INFLIGHT,
    REGISTRY,
    SERVER_FILES,
    UPLOADS,
    Activity,
)
from argent.server.policy_guard import front_guard
from argent.server.routes import routes
from argent.server.tmp_files import ServerFiles, TmpClaim, reclaim_stopped_servers
from argent.server.uploads import UploadStore
from argent.tools.registry import ToolRegistry

log = logging.getLogger("argent.server")

RECLAIMED = "[argent] Removed {count} files left by stopped tool-servers in {tmp_dir}"
NO_CLAIM = (
    "[argent] Could not lock {path} ({reason}); should this tool-server be killed, the next one will "
    "not remove its temp files. Check that the temp dir is writable."
)


def create_app(config: ServerConfig, registry: ToolRegistry | None = None) -> web.Application:
    """A tool-server app: routes, guards, and every resource with a lifetime in cleanup_ctx.

    The built-in tools (``registry`` None) drive this app's device provider; a given registry
    keeps its own tools, and the app still owns (and on shutdown closes) a provider."""
    devices = DeviceHub()
    files = ServerFiles(config.tmp_dir)
    # Made on first use by a failed snapshot; removed with everything in it when the app stops.
    artifacts_dir = files.artifacts_dir
    if registry is None:
        from argent.tools.builtin import build_registry

        registry = build_registry(
            devices=devices,
            artifacts_dir=artifacts_dir,
            file_input_dirs=functools.partial(files.mkdtemp, "file-input"),
        )
    app = web.Application(
        middlewares=[json_errors, front_guard(config)],
        client_max_size=config.max_body_bytes,
    )
    app[CONFIG] = config
    app[REGISTRY] = registry
    app[INFLIGHT] = set()
    app[ACTIVITY] = Activity()
    app[DEVICES] = devices
    app[ARTIFACTS_DIR] = artifacts_dir
    app[SERVER_FILES] = files
    app.cleanup_ctx.append(_uploads_ctx)
    app.cleanup_ctx.append(_devices_ctx)
    app.cleanup_ctx.append(_artifacts_ctx)
    app.on_shutdown.append(_abort_inflight)
    app.add_routes(routes)
    return app


async def _uploads_ctx(app: web.Application) -> AsyncIterator[None]:
    config = app[CONFIG]
    store = UploadStore(
        config.tmp_dir,
        max_upload_bytes=config.max_upload_bytes,
        max_pending_bytes=config.max_pending_upload_bytes,
        max_pending_bytes_per_token=config.max_pending_upload_bytes_per_token,
        expiry_seconds=config.upload_expiry_seconds,
        files=app[SERVER_FILES],
        body_idle_seconds=config.body_idle_timeout_seconds,
    )
    app[UPLOADS] = store
    sweeper = asyncio.create_task(_sweep(store, config.sweep_interval_seconds))
    try:
        yield
    finally:
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        await store.close()


async def _devices_ctx(app: web.Application) -> AsyncIterator[None]:
    """No browser outlives the app: on shutdown every booted instance (of every engine) is stopped, its profile removed."""
    devices = app[DEVICES]
    try:
        yield
    finally:
        await devices.close_all()


async def _artifacts_ctx(app: web.Application) -> AsyncIterator[None]:
    """Images of failed snapshots live as long as the server that reported them."""
    try:
        yield
    finally:
        await asyncio.to_thread(shutil.rmtree, app[ARTIFACTS_DIR], True)


def claim_tmp_dir(app: web.Application) -> None:
    """Have ``app`` claim its temp dir while it runs, and remove what stopped servers left there.

    For a server other processes may share the temp dir with (``start_server``): it holds the
    lock of its id from startup to the end of cleanup, and once started removes, off the event
    loop, the files of every server whose lock is free (see ``argent.server.tmp_files``)."""
    app.cleanup_ctx.insert(0, _claim_ctx)


async def _claim_ctx(app: web.Application) -> AsyncIterator[None]:
    files = app[SERVER_FILES]
    claim = TmpClaim(files)
    try:
        await asyncio.to_thread(claim.hold)
    except OSError as exc:
        log.warning(NO_CLAIM.format(path=files.lock_path, reason=exc.strerror or exc))
    reclaim = asyncio.create_task(_reclaim(files))
    try:
        yield
    finally:
        await reclaim
        await asyncio.to_thread(claim.release)


async def _reclaim(files: ServerFiles) -> None:
    try:
        removed = await asyncio.to_thread(reclaim_stopped_servers, files.tmp_dir, files.server_id)
    except Exception:  # pragma: no cover - a failed clean-up must not stop the server
        log.exception("Removing the files of stopped tool-servers failed")
        return
    count = sum(len(names) for names in removed.values())
    if count:
        log.warning(RECLAIMED.format(count=count, tmp_dir=files.tmp_dir))


async def _sweep(store: UploadStore, interval: float) -> None:
    while True:
        await asyncio.sleep(interval)
        await store.sweep()


async def _abort_inflight(app: web.Application) -> None:
    """On shutdown running flows stop: their remaining steps report skip `run aborted`."""
    events: set[asyncio.Event] = app[INFLIGHT]
    for abort in list(events):
        abort.set()
