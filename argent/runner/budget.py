"""The work one call may do, shared by its `run:` fragments and nested flow-execute runs.

Every line a call reports costs one unit of its ``StepBudget``: steps that ran (a `run:` step is
the load of its fragment, a nested flow-execute the load of its flow) and steps that were skipped.
A call that reaches the limit gets one ``error`` line naming it and reports nothing more, so its
time, its memory and its stream are bounded however its fragments fan out. The budget also paces
the engine: ``due_for_yield`` tells the step loop when to give the event loop back, so one call
never starves the others (or ``/healthz``, or a signal handler) however fast its steps are.
"""

from __future__ import annotations

import time

from attrs import define, field

from argent.limits import ENGINE_YIELD_SECONDS, MAX_STEPS_PER_CALL

STEP_BUDGET_EXCEEDED = (
    "step limit reached: this call has reported {limit} steps (steps per call, MAX_STEPS_PER_CALL "
    "or the server's limits.steps_per_call), counting the steps of every run: fragment and nested "
    "flow, skipped ones included — split the flow into smaller calls"
)


@define(eq=False)
class StepBudget:
    """Lines left for one call; once spent, the call reports nothing more."""

    limit: int = MAX_STEPS_PER_CALL
    used: int = 0
    #: True once the limit's error line was reported: every loop of the call unwinds.
    exhausted: bool = False
    _next_yield: float = field(factory=lambda: time.monotonic() + ENGINE_YIELD_SECONDS)

    @property
    def message(self) -> str:
        return STEP_BUDGET_EXCEEDED.format(limit=self.limit)

    def take(self) -> bool:
        """Spend one line; False when this line is the one past the limit."""
        self.used += 1
        return self.used <= self.limit

    def due_for_yield(self) -> bool:
        """True at most every ENGINE_YIELD_SECONDS: the caller then awaits ``asyncio.sleep(0)``."""
        now = time.monotonic()
        if now < self._next_yield:
            return False
        self._next_yield = now + ENGINE_YIELD_SECONDS
        return True
