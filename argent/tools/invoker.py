"""The registry as the runner's ``ToolInvoker``: how `tool:` steps reach the tools."""

from __future__ import annotations

from typing import Any

from argent.runner.run import ToolCallContext, ToolOutcome
from argent.tools.call_policy import CallPolicy
from argent.tools.registry import ToolContext, ToolRegistry


class RegistryInvoker:
    """``policy``: the rules of the call whose run this is; its `tool:` steps obey them too."""

    def __init__(self, registry: ToolRegistry, policy: CallPolicy | None = None) -> None:
        self.registry = registry
        self.policy = policy

    def params(self, tool: str) -> frozenset[str] | None:
        spec = self.registry.find(tool)
        return spec.params if spec is not None else None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        spec = self.registry.get(tool)
        result = await self.registry.invoke(
            tool, args, ToolContext(abort=ctx.abort, policy=self.policy, budget=ctx.budget)
        )
        return spec.outcome(result)
