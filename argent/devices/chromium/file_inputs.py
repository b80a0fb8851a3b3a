"""Setting the files of a page's file input, as a person's pick in the file dialog does.

The element at a point of the page (``elementFromPoint``, through open shadow roots, where the runner
found the step's selector) names the input: an ``<input type=file>`` itself, the ``<label>`` of one (or an element in
that label), or an element that holds exactly one (a drop zone over a hidden input). ``DOM.
setFileInputFiles`` sets the files; Chromium fires ``input`` and ``change`` as for a real pick, and
the page reads names and bytes from the paths given (files on this host).
"""

from __future__ import annotations

from collections.abc import Sequence

from argent.devices.base import DeviceError
from argent.devices.chromium.cdp import CdpSession

_GROUP = "argent-file-input"
#: The element at a point, through open shadow roots (a custom element's own file input).
_AT_POINT = """((x, y) => {
  let element = document.elementFromPoint(x, y);
  while (element && element.shadowRoot) {
    const inner = element.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === element) break;
    element = inner;
  }
  return element;
})"""
#: The file input an element stands for, or a short description of the element when it stands for none.
_FIND_INPUT = """function () {
  const isFile = (el) => el instanceof HTMLInputElement && el.type === "file";
  if (isFile(this)) return this;
  const label = this.closest ? this.closest("label") : null;
  if (label && isFile(label.control)) return label.control;
  const inside = this.querySelectorAll ? this.querySelectorAll("input[type=file]") : [];
  if (inside.length === 1) return inside[0];
  const tag = (this.tagName || "node").toLowerCase();
  const type = this instanceof HTMLInputElement ? ` type=${this.type}` : "";
  return inside.length > 1 ? `<${tag}> holds ${inside.length} file inputs` : `<${tag}${type}>`;
}"""
_STATE = "function () { return { multiple: this.multiple, disabled: this.disabled }; }"

NOT_A_FILE_INPUT = (
    "the element there, {what}, is not a file input — name an <input type=file>, the <label> of one, or "
    "an element that holds just one"
)
NOTHING_THERE = "no element is at that point of the page"
ONE_FILE_ONLY = "the file input takes one file (it has no multiple attribute), and this step sets {count}"
DISABLED = "the file input is disabled"


async def set_input_files(session: CdpSession, px: float, py: float, paths: Sequence[str]) -> None:
    """Set ``paths`` (files on this host) into the file input at the CSS pixel (px, py); raises
    ``DeviceError`` naming what is there when it is not one, or why it takes none of these."""
    try:
        point = await session.send(
            "Runtime.evaluate",
            {"expression": f"{_AT_POINT}({px!r}, {py!r})", "objectGroup": _GROUP},
        )
        element = (point.get("result") or {}).get("objectId")
        if not isinstance(element, str):
            raise DeviceError(NOTHING_THERE)
        found = await session.send(
            "Runtime.callFunctionOn",
            {"objectId": element, "functionDeclaration": _FIND_INPUT, "objectGroup": _GROUP},
        )
        result = found.get("result") or {}
        target = result.get("objectId")
        if result.get("subtype") != "node" or not isinstance(target, str):
            raise DeviceError(NOT_A_FILE_INPUT.format(what=result.get("value") or "an unknown node"))
        state = await session.send(
            "Runtime.callFunctionOn",
            {"objectId": target, "functionDeclaration": _STATE, "returnByValue": True},
        )
        value = (state.get("result") or {}).get("value") or {}
        if value.get("disabled") is True:
            raise DeviceError(DISABLED)
        if len(paths) > 1 and value.get("multiple") is not True:
            raise DeviceError(ONE_FILE_ONLY.format(count=len(paths)))
        await session.send("DOM.setFileInputFiles", {"files": list(paths), "objectId": target})
    finally:
        if session.alive:
            await session.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
