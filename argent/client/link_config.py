"""The remembered link to a remote tool-server: ``~/.argent/link.json`` and link strings.

The file is pretty JSON with a trailing newline, mode 0600 (it may hold the token)::

    {"url": "http://10.0.0.42:3001", "host": "10.0.0.42", "port": 3001,
     "createdAt": "<ISO 8601>", "token": "<secret, optional>"}

A file that is missing, is not JSON, or lacks a field of the right type counts as no link.

Link strings come in two shapes: ``argent://[<url-encoded token>@]<host>:<port>`` (what
``argent server start`` prints; it maps to ``http://host:port``) and plain ``http(s)://`` URLs,
for a tool-server behind a proxy, where a userinfo name is the token and a path is kept.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from attrs import frozen

from argent.utils.atomic import write_atomically

ARGENT_SCHEME = "argent://"
LINK_DIR_NAME = ".argent"
LINK_FILE_NAME = "link.json"
LINK_FILE_MODE = 0o600
DEFAULT_PORTS = {"http": 80, "https": 443}
#: Addresses a server binds to, never one a client can connect to.
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "::0", ""})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})

MISSING_HOST_OR_PORT = (
    "An argent:// link needs a host and a port, as in argent://<token>@<host>:<port>: {value}"
)
INVALID_PORT = "The port of an argent:// link must be a number from 0 to 65535: {value}"


@frozen
class LinkConfig:
    """The content of link.json."""

    url: str
    host: str
    port: int
    created_at: str
    token: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "url": self.url,
            "host": self.host,
            "port": self.port,
            "createdAt": self.created_at,
        }
        if self.token is not None:
            out["token"] = self.token
        return out


@frozen
class LinkTarget:
    """A parsed link string: where calls go, and the token it carried."""

    url: str
    host: str
    port: int
    token: str | None = None


def link_config_path(home: Path | None = None) -> Path:
    """``~/.argent/link.json`` (``HOME`` decides where ``~`` is)."""
    return (home or Path.home()) / LINK_DIR_NAME / LINK_FILE_NAME


def read_link_config(path: Path | None = None) -> LinkConfig | None:
    """The stored link, or None when there is none or the file is not a valid link."""
    target = path or link_config_path()
    try:
        raw = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    url, host, port, created = raw.get("url"), raw.get("host"), raw.get("port"), raw.get("createdAt")
    if not (isinstance(url, str) and isinstance(host, str) and isinstance(created, str)):
        return None
    if not isinstance(port, int | float) or isinstance(port, bool) or port != int(port):
        return None
    token = raw.get("token")
    return LinkConfig(
        url=url,
        host=host,
        port=int(port),
        created_at=created,
        token=token if isinstance(token, str) else None,
    )


def write_link_config(config: LinkConfig, path: Path | None = None) -> Path:
    """Write link.json atomically with mode 0600, creating ``~/.argent`` when needed."""
    target = path or link_config_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(config.to_json(), indent=2, ensure_ascii=False) + "\n"
    write_atomically(str(target), text.encode("utf-8"), mode=LINK_FILE_MODE)
    return target


def remove_link_config(path: Path | None = None) -> LinkConfig | None:
    """Delete link.json; returns what it held (None when there was no valid link, or no file)."""
    target = path or link_config_path()
    previous = read_link_config(target)
    try:
        target.unlink()
    except FileNotFoundError:
        return None
    return previous


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def bracket_host(host: str) -> str:
    """IPv6 literals in URLs are written in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def format_argent_url(host: str, port: int, token: str | None = None) -> str:
    """``argent://[<token>@]<host>:<port>``; the token is URL-encoded."""
    userinfo = f"{quote(token, safe='')}@" if token else ""
    return f"{ARGENT_SCHEME}{userinfo}{bracket_host(host)}:{port}"


def parse_argent_url(value: str) -> LinkTarget | None:
    """Parse an ``argent://`` string; None when ``value`` has another scheme.

    Raises ``ValueError`` when the host or the port is missing or the port is not a number.
    """
    if not value.lower().startswith(ARGENT_SCHEME):
        return None
    rest = value[len(ARGENT_SCHEME) :]
    for stop in "/?#":
        rest = rest.split(stop, 1)[0]
    token: str | None = None
    if "@" in rest:
        userinfo, rest = rest.rsplit("@", 1)
        token = unquote(userinfo) or None
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0:
            raise ValueError(MISSING_HOST_OR_PORT.format(value=value))
        host, after = rest[1:close], rest[close + 1 :]
        if not after.startswith(":"):
            raise ValueError(MISSING_HOST_OR_PORT.format(value=value))
        port_text = after[1:]
    else:
        if ":" not in rest:
            raise ValueError(MISSING_HOST_OR_PORT.format(value=value))
        host, port_text = rest.rsplit(":", 1)
    if not host or not port_text:
        raise ValueError(MISSING_HOST_OR_PORT.format(value=value))
    if not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(INVALID_PORT.format(value=value))
    port = int(port_text)
    return LinkTarget(url=f"http://{bracket_host(host)}:{port}", host=host, port=port, token=token)


def parse_link_target(value: str) -> LinkTarget | None:
    """An ``argent://`` string or an ``http(s)://`` URL; None for anything else.

    For http(s) the port defaults to 80/443, the URL keeps its path without trailing slashes
    (query and fragment are dropped), and a userinfo name becomes the token. ``argent://`` raises
    ``ValueError`` when its host or port is missing.
    """
    value = value.strip()
    argent = parse_argent_url(value)
    if argent is not None:
        return argent
    try:
        parts = urlsplit(value)
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            return None
        host = parts.hostname
        explicit_port = parts.port
    except ValueError:
        return None
    if not host:
        return None
    port = explicit_port if explicit_port is not None else DEFAULT_PORTS[scheme]
    origin = bracket_host(host)
    if port != DEFAULT_PORTS[scheme]:
        origin = f"{origin}:{port}"
    path = parts.path.rstrip("/")
    raw_token = parts.username or parts.password
    token = unquote(raw_token) if raw_token else None
    return LinkTarget(url=f"{scheme}://{origin}{path}", host=host, port=port, token=token)


def is_loopback(host: str) -> bool:
    return host.lower() in LOOPBACK_HOSTS or host.startswith("127.")
