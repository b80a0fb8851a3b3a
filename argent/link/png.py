"""What makes bytes a PNG image, decided once for the client and the tool-server; the one bounded
read of a PNG file; and which images of a run travel inline.

The client writes a baseline a tool-server sends only when its bytes are a PNG (the eight-byte
signature); the tools that read a PNG's size check the same signature first. A failing step's
image is named by its path in the step's ``artifacts``; over a link the result also carries its
bytes (``FlowRunResult.artifact_images``), chosen by ``failure_image_paths`` on both sides.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from argent.limits import MAX_ARTIFACT_IMAGES
from argent.link.models import StepReport

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: The artifact that shows why a step failed, by preference: the screen at a failed device step, else
#: a failed snapshot's diff, else its capture (a snapshot without a baseline has only that).
FAILURE_IMAGE_ROLES = ("screenshot", "diff", "current")


def is_png(data: bytes) -> bool:
    """Whether ``data`` starts with the PNG signature."""
    return data.startswith(PNG_SIGNATURE)


def read_png(path: str, limit: int) -> bytes | None:
    """The bytes of the PNG at ``path`` when it is a regular file (no link followed) of at most
    ``limit`` bytes; None otherwise. Blocking: async callers run it in a thread."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as src:
        try:
            info = os.fstat(src.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            data = src.read(limit + 1)
        except OSError:
            return None
    return data if len(data) <= limit and is_png(data) else None


def failure_image_paths(steps: Iterable[StepReport]) -> list[str]:
    """The image that shows why each failing (``fail``/``error``) step failed, in step order, at most
    ``MAX_ARTIFACT_IMAGES``: the first of ``FAILURE_IMAGE_ROLES`` its artifacts name."""
    paths: list[str] = []
    for step in steps:
        if step.status not in ("fail", "error") or not step.artifacts:
            continue
        path = next((step.artifacts[role] for role in FAILURE_IMAGE_ROLES if step.artifacts.get(role)), None)
        if isinstance(path, str) and path not in paths:
            paths.append(path)
            if len(paths) >= MAX_ARTIFACT_IMAGES:
                break
    return paths
