"""What a recording writes for a call of each tool, said at the end of the tool's description: an agent
learns from the listing what flow-add-step will make of a call (``open-url`` becomes ``launch:``,
``keyboard`` a ``press:``, ...), before it records one."""

from __future__ import annotations

from attrs import evolve

from argent.link.rules import FLOW_EXECUTE, RECORDING_TOOLS
from argent.tools.recording import BOOT_DEVICE, GESTURE_TAP, KEYBOARD
from argent.tools.registry import ToolRegistry

#: What flow-add-step writes for a call of each tool whose call becomes something else than its own
#: `tool:` step; said at the end of the tool's description (``note_recordings``).
RECORDED_AS: dict[str, str] = {
    BOOT_DEVICE: (
        "`launch: { chromium: <url> }` (a page of the project by its path relative to the flow file); without a "
        "url, a `tool: boot-device` step"
    ),
    "open-url": "`launch: { chromium: <url> }` (a page of the project by its path relative to the flow file)",
    GESTURE_TAP: (
        "`tap: <selector>` naming the tapped element alone (its id, its text, its text and role), else "
        "`tap: { x, y }` with a warning"
    ),
    KEYBOARD: (
        "`press: <keys>` for a key or a chord; text stays a `tool: keyboard` step — to fill a field, record "
        "the `type` directive instead (one call)"
    ),
    FLOW_EXECUTE: "`run: <name>.yaml` for a flow beside the recording, else a `tool: flow-execute` step",
    "await-ui-element": (
        "a `tool: await-ui-element` step — the `await` directive (flow-add-step command await) is the flow's "
        "own wait"
    ),
    "gesture-scroll": (
        "a `tool: gesture-scroll` step with its deltas — the `scroll-to` directive (command scroll-to) "
        "scrolls until an element shows"
    ),
}
RECORDED_AS_TOOL_STEP = (
    "a `tool: {name}` step with its arguments (its device id left out: a replay binds its own)"
)
RECORDING_NOTE = "Recorded by flow-add-step as {what}."


def recording_note(tool: str) -> str | None:
    """What a recording writes for a call of ``tool`` (None for the recorder's own tools)."""
    if tool in RECORDING_TOOLS:
        return None
    return RECORDING_NOTE.format(what=RECORDED_AS.get(tool) or RECORDED_AS_TOOL_STEP.format(name=tool))


def note_recordings(registry: ToolRegistry) -> None:
    """End each tool's description with what a recording writes for a call of it."""
    for spec in list(registry):
        note = recording_note(spec.name)
        if note is not None and note not in spec.description:
            registry.replace(evolve(spec, description=f"{spec.description.rstrip()} {note}"))
