"""What makes bytes a PNG image, decided once for the client and the tool-server.

The client writes a baseline a tool-server sends only when its bytes are a PNG (the eight-byte
signature); the tools that read a PNG's size check the same signature first.
"""

from __future__ import annotations

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def is_png(data: bytes) -> bool:
    """Whether ``data`` starts with the PNG signature."""
    return data.startswith(PNG_SIGNATURE)
