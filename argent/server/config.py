"""The tool-server's settings, fixed when the app is created."""

from __future__ import annotations

import tempfile

from attrs import field, frozen

from argent.limits import MIB
from argent.server.policy import ServerPolicy

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "::0", ""})
GIB = 1024 * MIB


@frozen
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 3001
    #: None turns authentication off (development only).
    token: str | None = None
    idle_timeout_minutes: float = 0
    tmp_dir: str = field(factory=tempfile.gettempdir)
    #: Largest JSON body of a tool call (inline file inputs ride in it).
    max_body_bytes: int = 48 * MIB
    max_upload_bytes: int = 2 * GIB
    max_pending_upload_bytes: int = 8 * GIB
    upload_expiry_seconds: float = 15 * 60
    sweep_interval_seconds: float = 60
    #: The --config policy (named tokens, project roots, local flows, scripts, limits).
    policy: ServerPolicy = field(factory=ServerPolicy)

    @property
    def allowed_hosts(self) -> frozenset[str] | None:
        """Hostnames the Host header may name; None when a wildcard bind disables the check."""
        if self.host in WILDCARD_HOSTS:
            return None
        return LOOPBACK_HOSTS | {self.host}
