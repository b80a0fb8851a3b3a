"""`when: <guard>` + `steps:` — run a block only when a platform or a UI condition holds.

Paths may only reconverge: there is no `else`. The guard is evaluated with the short assert grace,
so it takes no timeout and no idle form, and no `{{secret:…}}` (secrets resolve only in `type:`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

from argent import limits
from argent.devices.registry import PLATFORMS
from argent.flows.canonical import condition_summary, condition_to_data
from argent.flows.directives.base import Directive, EntryAt, Nodes, Step
from argent.flows.grammar import CONDITION_KEYS, Reject, Wrap
from argent.flows.labels import condition_text, selector_label
from argent.flows.values import Condition, PlatformGuard, Selector, step_line

_SECRET_IN_WHEN = (
    "when takes no {{secret:…}} placeholder — secrets resolve only in text-entry steps (`type:`), never in "
    "condition evaluation, so the guard tests literal placeholder text that is never on screen: permanently "
    "false (for `hidden`, vacuously true); use the literal on-screen text instead"
)
_SECRET_MARK = "{{secret:"


@frozen
class WhenStep:
    guard: Condition | PlatformGuard
    steps: tuple[Step, ...]
    line: int = step_line()
    kind: ClassVar[str] = "when"
    executor: ClassVar[str] = "when"
    #: A platform guard needs no device once the run's platform is known: the runner decides.
    on_device: ClassVar[bool] = False

    def label(self) -> str | None:
        if isinstance(self.guard, PlatformGuard):
            return f"platform {self.guard.platform}"
        return condition_text(self.guard, selector_label)

    def to_data(self) -> dict[str, Any]:
        guard: Any
        if isinstance(self.guard, PlatformGuard):
            guard = {"platform": self.guard.platform}
        else:
            guard = condition_to_data(self.guard)
        return {"when": guard, "steps": [child.to_data() for child in self.steps]}

    def summary(self) -> str:
        if isinstance(self.guard, PlatformGuard):
            guard = f"platform {self.guard.platform}"
        else:
            guard = condition_summary(self.guard)
        count = len(self.steps)
        return f"when: {guard} ({count} step{'' if count == 1 else 's'})"


def parse_entry(nodes: Nodes, at: EntryAt) -> WhenStep:
    entry = at.entry
    if at.depth >= limits.MAX_WHEN_DEPTH:
        raise Reject(
            f"`when:` blocks nest deeper than {limits.MAX_WHEN_DEPTH} levels — check for a cyclic YAML "
            "alias (`steps: &s … steps: *s`)"
        )
    if "else" in entry:
        raise Reject(
            "when has no else — paths may only reconverge, never diverge; two genuinely different paths "
            "are two flows"
        )
    if any(key not in ("when", "steps") for key in entry):
        raise Reject("a when step takes exactly { when: <condition>, steps: [...] }")
    guard_node = entry["when"]
    try:
        guard = _guard(nodes, guard_node)
    except Reject as exc:
        if exc.entry is None:
            exc.entry = Wrap("when", guard_node)
        raise
    steps_node = entry.get("steps")
    if not isinstance(steps_node, SequenceNode) or not steps_node.value:
        raise Reject("when needs a non-empty steps list to guard")
    children = nodes.steps(steps_node.value, depth=at.depth + 1, prefix=f"{at.path}.")
    return WhenStep(guard=guard, steps=children, line=at.line)


def _guard(nodes: Nodes, node: Any) -> Condition | PlatformGuard:
    exactly_one = "when needs exactly one condition key (exists, visible, hidden, text, platform)"
    mapping = nodes.mapping(node)
    if mapping is None:
        raise Reject(exactly_one)
    if "idle" in mapping:
        raise Reject(
            "when has no idle form — stillness is a wait, and a guard asks what is on the screen now. "
            "Put `await: { idle: true }` before the block instead"
        )
    present = [key for key in mapping if key in (*CONDITION_KEYS, "platform")]
    if len(present) != 1:
        raise Reject(exactly_one)
    if "timeout" in mapping:
        raise Reject(
            "when takes no timeout — the guard is evaluated with the short assert grace so a skipped "
            "block never adds a full await wait"
        )
    if present[0] == "platform":
        if len(mapping) != 1:
            raise Reject("when.platform takes no other keys")
        platform = nodes.string(mapping["platform"])
        if platform not in PLATFORMS:
            raise Reject(f"when.platform must be one of {', '.join(PLATFORMS)}")
        return PlatformGuard(platform=platform)
    try:
        condition = nodes.condition(node, "when")
    except Reject:
        # A placeholder can make a refused pattern (`{{secret:X}}` is fuzzy-match syntax to the regex
        # engine): the placeholder is the guard's problem to name.
        if _node_has_secret(node):
            raise Reject(_SECRET_IN_WHEN) from None
        raise
    if _has_secret(condition):
        raise Reject(_SECRET_IN_WHEN)
    return condition


def _node_has_secret(node: Any) -> bool:
    """Whether a scalar under ``node`` holds a placeholder (each node once: aliases may repeat them)."""
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if (
            isinstance(current, ScalarNode)
            and isinstance(current.value, str)
            and _SECRET_MARK in current.value
        ):
            return True
        if isinstance(current, MappingNode):
            stack.extend(part for pair in current.value for part in pair)
        elif isinstance(current, SequenceNode):
            stack.extend(current.value)
    return False


def _has_secret(condition: Condition) -> bool:
    if condition.expected is not None and _SECRET_MARK in condition.expected:
        return True
    stack: list[Selector] = [condition.selector]
    while stack:
        sel = stack.pop()
        for value in (sel.text, sel.text_matches, sel.identifier, sel.role, sel.css):
            if value is not None and _SECRET_MARK in value:
                return True
        stack.extend(scope for scope in (sel.within, sel.after, sel.next) if scope is not None)
    return False


WHEN = Directive(key="when", models=(WhenStep,), parse_entry=parse_entry)
