"""Keeping the heap memory a server frees for its next allocations, instead of handing it back.

An upload's socket reads (256 KiB each) live until the upload's thread has written them. With
glibc's defaults, every time a few MiB of them are freed together the top of the heap is returned
to the kernel, and the next reads fault fresh pages in: on a virtual machine that takes back free
memory (free page reporting) that cost up to several ms per MiB, more than reading the socket.
Raising the trim threshold keeps those pages for the next reads; raising the mmap threshold keeps
the reads on the heap at all (setting one threshold turns off glibc's own adjustment of both).

Only glibc is changed; elsewhere (musl, macOS) this does nothing. Peak memory is unchanged: at most
``SERVER_HEAP_TRIM_THRESHOLD_BYTES`` of freed memory stays with the process after a burst.
"""

from __future__ import annotations

import ctypes
import sys

from argent.limits import SERVER_HEAP_MMAP_THRESHOLD_BYTES, SERVER_HEAP_TRIM_THRESHOLD_BYTES

#: glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3


def keep_freed_heap() -> bool:
    """Tune glibc's malloc as above; True when it took both settings."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # a libc without mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(
        mallopt(M_MMAP_THRESHOLD, SERVER_HEAP_MMAP_THRESHOLD_BYTES)
        and mallopt(M_TRIM_THRESHOLD, SERVER_HEAP_TRIM_THRESHOLD_BYTES)
    )
