"""How many values a JSON text may hold, counted without parsing it.

``json.loads`` holds the GIL from the first byte to the last (its scanner is C and calls back into no
Python), so a 14 MB object of a million keys stalls every thread of the process for seconds, on the
event loop or off it. A text whose count is over a cap is refused before it is parsed.
"""

from __future__ import annotations

#: The bytes counted: every value but the first follows one of them (and ``{`` counts each object).
_SEPARATORS = (b",", b":", b"[", b"{")
#: ``find`` jumps (memchr: many bytes a cycle) per separator, one per 4 KiB of text, before the rest
#: is counted byte by byte (``bytes.count``: about one byte a cycle): a text dense in separators costs
#: what the full count costs and a few percent more (a jump is a few hundred cycles).
_JUMPS_PER_BYTE_SHIFT = 12


def count_json_values(raw: bytes | bytearray) -> int:
    """An upper bound on the JSON values of ``raw`` (separators inside strings count too)."""
    return raw.count(b",") + raw.count(b":") + raw.count(b"[") + raw.count(b"{") + 1


def more_json_values_than(raw: bytes | bytearray, cap: int) -> bool:
    """``count_json_values(raw) > cap``, without reading every byte four times where it can.

    A text shorter than ``cap`` cannot hold more (each value but the first takes a separator byte),
    and is not scanned. A longer one is searched for each separator with ``find``, which skips the
    bytes between them at memory speed (a body of flow members is mostly long base64 strings, in
    which no separator occurs); a run dense in separators is counted with ``bytes.count``, and the
    search stops as soon as the count is over the cap."""
    if len(raw) < cap:
        return False
    found = 0  # separators so far: the count is found + 1
    jumps = (len(raw) >> _JUMPS_PER_BYTE_SHIFT) + 1
    for separator in _SEPARATORS:
        start = 0
        for _ in range(jumps):
            at = raw.find(separator, start)
            if at < 0:
                break
            found += 1
            if found >= cap:
                return True
            start = at + 1
        else:  # dense: count the rest in one pass
            found += raw.count(separator, start)
            if found >= cap:
                return True
    return False
