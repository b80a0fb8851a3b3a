"""What the web tools share: the Chromium device a call names, the spec shape, device failures."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from argent.devices.base import DeviceError, DeviceProvider
from argent.devices.chromium.device import ChromiumDevice
from argent.devices.chromium.launcher import chromium_unavailable_reason
from argent.errors import ArgentError, InvalidToolInputError, ToolExecutionError
from argent.tools.registry import ToolContext, ToolSpec

A = TypeVar("A")

DEVICE_FAILED = "DEVICE_FAILED"
CHROMIUM_PARAM_INVALID = "CHROMIUM_PARAM_INVALID"
CHROMIUM_UDID_DOC = "Chromium device id from `list-devices` (e.g. `chromium-cdp-9222`)."
DEVICE_ID_DOC = (
    "Device id from list-devices (a Chromium device id, chromium-cdp-<port>) — the same id used with "
    "debugger-connect."
)
PORT_DOC = (
    "Metro server port (React Native only); accepted and ignored on Chromium, whose CDP port is in the id."
)

Execute = Callable[[A, ToolContext], Awaitable[Any]]


async def chromium_device(devices: DeviceProvider, udid: str) -> ChromiumDevice:
    """The Chromium device ``udid`` names (these tools drive Chromium pages over CDP)."""
    device = await devices.get(udid)
    if not isinstance(device, ChromiumDevice):
        raise ToolExecutionError(f'Device "{udid}" is not a Chromium (CDP) device.', error_kind="validation")
    return device


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
        except DeviceError as exc:
            raise ToolExecutionError(str(exc), error_code=DEVICE_FAILED, error_kind="device") from None

    return run


def web_spec(
    name: str, description: str, args_type: type[A], execute: Execute[A], **extra: Any
) -> ToolSpec[Any]:
    """A web tool: runs where Chromium can, its device failures answered as such."""
    return ToolSpec(
        name=name,
        description=description,
        args_type=args_type,
        execute=guarded(execute),
        availability=chromium_unavailable_reason,
        **extra,
    )
