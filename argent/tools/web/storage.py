"""``chromium-cookies`` and ``chromium-storage``: a Chromium page's cookies (CDP Network domain, so
HttpOnly ones too) and its localStorage / sessionStorage (evaluated in the active page's origin)."""

from __future__ import annotations

import json
from typing import Any, Literal

from attrs import frozen

from argent.devices.base import DeviceError, DeviceProvider
from argent.devices.web.page import DevToolsPage
from argent.errors import ToolExecutionError
from argent.tools.args import arg
from argent.tools.registry import ToolContext, ToolSpec
from argent.tools.web.common import CHROMIUM_UDID_DOC, devtools_device, param_error, web_spec


@frozen
class CookiesArgs:
    udid: str = arg(doc=CHROMIUM_UDID_DOC)
    action: Literal["get", "set", "delete", "clear"] = arg(
        doc="get: read cookies. set: create/update a cookie. delete: remove a named cookie. clear: remove all "
        "browser cookies."
    )
    name: str | None = arg(None, doc="set/delete: cookie name.")
    value: str | None = arg(None, doc="set: cookie value.")
    url: str | None = arg(
        None,
        doc="get: restrict to these URLs (defaults to the active page). set/delete: scope the cookie by URL.",
    )
    domain: str | None = arg(None, doc="set/delete: scope the cookie by domain (alt to url).")
    path: str | None = arg(None, doc="set/delete: cookie path (default /).")
    secure: bool | None = arg(None, doc="set: mark Secure.")
    http_only: bool | None = arg(None, wire="httpOnly", doc="set: mark HttpOnly.")
    same_site: Literal["Strict", "Lax", "None"] | None = arg(
        None, wire="sameSite", doc="set: SameSite policy."
    )
    expires: float | None = arg(
        None, doc="set: expiry as a Unix timestamp (seconds). Omit for a session cookie."
    )


@frozen
class StorageArgs:
    udid: str = arg(doc=CHROMIUM_UDID_DOC)
    store: Literal["local", "session"] = arg(
        doc="Which Web Storage area: `local` (localStorage) or `session` (sessionStorage)."
    )
    action: Literal["get", "set", "remove", "clear"] = arg(
        doc="get: read one key (with `key`) or all entries. set: write `key`=`value`. remove: delete `key`. "
        "clear: empty the store."
    )
    key: str | None = arg(None, doc="get (optional) / set / remove: the storage key.")
    value: str | None = arg(None, doc="set: the value to store.")


def _present(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


async def cookies_action(device: DevToolsPage, args: CookiesArgs) -> dict[str, Any]:
    session = device.devtools
    if args.action == "get":
        reply = await session.send("Network.getCookies", {"urls": [args.url]} if args.url else {})
        cookies = reply.get("cookies") if isinstance(reply.get("cookies"), list) else []
        return {"cookies": cookies, "count": len(cookies or [])}
    if args.action == "set":
        if not args.name or args.value is None:
            raise param_error("`set` requires `name` and `value`.")
        if not args.url and not args.domain:
            raise param_error("setCookie requires either `url` or `domain` to scope the cookie.")
        params = _present(
            name=args.name,
            value=args.value,
            url=args.url,
            domain=args.domain,
            path=args.path,
            secure=args.secure,
            httpOnly=args.http_only,
            sameSite=args.same_site,
            expires=args.expires,
        )
        reply = await session.send("Network.setCookie", params)
        return {"set": reply.get("success") is True}
    if args.action == "delete":
        if not args.name:
            raise param_error("`delete` requires `name`.")
        await session.send(
            "Network.deleteCookies",
            _present(name=args.name, url=args.url, domain=args.domain, path=args.path),
        )
        return {"deleted": True}
    await session.send("Network.clearBrowserCookies")
    return {"cleared": True}


async def _storage_eval(device: DevToolsPage, expression: str) -> Any:
    try:
        return await device.devtools.evaluate(expression)
    except DeviceError as exc:
        if not device.devtools.alive:
            raise
        raise ToolExecutionError(
            f"Storage evaluation failed: {exc}", error_code="CHROMIUM_STORAGE_EVAL_FAILED"
        ) from None


async def storage_action(device: DevToolsPage, args: StorageArgs) -> dict[str, Any]:
    store = "localStorage" if args.store == "local" else "sessionStorage"
    key = json.dumps(args.key)
    if args.action == "get":
        if args.key is not None:
            value = await _storage_eval(device, f"{store}.getItem({key})")
            return {"value": value if isinstance(value, str) else None}
        entries = await _storage_eval(
            device,
            f"(() => {{ const s = {store}; const o = {{}}; for (let i = 0; i < s.length; i++) "
            "{ const k = s.key(i); o[k] = s.getItem(k); } return o; })()",
        )
        entries = entries if isinstance(entries, dict) else {}
        return {"entries": entries, "count": len(entries)}
    if args.action == "set":
        if args.key is None or args.value is None:
            raise param_error("`set` requires `key` and `value`.")
        await _storage_eval(device, f"{store}.setItem({key}, {json.dumps(args.value)})")
        return {"set": True}
    if args.action == "remove":
        if args.key is None:
            raise param_error("`remove` requires `key`.")
        await _storage_eval(device, f"{store}.removeItem({key})")
        return {"removed": True}
    await _storage_eval(device, f"{store}.clear()")
    return {"cleared": True}


def storage_tools(devices: DeviceProvider) -> list[ToolSpec[Any]]:
    async def cookies(args: CookiesArgs, ctx: ToolContext) -> Any:
        return await cookies_action(await devtools_device(devices, args.udid, "chromium-cookies"), args)

    async def storage(args: StorageArgs, ctx: ToolContext) -> Any:
        return await storage_action(await devtools_device(devices, args.udid, "chromium-storage"), args)

    return [
        web_spec(
            "chromium-cookies",
            "Read and write the cookies of a Chromium device (CDP Network domain, so HttpOnly cookies are included).\n"
            '- action="get" (url?): list cookies, optionally for one URL (default: the active page).\n'
            '- action="set" (name, value, + url OR domain, optional path/secure/httpOnly/sameSite/expires).\n'
            '- action="delete" (name, + url/domain/path). action="clear": remove ALL browser cookies.\n'
            "Returns { cookies, count } for get, else { set } / { deleted } / { cleared }.",
            CookiesArgs,
            cookies,
            search_hint="cookies cookie get set delete clear httponly samesite session auth chromium",
        ),
        web_spec(
            "chromium-storage",
            "Read and write localStorage / sessionStorage of a Chromium device's active page (its origin).\n"
            '- action="get": with `key`, that value; without, all entries. action="set" (key, value). '
            'action="remove" (key). action="clear".\n'
            "Returns { value } for one key, { entries, count } for all, else { set } / { removed } / { cleared }.",
            StorageArgs,
            storage,
            search_hint="storage localstorage sessionstorage local session get set remove clear key value chromium",
        ),
    ]
