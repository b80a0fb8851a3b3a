"""A client's project on disk, as the link tests build it: its root, its flows directory, flow files."""

from __future__ import annotations

from pathlib import Path


def new_project(tmp_path: Path) -> Path:
    """``<tmp_path>/proj`` with an empty ``.argent/flows``."""
    root = tmp_path / "proj"
    (root / ".argent" / "flows").mkdir(parents=True)
    return root


def flows(proj: Path) -> Path:
    return proj / ".argent" / "flows"


def write(path: Path, *steps: str) -> Path:
    """A flow file of the given steps, one ``- step`` line each (its directories made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("steps:\n" + "".join(f"  - {s}\n" for s in steps))
    return path
