"""Large results are encoded in parts (the loop runs between them), byte for byte as json.dumps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from argent.server.stream import dumps_in_parts, encode_line, is_large


def result(steps: int, nested: int = 0) -> dict[str, Any]:
    inner = {"flow": "child", "steps": [{"index": i, "reason": "é \u2014 ✗"} for i in range(nested)]}
    rows: list[dict[str, Any]] = [{"index": i, "kind": "echo", "message": "hi"} for i in range(steps)]
    rows.append({"index": steps, "kind": "tool", "result": inner, "args": {"a": [1, 2.5, None, True]}})
    return {"data": {"flow": "main", "ok": False, "steps": rows}}


def test_parts_are_byte_for_byte_what_json_dumps_writes() -> None:
    for value in (result(3), result(5_000), result(10, nested=1_000), {"k": []}, [], "x", 1.5, None):
        assert dumps_in_parts(value, compact=False) == json.dumps(value)
        assert dumps_in_parts(value, compact=True) + "\n" == encode_line(value).decode()


def test_only_values_holding_a_long_list_are_split() -> None:
    assert not is_large(result(10))
    assert is_large(result(1_000))
    assert is_large(result(10, nested=1_000))  # a nested run's steps, two dicts down


def test_the_encoders_built_once_write_what_json_dumps_writes_and_refuse_the_same() -> None:
    odd = {
        "text": 'é \u2028 "quoted" \\ \x00 \U0001f600',
        "numbers": [0, -0.0, 1e300, 2**70, 0.1, float("inf"), float("-inf")],
        "nested": {"1": [], "b": {}, "c": [None, True, False]},
    }
    for value in (odd, "é\n", 3, 0.5, None, [odd, odd]):
        assert (
            encode_line(value).decode() == json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
        )
        assert dumps_in_parts(value, compact=False) == json.dumps(value)
    nan = dumps_in_parts([float("nan")], compact=True)
    assert nan == json.dumps([float("nan")]) == "[NaN]"
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        encode_line({"x": object()})
