"""Setting the files of a Chromium page's file input (``argent.devices.web.file_inputs`` finds it):
``DOM.setFileInputFiles`` sets them; Chromium fires ``input`` and ``change`` as for a real pick."""

from __future__ import annotations

from collections.abc import Sequence

from argent.devices.base import DeviceError
from argent.devices.chromium.cdp import CdpSession
from argent.devices.web.file_inputs import (
    AT_POINT,
    DISABLED,
    FIND_INPUT,
    NOT_A_FILE_INPUT,
    NOTHING_THERE,
    ONE_FILE_ONLY,
    STATE,
)

_GROUP = "argent-file-input"


async def set_input_files(session: CdpSession, px: float, py: float, paths: Sequence[str]) -> None:
    """Set ``paths`` (files on this host) into the file input at the CSS pixel (px, py); raises
    ``DeviceError`` naming what is there when it is not one, or why it takes none of these."""
    try:
        point = await session.send(
            "Runtime.evaluate",
            {"expression": f"{AT_POINT}({px!r}, {py!r})", "objectGroup": _GROUP},
        )
        element = (point.get("result") or {}).get("objectId")
        if not isinstance(element, str):
            raise DeviceError(NOTHING_THERE)
        found = await session.send(
            "Runtime.callFunctionOn",
            {"objectId": element, "functionDeclaration": FIND_INPUT, "objectGroup": _GROUP},
        )
        result = found.get("result") or {}
        target = result.get("objectId")
        if result.get("subtype") != "node" or not isinstance(target, str):
            raise DeviceError(NOT_A_FILE_INPUT.format(what=result.get("value") or "an unknown node"))
        state = await session.send(
            "Runtime.callFunctionOn",
            {"objectId": target, "functionDeclaration": STATE, "returnByValue": True},
        )
        value = (state.get("result") or {}).get("value") or {}
        if value.get("disabled") is True:
            raise DeviceError(DISABLED)
        if len(paths) > 1 and value.get("multiple") is not True:
            raise DeviceError(ONE_FILE_ONLY.format(count=len(paths)))
        await session.send("DOM.setFileInputFiles", {"files": list(paths), "objectId": target})
    finally:
        if session.alive:
            await session.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
