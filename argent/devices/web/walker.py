"""The page-side DOM walker (``walker.js``) and its payload as a ``UiTree``.

One read of the screen is one ``Runtime.evaluate`` of the walker: the page returns the whole
nested tree by value, and this module turns it into ``UiNode``s. The rules the walker applies
(what is pruned, collapsed, labelled, clickable …) are documented in ``walker.js``.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import math
from collections.abc import Sequence
from typing import Any

from argent.devices.base import CssSelectorError, DeviceError, Frame, UiNode, UiTree
from argent.limits import WALK_LABEL_NODES, WALK_TEXT_CHARS

#: Limits of a read: the flows' (deep and wide) by default; ``describe`` uses the smaller pair.
FLOW_MAX_DEPTH = 96
FLOW_MAX_NODES = 12_000
DESCRIBE_MAX_DEPTH = 60
DESCRIBE_MAX_NODES = 5_000

_ZERO = Frame(0.0, 0.0, 0.0, 0.0)
_NO_CSS: frozenset[str] = frozenset()


@functools.cache
def walker_source() -> str:
    """The walker function's source (an expression evaluating to a function)."""
    text = importlib.resources.files(__package__).joinpath("walker.js").read_text(encoding="utf-8")
    return text.strip()


def walker_query(css: Sequence[str] = ()) -> str:
    """The walker's last argument, as a JavaScript literal: the CSS selectors the read marks and
    the text limits (``argent.limits``)."""
    return json.dumps(
        {"css": list(css), "text": WALK_TEXT_CHARS, "labelNodes": WALK_LABEL_NODES}, ensure_ascii=True
    )


def walk_expression(max_depth: int, max_nodes: int, keep: bool, css: Sequence[str] = ()) -> str:
    """One walk in argent's world (where the walker is compiled as ``__argentWalk``), with the page's
    change mark taken just before it (``mark``), the iframes it could not enter (``frames``) and how
    many of them have no frame id yet (``unknown``)."""
    args = f"{int(max_depth)}, {int(max_nodes)}, {'true' if keep else 'false'}, {walker_query(css)}"
    return (
        "(() => { const mark = globalThis.__argent.mark(); "
        f"const walk = globalThis.__argentWalk({args}); "
        "if (walk) { walk.mark = mark; const els = globalThis.__argentFrameEls || []; "
        "const ids = globalThis.__argentFrameIds; walk.frames = els.length; "
        "walk.unknown = els.filter((el) => !ids.has(el)).length; } "
        "return walk; })()"
    )


def walker_expression(
    max_depth: int = FLOW_MAX_DEPTH, max_nodes: int = FLOW_MAX_NODES, css: Sequence[str] = ()
) -> str:
    """The walk as one expression in the page's own world (argent's isolated world keeps the
    walker compiled: ``argent.devices.chromium.signals``)."""
    return f"({walker_source()})({int(max_depth)}, {int(max_nodes)}, false, {walker_query(css)})"


def parse_walk(payload: Any, label: str, css: Sequence[str] = ()) -> tuple[UiTree, tuple[float, float]]:
    """The walker's ``{tree, truncated, w, h, blank?}`` as a ``UiTree`` and the viewport in CSS px;
    ``css``: the selectors the walk was given (its nodes name them by index)."""
    if payload is None:
        raise DeviceError(
            f"Chromium ({label}) describe: the renderer returned no value (is the page navigating?)"
        )
    if isinstance(payload, str):  # tolerate a JSON-string payload
        try:
            payload = json.loads(payload)
        except ValueError as exc:
            raise DeviceError(
                f"Chromium ({label}) describe: could not parse the renderer payload: {exc}"
            ) from None
    if not isinstance(payload, dict):
        raise DeviceError(f"Chromium ({label}) describe: could not parse the renderer payload")
    viewport = (_number(payload.get("w")), _number(payload.get("h")))
    tree = payload.get("tree")
    if not isinstance(tree, dict):
        refused = payload.get("cssError")
        if isinstance(refused, dict):
            raise CssSelectorError(_text(refused.get("selector")), css_refusal(_text(refused.get("message"))))
        reason = payload.get("error") or "empty tree"
        raise DeviceError(f"Chromium ({label}) describe: {reason}")
    scroll = payload.get("scroll")
    mark = payload.get("mark")
    return (
        UiTree(
            root=_node(tree, tuple(css)),
            truncated=bool(payload.get("truncated")),
            scroll=scroll if isinstance(scroll, str) else "",
            mark=mark if isinstance(mark, int) and not isinstance(mark, bool) and mark >= 0 else -1,
            blank=_text(payload.get("blank")),
        ),
        viewport,
    )


def css_refusal(message: str) -> str:
    """What the engine said of a CSS selector it refused, without its call's preamble
    (``Failed to execute 'querySelectorAll' on 'Document': 'a[' is not a valid selector.``)."""
    said = (
        message.split(": ", 1)[1] if message.startswith("Failed to execute") and ": " in message else message
    )
    return f"the browser refused it ({said.strip().rstrip('.') or 'no reason given'})"


def _number(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


def _frame(value: Any) -> Frame:
    if isinstance(value, list) and len(value) == 4:
        x, y, w, h = (_number(v) for v in value)
        return Frame(x, y, w, h)
    return _ZERO


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _node(data: dict[str, Any], css: tuple[str, ...]) -> UiNode:
    kids = data.get("children")
    children = (
        tuple(_node(kid, css) for kid in kids if isinstance(kid, dict)) if isinstance(kids, list) else ()
    )
    checked = data.get("checked")
    ref = data.get("ref")
    marks = data.get("css")
    matched = _NO_CSS
    if css and isinstance(marks, list):
        matched = frozenset(
            css[i] for i in marks if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(css)
        )
    role = _text(data.get("role"))
    return UiNode(
        role=role,
        kind=_text(data.get("kind")) or role,
        css=matched,
        frame=_frame(data.get("frame")),
        label=_text(data.get("label")),
        value=_text(data.get("value")),
        description=_text(data.get("desc")),
        text=_text(data.get("text")),
        identifier=_text(data.get("identifier")),
        clickable=data.get("clickable") is True,
        disabled=data.get("disabled") is True,
        checked=checked if isinstance(checked, bool) else None,
        password=data.get("password") is True,
        scrollable=data.get("scrollable") is True,
        focused=data.get("focused") is True,
        children=children,
        ref=ref if isinstance(ref, int) and not isinstance(ref, bool) and ref >= 0 else -1,
    )
