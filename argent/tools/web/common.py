"""What the web tools share: the browser device a call names (any engine's, or one with the DevTools
extras for the ``chromium-*`` tools), the spec shape, device failures."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from argent.devices.base import Capability, DeviceError, DeviceProvider
from argent.devices.registry import CHROMIUM, ID_PATTERNS, any_engine_unavailable, lacks
from argent.devices.web.page import CapabilityError, DevToolsPage, WebPage, devtools_page, lacking, web_page
from argent.errors import ArgentError, InvalidToolInputError, ToolExecutionError
from argent.tools.registry import ToolContext, ToolSpec

A = TypeVar("A")

DEVICE_FAILED = "DEVICE_FAILED"
CHROMIUM_PARAM_INVALID = "CHROMIUM_PARAM_INVALID"
CHROMIUM_UDID_DOC = f"Chromium device id from `list-devices` (e.g. `{CHROMIUM.device_id(9222)}`)."
DEVICE_ID_DOC = f"Device id from list-devices (a browser device id: {ID_PATTERNS}) — the same id used with debugger-connect."
#: A tool run on a device whose engine lacks what it needs.
DEVICE_UNSUPPORTED = "DEVICE_UNSUPPORTED"
PORT_DOC = (
    "Metro server port (React Native only); accepted and ignored on Chromium, whose CDP port is in the id."
)

Execute = Callable[[A, ToolContext], Awaitable[Any]]


async def page_device(
    devices: DeviceProvider, udid: str, tool: str, *, needs: Capability | None = None
) -> WebPage:
    """The browser device ``udid`` names, of any engine (the engine-neutral web tools); with
    ``needs``, an engine that lacks it answers an error naming the engine and the capability."""
    try:
        device = web_page(await devices.get(udid), tool)
        if needs is not None and lacks(device.platform, needs):
            raise lacking(device, needs, tool)
        return device
    except CapabilityError as exc:
        raise unsupported(exc) from None


async def devtools_device(devices: DeviceProvider, udid: str, tool: str) -> DevToolsPage:
    """The device ``udid`` names, when its engine has the DevTools extras (the ``chromium-*`` tools);
    another engine's answers an error naming its platform and what it lacks."""
    try:
        return devtools_page(await devices.get(udid), tool)
    except CapabilityError as exc:
        raise unsupported(exc) from None


def unsupported(exc: CapabilityError) -> ToolExecutionError:
    return ToolExecutionError(str(exc), error_code=DEVICE_UNSUPPORTED, error_kind="validation")


def param_error(message: str) -> ToolExecutionError:
    """What upstream raises as a tool failure (not a schema error): an argument one action needs."""
    return ToolExecutionError(message, error_code=CHROMIUM_PARAM_INVALID, error_kind="validation")


def numeric(value: Any) -> float | None:
    """A number as upstream's schemas take it: a JSON number or a string of one (None for anything
    else, booleans and non-finite values included)."""
    number = value
    if isinstance(value, str) and value.strip():
        try:
            number = float(value)
        except ValueError:
            return None
    if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
        return None
    return float(number)


def metro_port(value: Any) -> int | None:
    """Upstream's optional ``port`` (a number, or a string of one, 1–65535); ignored on Chromium."""
    if value is None:
        return None
    number = numeric(value)
    if number is None:
        raise InvalidToolInputError(f"port: must be a number between 1 and 65535, got {value!r}.")
    if number != int(number) or not 1 <= number <= 65535:
        raise InvalidToolInputError(f"port: must be a whole number between 1 and 65535, got {value!r}.")
    return int(number)


def guarded(execute: Execute[A]) -> Execute[A]:
    """Device failures that escape a tool become device-kind tool errors (never a traceback)."""

    async def run(args: A, ctx: ToolContext) -> Any:
        try:
            return await execute(args, ctx)
        except ArgentError:
            raise
        except CapabilityError as exc:
            raise unsupported(exc) from None
        except DeviceError as exc:
            raise ToolExecutionError(str(exc), error_code=DEVICE_FAILED, error_kind="device") from None

    return run


def web_spec(
    name: str, description: str, args_type: type[A], execute: Execute[A], **extra: Any
) -> ToolSpec[Any]:
    """A web tool: runs where a browser engine can, its device failures answered as such."""
    return ToolSpec(
        name=name,
        description=description,
        args_type=args_type,
        execute=guarded(execute),
        availability=any_engine_unavailable,
        **extra,
    )
