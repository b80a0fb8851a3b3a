"""`press:` — press a key or a chord on the focused element: `press: Shift+Enter`, or
`press: { keys: Tab, times: 3 }` to press it several times.

Keys are W3C key names (any case) or one character, modifiers (Shift, Control, Alt, Meta) joined
to the key by ``+``; the vocabulary is ``argent.utils.keys``, checked here when the flow is read."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from argent import limits
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, did_you_mean, only_keys
from argent.flows.js import is_integer, js_json_string
from argent.flows.values import step_line
from argent.utils.keys import KEY_NAMES, Chord, KeyNameError, parse_chord, unknown_key_message

EXAMPLE = "press: Shift+Enter, or press: { keys: Tab, times: 3 }"


@frozen
class PressStep:
    #: The canonical spelling of the key or chord (``Control+Shift+ArrowLeft``).
    keys: str
    times: int = 1
    line: int = step_line()
    kind: ClassVar[str] = "press"
    executor: ClassVar[str] = "press"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return self.keys if self.times == 1 else f"{self.keys} ×{self.times}"

    def to_data(self) -> dict[str, Any]:
        if self.times == 1:
            return {"press": self.keys}
        return {"press": {"keys": self.keys, "times": self.times}}

    def summary(self) -> str:
        times = f" ×{self.times}" if self.times > 1 else ""
        return f"press: {js_json_string(self.keys)}{times}"


def chord(text: str) -> Chord:
    """``text`` as a key or chord; a ``ValueError`` whose message names the key at fault, the key
    most likely meant, and the keys there are."""
    try:
        return parse_chord(text)
    except KeyNameError as exc:
        hint = did_you_mean(exc.part, KEY_NAMES) if exc.problem is None and len(exc.part) > 1 else None
        raise ValueError(unknown_key_message(exc.spelled, exc.part, exc.problem, hint)) from None


def _keys(nodes: Nodes, node: Any, where: str) -> str:
    text = nodes.string(node)
    if text is None:
        scalar = nodes.scalar(node)
        if is_integer(scalar) and 0 <= scalar <= 9:
            raise Reject(f'{where} takes a key name as text — quote a digit key: {where}: "{int(scalar)}"')
        raise Reject(f"{where} needs a key or a chord — e.g. {EXAMPLE}")
    try:
        return chord(text).name
    except ValueError as exc:
        raise Reject(f"{where}: {exc}") from None


def parse(nodes: Nodes, body: Any, line: int) -> PressStep:
    mapping = nodes.mapping(body)
    if mapping is None:
        return PressStep(keys=_keys(nodes, body, "press"), line=line)
    only_keys("press", mapping, ("keys", "times"))
    if "keys" not in mapping:
        raise Reject(f"press needs `keys` — e.g. {EXAMPLE}")
    keys = _keys(nodes, mapping["keys"], "press.keys")
    times = 1
    if "times" in mapping:
        number = nodes.number(mapping["times"])
        if not is_integer(number) or not 1 <= number <= limits.MAX_PRESS_TIMES:
            raise Reject(f"press.times must be an integer between 1 and {limits.MAX_PRESS_TIMES}")
        times = int(number)
    return PressStep(keys=keys, times=times, line=line)


PRESS = Directive(key="press", models=(PressStep,), parse=parse)
