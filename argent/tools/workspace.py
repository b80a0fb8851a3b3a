"""Where a tool-server works and what it reads: the unsafe-workspace rule and the project roots.

A ``project_root`` that a call works in on this host is refused when it is, by its real path, the
filesystem root, the home directory of the server's user (``$HOME`` and its passwd entry) or a
system directory — each as the directory itself: a project in a subdirectory of the home
directory is fine. With ``project_roots`` configured it must also lie under one of them.

The kernel's views (``/proc``, ``/sys``, ``/dev``) are refused with everything under them: no
project lives there, and ``/proc/self/environ`` holds the server's tokens.

A file a tool reads on this host (a PNG to compare, a page the browser opens) obeys the same rules
through the directory that holds it; with project roots it must lie under one, and a server that
serves no flow from its disk and names no project roots reads no file of its own at all. A refused
file gets one answer whatever is (or is not) there, so a refusal tells nothing about the disk.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping

from argent.errors import WORKSPACE_UNSAFE, InvalidToolInputError, PolicyRefusal
from argent.link.paths import canonical_path

#: Directories no project lives in, each refused as the directory itself (and every ``/lib*``).
SYSTEM_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/proc", "/sys", "/dev", "/boot", "/var", "/root")
ROOT_WHY = "the filesystem root"
HOME_WHY = "the home directory of the tool-server's user"
SYSTEM_WHY = "a system directory"
#: Refused with everything under them.
KERNEL_TREES = ("/proc", "/sys", "/dev")
KERNEL_WHY = SYSTEM_WHY

WORKSPACE_REFUSED = (
    'project_root "{root}" resolves to {why}, which the tool-server never works in. Pass the '
    "project's own directory (a subdirectory of the home directory is fine)."
)
OUTSIDE_ROOTS = (
    'project_root "{root}" is outside the project roots of this tool-server ({roots}). Use a project '
    "under one of them, or ask the tool-server's operator to add its directory to project_roots."
)
READ_REFUSED = (
    'The tool-server does not read "{path}": a tool reads files on the tool-server only inside a project{roots}, '
    "never directly in the filesystem root, the home directory or a system directory, nor under /proc, /sys "
    "or /dev. Pass a file of the project, or send the file from the client (over a link it travels with the "
    "call)."
)
NUL_IN_ROOT = (
    'project_root "{root}" holds a NUL character, which no path on this host can hold. Pass the '
    "project's own directory."
)
NO_DISK_READS = (
    'The tool-server does not read "{path}": it reads no file of its own disk for a call (local_flows: false '
    "and no project_roots in its config). Send the file from the client: over a link it travels with the call."
)


def _home_directories() -> list[str]:
    """``$HOME`` and the passwd entry's home of the server's user (they may differ)."""
    homes = [os.environ.get("HOME") or ""]
    with contextlib.suppress(ImportError, KeyError):
        import pwd

        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    return [home for home in homes if home and os.path.isabs(home)]


def unsafe_directories() -> dict[str, str]:
    """The unsafe directories by spelled and real path, each with why it is unsafe."""
    out: dict[str, str] = {}

    def add(path: str, why: str) -> None:
        for spelling in (os.path.normpath(path), canonical_path(path)):
            out.setdefault(spelling, why)

    add("/", ROOT_WHY)
    for home in _home_directories():
        add(home, HOME_WHY)
    for directory in SYSTEM_DIRS:
        add(directory, SYSTEM_WHY)
    with contextlib.suppress(OSError):
        for name in os.listdir("/"):
            if name.startswith("lib"):
                add("/" + name, SYSTEM_WHY)
    return out


def _lib_dir(path: str) -> bool:
    return os.path.dirname(path) == "/" and os.path.basename(path).startswith("lib")


def _unsafe_why(unsafe: Mapping[str, str], *paths: str) -> str | None:
    for path in paths:
        if any(within(path, tree) for tree in KERNEL_TREES):
            return KERNEL_WHY
        why = unsafe.get(path)
        if why is not None:
            return why
        if _lib_dir(path):
            return SYSTEM_WHY
    return None


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def check_workspace(project_root: str, unsafe: Mapping[str, str], roots: tuple[str, ...]) -> None:
    """Refuse (403 ``WORKSPACE_UNSAFE``) a ``project_root`` this host must not work in.

    A relative root or one with ``..`` is left to the tool's own check (its own message); one holding
    a NUL names no directory (the system calls that resolve it refuse it): 400."""
    if "\0" in project_root:
        raise InvalidToolInputError(NUL_IN_ROOT.format(root=project_root.replace("\0", "\\u0000")))
    if not os.path.isabs(project_root) or ".." in re.split(r"[\\/]+", project_root):
        return
    real = canonical_path(project_root)
    why = _unsafe_why(unsafe, real, os.path.normpath(project_root))
    if why is not None:
        raise PolicyRefusal(WORKSPACE_REFUSED.format(root=project_root, why=why), error_code=WORKSPACE_UNSAFE)
    if roots and not any(within(real, root) for root in roots):
        raise PolicyRefusal(
            OUTSIDE_ROOTS.format(root=project_root, roots=", ".join(roots)), error_code=WORKSPACE_UNSAFE
        )


def may_read(path: str, unsafe: Mapping[str, str], roots: tuple[str, ...]) -> bool:
    """Whether a tool may read ``path`` on this host: the directory holding its real file is not an
    unsafe directory itself, and with project roots the file lies under one."""
    if "\0" in path:
        return False  # names no file (the system calls refuse it): nothing to read
    if not os.path.isabs(path):
        return True  # the tool reports a relative path with its own words
    real = canonical_path(path)
    if _unsafe_why(unsafe, os.path.dirname(real), os.path.dirname(os.path.normpath(path))) is not None:
        return False
    return not roots or any(within(real, root) for root in roots)


def check_read(path: str, unsafe: Mapping[str, str], roots: tuple[str, ...], *, disk: bool = True) -> None:
    """Refuse (403 ``WORKSPACE_UNSAFE``) a file a tool must not read; the same answer whether it exists.

    ``disk`` False: the server reads no file of its own for a call (link-only, no project roots)."""
    if not disk:
        raise PolicyRefusal(NO_DISK_READS.format(path=path), error_code=WORKSPACE_UNSAFE)
    if not may_read(path, unsafe, roots):
        shown = f" (under {', '.join(roots)})" if roots else ""
        raise PolicyRefusal(READ_REFUSED.format(path=path, roots=shown), error_code=WORKSPACE_UNSAFE)
