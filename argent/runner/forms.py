"""How the steps a person fills forms with read in a report: why a `select` could not choose, and
the native dialogs a step met (named in its line)."""

from __future__ import annotations

import attrs

from argent.devices.base import Choice, DialogSeen, dialog_notes
from argent.flows.model import SelectStep
from argent.flows.names import describe_selector, js_json
from argent.runner.run import DirectiveOutcome

#: The chord that selects a field's whole text on a device that cannot select it itself.
SELECT_ALL_CHORD = "Control+A"


def with_dialogs(outcome: DirectiveOutcome, seen: list[DialogSeen]) -> DirectiveOutcome:
    """The outcome with the native dialogs that opened during the step named in its reason."""
    if not seen:
        return outcome
    text = "; ".join(dialog_notes(seen))
    return attrs.evolve(outcome, reason=f"{outcome.reason}; {text}" if outcome.reason else text)


def _quoted(names: tuple[str, ...], more: int) -> str:
    shown = ", ".join(js_json(name) for name in names)
    return shown + (f" (+{more} more)" if more else "")


def choice_problem(step: SelectStep, choice: Choice) -> str | None:
    """Why a `select` could not choose, for a person; None when it chose."""
    where = describe_selector(step.target)
    what = "value" if step.by == "value" else "option"
    there = f"its {what}s: {_quoted(choice.options, choice.more)}" if choice.options else "it has no options"
    if choice.problem is None:
        return None
    if choice.problem == "not-select":
        tag = f"a <{choice.tag}>" if choice.tag else "no element"
        return (
            f"select chooses in a native <select>, and {where} is {tag} — for a list the page draws "
            "itself, tap it open and tap the option"
        )
    if choice.problem == "disabled":
        return f"the select {where} is disabled — a person cannot choose in it"
    if choice.problem == "not-multiple":
        return f"the select {where} takes one option, not {len(step.choices)} — use `{what}:` with one"
    if choice.problem == "disabled-option":
        return (
            f"{what} {js_json(choice.wanted)} of the select {where} is disabled — a person cannot choose it"
        )
    return f"no {what} {js_json(choice.wanted)} in the select {where} — {there}"
