"""What a run reports: one StepReport per line, then a FlowRunResult (or a PrerequisiteNotice).

They are wire shapes, defined once in ``argent.link.models``; ``argent.link.codec`` writes them.
``index`` counts every line pushed so far, across fragments and blocks.
"""

from __future__ import annotations

from argent.link.models import FlowRunResult, PrerequisiteNotice, StepReport, StepStatus

__all__ = ["FlowRunResult", "PrerequisiteNotice", "StepReport", "StepStatus"]
