"""Archives built in memory for the tests that upload or read them."""

from __future__ import annotations

import gzip
import io
import tarfile


def tgz(*members: tuple[str, bytes]) -> bytes:
    """A gzipped tar holding each ``(name, data)`` as a regular file, in order."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue())
