"""Which local files a browser's pages may load: the rule a caller's policy sets, held at the device.

A ``file://`` page a policy allows can lead the browser to any other local file (a script that sets
``location``, a link it follows, a tap, an ``<img>`` or ``<iframe>``). Checking only the URL a tool
opens cannot see those, so each engine's device enforces the rule on every ``file:`` load of its
pages, at the browser.

The device layer knows no policy: the layer above sets the rule of the current call in
``FILE_ACCESS`` (a context variable, so every task of the call sees it), and the provider applies
it to each device it hands out. The rule may touch the disk (real paths): run it in a thread.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

#: Whether a page may load the ``file:`` URL given (True: it may). Runs in a worker thread.
FileAccess = Callable[[str], bool]

#: The file rule of the current call; None: pages load local files freely.
FILE_ACCESS: ContextVar[FileAccess | None] = ContextVar("argent_file_access", default=None)
