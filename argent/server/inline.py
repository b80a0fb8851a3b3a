"""Inline file bytes (base64 ``content``) with the checks of a file input."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from argent.errors import FileInputError
from argent.limits import MAX_FILE_BYTES


def decode_content(path: str, content: str, size: Any) -> bytes:
    """Inline file-input bytes with the checks of a file input (422 on failure)."""
    if len(content) > (MAX_FILE_BYTES * 4) // 3 + 4:
        raise FileInputError(
            f'Uploaded file "{path}" is over {MAX_FILE_BYTES} bytes — exceeds the file-input limit.'
        )
    try:
        data = base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        raise FileInputError(f'Uploaded content for "{path}" is not valid base64.') from None
    if len(data) > MAX_FILE_BYTES:
        raise FileInputError(
            f'Uploaded file "{path}" is {len(data)} bytes — exceeds the {MAX_FILE_BYTES}-byte file-input limit.'
        )
    if isinstance(size, int) and size != len(data):
        raise FileInputError(
            f'Uploaded content for "{path}" is {len(data)} bytes but the client recorded {size} — refusing a '
            "truncated or corrupted upload."
        )
    return data
