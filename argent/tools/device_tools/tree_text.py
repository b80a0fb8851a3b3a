"""The UI tree as the indented text ``describe`` answers: one line per element an agent can name,
and, when nothing on the screen is visible, why (``UiTree.blank``)."""

from __future__ import annotations

from collections.abc import Iterator

from argent.devices.base import UiNode, UiTree
from argent.devices.web.walker import DESCRIBE_MAX_NODES


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _frame_text(node: UiNode) -> str:
    f = node.frame
    return f"({f.x:.3f}, {f.y:.3f}, {f.width:.3f}, {f.height:.3f})"


def _flags(node: UiNode) -> list[str]:
    flags: list[str] = []
    if node.clickable:
        flags.append("clickable")
    if node.scrollable:
        flags.append("scrollable")
    if node.checked is not None:
        flags.append("checked" if node.checked else "checkable")
    if node.focused:
        flags.append("focused")
    if node.disabled:
        flags.append("disabled")
    if node.password:
        flags.append("password")
    return flags


def node_line(node: UiNode) -> str:
    """``<role> "<name>" value="…" text="…" id="…" [flags]  (frame)``: the ARIA role (else the tag)
    and the accessible name, as a ``role:`` / ``text:`` selector names them; ``text`` the text a person
    reads in it where its own text and its children's interleave (``UiNode.text``)."""
    parts = [node.role or node.kind or "node"]
    if node.label:
        parts.append(f'"{_escape(node.label)}"')
    if node.value and node.value != node.label:
        parts.append(f'value="{_escape(node.value)}"')
    if node.text:
        parts.append(f'text="{_escape(node.text)}"')
    if node.description:
        parts.append(f'description="{_escape(node.description)}"')
    if node.identifier:
        parts.append(f'id="{_escape(node.identifier)}"')
    flags = _flags(node)
    if flags:
        parts.append("[" + ", ".join(flags) + "]")
    return " ".join(parts) + "  " + _frame_text(node)


def _printed(node: UiNode) -> bool:
    aria = node.role and node.kind  # a web read's ARIA role: a selector can name it by that alone
    return bool(node.label or node.value or node.identifier or aria or _flags(node) or node.children)


def _walk(node: UiNode, depth: int) -> Iterator[str]:
    if _printed(node):
        yield "  " * depth + node_line(node)
    for child in node.children:
        yield from _walk(child, depth + 1)


def describe_text(tree: UiTree, *, source: str = "cdp-dom", max_nodes: int = DESCRIBE_MAX_NODES) -> str:
    """The UI tree as the indented text ``describe`` returns."""
    lines = [
        f"Source: {source}",
        "Mode: nested",
        "Coordinates are normalized [0,1] fractions of the screen (x, y, width, height), not pixels.",
        "Pass them straight to gesture-tap / gesture-scroll, which expect this same space.",
        "To tap an element, use its centre: tap_x = frame.x + frame.width / 2, tap_y = frame.y + frame.height / 2.",
        "",
        f"ROOT  {tree.root.role or tree.root.kind} {_frame_text(tree.root)}",
        "",
    ]
    shown = [line for child in tree.root.children for line in _walk(child, 1)]
    lines += shown
    if tree.blank:
        lines += ["", f"Nothing a selector can name is visible: {tree.blank}."]
    elif not shown:
        lines += ["The UI tree is empty: the device named no element on this screen (it did not say why)."]
    if tree.truncated:
        lines += [
            "",
            f"describe hit the node budget ({max_nodes} nodes) and returned a PARTIAL tree — some on-screen content "
            "is missing. Scroll or close panels to narrow the page, then describe again.",
        ]
    return "\n".join(lines)
