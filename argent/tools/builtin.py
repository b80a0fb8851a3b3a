"""The registry of built-in tools a tool-server (or the in-process client) offers."""

from __future__ import annotations

from argent.tools.flow_tools import flow_tools
from argent.tools.recording import recording_tools
from argent.tools.registry import ToolRegistry


def build_registry() -> ToolRegistry:
    registry = ToolRegistry()
    for spec in flow_tools(registry):
        registry.register(spec)
    for spec in recording_tools(registry):
        registry.register(spec)
    return registry
