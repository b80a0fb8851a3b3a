"""The in-process client: calls the registry directly, speaking the wire shapes.

Results and progress are converted to their wire form exactly as the HTTP
transport would send them, so the CLI renders the same data either way.
"""

from __future__ import annotations

import inspect
from typing import Any

from argent.client.base import ProgressCallback, ToolCallError
from argent.errors import ArgentError
from argent.link.wire import to_wire
from argent.tools.registry import ToolContext, ToolRegistry


class InProcessClient:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    async def list_tools(self) -> list[dict[str, Any]]:
        return self.registry.entries()

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        async def emit(report: Any) -> None:
            if on_progress is not None:
                outcome = on_progress(to_wire(report))
                if inspect.isawaitable(outcome):
                    await outcome

        ctx = ToolContext(emit_progress=emit if on_progress else None)
        try:
            result = await self.registry.invoke(name, args, ctx)
        except ArgentError as exc:
            raise ToolCallError(
                exc.message, status=exc.status, error_code=exc.error_code, error_kind=exc.error_kind
            ) from exc
        return to_wire(result)
