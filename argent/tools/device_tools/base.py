"""What every device tool is made of: its declaration, and the rules the tools share.

A device tool is declared once, as a ``DeviceTool``: its args class, its behaviour (a coroutine
given the tool-server's devices) and the rest of its ``ToolSpec``. ``spec`` binds it to a
device provider; a ``DeviceError`` that escapes the behaviour becomes a device-kind tool error.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Literal, TypeVar

from attrs import frozen

from argent.devices.base import Device, DeviceError, DeviceProvider
from argent.devices.registry import ID_EXAMPLES, any_engine_unavailable
from argent.devices.web.targets import LaunchTargetError, resolve_launch_target
from argent.errors import ArgentError, InvalidToolInputError, ToolExecutionError
from argent.flows.secrets import redact
from argent.link.models import FileInputSpec
from argent.runner.run import ToolVerdict
from argent.tools.args import arg, ignored_notes
from argent.tools.registry import ToolContext, ToolSpec

A = TypeVar("A")

DEVICE_FAILED = "DEVICE_FAILED"
UDID_DOC = f"Device id, e.g. {ID_EXAMPLES} (see list-devices)."

Behaviour = Callable[[DeviceProvider, A, ToolContext], Awaitable[Any]]


@frozen
class NoArgs:
    pass


#: The note of upstream's ``bundleId`` (an iOS app), which a Chromium page has no use for.
BUNDLE_ID_IGNORED = "bundleId was ignored: it names an iOS app; a Chromium device has one page, no apps."
ROTATION_IGNORED = "rotation was ignored: a Chromium page has no device orientation to override."
Rotation = Literal["Portrait", "LandscapeLeft", "LandscapeRight", "PortraitUpsideDown"]


def bundle_id_arg() -> Any:
    """Upstream's ``bundleId`` (describe, open-url, await-ui-element): accepted, noted."""
    return arg(None, wire="bundleId", doc="Upstream's iOS app; ignored here.", ignored=BUNDLE_ID_IGNORED)


def rotation_arg() -> Any:
    """Upstream's ``rotation`` of a capture (screenshot, screenshot-diff): accepted, noted."""
    return arg(None, doc="Upstream's orientation override; ignored here.", ignored=ROTATION_IGNORED)


@frozen
class UdidArgs:
    udid: str = arg(doc=UDID_DOC)


@frozen
class DeviceTool(Generic[A]):
    """One device tool: everything its ``ToolSpec`` says, with the behaviour still unbound."""

    name: str
    description: str
    args_type: type[A]
    run: Behaviour[A]
    #: False for the tools that work without a browser binary (listing, stopping, comparing files).
    needs_browser: bool = True
    precheck: Callable[[A, ToolContext], Awaitable[None]] | None = None
    file_inputs: tuple[FileInputSpec, ...] = ()
    long_running: bool = False
    output_hint: str | None = None
    verdict: Callable[[Any], ToolVerdict | None] | None = None
    #: Upstream's values on the same tool (``alwaysLoad``, ``searchHint`` of GET /tools).
    always_load: bool = False
    search_hint: str | None = None

    def spec(self, devices: DeviceProvider) -> ToolSpec[A]:
        """The tool acting on ``devices``."""
        behaviour = self.run

        async def execute(args: A, ctx: ToolContext) -> Any:
            try:
                return with_notes(await behaviour(devices, args, ctx), ignored_notes(args))
            except ArgentError:
                raise
            except DeviceError as exc:
                raise device_failure(exc) from None

        return ToolSpec(
            name=self.name,
            description=self.description,
            args_type=self.args_type,
            execute=execute,
            file_inputs=self.file_inputs,
            long_running=self.long_running,
            output_hint=self.output_hint,
            availability=any_engine_unavailable if self.needs_browser else None,
            precheck=self.precheck,
            verdict=self.verdict,
            always_load=self.always_load,
            search_hint=self.search_hint,
        )


def with_notes(result: Any, notes: list[str]) -> Any:
    """``result`` with ``notes``: the upstream arguments the call set that mean nothing here."""
    if not notes or not isinstance(result, dict):
        return result
    return {**result, "notes": [*result.get("notes", []), *notes]}


def device_failure(exc: DeviceError, secrets: list[str] | None = None) -> ToolExecutionError:
    """A device's failure as the tool's error (secret values typed into it redacted)."""
    return ToolExecutionError(redact(str(exc), secrets or []), error_code=DEVICE_FAILED, error_kind="device")


async def on_device(devices: DeviceProvider, udid: str) -> Device:
    return await devices.get(udid)


def fraction(name: str, value: float) -> float:
    """A screen coordinate, checked: a fraction 0–1 of the screen."""
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidToolInputError(
            f"{name} must be a fraction of the screen between 0 and 1, got {value!r}. Read positions from describe."
        )
    return value


def now_ms() -> int:
    return int(time.time() * 1000)


def launch_url(target: str) -> str:
    """A page argument (URL or local path) as the URL the browser opens; a 400 when it is not one."""
    try:
        return resolve_launch_target(target, None)
    except LaunchTargetError as exc:
        raise InvalidToolInputError(str(exc)) from None


async def page_readable(args: Any, ctx: ToolContext) -> None:
    """A page the browser would read from this host's disk obeys the call's policy."""
    url = getattr(args, "url", None)
    if ctx.policy is not None and url is not None:
        await ctx.policy.check_page(url)
