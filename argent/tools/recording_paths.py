"""Portable recordings: a file under the project root that a recorded step names (a page a launch
opens, the files an upload sets) is written relative to the flow file, so the flow runs from another
checkout and in CI.

An agent names a page by its absolute path (``open-url`` and ``boot-device`` have no flow file to be
relative to) or by a ``file://`` URL; a replay resolves a relative launch target against the flow
file's directory (``argent.devices.web.targets``). A file outside the project root keeps its
absolute path, with a warning: the flow then opens it only on this machine.

A host recording compares real paths (a project reached through a symbolic link still counts); a
recording kept on the client compares the paths as the client spelled them (its files are not on
this host).
"""

from __future__ import annotations

import os
import posixpath
from typing import Any
from urllib.parse import unquote, urlsplit

from attrs import evolve, frozen

from argent.flows.model import ChromiumApp, LaunchStep

OUTSIDE_PROJECT = (
    "{path} is outside the project root {root}: the recording keeps its absolute path, so the flow "
    "opens it only on this machine — move it under the project to make the flow portable"
)


@frozen
class Portable:
    """A path as the recording writes it, and the warning when it could not be made portable."""

    target: str
    warning: str | None = None


def _local_path(target: str) -> str | None:
    """The absolute path a target names: an absolute path, or a ``file://`` URL without a query or a
    fragment (a relative target cannot say which file it meant); None for anything else."""
    if target.lower().startswith("file://"):
        parts = urlsplit(target)
        if parts.query or parts.fragment or parts.netloc not in ("", "localhost"):
            return None
        return unquote(parts.path) or None
    return target if os.path.isabs(target) else None


def portable_path(target: str, *, project_root: str, flow_file: str, on_host: bool) -> Portable:
    """``target`` as a recording writes it: relative to ``flow_file``'s directory when it names a file
    under ``project_root``; else as given (with a warning for a local file outside the project)."""
    path = _local_path(target)
    if path is None:
        return Portable(target)
    if on_host:
        root, where, flow_dir = (
            os.path.realpath(p) for p in (project_root, path, os.path.dirname(flow_file))
        )
    else:
        root, where = posixpath.normpath(project_root), posixpath.normpath(path)
        flow_dir = posixpath.dirname(posixpath.normpath(flow_file))
    if where != root and not where.startswith(root.rstrip("/") + "/"):
        return Portable(target, OUTSIDE_PROJECT.format(path=path, root=project_root))
    return Portable(posixpath.relpath(where, flow_dir))


def portable_launch(
    step: LaunchStep, *, project_root: str, flow_file: str, on_host: bool
) -> tuple[LaunchStep, str | None]:
    """A launch step whose chromium target (or bare web target) is portable (``portable_path``)."""
    if step.chromium is not None:
        made = portable_path(
            step.chromium.path, project_root=project_root, flow_file=flow_file, on_host=on_host
        )
        return evolve(step, chromium=ChromiumApp(made.target, step.chromium.args)), made.warning
    if step.app is not None and step.web_target() is not None:
        made = portable_path(step.app, project_root=project_root, flow_file=flow_file, on_host=on_host)
        return evolve(step, app=made.target), made.warning
    return step, None


UPLOAD_OUTSIDE_PROJECT = (
    "{path} is outside the project root {root}: an upload names its files relative to the flow file, so a "
    "file must be under the project — copy it there (e.g. into fixtures/) and name that copy"
)


def portable_upload(value: Any, *, project_root: str, flow_file: str, on_host: bool) -> Any:
    """An ``upload:`` value whose absolute ``files`` (or ``file://`` URLs) under the project root are
    written relative to the flow file, as its grammar wants them; a file outside the project is refused
    (``ValueError`` with the words to say). Anything else is left for the parser to judge."""
    if not isinstance(value, dict) or not isinstance(value.get("files"), list):
        return value
    files: list[Any] = []
    for path in value["files"]:
        if isinstance(path, str) and _local_path(path) is not None:
            made = portable_path(path, project_root=project_root, flow_file=flow_file, on_host=on_host)
            if made.warning is not None:
                raise ValueError(UPLOAD_OUTSIDE_PROJECT.format(path=_local_path(path), root=project_root))
            path = made.target
        files.append(path)
    return {**value, "files": files}
