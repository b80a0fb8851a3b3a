"""The scripts argent installs in a page's document, in argent's own world (an isolated world on
Chromium, a sandbox realm on Firefox): the page monitor, the form controls and the walker."""

from __future__ import annotations

import functools
import importlib.resources

from argent.devices.web.walker import walker_source


@functools.cache
def _source(name: str) -> str:
    return importlib.resources.files(__package__).joinpath(name).read_text(encoding="utf-8").strip()


def monitor_source() -> str:
    return _source("monitor.js")


def forms_source() -> str:
    return _source("forms.js")


@functools.cache
def world_source() -> str:
    """What a new world gets once: the monitor, the form controls, the walker compiled once as
    ``__argentWalk`` (a walk then costs no compile), and the frame ids of the iframes it marks
    (``frames``). An expression whose value is ``true``."""
    return (
        f"{monitor_source()};\n{forms_source()};\nglobalThis.__argentWalk = {walker_source()};\n"
        "globalThis.__argentFrameIds = new WeakMap();\ntrue"
    )
