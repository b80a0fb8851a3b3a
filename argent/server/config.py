"""The tool-server's settings, fixed when the app is created."""

from __future__ import annotations

import tempfile

from attrs import field, frozen

from argent.limits import (
    BODY_IDLE_TIMEOUT_SECONDS,
    HEADER_READ_TIMEOUT_SECONDS,
    KEEPALIVE_TIMEOUT_SECONDS,
    MAX_BODY_BYTES,
    MAX_OPEN_CONNECTIONS,
    MAX_PENDING_UPLOAD_BYTES,
    MAX_PENDING_UPLOAD_BYTES_PER_TOKEN,
    MAX_UPLOAD_BYTES,
    UPLOAD_EXPIRY_SECONDS,
    UPLOAD_SWEEP_INTERVAL_SECONDS,
)
from argent.server.policy import ServerPolicy

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "::0", ""})


@frozen
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 3001
    #: None turns authentication off (development only).
    token: str | None = None
    idle_timeout_minutes: float = 0
    tmp_dir: str = field(factory=tempfile.gettempdir)
    #: The limits default to argent.limits, their one home; a config only overrides them.
    max_body_bytes: int = MAX_BODY_BYTES
    max_upload_bytes: int = MAX_UPLOAD_BYTES
    max_pending_upload_bytes: int = MAX_PENDING_UPLOAD_BYTES
    max_pending_upload_bytes_per_token: int = MAX_PENDING_UPLOAD_BYTES_PER_TOKEN
    upload_expiry_seconds: float = UPLOAD_EXPIRY_SECONDS
    sweep_interval_seconds: float = UPLOAD_SWEEP_INTERVAL_SECONDS
    #: Connection limits (argent.limits has the reasons); tests shorten them.
    header_timeout_seconds: float = HEADER_READ_TIMEOUT_SECONDS
    body_idle_timeout_seconds: float = BODY_IDLE_TIMEOUT_SECONDS
    keepalive_timeout_seconds: float = KEEPALIVE_TIMEOUT_SECONDS
    max_connections: int = MAX_OPEN_CONNECTIONS
    #: The --config policy (named tokens, project roots, local flows, scripts, limits).
    policy: ServerPolicy = field(factory=ServerPolicy)
    #: One line per tool call on stderr (``argent server start``; an embedded server stays quiet).
    log_calls: bool = False

    @property
    def allowed_hosts(self) -> frozenset[str] | None:
        """Hostnames the Host header may name; None when a wildcard bind disables the check."""
        if self.host in WILDCARD_HOSTS:
            return None
        return LOOPBACK_HOSTS | {self.host}
