"""Whose call a device is booted, listed or driven for: the devices of a shared tool-server are per token.

The device layer knows no policy or token; the layer above sets ``DEVICE_CALLER`` for each tool call
(a context variable, like the file rule), and a provider keeps each device to the caller that booted it.
A caller without an owner is the one user of a server without named tokens: every device is theirs.
"""

from __future__ import annotations

from contextvars import ContextVar

from attrs import frozen

from argent.limits import DEFAULT_DEVICES_PER_TOKEN


@frozen
class DeviceCaller:
    """The caller of the current tool call, as the devices see it."""

    #: The named token's guard (``token:<name>``); None: the server has one user.
    owner: str | None = None
    #: Devices this caller may hold at once (the server's ``limits.devices_per_token``).
    max_devices: int = DEFAULT_DEVICES_PER_TOKEN

    @property
    def shared(self) -> bool:
        """A caller among several: sees only its own devices and attaches to no outside browser."""
        return self.owner is not None


#: The one user of a server without named tokens (and of a call made outside any tool call).
ONE_USER = DeviceCaller()

#: The caller of the current tool call; None: ``ONE_USER``.
DEVICE_CALLER: ContextVar[DeviceCaller | None] = ContextVar("argent_device_caller", default=None)


def current_caller() -> DeviceCaller:
    """The caller of the current tool call."""
    return DEVICE_CALLER.get() or ONE_USER
