"""Where a client file is, as both sides of a link spell it: its real path and how its directory lists it.

``canonical`` and ``spelling`` of a flow file and of each flow member are the protocol's (see
INTERFACE.md): the client computes them with these functions, and a co-located tool-server resolves
a flow it reads from its own disk with the same ones, so a run over a link and one on this machine
name a file alike.

- ``canonical_path``: the real path with the kernel's semantics; for a missing file, the real path of
  the nearest directory that exists with the rest of the path; an unresolvable link keeps its spelling.
- ``spelling_of``: ``listed`` when the directory lists the basename as written (or cannot be read),
  ``case_folded`` (with the listed name, and whether it is a valid flow file name) or ``absent``.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterator

from argent.link.models import LISTED, Spelling

__all__ = ["FLOW_FILE_NAME_RE", "canonical_path", "one_resolution", "spelling_of"]

#: A flow file name: letters, digits, underscore, hyphen and the lowercase `.yaml` extension (the rule of
#: ``argent.flows.names``, which a case-folded spelling's ``addressable`` reports; the two are tested equal).
FLOW_FILE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+\.yaml\Z")

#: The real paths resolved so far in this thread's ``one_resolution`` block (absent: none open).
_resolved = threading.local()


@contextlib.contextmanager
def one_resolution() -> Iterator[None]:
    """Within the block, a path this thread resolves again gets its first resolution.

    One worker-thread hop checks a flow file against the policy and then reads it, each resolving
    the same path; resolving it once also makes the check and the read agree on the file. Nothing
    outlives the block: the next hop (the next call, the next `run:`) resolves afresh, so a path
    that changes between calls is seen."""
    outer = getattr(_resolved, "paths", None)
    _resolved.paths = {} if outer is None else outer
    try:
        yield
    finally:
        _resolved.paths = outer


def canonical_path(path: str) -> str:
    """The real path with kernel semantics; for a missing file, the real path of the nearest
    directory that exists with the rest of the path; unresolvable links keep their spelling."""
    paths: dict[str, str] | None = getattr(_resolved, "paths", None)
    if paths is None:
        return _canonical_path(path)
    real = paths.get(path)
    if real is None:
        real = paths[path] = _canonical_path(path)
        paths.setdefault(real, real)  # a real path is its own, as the check after a resolution asks
    return real


def _canonical_path(path: str) -> str:
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        head, tail = os.path.split(path)
        if not head or head == path:
            return path
        if not tail:
            return _canonical_path(head)
        return os.path.join(_canonical_path(head), tail)


def spelling_of(directory: str, basename: str) -> Spelling:
    """How ``directory`` lists ``basename``; an unreadable directory counts as listed."""
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return LISTED
    if basename in names:
        return LISTED
    folded = basename.casefold()
    for name in sorted(names):
        if name.casefold() == folded:
            return Spelling("case_folded", actual=name, addressable=bool(FLOW_FILE_NAME_RE.match(name)))
    return Spelling("absent")
