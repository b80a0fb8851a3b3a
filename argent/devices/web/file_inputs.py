"""Setting the files of a page's file input, as a person's pick in the file dialog does: what every
engine shares.

The element at a point of the page (``elementFromPoint``, through open shadow roots, where the runner
found the step's selector) names the input: an ``<input type=file>`` itself, the ``<label>`` of one (or
an element in that label), or an element that holds exactly one (a drop zone over a hidden input). The
engine then sets the files with its protocol (CDP ``DOM.setFileInputFiles``, BiDi ``input.setFiles``);
``input`` and ``change`` fire as for a real pick, and the page reads names and bytes from the paths
given (files on this host).
"""

from __future__ import annotations

#: The element at a point, through open shadow roots (a custom element's own file input).
AT_POINT = """((x, y) => {
  let element = document.elementFromPoint(x, y);
  while (element && element.shadowRoot) {
    const inner = element.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === element) break;
    element = inner;
  }
  return element;
})"""
#: The file input an element stands for (run with the element as ``this``), or a short description of
#: the element when it stands for none.
FIND_INPUT = """function () {
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
#: What may keep a file input from taking files (run with the input as ``this``).
STATE = "function () { return { multiple: this.multiple, disabled: this.disabled }; }"

NOT_A_FILE_INPUT = (
    "the element there, {what}, is not a file input — name an <input type=file>, the <label> of one, or "
    "an element that holds just one"
)
NOTHING_THERE = "no element is at that point of the page"
ONE_FILE_ONLY = "the file input takes one file (it has no multiple attribute), and this step sets {count}"
DISABLED = "the file input is disabled"
