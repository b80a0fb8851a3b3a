"""Typed application state of the tool-server."""

from __future__ import annotations

import asyncio
import time

from aiohttp import web

from argent.devices.hub import DeviceHub
from argent.server.config import ServerConfig
from argent.server.tmp_files import ServerFiles
from argent.server.uploads import UploadStore
from argent.tools.registry import ToolRegistry

CONFIG = web.AppKey("config", ServerConfig)
REGISTRY = web.AppKey("registry", ToolRegistry)
UPLOADS = web.AppKey("uploads", UploadStore)
#: The devices this server boots and attaches; every one is closed when the app shuts down.
DEVICES = web.AppKey("devices", DeviceHub)
#: Abort events of the calls in flight, set on shutdown.
#: Where failed snapshots leave their images for this server's lifetime.
ARTIFACTS_DIR = web.AppKey("artifacts_dir", str)
#: The names of this server's files in its temp dir.
SERVER_FILES = web.AppKey("server_files", ServerFiles)
INFLIGHT: web.AppKey[set[asyncio.Event]] = web.AppKey("inflight")


class Activity:
    """When the server last saw work, and how many calls are running (for --idle-timeout)."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.busy = 0

    def idle_for(self) -> float:
        return 0.0 if self.busy else time.monotonic() - self.last


ACTIVITY = web.AppKey("activity", Activity)
