"""Child sessions of ``CdpSession`` (flat CDP sessions on one socket) against a DevTools peer on a
real loopback websocket: routing by ``sessionId``, and a child's end that leaves its parent alive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from argent.devices.base import DeviceError
from argent.devices.chromium.cdp import CdpSession, connect_session


class Peer:
    """A DevTools peer: ``Test.echo`` answers with the session it came on, ``Test.hang`` never
    answers, ``Test.emit`` sends its ``messages`` as they are; ``close()`` drops the socket."""

    def __init__(self) -> None:
        self.socket: web.WebSocketResponse | None = None
        #: Set once a ``Test.hang`` arrived (the request is then pending on our side).
        self.hung = asyncio.Event()

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.socket = ws
        async for msg in ws:
            data = json.loads(msg.data)
            method = data["method"]
            reply: dict[str, Any] = {"id": data["id"]}
            if "sessionId" in data:
                reply["sessionId"] = data["sessionId"]
            if method == "Test.hang":
                self.hung.set()
                continue
            if method == "Test.emit":
                for message in data["params"]["messages"]:
                    await ws.send_str(json.dumps(message))
            reply["result"] = {"session": data.get("sessionId")}
            await ws.send_str(json.dumps(reply))
        return ws

    async def close(self) -> None:
        assert self.socket is not None
        await self.socket.close()


@pytest.fixture
async def peer_session() -> AsyncIterator[tuple[Peer, CdpSession]]:
    peer = Peer()
    app = web.Application()
    app.router.add_get("/devtools", peer.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]

    async def death(cause: str) -> str:
        return f"dead: {cause}"

    async with aiohttp.ClientSession() as http:
        session = await connect_session(
            http, f"ws://127.0.0.1:{port}/devtools", label="page", describe_death=death
        )
        try:
            yield peer, session
        finally:
            await session.close()
            await runner.cleanup()


def event(method: str, params: dict[str, Any], session: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"method": method, "params": params}
    if session is not None:
        out["sessionId"] = session
    return out


async def test_a_child_speaks_on_its_own_session_and_hears_only_its_events(
    peer_session: tuple[Peer, CdpSession],
) -> None:
    _peer, root = peer_session
    child = root.attach("S1", "page frame")
    assert root.attach("S1", "again") is child
    assert await child.send("Test.echo") == {"session": "S1"}
    assert await root.send("Test.echo") == {"session": None}
    heard: dict[str, list[Any]] = {"root": [], "child": []}
    root.on("Test.event", lambda p: heard["root"].append(p["n"]))
    child.on("Test.event", lambda p: heard["child"].append(p["n"]))
    await root.send(
        "Test.emit",
        {
            "messages": [
                event("Test.event", {"n": 1}),
                event("Test.event", {"n": 2}, "S1"),
                event("Test.event", {"n": 3}, "S-unknown"),
            ]
        },
    )
    assert heard == {"root": [1], "child": [2]}


async def test_a_detached_child_fails_what_it_waits_for_and_its_parent_goes_on(
    peer_session: tuple[Peer, CdpSession],
) -> None:
    peer, root = peer_session
    child = root.attach("S1", "page frame")
    hanging = asyncio.ensure_future(child.send("Test.hang"))
    await peer.hung.wait()
    await root.send("Test.emit", {"messages": [event("Target.detachedFromTarget", {"sessionId": "S1"})]})
    with pytest.raises(DeviceError, match=r"^The frame of Chromium \(page frame\) was detached\.$"):
        await hanging
    assert not child.alive
    with pytest.raises(DeviceError, match="was detached"):
        await child.send("Test.echo")
    assert await root.send("Test.echo") == {"session": None}
    assert root.attach("S1", "reattached") is not child  # a new attach of that id is a new session


async def test_a_crashed_frame_renderer_ends_its_child_alone(peer_session: tuple[Peer, CdpSession]) -> None:
    _peer, root = peer_session
    child = root.attach("S1", "page frame")
    await root.send("Test.emit", {"messages": [event("Inspector.targetCrashed", {}, "S1")]})
    assert not child.alive and child.death == "Chromium (page frame): its page renderer crashed."
    assert root.alive and await root.send("Test.echo") == {"session": None}


async def test_the_socket_closing_ends_every_child(peer_session: tuple[Peer, CdpSession]) -> None:
    peer, root = peer_session
    child = root.attach("S1", "page frame")
    hanging = asyncio.ensure_future(child.send("Test.hang"))
    await peer.hung.wait()
    await peer.close()
    with pytest.raises(DeviceError, match=r"^dead: its DevTools socket closed$"):
        await hanging
    assert not root.alive and not child.alive
    late = root.attach("S2", "late")
    assert late.death == "dead: its DevTools socket closed"
