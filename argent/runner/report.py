"""What a run reports: one StepReport per line, then a FlowRunResult.

Field names are Python's; ``argent.link.wire`` renames them to the camelCase wire
names once. ``index`` counts every line pushed so far, across fragments and blocks.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from attrs import define, field, frozen

StepStatus: TypeAlias = Literal["pass", "fail", "skip", "error"]


@frozen
class StepReport:
    index: int
    kind: str
    status: StepStatus
    flow: str
    depth: int = 0
    target: str | None = None
    reason: str | None = None
    warning: str | None = None
    message: str | None = None
    tool: str | None = None
    result: Any = None
    output_hint: str | None = None
    args: Any = None
    snapshot_key: str | None = None
    artifacts: dict[str, str] | None = field(default=None, hash=False)
    duration_ms: float = 0.0


@define
class FlowRunResult:
    flow: str
    device: str
    steps: list[StepReport]
    execution_prerequisite: str = ""
    aborted: bool = False
    baseline_writes: list[Any] | None = None

    @property
    def counted(self) -> list[StepReport]:
        """Echo lines count in no counter, but for the one error an echo can report: the call's
        step limit reached on it (an error must never read as a pass)."""
        return [s for s in self.steps if s.kind != "echo" or s.status == "error"]

    @property
    def passed(self) -> int:
        return sum(1 for s in self.counted if s.status == "pass")

    @property
    def failed(self) -> int:
        return sum(1 for s in self.counted if s.status == "fail")

    @property
    def skipped(self) -> int:
        return sum(1 for s in self.counted if s.status == "skip")

    @property
    def errored(self) -> int:
        return sum(1 for s in self.counted if s.status == "error")

    @property
    def ok(self) -> bool:
        """Skips alone never fail a run."""
        return self.failed == 0 and self.errored == 0 and not self.aborted


@frozen
class PrerequisiteNotice:
    """flow-execute's answer when the flow's execution prerequisite was not acknowledged."""

    flow: str
    execution_prerequisite: str
    notice: str = (
        "This flow has an execution prerequisite that must be fulfilled before it can run. Verify the "
        "prerequisite is met and call flow-execute again with prerequisiteAcknowledged set to true."
    )
