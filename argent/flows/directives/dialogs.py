"""`dialogs:` — how the native dialogs (`alert`, `confirm`, `prompt`, `beforeunload`) that open from
this step on are answered, in this flow and the fragments it runs: `dialogs: accept`,
`dialogs: dismiss`, or `dialogs: { accept: true, text: "..." }` (the text a `prompt` gets).

Without it a device answers as a person would expect a test tool to: `alert` accepted, the others
dismissed. No dialog ever stays open: a page never freezes on one."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, did_you_mean, only_keys
from argent.flows.js import js_json_string
from argent.flows.values import step_line

EXAMPLE = 'dialogs: accept, dialogs: dismiss, or dialogs: { accept: true, text: "Bob" }'
ANSWERS = ("accept", "dismiss")


@frozen
class DialogsStep:
    accept: bool
    #: What a `prompt` accepted from this step on gets (None: the text it proposes).
    text: str | None = None
    line: int = step_line()
    kind: ClassVar[str] = "dialogs"
    executor: ClassVar[str] = "dialogs"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        if self.text is not None:
            return f"accept with {js_json_string(self.text)}"
        return "accept" if self.accept else "dismiss"

    def to_data(self) -> dict[str, Any]:
        if self.text is not None:
            return {"dialogs": {"accept": True, "text": self.text}}
        return {"dialogs": "accept" if self.accept else "dismiss"}

    def summary(self) -> str:
        return f"dialogs: {self.label()}"


def parse(nodes: Nodes, body: Any, line: int) -> DialogsStep:
    word = nodes.string(body)
    if word is not None:
        if word not in ANSWERS:
            hint = did_you_mean(word, ANSWERS)
            said = f" (did you mean `{hint}`?)" if hint else ""
            raise Reject(f"dialogs must be accept or dismiss{said} — e.g. {EXAMPLE}")
        return DialogsStep(accept=word == "accept", line=line)
    mapping = nodes.mapping(body)
    if mapping is None:
        raise Reject(f"dialogs needs an answer — e.g. {EXAMPLE}")
    only_keys("dialogs", mapping, ("accept", "text"))
    if "accept" not in mapping:
        raise Reject(f"dialogs needs `accept` (true or false) — e.g. {EXAMPLE}")
    accept = nodes.scalar(mapping["accept"])
    if accept is not True and accept is not False:
        raise Reject("dialogs.accept must be a boolean")
    text: str | None = None
    if "text" in mapping:
        text = nodes.string(mapping["text"])
        if text is None:
            raise Reject('dialogs.text must be text — the answer a prompt gets, e.g. text: "Bob"')
        if not accept:
            raise Reject("dialogs.text is what an accepted prompt gets — it needs accept: true")
    return DialogsStep(accept=accept, text=text, line=line)


DIALOGS = Directive(key="dialogs", models=(DialogsStep,), parse=parse)
