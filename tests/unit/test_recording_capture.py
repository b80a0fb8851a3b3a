"""A recorded gesture-tap becomes a selector tap only when the selector lands back on the tapped point."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attrs import define

from argent.devices.base import Frame, UiNode, UiTree
from argent.flows.model import Selector
from argent.runner.selectors import Leaf
from argent.tools.recording_capture import selector_for
from tests.unit.test_recording import Env, make_env


def node(
    x: float,
    y: float,
    w: float,
    h: float,
    *,
    role: str = "button",
    children: tuple[UiNode, ...] = (),
    **kw: Any,
) -> UiNode:
    return UiNode(role=role, frame=Frame(x, y, w, h), children=children, **kw)


def screen(*nodes: UiNode) -> UiTree:
    return UiTree(root=UiNode(role="html", frame=Frame(0, 0, 1, 1), children=nodes))


@define
class TreeDevice:
    id: str
    tree: UiTree | None
    reads: int = 0

    async def ui_tree(self) -> UiTree:
        self.reads += 1
        if self.tree is None:
            raise RuntimeError("the page went away")
        return self.tree


@define
class Provider:
    device: TreeDevice

    async def get(self, device_id: str) -> Any:
        return self.device


def env_with(tmp_path: Path, tree: UiTree | None) -> tuple[Env, TreeDevice]:
    root = tmp_path / "proj"
    root.mkdir()
    device = TreeDevice("dev-1", tree)
    return make_env(root, devices=Provider(device)), device


async def tap(env: Env, x: float, y: float, **extra: Any) -> Any:
    import json

    await env.start()
    return await env.step("gesture-tap", json.dumps({"udid": "dev-1", "x": x, "y": y, **extra}))


async def test_an_identifier_becomes_an_id_selector(tmp_path: Path) -> None:
    env, device = env_with(tmp_path, screen(node(0.4, 0.4, 0.2, 0.1, identifier="add-to-cart", label="Add")))
    out = await tap(env, 0.5, 0.45)
    assert out["recorded"] == '1. tap: {"id":"add-to-cart"}'
    assert out["message"] == 'Step added to "checkout" flow'
    assert env.flow("checkout").read_text() == "steps:\n  - tap:\n      id: add-to-cart\n"
    assert device.reads == 1
    assert env.tools.calls == [("gesture-tap", {"x": 0.5, "y": 0.45, "udid": "dev-1"})]


async def test_nothing_under_the_tap_keeps_coordinates(tmp_path: Path) -> None:
    env, _ = env_with(tmp_path, screen(node(0.0, 0.0, 0.2, 0.1, label="Menu")))
    out = await tap(env, 0.5, 0.52)
    assert out["recorded"] == "1. tap: (0.5, 0.52)"
    assert out["message"] == (
        'Step added to "checkout" flow — no element found under the tap; kept coordinates (brittle)'
    )


async def test_a_text_only_element_becomes_a_strict_text_selector(tmp_path: Path) -> None:
    env, _ = env_with(tmp_path, screen(node(0.4, 0.4, 0.2, 0.1, label="  Save  ")))
    out = await tap(env, 0.5, 0.45)
    assert out["recorded"] == '1. tap: {"text":"Save"}'


async def test_label_and_value_keep_the_label_only(tmp_path: Path) -> None:
    env, _ = env_with(
        tmp_path, screen(node(0.4, 0.4, 0.2, 0.1, role="textbox", label="Email", value="a@b.c"))
    )
    out = await tap(env, 0.5, 0.45)
    assert out["recorded"] == '1. tap: {"text":"Email"}'


async def test_a_double_click_keeps_times(tmp_path: Path) -> None:
    env, _ = env_with(tmp_path, screen(node(0.4, 0.4, 0.2, 0.1, identifier="row")))
    out = await tap(env, 0.5, 0.45, clickCount=2)
    assert out["recorded"] == '1. tap: {"id":"row"} ×2'
    assert (
        env.flow("checkout").read_text() == "steps:\n  - tap:\n      on:\n        id: row\n      times: 2\n"
    )


async def test_the_smallest_element_under_the_tap_is_named(tmp_path: Path) -> None:
    inner = node(0.45, 0.42, 0.1, 0.05, role="span", label="Buy")
    outer = node(0.3, 0.3, 0.4, 0.4, role="section", identifier="card", children=(inner,))
    env, _ = env_with(tmp_path, screen(outer))
    out = await tap(env, 0.5, 0.44)
    assert out["recorded"] == '1. tap: {"text":"Buy"}'


async def test_a_selector_that_also_names_another_element_keeps_coordinates(tmp_path: Path) -> None:
    top = node(0.1, 0.1, 0.2, 0.1, label="Save")
    bottom = node(0.1, 0.8, 0.2, 0.1, label="Save")
    env, _ = env_with(tmp_path, screen(top, bottom))
    out = await tap(env, 0.2, 0.85)
    assert out["recorded"] == "1. tap: (0.2, 0.85)"
    assert out["message"] == (
        'Step added to "checkout" flow — selector {"text":"Save","role":"button"} also matches button "Save" '
        "on this screen, so a replay could act on another element; kept coordinates (brittle) — give the "
        "element an id, or record a tap directive with a selector that names it alone (a within: scope)"
    )


async def test_text_another_element_shows_too_is_recorded_with_the_role(tmp_path: Path) -> None:
    heading = node(0.0, 0.0, 1.0, 0.1, role="h1", value="Sign in")
    button = node(0.1, 0.5, 0.2, 0.1, label="Sign in", clickable=True)
    env, _ = env_with(tmp_path, screen(heading, button))
    out = await tap(env, 0.2, 0.55)
    assert out["recorded"] == '1. tap: {"text":"Sign in","role":"button"}'
    assert out["message"] == 'Step added to "checkout" flow'
    assert env.flow("checkout").read_text() == "steps:\n  - tap:\n      text: Sign in\n      role: button\n"
    # the heading is named alone by its text and its role; a longer text containing it does not count
    (tmp_path / "2").mkdir()
    env2, _ = env_with(tmp_path / "2", screen(heading, node(0.1, 0.5, 0.2, 0.1, label="Sign in with a key")))
    assert (await tap(env2, 0.5, 0.05))["recorded"] == '1. tap: {"text":"Sign in","role":"h1"}'


async def test_a_text_inside_a_button_names_the_button(tmp_path: Path) -> None:
    inner = node(0.12, 0.52, 0.1, 0.06, role="span", value="Buy")
    button = node(0.1, 0.5, 0.2, 0.1, label="Buy", clickable=True, children=(inner,))
    env, _ = env_with(tmp_path, screen(button))
    out = await tap(env, 0.15, 0.55)
    assert out["recorded"] == '1. tap: {"text":"Buy","role":"button"}'


async def test_an_id_two_elements_carry_falls_back_to_the_text(tmp_path: Path) -> None:
    first = node(0.1, 0.1, 0.2, 0.1, identifier="go", label="Back")
    second = node(0.1, 0.5, 0.2, 0.1, identifier="go", label="Next")
    env, _ = env_with(tmp_path, screen(first, second))
    out = await tap(env, 0.2, 0.55)
    assert out["recorded"] == '1. tap: {"text":"Next"}'


async def test_a_selector_that_names_a_hidden_element_too_still_names_the_tapped_one_alone(
    tmp_path: Path,
) -> None:
    hidden = node(0.1, 0.1, 0.0, 0.0, label="Save")  # no box: not on the screen
    shown = node(0.1, 0.5, 0.2, 0.1, label="Save")
    env, _ = env_with(tmp_path, screen(hidden, shown))
    out = await tap(env, 0.2, 0.55)
    assert out["recorded"] == '1. tap: {"text":"Save"}'


async def test_an_element_without_stable_text_or_id_keeps_coordinates(tmp_path: Path) -> None:
    env, _ = env_with(tmp_path, screen(node(0.4, 0.4, 0.2, 0.1, role="div", clickable=True)))
    out = await tap(env, 0.5, 0.45)
    assert out["message"].endswith("tapped element has no stable text/id; kept coordinates (brittle)")
    assert out["recorded"] == "1. tap: (0.5, 0.45)"


async def test_a_specific_role_is_a_selector(tmp_path: Path) -> None:
    env, _ = env_with(tmp_path, screen(node(0.4, 0.4, 0.2, 0.1, role="checkbox", clickable=True)))
    out = await tap(env, 0.5, 0.45)
    assert out["recorded"] == '1. tap: {"role":"checkbox"}'


async def test_a_failed_tree_read_keeps_coordinates(tmp_path: Path) -> None:
    env, _ = env_with(tmp_path, None)
    out = await tap(env, 0.5, 0.45)
    assert out["message"].endswith("selector capture failed (the page went away); kept coordinates")
    assert out["recorded"] == "1. tap: (0.5, 0.45)"
    assert len(env.tools.calls) == 1  # the tap itself still ran


@pytest.mark.parametrize(
    ("leaf", "selector"),
    [
        (Leaf(0, "button", Frame(0, 0, 1, 1), label="Go", identifier="go"), Selector(identifier="go")),
        (Leaf(0, "button", Frame(0, 0, 1, 1), value="42"), Selector(text="42")),
        (Leaf(0, "AXGroup", Frame(0, 0, 1, 1)), None),
        (Leaf(0, "link", Frame(0, 0, 1, 1)), Selector(role="link")),
    ],
)
def test_selector_for(leaf: Leaf, selector: Selector | None) -> None:
    assert selector_for(leaf) == selector


async def test_a_screen_of_many_alike_elements_names_a_few_and_keeps_coordinates(tmp_path: Path) -> None:
    rows = tuple(node(0.0, i / 5000, 1.0, 1 / 5000, label="Delete") for i in range(5000))
    env, _ = env_with(tmp_path, screen(*rows))
    out = await tap(env, 0.5, 0.5 + 0.5 / 5000)
    assert out["recorded"] == f"1. tap: (0.5, {0.5 + 0.5 / 5000})"
    assert (
        'also matches button "Delete", button "Delete", button "Delete", … on this screen' in out["message"]
    )
