"""An explicit ``chromium-cdp-<port>`` is used as given: looked up at the first step that acts on it.

Real ``ChromiumDeviceProvider`` and real directives against a port where nothing listens: a flow
whose steps never touch the device runs; the first step that does gets the lookup's message.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from argent.devices.chromium import ChromiumDeviceProvider
from argent.runner.directives import DeviceDirectives
from argent.runner.execute import FlowRequest, execute_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from argent.tools.builtin import build_registry
from argent.tools.invoker import RegistryInvoker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def not_found(port: int) -> str:
    return (
        f'No device "chromium-cdp-{port}" found — nothing answers DevTools on 127.0.0.1:{port}. Pass a device '
        "id or platform explicitly. Available devices: none."
    )


async def run(project: Path, body: str, device: str) -> FlowRunResult:
    flows = project / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / "main.yaml").write_text(body)
    provider = ChromiumDeviceProvider()
    try:
        result = await execute_flow(
            FlowRequest(name="main", project_root=str(project), device=device),
            files=DiskFlowFiles(),
            tools=RegistryInvoker(build_registry(devices=provider)),
            directives=DeviceDirectives(),
            devices=provider,
        )
    finally:
        await provider.close_all()
    assert isinstance(result, FlowRunResult)
    return result


async def test_a_flow_that_never_touches_the_device_runs_without_it(tmp_path: Path) -> None:
    port = free_port()
    body = (
        "steps:\n"
        "  - echo: first\n"
        "  - when: { platform: chromium }\n"
        "    steps:\n"
        "      - echo: on chromium\n"
        "  - when: { platform: ios }\n"
        "    steps:\n"
        "      - tap: Never\n"
    )
    result = await run(tmp_path, body, f"chromium-cdp-{port}")
    assert result.ok, [(s.kind, s.status, s.reason) for s in result.steps]
    assert result.device == f"chromium-cdp-{port}"
    assert [(s.kind, s.status) for s in result.steps] == [
        ("echo", "pass"),
        ("when", "pass"),
        ("echo", "pass"),
        ("when", "skip"),
        ("tap", "skip"),
    ]


@pytest.mark.parametrize(
    "line",
    ["tap: Save", "snapshot: home", "scroll-to: Item 9", "tool: describe"],
)
async def test_the_first_step_that_needs_the_device_gets_the_lookup_error(tmp_path: Path, line: str) -> None:
    port = free_port()
    result = await run(
        tmp_path, f"steps:\n  - echo: before\n  - {line}\n  - echo: after\n", f"chromium-cdp-{port}"
    )
    first, step, after = result.steps
    assert (first.kind, first.status) == ("echo", "pass")
    assert step.status == "error" and step.reason == not_found(port)
    assert (after.kind, after.status) == ("echo", "skip")
    assert not result.ok


async def test_a_ui_guard_reports_the_lookup_error(tmp_path: Path) -> None:
    port = free_port()
    body = "steps:\n  - when: { visible: Banner }\n    steps:\n      - echo: shown\n"
    result = await run(tmp_path, body, f"chromium-cdp-{port}")
    assert result.steps[0].status == "error"
    assert (
        result.steps[0].reason == f'could not evaluate when guard (visible text="Banner"): {not_found(port)}'
    )


async def test_a_script_runs_without_a_device_that_does_not_answer(tmp_path: Path) -> None:
    port = free_port()
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True)
    out = tmp_path / "env.txt"
    (flows / "env.py").write_text(
        "import os, sys\n"
        f"open({str(out)!r}, 'w').write(os.environ['ARGENT_DEVICE'] + '|' + os.environ.get('ARGENT_CDP_URL', '-'))\n"
    )
    result = await run(tmp_path, "steps:\n  - script: env.py\n", f"chromium-cdp-{port}")
    assert result.ok, [(s.kind, s.status, s.reason) for s in result.steps]
    assert out.read_text() == f"chromium-cdp-{port}|-"
