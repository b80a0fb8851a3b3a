"""Flow files as a worker thread last resolved and read them, kept while nothing they depend on changed.

A call of a saved flow resolves and reads it (and each `run:` fragment) in a worker-thread hop,
and a hop costs more than the rest of a short call. Before it resolves a plain path (absolute, no
``.`` or ``..``) the hop watches it (``argent.utils.watch``): each directory on the way and the
file. A later resolution of the same path under the same rules is answered on the event loop when
the watches vouch that nothing changed since — no disk I/O there, so a file system that hangs
cannot hold the loop — and goes to a worker thread otherwise. Only what a plain path resolved to
without a symbolic link (its real path is its spelling) and read as text is kept: a link's target,
a missing file or a refusal is resolved afresh each time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from argent.limits import FLOW_TEXT_CACHE_CHARS, FLOW_TEXT_CACHE_ENTRIES
from argent.utils.watch import FileWatches, Stamp

__all__ = ["ReadCache"]

V = TypeVar("V")


class ReadCache(Generic[V]):
    """Values read from a path, by key, each with the ``Stamp`` taken before its read; least recently
    used out first. ``get`` may run on the event loop; ``watch`` and ``put`` in a worker thread."""

    def __init__(
        self,
        watches: FileWatches,
        entries: int = FLOW_TEXT_CACHE_ENTRIES,
        max_chars: int = FLOW_TEXT_CACHE_CHARS,
    ) -> None:
        self.watches = watches
        self._max_entries = entries
        self._max_chars = max_chars
        self._entries: OrderedDict[Hashable, tuple[Stamp, V]] = OrderedDict()
        #: Keys whose last resolution was not one to keep (a link on the path, a missing file): the
        #: next one is not watched (watching costs a few system calls per directory), only noted.
        self._unkept: OrderedDict[Hashable, None] = OrderedDict()
        self._lock = threading.Lock()
        #: Lookups answered from what was kept, and the others (each one resolution in a worker thread).
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> V | None:
        """The value kept for ``key`` when nothing it depends on has changed since; no disk I/O."""
        with self._lock:
            entry = self._entries.get(key)
        if entry is not None and not self.watches.unchanged(entry[0]):
            with self._lock:
                if self._entries.get(key) is entry:
                    del self._entries[key]
            entry = None
        with self._lock:
            if entry is None:
                self.misses += 1
                return None
            self.hits += 1
            if key in self._entries:
                self._entries.move_to_end(key)
        return entry[1]

    def watch(self, key: Hashable, path: str) -> Stamp | None:
        """Watch ``path`` before it is resolved and read for ``key`` (a worker thread: it touches
        the disk); None, without watching, when the key's last resolution was not one to keep."""
        with self._lock:
            if key in self._unkept:
                return None
        return self.watches.watch(path)

    def settle(self, key: Hashable, stamp: Stamp | None, value: V | None, chars: int | None) -> None:
        """After a resolution for ``key``: keep ``value`` (``chars`` of text; None for either: not a
        value to keep) when it was read after ``stamp`` was taken."""
        with self._lock:
            if value is None or chars is None:
                self._unkept[key] = None
                self._unkept.move_to_end(key)
                while len(self._unkept) > self._max_entries:
                    self._unkept.popitem(last=False)
                return
            self._unkept.pop(key, None)
            if stamp is None or chars > self._max_chars:
                return
            self._entries[key] = (stamp, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._unkept.clear()
