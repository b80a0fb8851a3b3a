"""The registry as the runner's ``ToolInvoker``: how `tool:` steps reach the tools."""

from __future__ import annotations

from typing import Any

from argent.runner.engine import ToolCallContext, ToolOutcome
from argent.tools.registry import ToolContext, ToolRegistry


class RegistryInvoker:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def params(self, tool: str) -> frozenset[str] | None:
        spec = self.registry.find(tool)
        return spec.params if spec is not None else None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        spec = self.registry.get(tool)
        result = await self.registry.invoke(tool, args, ToolContext(abort=ctx.abort))
        return ToolOutcome(result=result, output_hint=spec.output_hint)
