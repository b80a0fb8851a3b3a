"""The registry of built-in tools a tool-server (or the in-process client) offers."""

from __future__ import annotations

from argent.devices.base import DeviceProvider
from argent.tools.flow_tools import flow_tools
from argent.tools.member_invoker import FileInputDirs
from argent.tools.recording import recording_tools
from argent.tools.recording_notes import note_recordings
from argent.tools.registry import ToolRegistry


def build_registry(
    devices: DeviceProvider | None = None,
    artifacts_dir: str | None = None,
    file_input_dirs: FileInputDirs | None = None,
) -> ToolRegistry:
    """The flow tools, and with a device provider (a tool-server's) the device tools on it.

    ``file_input_dirs`` makes the directories of `tool:` steps' file arguments in linked runs (a
    tool-server's carry its id); None puts them in the system temp directory."""
    registry = ToolRegistry()
    for spec in flow_tools(
        registry, devices=devices, artifacts_dir=artifacts_dir, file_input_dirs=file_input_dirs
    ):
        registry.register(spec)
    for spec in recording_tools(
        registry, devices=devices, file_input_dirs=file_input_dirs, artifacts_dir=artifacts_dir
    ):
        registry.register(spec)
    if devices is not None:
        from argent.tools.device_tools import device_tools

        for spec in device_tools(devices):
            registry.register(spec)
    if devices is not None:
        from argent.tools.web import web_tools

        for spec in web_tools(registry, devices):
            registry.register(spec)
    note_recordings(registry)
    return registry
