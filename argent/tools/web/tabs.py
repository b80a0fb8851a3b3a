"""``chromium-tabs``: list, select, open and close the pages (tabs) of a Chromium device.

Tabs get stable ids ``t1``, ``t2``, … per device, never reused, and optional labels, as upstream's.
Selecting a tab re-points the device's CDP session, so every other tool follows it; its network and
console recordings follow too.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any, Literal

from attrs import define, field, frozen

from argent import limits
from argent.devices.base import DeviceError, DeviceProvider
from argent.devices.web.page import DevToolsPage
from argent.errors import ToolExecutionError
from argent.tools.args import arg
from argent.tools.device_tools.base import launch_url
from argent.tools.registry import ToolContext, ToolSpec
from argent.tools.web.common import CHROMIUM_UDID_DOC, devtools_device, param_error, web_spec

#: How long a tab opened with Target.createTarget gets to appear in /json/list.
NEW_TAB_TIMEOUT_SECONDS = 5.0


@frozen
class TabsArgs:
    udid: str = arg(doc=CHROMIUM_UDID_DOC)
    action: Literal["list", "select", "new", "close"] = arg(
        doc="list: enumerate tabs/windows. select: make a tab active (every other tool then acts on it). new: "
        "open a tab. close: close a tab."
    )
    tab: str | None = arg(
        None,
        doc="Target tab for `select` / `close`: a tabId like `t2` or a label. `close` defaults to the active tab.",
    )
    url: str | None = arg(None, doc="`new` only: URL to open (defaults to about:blank).")
    label: str | None = arg(None, doc="`new` only: a memorable label usable interchangeably with the tabId.")


@define
class TabBook:
    """The stable tab ids and labels of one device."""

    by_target: dict[str, str] = field(factory=dict)
    labels: dict[str, str] = field(factory=dict)  # label -> tabId
    ordinal: int = 0

    def tab_id(self, target_id: str) -> str:
        known = self.by_target.get(target_id)
        if known is None:
            self.ordinal += 1
            known = self.by_target[target_id] = f"t{self.ordinal}"
        return known

    def prune(self, live: set[str]) -> None:
        for target_id in [t for t in self.by_target if t not in live]:
            self.forget(target_id)

    def forget(self, target_id: str) -> None:
        tab_id = self.by_target.pop(target_id, None)
        for label in [name for name, tid in self.labels.items() if tid == tab_id]:
            del self.labels[label]

    def label_of(self, tab_id: str) -> str | None:
        return next((name for name, tid in self.labels.items() if tid == tab_id), None)

    def resolve(self, ref: str, targets: list[dict[str, Any]]) -> dict[str, Any]:
        want = self.labels.get(ref, ref)
        for target in targets:
            if self.by_target.get(str(target["id"])) == want or target["id"] == ref:
                return target
        raise ToolExecutionError(
            f'No tab matches "{ref}". Use `chromium-tabs action=list` to see current tabIds and labels.',
            error_code="CHROMIUM_TAB_NOT_FOUND",
            error_kind="not_found",
        )


_BOOKS: weakref.WeakKeyDictionary[DevToolsPage, TabBook] = weakref.WeakKeyDictionary()


def book_of(device: DevToolsPage) -> TabBook:
    book = _BOOKS.get(device)
    if book is None:
        book = _BOOKS[device] = TabBook()
    return book


def tab_infos(device: DevToolsPage, targets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    book = book_of(device)
    out: list[dict[str, Any]] = []
    for target in targets:
        tab_id = book.tab_id(str(target["id"]))
        info: dict[str, Any] = {
            "tabId": tab_id,
            "targetId": target["id"],
            "title": str(target.get("title", "")),
            "url": str(target.get("url", "")),
            "active": target["id"] == device.target_id,
        }
        label = book.label_of(tab_id)
        if label:
            info["label"] = label
        out.append(info)
    return out


async def listed(device: DevToolsPage) -> list[dict[str, Any]]:
    targets = await device.page_targets()
    book_of(device).prune({str(t["id"]) for t in targets})
    return targets


async def activate(device: DevToolsPage, target: dict[str, Any]) -> None:
    if target["id"] != device.target_id:
        await device.switch_target(str(target["id"]), str(target["webSocketDebuggerUrl"]))


TAB_LIMIT = (
    "This device has {count} tabs open, the most one device may have (MAX_CHROMIUM_TABS = {limit}). Close "
    "tabs you no longer need (action=close), then open this one."
)


async def open_tab(device: DevToolsPage, url: str | None, label: str | None) -> list[dict[str, Any]]:
    """Open ``url`` (checked as open-url checks it) in a new tab, within ``MAX_CHROMIUM_TABS``."""
    page = launch_url(url) if url else "about:blank"
    count = len(await listed(device))
    if count >= limits.MAX_CHROMIUM_TABS:
        raise ToolExecutionError(
            TAB_LIMIT.format(count=count, limit=limits.MAX_CHROMIUM_TABS),
            error_code="CHROMIUM_TAB_LIMIT",
            error_kind="validation",
        )
    try:
        created = await device.browser_call("Target.createTarget", {"url": page})
    except DeviceError as exc:
        raise ToolExecutionError(
            f"Could not open a tab: {exc}", error_code="CHROMIUM_TAB_OPEN_FAILED", error_kind="unknown"
        ) from None
    target_id = created.get("targetId")
    if not isinstance(target_id, str):
        raise ToolExecutionError(
            "Target.createTarget returned no targetId.", error_code="CHROMIUM_TAB_OPEN_FAILED"
        )
    book = book_of(device)
    tab_id = book.tab_id(target_id)
    if label:
        book.labels[label] = tab_id
    deadline = time.monotonic() + NEW_TAB_TIMEOUT_SECONDS
    while True:  # no event says when /json/list shows the new target: poll it, bounded
        targets = await listed(device)
        found = next((t for t in targets if t["id"] == target_id), None)
        if found is not None:
            await activate(device, found)
            return tab_infos(device, targets)
        if time.monotonic() > deadline:
            raise ToolExecutionError(
                f"The new tab {tab_id} did not appear in Chromium's target list within "
                f"{NEW_TAB_TIMEOUT_SECONDS:g}s.",
                error_code="CHROMIUM_TAB_OPEN_FAILED",
            )
        await asyncio.sleep(0.05)


async def close_tab(device: DevToolsPage, ref: str | None) -> list[dict[str, Any]]:
    targets = await listed(device)
    book = book_of(device)
    target = (
        book.resolve(ref, targets) if ref else next((t for t in targets if t["id"] == device.target_id), None)
    )
    if target is None:
        raise param_error("The active tab is gone; pass `tab` (see `chromium-tabs action=list`).")
    others = [t for t in targets if t["id"] != target["id"]]
    if target["id"] == device.target_id:
        if not others:
            raise ToolExecutionError(
                "Cannot close the only tab of the device: its page session would end with it. Open another tab "
                "first (action=new), or stop the device with stop-device.",
                error_code="CHROMIUM_TAB_LAST",
                error_kind="validation",
            )
        await activate(device, others[0])
    target_id = str(target["id"])
    await device.browser_call("Target.closeTarget", {"targetId": target_id}, destroys=target_id)
    book.forget(target_id)
    return tab_infos(device, await listed(device))


def tab_tools(devices: DeviceProvider) -> list[ToolSpec[Any]]:
    async def tabs(args: TabsArgs, ctx: ToolContext) -> Any:
        device = await devtools_device(devices, args.udid, "chromium-tabs")
        if args.action == "list":
            return {"tabs": tab_infos(device, await listed(device))}
        if args.action == "select":
            if not args.tab:
                raise param_error("`select` requires `tab` (a tabId like `t2` or a label).")
            targets = await listed(device)
            await activate(device, book_of(device).resolve(args.tab, targets))
            return {"tabs": tab_infos(device, targets)}
        if args.action == "new":
            return {"tabs": await open_tab(device, args.url, args.label)}
        return {"tabs": await close_tab(device, args.tab)}

    async def page_readable(args: TabsArgs, ctx: ToolContext) -> None:
        if ctx.policy is not None and args.action == "new" and args.url:
            await ctx.policy.check_page(args.url)

    return [
        web_spec(
            "chromium-tabs",
            "List and switch the tabs of a Chromium device, and open or close them.\n"
            '- action="list": page targets with stable ids (`t1`, `t2`, …), title, url, and which is active.\n'
            '- action="select" (tab=<tabId|label>): make that tab the active one; describe, gesture-tap, '
            "screenshot, open-url, debugger-evaluate and the other tools then act on it.\n"
            '- action="new" (url?, label?): open a new tab and make it active.\n'
            '- action="close" (tab?): close a tab (default: the active one); when the active tab closes, '
            "another becomes active. The only tab cannot be closed (stop the device instead).\n"
            "Returns { tabs: [{ tabId, targetId, title, url, active, label? }] }.",
            TabsArgs,
            tabs,
            precheck=page_readable,
            search_hint="tab tabs window windows switch select close new open multi-tab chromium electron",
        )
    ]
