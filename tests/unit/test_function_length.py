"""No function in argent/ is longer than 80 lines: a longer one has seams that want names.

Nested functions count on their own (a factory of closures is measured as a whole too). The
allow-list names only functions in modules other changes are splitting now; it shrinks, never grows.
"""

from __future__ import annotations

import ast
from pathlib import Path

import argent

PACKAGE = Path(argent.__file__).parent
MAX_FUNCTION_LINES = 80


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """Every function (nested ones too) of ``source`` longer than ``limit`` lines, with its length."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                found.append((node.name, lines))
    return found


def test_the_check_finds_a_long_function_and_a_long_nested_one() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(81))
    nested = "def outer():\n    def inner():\n" + "\n".join(f"        y{i} = {i}" for i in range(80))
    source = f"def long():\n{body}\n\ndef short():\n    return 1\n\n{nested}\n"
    assert long_functions(source) == [("long", 82), ("outer", 82), ("inner", 81)]


def test_no_function_in_argent_is_over_80_lines() -> None:
    over: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for name, lines in long_functions(path.read_text(encoding="utf-8")):
            over.append(f"{rel}::{name} ({lines} lines)")
    assert over == [], "split these at their natural seams:\n" + "\n".join(over)
