"""ToolServerClient reads every answer in bounded memory: caps on a stream line, a body, JSON values
and nesting, and no decompression — each against a real aiohttp server on a socket, with small caps."""

from __future__ import annotations

import gzip
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from argent.client.base import ToolCallError
from argent.client.bounded import count_values, too_deep
from argent.client.session import ToolServerClient

ServerFactory = Callable[..., Awaitable[TestServer]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CAP = 1024
TAIL = (
    "; the client stopped reading. The tool may have run; check its effect before you run it again, and check "
    "the tool-server you are linked to."
)


async def serve(
    aiohttp_server: ServerFactory, call: Handler, tools: Handler | None = None
) -> tuple[str, list]:
    seen: list[dict[str, str]] = []

    async def listing(request: web.Request) -> web.StreamResponse:
        seen.append(dict(request.headers))
        return web.json_response({"tools": [{"name": "t"}]})

    async def called(request: web.Request) -> web.StreamResponse:
        seen.append(dict(request.headers))
        await request.read()
        return await call(request)

    app = web.Application()
    app.router.add_get("/tools", tools or listing)
    app.router.add_post("/tools/{name}", called)
    server = await aiohttp_server(app)
    return str(server.make_url("")).rstrip("/"), seen


def stream_of(*chunks: bytes) -> Handler:
    async def answer(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await resp.prepare(request)
        for chunk in chunks:
            await resp.write(chunk)
        await resp.write_eof()
        return resp

    return answer


def body_of(raw: bytes, *, chunked: bool = False, **headers: str) -> Handler:
    async def answer(request: web.Request) -> web.StreamResponse:
        if not chunked:
            return web.Response(body=raw, content_type="application/json", headers=headers)
        resp = web.StreamResponse(headers={"Content-Type": "application/json", **headers})
        await resp.prepare(request)
        for i in range(0, len(raw), 100):
            await resp.write(raw[i : i + 100])
        await resp.write_eof()
        return resp

    return answer


def client(url: str, **caps: int) -> ToolServerClient:
    return ToolServerClient(
        url, None, linked=True, **{"max_line_bytes": CAP, "max_result_bytes": CAP, **caps}
    )


def line(event: dict[str, Any]) -> bytes:
    return json.dumps(event).encode() + b"\n"


def result(data: Any) -> bytes:
    return line({"event": "result", "data": data})


async def call(url: str, *, streamed: bool = True, **caps: int) -> Any:
    seen: list[dict[str, Any]] = []
    async with client(url, **caps) as c:
        return await c.call("t", {}, on_progress=seen.append if streamed else None), seen


async def test_a_stream_line_over_the_cap_is_refused(aiohttp_server: ServerFactory) -> None:
    url, _ = await serve(aiohttp_server, stream_of(b'{"event":"progress","data":"' + b"x" * 600, b"x" * 600))
    with pytest.raises(ToolCallError) as info:
        await call(url)
    assert (
        info.value.message
        == "The tool-server's answer to t has a stream line over the 1024 bytes cap on one line" + TAIL
    )
    assert info.value.status == 502 and info.value.may_have_run


async def test_a_line_over_the_cap_is_refused_even_when_its_newline_arrived(
    aiohttp_server: ServerFactory,
) -> None:
    url, _ = await serve(aiohttp_server, stream_of(result("y" * 2000)))
    with pytest.raises(ToolCallError, match="has a stream line over the 1024 bytes cap"):
        await call(url)


async def test_lines_up_to_the_cap_and_many_in_one_chunk_are_read(aiohttp_server: ServerFactory) -> None:
    progress = b"".join(line({"event": "progress", "data": {"index": i}}) for i in range(200))
    last = result("z" * (CAP - len(result("")) + 1))
    assert len(last) - 1 == CAP  # exactly at the cap, newline excluded
    url, _ = await serve(aiohttp_server, stream_of(b"\n \n" + progress + last[:10], last[10:]))
    data, seen = await call(url)
    assert data == "z" * (CAP - len(result("")) + 1)
    assert [s["index"] for s in seen] == list(range(200))


@pytest.mark.parametrize("chunked", [False, True])
async def test_a_buffered_body_over_the_cap_is_refused(aiohttp_server: ServerFactory, chunked: bool) -> None:
    url, _ = await serve(aiohttp_server, body_of(json.dumps({"data": "x" * 2000}).encode(), chunked=chunked))
    with pytest.raises(ToolCallError) as info:
        await call(url, streamed=False)
    assert info.value.message == "The tool-server's answer to t is over the 1024 bytes cap on a result" + TAIL


async def test_an_error_body_over_the_cap_is_refused(aiohttp_server: ServerFactory) -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        return web.json_response({"error": "e" * 2000}, status=500)

    url, _ = await serve(aiohttp_server, answer)
    with pytest.raises(ToolCallError, match="is over the 1024 bytes cap on a result"):
        await call(url, streamed=False)


async def test_too_many_json_values_are_refused_before_parsing(aiohttp_server: ServerFactory) -> None:
    raw = result([{}] * 100)
    url, _ = await serve(aiohttp_server, stream_of(raw))
    cap = count_values(raw) - 1
    with pytest.raises(ToolCallError) as info:
        await call(url, max_values=cap)
    assert info.value.message == (
        f"The tool-server's answer to t holds more than {cap} JSON values, the cap on one answer" + TAIL
    )
    data, _ = await call(url, max_values=cap + 1)
    assert data == [{}] * 100


@pytest.mark.parametrize("depth", [300, 100_000])
async def test_json_nested_too_deep_is_refused(aiohttp_server: ServerFactory, depth: int) -> None:
    nested = b"[" * depth + b"]" * depth
    url, _ = await serve(aiohttp_server, body_of(b'{"data":' + nested + b"}"))
    with pytest.raises(ToolCallError) as info:
        await call(url, streamed=False, max_result_bytes=1 << 20, max_values=1 << 20)
    assert (
        info.value.message
        == "The tool-server's answer to t nests JSON deeper than 256 levels, the cap on one answer" + TAIL
    )


async def test_a_compressed_answer_is_never_decompressed(aiohttp_server: ServerFactory) -> None:
    bomb = gzip.compress(json.dumps({"data": "a" * (512 << 10)}).encode())
    assert len(bomb) < CAP
    url, seen = await serve(aiohttp_server, body_of(bomb, **{"Content-Encoding": "gzip"}))
    with pytest.raises(
        ToolCallError, match="with a body in the gzip content encoding, though the client asks"
    ):
        await call(url, streamed=False)  # refused as compressed, never decoded (nor read as JSON)
    assert [headers["Accept-Encoding"] for headers in seen] == ["identity", "identity"]


async def test_a_tool_listing_over_the_cap_is_refused(aiohttp_server: ServerFactory) -> None:
    async def huge(request: web.Request) -> web.StreamResponse:
        return web.json_response({"tools": [{"name": "t" * 2000}]})

    url, _ = await serve(aiohttp_server, body_of(b"{}"), tools=huge)
    async with client(url) as c:
        with pytest.raises(ToolCallError) as info:
            await c.list_tools()
    assert info.value.message == (
        f"GET {url}/tools failed: the answer is over the 1024 bytes cap on a result; is this an argent tool-server?"
    )


def test_the_value_count_bounds_every_shape() -> None:
    for value in ([{}] * 5, {"a": [1, 2, {"b": None}]}, "x,y:[{", [[[]]], 7):
        raw = json.dumps(value).encode()
        objects = raw.count(b"{") + raw.count(b"[")  # containers, plus at least one per scalar below
        assert count_values(raw) >= objects


def test_depth_is_checked_without_recursion() -> None:
    deep: Any = []
    for _ in range(50_000):
        deep = [deep]
    assert too_deep(deep, 256)
    assert not too_deep([[{"a": [1]}]], 4) and too_deep([[{"a": [1]}]], 3)
