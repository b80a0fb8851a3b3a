"""The browser engines this tool-server drives, and the platforms a flow may name: the one place that
knows them (INTERFACE.md section 11).

Each ``Engine`` declares its platform name, the prefix of its device ids, its protocol, where its
binary comes from, the variable a ``script:`` step finds its endpoint in, and what it cannot do
(``lacks``: declared here, never probed). Device ids, platforms, baseline suffixes and ``launch:``
keys come from this table; ``provider_of`` builds an engine's device provider (the engine package is
imported only then, so the flow language and the client can read the table without a browser).
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from attrs import frozen

from argent.devices.base import Capability


@frozen
class Engine:
    """One browser engine: how it is named, found, started and driven."""

    platform: str
    #: What a person calls it (messages): ``Chromium``.
    label: str
    #: Device ids are ``<id_prefix><port>``.
    id_prefix: str
    protocol: str
    #: The variable that names the binary, then the names tried on PATH, and the Debian package.
    binary_env: str
    binaries: tuple[str, ...]
    #: What the variable may name, for messages: ``a Chromium or Chrome binary``.
    binary_what: str
    package: str
    #: The variable a ``script:`` step finds the protocol endpoint in.
    endpoint_env: str
    #: Its device provider, ``module:class`` (imported when the engine is first used).
    provider: str
    #: What the engine cannot do (declared, not probed).
    lacks: frozenset[Capability] = frozenset()
    #: The ``source`` a ``describe`` of its screen names (upstream's ``cdp-dom`` on Chromium).
    describe_source: str = "dom"
    #: The variable a ``script:`` step finds the device's session in, when the endpoint alone names
    #: none (W3C WebDriver: the driver serves sessions; ``Device.endpoint_session``).
    session_env: str = ""

    def device_id(self, port: int) -> str:
        return f"{self.id_prefix}{port}"

    def port_of(self, device_id: str) -> int | None:
        """The port a ``<id_prefix><port>`` id names (1..65535), else None."""
        if not device_id.startswith(self.id_prefix):
            return None
        tail = device_id[len(self.id_prefix) :]
        if not tail.isascii() or not tail.isdigit():
            return None
        port = int(tail)
        return port if 0 < port < 65536 else None

    @property
    def id_pattern(self) -> str:
        """How its ids look, for messages: ``chromium-cdp-<port>``."""
        return f"{self.id_prefix}<port>"

    def baseline_suffix(self, width: int, height: int) -> str:
        """The device class of a snapshot baseline: ``chromium-1000x800``."""
        return f"{self.platform}-{width}x{height}"

    def install_hint(self) -> str:
        return (
            f"install {self.label} (Debian/Ubuntu: apt-get install {self.package}) or set {self.binary_env} to the "
            f"path of {self.binary_what}"
        )

    def configured_binary(self) -> str | None:
        value = os.environ.get(self.binary_env, "").strip()
        return value or None

    def find_binary(self) -> str | None:
        """The binary to launch: the variable (a path or a name on PATH), else the names on PATH."""
        configured = self.configured_binary()
        if configured is not None:
            return shutil.which(configured)
        for name in self.binaries:
            found = shutil.which(name)
            if found:
                return found
        return None

    def unavailable_reason(self) -> str | None:
        """None when the binary is at hand; else why not, naming the variable and the package."""
        configured = self.configured_binary()
        if configured is not None:
            if shutil.which(configured):
                return None
            return f'{self.binary_env}="{configured}" is not an executable file — {self.install_hint()}.'
        if self.find_binary() is not None:
            return None
        names = ", ".join(self.binaries)
        return (
            f"no {self.label} binary found ({self.binary_env} is not set and none of {names} is on PATH) — "
            f"{self.install_hint()}."
        )


CHROMIUM = Engine(
    platform="chromium",
    label="Chromium",
    id_prefix="chromium-cdp-",
    protocol="Chrome DevTools Protocol",
    binary_env="ARGENT_CHROMIUM",
    binaries=("chromium", "chromium-browser", "google-chrome"),
    binary_what="a Chromium or Chrome binary",
    package="chromium",
    endpoint_env="ARGENT_CDP_URL",
    provider="argent.devices.chromium.provider:ChromiumDeviceProvider",
    lacks=frozenset({Capability.TWO_FINGER}),
    describe_source="cdp-dom",
)

FIREFOX = Engine(
    platform="firefox",
    label="Firefox",
    id_prefix="firefox-bidi-",
    protocol="WebDriver BiDi",
    binary_env="ARGENT_FIREFOX",
    binaries=("firefox-esr", "firefox"),
    binary_what="a Firefox binary",
    package="firefox-esr",
    endpoint_env="ARGENT_BIDI_URL",
    provider="argent.devices.firefox.provider:FirefoxDeviceProvider",
    # No touch input over BiDi (no emulation.setTouchOverride); no DevTools protocol.
    lacks=frozenset({Capability.TWO_FINGER, Capability.DEVTOOLS}),
    describe_source="bidi-dom",
)

WEBKIT = Engine(
    platform="webkit",
    label="WebKit",
    id_prefix="webkit-wd-",
    protocol="W3C WebDriver",
    binary_env="ARGENT_WEBKIT_DRIVER",
    binaries=("WebKitWebDriver",),
    binary_what="WebKitGTK's WebKitWebDriver",
    package="webkit2gtk-driver",
    endpoint_env="ARGENT_WEBDRIVER_URL",
    session_env="ARGENT_WEBDRIVER_SESSION",
    provider="argent.devices.webkit.provider:WebKitDeviceProvider",
    # Classic WebDriver has no events (no network or console log) and no touch input; no DevTools protocol.
    lacks=frozenset({Capability.TWO_FINGER, Capability.DEVTOOLS, Capability.EVENT_LOGS}),
)

#: The engines, in the order messages and listings name them; the first is the default web engine.
ENGINES: tuple[Engine, ...] = (CHROMIUM, FIREFOX, WEBKIT)
#: The engine a web target runs on when a run names no platform and no device is booted.
DEFAULT_ENGINE = CHROMIUM
#: The `launch:` key whose target every browser engine falls back to (the web target recorded flows carry).
WEB_LAUNCH_KEY = DEFAULT_ENGINE.platform

#: Platforms upstream's flows name that no engine here drives (their guards and launch keys still parse).
NATIVE_PLATFORMS: tuple[str, ...] = ("ios", "android")
OTHER_PLATFORMS: tuple[str, ...] = ("vega",)
#: The platforms of the engines: what boot-device and a suite's ``--platform`` take.
ENGINE_PLATFORMS: tuple[str, ...] = tuple(e.platform for e in ENGINES)
#: Every platform a run, a `when: { platform }` and a `launch:` map may name, in the order messages list them.
PLATFORMS: tuple[str, ...] = (*NATIVE_PLATFORMS, *ENGINE_PLATFORMS, *OTHER_PLATFORMS)

# Their ``Literal`` types, so a tool's schema lists the choices (a plain ``str`` to the type checker).
if TYPE_CHECKING:
    Platform: TypeAlias = str
    EnginePlatform: TypeAlias = str
else:
    Platform = Literal[PLATFORMS]
    EnginePlatform = Literal[ENGINE_PLATFORMS]

#: Device ids as the docs of an argument show them: ``chromium-cdp-9222 or firefox-bidi-9223``.
ID_EXAMPLES = " or ".join(engine.device_id(9222 + i) for i, engine in enumerate(ENGINES))
#: How the ids of each engine look: ``chromium-cdp-<port>, firefox-bidi-<port>``.
ID_PATTERNS = ", ".join(engine.id_pattern for engine in ENGINES)

_BY_PLATFORM = {engine.platform: engine for engine in ENGINES}
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def engine_named(platform: str | None) -> Engine | None:
    """The engine of ``platform`` (a browser engine this server drives), else None."""
    return _BY_PLATFORM.get(platform) if platform is not None else None


def engine_of_id(device_id: str) -> Engine | None:
    """The engine whose ids look like ``device_id``, else None."""
    return next((engine for engine in ENGINES if device_id.startswith(engine.id_prefix)), None)


def platform_of_id(device_id: str) -> str:
    """Classify a device by the shape of its id: an engine's prefix, else as the upstream registry does."""
    engine = engine_of_id(device_id)
    if engine is not None:
        return engine.platform
    if device_id.startswith("remote:"):
        return "ios"
    if device_id.startswith("amazon-"):
        return "vega"
    if _UUID.fullmatch(device_id):
        return "ios"
    return "android"


def baseline_suffix(platform: str, width: int, height: int) -> str:
    """The device class a snapshot baseline carries: ``<platform>-<W>x<H>`` (each engine its own)."""
    engine = engine_named(platform)
    return engine.baseline_suffix(width, height) if engine is not None else f"{platform}-{width}x{height}"


def lacks(platform: str, capability: Capability) -> bool:
    """Whether the engine of ``platform`` declares it cannot do ``capability`` (False off the web engines)."""
    engine = engine_named(platform)
    return engine is not None and capability in engine.lacks


def engines_text(engines: tuple[Engine, ...] = ENGINES) -> str:
    """``chromium`` / ``chromium and firefox`` / ``chromium, firefox and webkit``."""
    names = [engine.platform for engine in engines]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def any_engine_unavailable() -> str | None:
    """None when some engine's binary is at hand (the device tools can work); else every engine's reason."""
    reasons = [engine.unavailable_reason() for engine in ENGINES]
    if any(reason is None for reason in reasons):
        return None
    return " ".join(reason for reason in reasons if reason)


def provider_of(engine: Engine, *, room: Any = None) -> Any:
    """A new device provider of ``engine`` — its ``argent.devices.web.provider.BrowserDeviceProvider``,
    booking its devices in ``room`` — its package imported now, by name: the table imports no engine
    (nor anything above it), so the flow language and the client read it without a browser."""
    module_name, _, class_name = engine.provider.partition(":")
    return getattr(importlib.import_module(module_name), class_name)(room=room)
