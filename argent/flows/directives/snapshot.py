"""`snapshot:` — compare the screen (or the element `cropOn` names) with its baseline: a name, or
`{ name, maxMismatch?, cropOn?, mask? }`; `mask` lists the selectors of the elements painted one
colour in both images before they are compared (a clock, a timestamp, an avatar)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from attrs import frozen
from ruamel.yaml.nodes import SequenceNode

from argent import limits
from argent.flows.canonical import num, selector_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, only_keys
from argent.flows.js import js_json_string, tidy
from argent.flows.labels import selector_label
from argent.flows.names import FLOW_NAME_PATTERN_TEXT, FLOW_NAME_RE
from argent.flows.references import Baseline, Reference, ToolFiles
from argent.flows.values import Selector, step_line

_NEEDS_NAME = "snapshot needs a name (bare string or { name })"
_MASK_LIST = (
    "snapshot mask must be a list of selectors — the elements painted over in both images before they "
    "are compared, e.g. mask: [{ id: clock }, Last updated]"
)


@frozen
class SnapshotStep:
    name: str
    max_mismatch: float | None = None
    crop_on: Selector | None = None
    #: The elements painted one colour in the capture and the baseline before the compare.
    mask: tuple[Selector, ...] = ()
    line: int = step_line()
    kind: ClassVar[str] = "snapshot"
    executor: ClassVar[str] = "snapshot"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        label = js_json_string(self.name)
        if self.crop_on is not None:
            label += f" cropOn {selector_label(self.crop_on)}"
        if self.mask:
            label += f" mask [{', '.join(selector_label(sel) for sel in self.mask)}]"
        return label

    def to_data(self) -> dict[str, Any]:
        if self.max_mismatch is None and self.crop_on is None and not self.mask:
            return {"snapshot": self.name}
        body: dict[str, Any] = {"name": self.name}
        if self.max_mismatch is not None:
            body["maxMismatch"] = num(self.max_mismatch)
        if self.crop_on is not None:
            body["cropOn"] = selector_to_data(self.crop_on)
        if self.mask:
            body["mask"] = [selector_to_data(sel) for sel in self.mask]
        return {"snapshot": body}

    def summary(self) -> str:
        return f"snapshot: {self.name}"


def parse(nodes: Nodes, body: Any, line: int) -> SnapshotStep:
    name = nodes.string(body)
    mapping: dict[str, Any] = {}
    if name is None:
        found = nodes.mapping(body)
        if found is None:
            raise Reject(_NEEDS_NAME)
        mapping = found
        only_keys("snapshot", mapping, ("name", "maxMismatch", "cropOn", "mask"))
        name = nodes.string(mapping.get("name"))
    if not name:
        raise Reject(_NEEDS_NAME)
    if not FLOW_NAME_RE.match(name):
        raise Reject(
            f"snapshot name {js_json_string(name)} must match {FLOW_NAME_PATTERN_TEXT} (letters, digits, "
            "underscore, hyphen)"
        )
    max_mismatch: float | int | None = None
    if "maxMismatch" in mapping:
        max_mismatch = nodes.to_number(mapping["maxMismatch"])
        if not math.isfinite(max_mismatch) or not 0 <= max_mismatch <= 100:
            raise Reject("snapshot maxMismatch must be a number between 0 and 100 (percent of pixels)")
        max_mismatch = tidy(max_mismatch)
    crop_on = nodes.selector(mapping["cropOn"], "snapshot.cropOn") if "cropOn" in mapping else None
    mask = _mask(nodes, mapping["mask"]) if "mask" in mapping else ()
    return SnapshotStep(name=name, max_mismatch=max_mismatch, crop_on=crop_on, mask=mask, line=line)


def _mask(nodes: Nodes, node: Any) -> tuple[Selector, ...]:
    """`mask`: 1 to ``MAX_SNAPSHOT_MASKS`` selectors."""
    if not isinstance(node, SequenceNode) or not node.value:
        raise Reject(_MASK_LIST)
    if len(node.value) > limits.MAX_SNAPSHOT_MASKS:
        raise Reject(f"snapshot mask lists {len(node.value)} selectors; at most {limits.MAX_SNAPSHOT_MASKS}")
    return tuple(nodes.selector(item, f"snapshot.mask[{i}]") for i, item in enumerate(node.value))


def files(step: SnapshotStep, tools: ToolFiles) -> tuple[Reference, ...]:
    return (Baseline(step.name),)


SNAPSHOT = Directive(key="snapshot", models=(SnapshotStep,), parse=parse, files=files)
