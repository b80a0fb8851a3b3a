"""The aiohttp application factory of the tool-server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
import uuid
from collections.abc import AsyncIterator

from aiohttp import web

from argent.devices.chromium.provider import ChromiumDeviceProvider
from argent.server.config import ServerConfig
from argent.server.guards import Handler, host_guard, json_errors
from argent.server.keys import ACTIVITY, ARTIFACTS_DIR, CONFIG, DEVICES, INFLIGHT, REGISTRY, UPLOADS, Activity
from argent.server.policy_guard import policy_middlewares
from argent.server.routes import routes
from argent.server.uploads import UploadStore
from argent.tools.registry import ToolRegistry


def create_app(config: ServerConfig, registry: ToolRegistry | None = None) -> web.Application:
    """A tool-server app: routes, guards, and every resource with a lifetime in cleanup_ctx.

    The built-in tools (``registry`` None) drive this app's device provider; a given registry
    keeps its own tools, and the app still owns (and on shutdown closes) a provider."""
    devices = ChromiumDeviceProvider()
    # Made on first use by a failed snapshot; removed with everything in it when the app stops.
    artifacts_dir = os.path.join(config.tmp_dir, f"argent-artifacts-{uuid.uuid4().hex[:12]}")
    if registry is None:
        from argent.tools.builtin import build_registry

        registry = build_registry(devices=devices, artifacts_dir=artifacts_dir)
    app = web.Application(
        middlewares=[json_errors, host_guard(config), *policy_middlewares(config), track_activity],
        client_max_size=config.max_body_bytes,
    )
    app[CONFIG] = config
    app[REGISTRY] = registry
    app[INFLIGHT] = set()
    app[ACTIVITY] = Activity()
    app[DEVICES] = devices
    app[ARTIFACTS_DIR] = artifacts_dir
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
        expiry_seconds=config.upload_expiry_seconds,
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
    """No Chromium outlives the app: on shutdown every booted instance is killed, its profile removed."""
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


async def _sweep(store: UploadStore, interval: float) -> None:
    while True:
        await asyncio.sleep(interval)
        await store.sweep()


async def _abort_inflight(app: web.Application) -> None:
    """On shutdown running flows stop: their remaining steps report skip `run aborted`."""
    events: set[asyncio.Event] = app[INFLIGHT]
    for abort in list(events):
        abort.set()


@web.middleware
async def track_activity(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Tool listings, calls and uploads count as activity; a running call keeps the server busy."""
    if request.path == "/healthz":
        return await handler(request)
    activity = request.app[ACTIVITY]
    activity.busy += 1
    try:
        return await handler(request)
    finally:
        activity.busy -= 1
        activity.last = time.monotonic()
