"""Real paths and directory listings for one collection, each looked up once.

A collection resolves hundreds of files in a handful of directories. ``realpath`` costs one
``lstat`` per path component and a spelling check one ``listdir`` per file; here a directory's
real path and listing are computed once per collection, and a file costs one ``lstat`` (a full
``realpath`` only when the file itself is a symlink). The answers are those of
``canonical_path`` and ``spelling_of``.
"""

from __future__ import annotations

import os
import stat

from attrs import define, field

from argent.link.models import LISTED, Spelling
from argent.link.paths import FLOW_FILE_NAME_RE, canonical_path


def _join(directory: str, base: str) -> str:
    return f"{directory}{base}" if directory.endswith("/") else f"{directory}/{base}"


@define
class FsCache:
    real_dirs: dict[str, str] = field(factory=dict)
    listings: dict[str, tuple[frozenset[str], tuple[str, ...]] | None] = field(factory=dict)

    def real_dir(self, directory: str) -> str:
        real = self.real_dirs.get(directory)
        if real is None:
            real = self.real_dirs[directory] = canonical_path(directory) if directory else directory
        return real

    def canonical(self, path: str) -> str:
        """``canonical_path(path)``: the real directory (cached) plus the name, unless the name is a link."""
        return self.resolve(path)[0]

    def resolve(self, path: str) -> tuple[str, os.stat_result | None]:
        """``(canonical path, lstat of path when it is not a link)``."""
        directory, _, base = path.rpartition("/")
        if not directory or not base or base in (".", ".."):
            return canonical_path(path), None
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return _join(self.real_dir(directory), base), None
        except OSError:
            return canonical_path(path), None
        if stat.S_ISLNK(st.st_mode):
            return canonical_path(path), None
        return _join(self.real_dir(directory), base), st

    def names(self, directory: str) -> tuple[frozenset[str], tuple[str, ...]] | None:
        key = directory or "."
        if key not in self.listings:
            try:
                names = os.listdir(key)
            except OSError:
                self.listings[key] = None
            else:
                self.listings[key] = (frozenset(names), tuple(sorted(names)))
        return self.listings[key]

    def spelling(self, directory: str, basename: str) -> Spelling:
        """``spelling_of(directory, basename)`` from the cached listing."""
        listing = self.names(directory)
        if listing is None:
            return LISTED
        names, ordered = listing
        if basename in names:
            return LISTED
        folded = basename.casefold()
        for name in ordered:
            if name.casefold() == folded:
                return Spelling("case_folded", actual=name, addressable=bool(FLOW_FILE_NAME_RE.match(name)))
        return Spelling("absent")

    def pngs(self, directory: str) -> list[str]:
        """The ``.png`` names (any case) of a directory, sorted; none when it cannot be listed."""
        listing = self.names(directory)
        if listing is None:
            return []
        return [name for name in listing[1] if name.lower().endswith(".png")]
