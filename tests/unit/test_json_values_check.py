"""The cap check of a body's JSON values answers exactly as the full count does, without scanning
every byte four times: short texts are not scanned, long strings are skipped by ``find``."""

from __future__ import annotations

import functools
import json
import random

import pytest

from argent.utils.json_values import count_json_values, more_json_values_than


@functools.cache
def texts() -> tuple[bytes, ...]:
    rng = random.Random(12)
    out = [
        b"",
        b"{}",
        json.dumps({f"k{i}": 0 for i in range(3000)}).encode(),
        json.dumps({"steps": [{}] * 2500}).encode(),
        json.dumps({"text": "," * 5000}).encode(),
        json.dumps({"content": "QUJD" * 50_000, "n": [1, 2, 3]}).encode(),  # long and sparse
        b"[" * 4000 + b"]" * 4000,
        b"{" * 4000,
        b":" * 4000,
    ]
    # Random texts: each byte a separator with the chance ``density`` / 256, else a letter.
    for _ in range(200):
        size = rng.randrange(0, 20_000)
        density = rng.choice([0, 1, 4, 64, 256])
        table = bytes(b",:[{"[i % 4] if i < density else ord("a") for i in range(256))
        out.append(rng.randbytes(size).translate(table))
    return tuple(out)


@pytest.mark.parametrize("cap", [1, 2, 100, 2048, 2999, 3000, 3001, 5001, 8000, 20_000, 100_000])
def test_the_check_agrees_with_the_count(cap: int) -> None:
    for raw in texts():
        expected = count_json_values(raw) > cap
        assert more_json_values_than(raw, cap) is expected, (cap, len(raw), count_json_values(raw))
        assert more_json_values_than(bytearray(raw), cap) is expected


def test_a_text_of_only_separators_at_the_bounds_of_its_length() -> None:
    """Each separator counts one value, plus one: ``cap`` separators are over the cap, ``cap - 1`` are not."""
    for sep in b",:[{":
        assert more_json_values_than(bytes([sep]) * 1000, 1000) is True
        assert more_json_values_than(bytes([sep]) * 999, 1000) is False
        assert more_json_values_than(b"x" + bytes([sep]) * 999, 1000) is False
