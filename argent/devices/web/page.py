"""What the web tools ask of a browser device, whatever its engine: ``WebPage``; and the DevTools
extras only Chromium has (``DevToolsPage``), which the ``chromium-*`` tools ask for by capability.

The tools hold these protocols, never an engine's device class (``argent.devices.registry`` says
which engine lacks what; ``web_page`` and ``devtools_page`` answer the errors that name it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from attrs import frozen

from argent.devices.base import Capability, Device, DeviceError, UiTree
from argent.devices.registry import engine_named
from argent.devices.web.recorders import ConsoleRing, NetworkRing


@frozen
class ScriptOutcome:
    """What a script run in a page came to: its value (by value), the exception it threw (its text),
    or that it ran past its time (the page was then stopped, or left to finish)."""

    value: Any = None
    thrown: str | None = None
    timed_out: bool = False


PointerAction = Literal["down", "move", "up"]


@runtime_checkable
class WebPage(Device, Protocol):
    """A browser page the engine-neutral web tools drive."""

    @property
    def port(self) -> int:
        """The port of the protocol endpoint the tool-server drives."""
        ...

    @property
    def owned(self) -> bool:
        """Launched by this tool-server (``close`` stops it) rather than attached."""
        ...

    @property
    def pid(self) -> int | None: ...

    @property
    def profile_dir(self) -> str | None: ...

    @property
    def alive(self) -> bool: ...

    @property
    def death(self) -> str | None:
        """Why the device is gone (its session's death message), once it is."""
        ...

    @property
    def viewport(self) -> tuple[float, float]:
        """The viewport in CSS pixels, as last read."""
        ...

    @property
    def network(self) -> NetworkRing: ...

    @property
    def console(self) -> ConsoleRing: ...

    async def page_info(self) -> dict[str, str]:
        """The page's ``title`` and ``url`` (empty strings when unreadable)."""
        ...

    async def refresh_viewport(self) -> tuple[float, float]: ...

    async def ui_tree(
        self, *, max_depth: int = ..., max_nodes: int = ..., css: Sequence[str] = ()
    ) -> UiTree: ...

    async def run_script(self, expression: str, *, timeout: float) -> ScriptOutcome:
        """Evaluate ``expression`` in the page's own world (promises awaited, the value by value),
        bounded by ``timeout`` seconds."""
        ...

    async def response_body(self, request_id: str) -> tuple[str, bool] | None:
        """The body the browser still holds for a recorded request (text, whether base64), else None."""
        ...

    async def pointer(self, action: PointerAction, x: float, y: float) -> None:
        """The left mouse button pressed, moved or released at (x, y) CSS pixels."""
        ...


class DevTools(Protocol):
    """A page's Chrome DevTools Protocol session."""

    @property
    def alive(self) -> bool: ...

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]: ...

    async def evaluate(
        self, expression: str, *, await_promise: bool = False, timeout: float | None = None
    ) -> Any: ...


@runtime_checkable
class DevToolsPage(WebPage, Protocol):
    """A page of a browser with the DevTools extras: its tabs, its cookies and storage over CDP."""

    @property
    def devtools(self) -> DevTools: ...

    @property
    def target_id(self) -> str | None:
        """The target id of the page the device drives (its active tab)."""
        ...

    async def page_targets(self) -> list[dict[str, Any]]:
        """The page targets of the browser (its tabs), as ``/json/list`` names them."""
        ...

    async def browser_call(
        self, method: str, params: dict[str, Any], *, destroys: str | None = None
    ) -> dict[str, Any]:
        """One browser-level CDP command; with ``destroys``, it returns once that target is gone."""
        ...

    async def switch_target(self, target_id: str, ws_url: str) -> None:
        """Drive another page (tab) of the browser from now on."""
        ...


class CapabilityError(DeviceError):
    """A device whose engine lacks what a step or tool needs (declared in the registry)."""


def lacking(device: Device, capability: Capability, what: str) -> CapabilityError:
    """``what`` (a tool, a step) cannot run on ``device``: its engine lacks ``capability``."""
    engine = engine_named(device.platform)
    name = engine.label if engine is not None else device.platform
    return CapabilityError(
        f"{what} cannot run on {device.id}: {name} ({device.platform}) lacks {capability.value}."
    )


def web_page(device: Device, what: str) -> WebPage:
    """``device`` as a web page, else an error naming its platform."""
    if isinstance(device, WebPage):
        return device
    raise CapabilityError(f"{what} takes a browser device; {device.id} is a {device.platform} device.")


def devtools_page(device: Device, what: str) -> DevToolsPage:
    """``device`` as a page with the DevTools extras, else an error naming its engine and what it lacks."""
    engine = engine_named(device.platform)
    if engine is not None and Capability.DEVTOOLS in engine.lacks:
        raise CapabilityError(
            f"{what} takes Chromium devices only; {device.id} is a {device.platform} device ({engine.label} "
            f"lacks {Capability.DEVTOOLS.value})."
        )
    if not isinstance(device, DevToolsPage):
        raise CapabilityError(
            f"{what} takes Chromium devices only; {device.id} is a {device.platform} device."
        )
    return device
