"""What a browser launch target names (INTERFACE.md §5).

A target is a URL (``http://``, ``https://``, ``file://``, ``data:``, or ``about:``), or a path
to an HTML file or to a directory holding ``index.html`` — relative paths resolve against the
directory of the flow file that names them, which only a co-located run has.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_URL = re.compile(r"^(?:https?://|file://|data:|about:)", re.IGNORECASE)
_OTHER_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_HOST = re.compile(r"^(?:localhost|[\w-]+(?:\.[\w-]+)+)(?::\d+)?(?:/|$)")


def _looks_like_host(text: str) -> bool:
    return bool(_HOST.match(text)) and not text.lower().endswith((".html", ".htm"))


class LaunchTargetError(ValueError):
    """A launch target that names no page; the message says what to write instead."""


def is_url(target: str) -> bool:
    return bool(_URL.match(target.strip()))


def resolve_launch_target(target: str, flow_dir: str | None, platform: str = "chromium") -> str:
    """The URL to open for ``target`` on ``platform`` (the engine the messages name); relative paths
    resolve against ``flow_dir``."""
    text = target.strip()
    if not text:
        raise LaunchTargetError(f"The {platform} launch target is empty — name a URL or an HTML file.")
    if is_url(text):
        return text
    if _OTHER_SCHEME.match(text):
        raise LaunchTargetError(
            f'Cannot open "{target}" on {platform}: only http(s)://, file://, data: and about: URLs, or paths to '
            "an HTML file or a directory with index.html, are launch targets."
        )
    path = os.path.expanduser(text)
    if not os.path.isabs(path):
        if flow_dir is None:
            raise LaunchTargetError(
                f'The {platform} launch target "{target}" is a relative path, but this run has no local flow '
                "directory to resolve it against (relative paths need a co-located run). Launch a URL instead."
            )
        path = os.path.join(flow_dir, path)
    path = os.path.normpath(path)
    if os.path.isdir(path):
        index = os.path.join(path, "index.html")
        if not os.path.isfile(index):
            raise LaunchTargetError(
                f'The {platform} launch target "{target}" is a directory without an index.html ({path}). Name the '
                "HTML file to open."
            )
        path = index
    elif not os.path.isfile(path):
        hint = " (a web address needs its http:// or https://)" if _looks_like_host(text) else ""
        raise LaunchTargetError(
            f'The {platform} launch target "{target}" is neither a URL nor an existing file: {path} does not '
            f"exist{hint}."
        )
    return Path(path).resolve().as_uri()
