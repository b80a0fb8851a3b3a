"""The device tools as a package: each tool declared once, small functions, and the runner's own
selector engine and pixel differ behind await-ui-element and screenshot-diff."""

from __future__ import annotations

import ast
import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from argent.devices.base import Frame, UiNode, UiTree
from argent.errors import InvalidToolInputError
from argent.runner import pixels
from argent.tools import device_tools as package
from argent.tools.device_tools import DEVICE_TOOLS, await_element, device_tools, inspection
from argent.tools.registry import ToolContext, ToolRegistry

PACKAGE_DIR = Path(package.__file__).parent


def test_each_tool_is_declared_once_and_registered_from_one_list() -> None:
    names = [tool.name for tool in DEVICE_TOOLS]
    assert len(names) == len(set(names)) == 11
    specs = device_tools(devices=None)  # type: ignore[arg-type]
    assert [spec.name for spec in specs] == names
    ToolRegistry(specs)  # no duplicate registration


def test_no_function_of_the_package_is_over_80_lines() -> None:
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                assert length <= 80, f"{path.name}:{node.name} has {length} lines"


def _png(path: Path, color: tuple[int, int, int]) -> str:
    out = io.BytesIO()
    Image.new("RGB", (4, 2), color).save(out, format="PNG")
    path.write_bytes(out.getvalue())
    return str(path)


def test_screenshot_diff_counts_a_changed_pixel_by_the_runners_threshold(tmp_path: Path) -> None:
    assert not hasattr(inspection, "DIFF_THRESHOLD_SQ")
    base = _png(tmp_path / "base.png", (100, 100, 100))
    # 3 × 25² = 1875 is under the runner's 1950.75; 3 × 26² = 2028 is over it.
    under = _png(tmp_path / "under.png", (125, 125, 125))
    over = _png(tmp_path / "over.png", (126, 126, 126))
    assert 3 * 25**2 < pixels.DIFF_THRESHOLD_SQ < 3 * 26**2
    assert inspection.compare_pngs(base, under) == {"mismatchPercentage": 0.0, "width": 4, "height": 2}
    assert inspection.compare_pngs(base, over) == {"mismatchPercentage": 100.0, "width": 4, "height": 2}


class _Device:
    def __init__(self, root: UiNode) -> None:
        self.root = root

    async def ui_tree(self) -> UiTree:
        return UiTree(UiNode("html", Frame(0, 0, 1, 1), children=(self.root,)))


class _Devices:
    def __init__(self, device: _Device) -> None:
        self.device = device

    async def get(self, udid: str) -> Any:
        return self.device


async def _await(root: UiNode, selector: dict[str, Any], condition: str = "visible") -> Any:
    spec = next(s for s in device_tools(_Devices(_Device(root))) if s.name == "await-ui-element")  # type: ignore[arg-type]
    args = spec.args_type(udid="d", selector=selector, condition=condition, timeout_ms=0)
    return await spec.execute(args, ToolContext())


async def test_await_ui_element_matches_as_a_flows_await_does() -> None:
    assert not hasattr(await_element, "find_matches") and not hasattr(await_element, "condition_met")
    box = Frame(0.1, 0.1, 0.2, 0.1)
    spaced = UiNode("button", box, label="Sign\n   in", identifier="com.app:id/login")
    assert (await _await(spaced, {"text": "sign in"}))["success"] is True  # whitespace collapsed
    assert (await _await(spaced, {"identifier": "login"}))["success"] is True  # unqualified Android id
    secret = UiNode("input", box, label="Password", value="hunter2", password=True)
    assert (await _await(secret, {"text": "hunter2"}, "exists"))["success"] is False  # never by its value
    gone = UiNode("p", Frame(0.1, 0.1, 0, 0), label="Gone")
    assert (await _await(gone, {"text": "gone"}, "exists"))["success"] is True
    hidden = await _await(gone, {"text": "gone"}, "hidden")
    assert hidden == {"success": True, "elapsed": hidden["elapsed"]}
    missing = await _await(gone, {"text": "gone", "role": "p"})
    assert (
        missing["success"] is False
        and missing["note"] == 'No visible element matched {text: "gone", role: "p"} within 0ms.'
    )


class _Keys:
    """A device that records typed text and scrolls, and aborts the call at its first input."""

    def __init__(self, abort: asyncio.Event) -> None:
        self.abort = abort
        self.inputs: list[Any] = []

    async def type_text(self, text: str) -> None:
        self.inputs.append(text)
        self.abort.set()

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        self.inputs.append((x, y, dx, dy))
        self.abort.set()


async def _paced(tool: str, args: dict[str, Any]) -> tuple[Any, list[Any]]:
    ctx = ToolContext()
    device = _Keys(ctx.abort)
    registry = ToolRegistry(device_tools(_Devices(device)))  # type: ignore[arg-type]
    result = await registry.invoke(tool, {"udid": "d", **args}, ctx)
    return result, device.inputs


async def test_paced_typing_and_scrolling_stop_when_the_call_is_aborted() -> None:
    typed, inputs = await _paced("keyboard", {"text": "abcdef", "delayMs": 5000})
    assert typed == {"typed": "abcdef", "keys": 6} and inputs == ["a"]
    scrolled, inputs = await _paced("gesture-scroll", {"deltaY": 1.0, "durationMs": 10_000})
    assert scrolled["scrolled"] is True and inputs == [(0.5, 0.5, 0.0, 1.0 / 40)]


async def test_paced_typing_is_bounded_before_any_key_is_sent() -> None:
    with pytest.raises(InvalidToolInputError) as caught:
        await _paced("keyboard", {"text": "x" * 26, "delayMs": 5000})
    assert caught.value.message == (
        "Typing this text 5000 ms apart would take more than 120000 ms; lower delayMs or type the text in parts."
    )
    with pytest.raises(
        InvalidToolInputError, match=r"^durationMs must be between 0 and 10000 ms, got 10001\.$"
    ):
        await _paced("gesture-scroll", {"deltaY": 1.0, "durationMs": 10_001})
