"""The tool-server keeps the heap memory it frees (argent/server/heap.py): glibc takes the settings."""

from __future__ import annotations

import platform
import sys

import pytest

from argent.server.heap import keep_freed_heap


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt"
)
def test_glibc_takes_both_thresholds() -> None:
    assert keep_freed_heap() is True
