"""`launch:` — open the app under test: a bare app id / target, or a per-platform map
(``{ native | ios | android | vega: <app id>, chromium: <app path> | { path, args } }``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from attrs import field, frozen

from argent.devices.registry import ENGINES, PLATFORMS, WEB_LAUNCH_KEY, engine_named
from argent.errors import FlowError
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, only_keys
from argent.flows.js import js_json
from argent.flows.references import LaunchFile, Reference, ToolFiles
from argent.flows.values import step_line

_LAUNCH_KEYS: tuple[str, ...] = ("native", *PLATFORMS)
_GENERIC = (
    "launch needs an app id (bare string) or a per-platform map ({ native | ios | android | vega: "
    "<app id>, chromium: <app path> | { path, args } })"
)
#: A bare launch target a browser opens (not an app id): a web URL or an HTML file's path.
_WEB_TARGET = re.compile(r"^(?:https?://|file://|data:)|\.x?html?$", re.IGNORECASE)


@frozen
class ChromiumApp:
    path: str
    args: tuple[str, ...] | None = None


@frozen
class LaunchStep:
    """`launch`: a bare app id / target, or a per-platform map."""

    app: str | None = None
    apps: Mapping[str, str] = field(factory=dict, hash=False)
    chromium: ChromiumApp | None = None
    line: int = step_line()
    kind: ClassVar[str] = "launch"
    executor: ClassVar[str] = "launch"
    on_device: ClassVar[bool] = True

    def app_for(self, platform: str) -> str | None:
        """The app id or target to launch on ``platform``: a browser engine's own key, else the web
        target of the ``chromium:`` key, else the bare target (a browser never falls back to native)."""
        if engine_named(platform) is not None:
            own = self.apps.get(platform) if platform != WEB_LAUNCH_KEY else None
            if own is not None:
                return own
            if self.chromium is not None:
                return self.chromium.path
            return self.app
        if self.app is not None:
            return self.app
        return self.apps.get(platform) or self.apps.get("native")

    def web_target(self) -> str | None:
        """The bare target when it is a page a browser opens (a URL, an HTML file), not an app id:
        with no platform given and no device booted it runs on chromium (INTERFACE.md section 11)."""
        if self.app is not None and _WEB_TARGET.search(self.app):
            return self.app
        return None

    def label(self) -> str | None:
        return None

    def to_data(self) -> dict[str, Any]:
        return {"launch": _launch_to_data(self)}

    def summary(self) -> str:
        data = _launch_to_data(self)
        return f"launch: {data if isinstance(data, str) else js_json(data)}"


def _launch_to_data(step: LaunchStep) -> Any:
    if step.app is not None:
        return step.app
    data: dict[str, Any] = dict(step.apps)
    if step.chromium is not None:
        if step.chromium.args is None:
            data[WEB_LAUNCH_KEY] = step.chromium.path
        else:
            data[WEB_LAUNCH_KEY] = {"path": step.chromium.path, "args": list(step.chromium.args)}
    if not data:
        raise FlowError("Cannot serialize a launch step without an app id or a per-platform map")
    return data


def parse(nodes: Nodes, body: Any, line: int) -> LaunchStep:
    app = nodes.string(body)
    if app is not None:
        if not app:
            raise Reject(_GENERIC)
        return LaunchStep(app=app, line=line)
    mapping = nodes.mapping(body)
    if mapping is None or not mapping:
        raise Reject(_GENERIC)
    only_keys("launch", mapping, _LAUNCH_KEYS)
    apps: dict[str, str] = {}
    chromium: ChromiumApp | None = None
    for key, value_node in mapping.items():
        if key == WEB_LAUNCH_KEY:
            chromium = _chromium_app(nodes, value_node)
            continue
        value = nodes.string(value_node)
        if not value:
            raise Reject(_GENERIC)
        apps[key] = value
    return LaunchStep(apps=apps, chromium=chromium, line=line)


def _chromium_app(nodes: Nodes, node: Any) -> ChromiumApp:
    path = nodes.string(node)
    if path is not None:
        if not path:
            raise Reject(_GENERIC)
        return ChromiumApp(path=path)
    mapping = nodes.mapping(node)
    if mapping is None:
        raise Reject(_GENERIC)
    only_keys("launch.chromium", mapping, ("path", "args"))
    path = nodes.string(mapping.get("path"))
    if not path:
        raise Reject(_GENERIC)
    args: tuple[str, ...] | None = None
    if "args" in mapping:
        args = nodes.string_list(mapping["args"])
        if args is None:
            raise Reject(_GENERIC)
    return ChromiumApp(path=path, args=args)


def files(step: LaunchStep, tools: ToolFiles) -> tuple[Reference, ...]:
    """The browser targets: a page beside the flow when it is a relative path (its consumer decides)."""
    targets = dict.fromkeys(t for e in ENGINES if (t := step.app_for(e.platform)))
    return tuple(LaunchFile(target) for target in targets)


LAUNCH = Directive(key="launch", models=(LaunchStep,), parse=parse, files=files)
