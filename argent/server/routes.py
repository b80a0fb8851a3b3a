"""The tool-server's routes. Handlers stay thin: parse, call the tool layer, serialize."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from aiohttp import web

from argent import __version__
from argent.errors import CALL_TOO_LONG, ArgentError, InvalidToolInputError, PolicyRefusal
from argent.limits import ABORTED_CALL_GRACE_SECONDS, JSON_BODY_HEAD_BYTES, MAX_BODY_JSON_VALUES
from argent.link import issues
from argent.link.codec import event_to_wire, to_wire
from argent.link.models import (
    ErrorBody,
    Health,
    UploadAnswer,
)
from argent.runner.budget import StepBudget
from argent.server.body import read_body
from argent.server.file_inputs import ResolvedInputs, resolve_file_inputs
from argent.server.keys import CONFIG, INFLIGHT, REGISTRY, UPLOADS
from argent.server.openapi import openapi_body
from argent.server.policy_guard import call_policy, listing_body
from argent.server.stream import NdjsonStream, ReportLines, encode_result, result_body, wants_stream
from argent.tools.registry import ToolContext
from argent.utils.json_values import more_json_values_than

routes = web.RouteTableDef()


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    return web.json_response(to_wire(Health(ok=True, version=__version__)))


@routes.get("/tools")
async def list_tools(request: web.Request) -> web.Response:
    return web.Response(body=listing_body(request), content_type="application/json", charset="utf-8")


@routes.get("/openapi.json")
async def openapi(request: web.Request) -> web.Response:
    """This server described (OpenAPI 3.1), generated from the models it validates with."""
    return web.Response(body=openapi_body(request.app[REGISTRY]), content_type="application/json")


@routes.post("/upload")
async def upload(request: web.Request) -> web.Response:
    try:
        owner = call_policy(request).guard  # a named token's uploads count against its own cap too
        stored = await request.app[UPLOADS].receive(request.content, request.content_length, owner)
    except ArgentError as exc:
        # Answer now and drop the connection instead of reading the refused body to its end.
        response = web.json_response(to_wire(ErrorBody(exc.message)), status=exc.status)
        response.force_close()
        return response
    return web.json_response(to_wire(UploadAnswer(stored.upload_id)))


async def _json_body(request: web.Request) -> dict[str, Any]:
    config = request.app[CONFIG]
    limit = config.max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=request.content_length)
    raw = await read_body(request, max_bytes=limit, idle_seconds=config.body_idle_timeout_seconds)
    if not raw.strip():
        return {}
    try:
        if more_json_values_than(raw, MAX_BODY_JSON_VALUES):
            # Parsing it would hold the GIL for seconds; its head still tells a body nested too deep.
            with contextlib.suppress(ValueError):
                json.loads(raw[:JSON_BODY_HEAD_BYTES])
            raise _plain(
                400,
                f"Request body holds more than {MAX_BODY_JSON_VALUES:,} JSON values, the most one tool call "
                "takes. Send fewer arguments; a large file goes as a file input or through POST /upload.",
            )
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
        raise _plain(
            400, f"Request body is not valid JSON ({detail}). Send a JSON object of tool arguments."
        ) from None
    except RecursionError:
        raise _plain(
            400, "Request body nests JSON arrays or objects too deeply to parse. Send a flatter JSON object."
        ) from None
    if not isinstance(body, dict):
        found = [issues.invalid_type([], "object", body)]
        raise InvalidToolInputError(
            "Request body must be a JSON object of tool arguments.",
            issues=found,
            detail=issues.describe(found, body),
        )
    return body


class _PreInvokeError(Exception):
    """A check that failed before the tool started: plain JSON with its status, no codes."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _plain(status: int, message: str) -> _PreInvokeError:
    return _PreInvokeError(status, message)


@routes.post("/tools/{name}")
async def call_tool(request: web.Request) -> web.StreamResponse:
    registry = request.app[REGISTRY]
    name = request.match_info["name"]
    try:
        spec = registry.find(name)
        if spec is None:
            raise _plain(404, f'Tool "{name}" not found')
        body = await _json_body(request)
        resolved = await resolve_file_inputs(
            spec,
            body,
            uploads=request.app[UPLOADS],
            policy=call_policy(request),
            linked=request.headers.get("x-argent-linked") == "1",
        )
    except _PreInvokeError as exc:
        return web.json_response(to_wire(ErrorBody(exc.message)), status=exc.status)
    except PolicyRefusal as exc:
        return web.json_response(exc.to_wire(), status=exc.status)
    except InvalidToolInputError as exc:
        return web.json_response(to_wire(exc.schema_body()), status=exc.status)
    except ArgentError as exc:
        return web.json_response(to_wire(ErrorBody(exc.message)), status=exc.status)
    try:
        try:
            args = registry.parse_args(name, resolved.args)
        except InvalidToolInputError as exc:
            return web.json_response(to_wire(exc.schema_body()), status=400)
        return await _invoke(request, spec, args, resolved)
    finally:
        await resolved.cleanup()


async def _invoke(request: web.Request, spec: Any, args: Any, resolved: ResolvedInputs) -> web.StreamResponse:
    registry = request.app[REGISTRY]
    abort = asyncio.Event()
    stream = NdjsonStream(request) if wants_stream(request) else None
    lines = ReportLines()

    async def emit(event: Any) -> None:
        if stream is not None:
            if stream.queue(lines.progress_line(event)):
                await stream.drain()
            if stream.broken:
                abort.set()

    ctx = ToolContext(
        abort=abort,
        emit_progress=emit if stream is not None else None,
        file_inputs=resolved.metadata,
        linked=request.headers.get("x-argent-linked") == "1",
        flow_files=resolved.flow_files,
        step_members=resolved.step_members,
        policy=call_policy(request),
        budget=StepBudget(limit=request.app[CONFIG].policy.steps_per_call),
    )
    try:
        await registry.precheck(
            spec, args, ctx
        )  # a refusal answers plain JSON, also when streaming was asked
    except ArgentError as exc:
        return web.json_response(exc.to_wire(), status=exc.status)
    if stream is not None:
        await stream.open()
    inflight = request.app[INFLIGHT]
    inflight.add(abort)
    task = asyncio.create_task(registry.run(spec, args, ctx, checked=True))
    seconds = request.app[CONFIG].policy.seconds_per_call
    try:
        async with asyncio.timeout(seconds):
            result = await asyncio.shield(task)
    except TimeoutError:
        # Past the call's wall-clock bound: it unwinds as an aborted call would, and says why.
        abort.set()
        await _stop(task)
        return await _failure(request, stream, _too_long(spec.name, seconds).body(), 500)
    except ArgentError as exc:
        return await _failure(request, stream, exc.body(), exc.status)
    except asyncio.CancelledError:
        # aiohttp cancels the handler when its client hangs up (the runner's handler_cancellation)
        # and when shutdown's grace is over: the run gets a moment to unwind on its abort event
        # (its steps report `run aborted`, its device stops), then it is cancelled.
        abort.set()
        await _stop(task)
        raise
    finally:
        inflight.discard(abort)
    # A result can hold 100k step reports: converting and encoding it runs off the event loop,
    # in parts, so the thread never holds the GIL for long (see ``dumps_in_parts``).
    if stream is None:
        body = await encode_result(result_body, result)
        return web.Response(body=body, content_type="application/json", charset="utf-8")
    await stream.send_line(await encode_result(lines.result_line, result))
    await stream.close()
    return stream.response


def _too_long(tool: str, seconds: int) -> ArgentError:
    return ArgentError(
        f"{tool} ran for {seconds:,}s, the longest one call may run on this tool-server (limits.seconds_per_call), "
        "and was stopped: its remaining steps did not run. Split the flow, or shorten its waits.",
        error_code=CALL_TOO_LONG,
        error_kind="unavailable",
    )


async def _stop(task: asyncio.Task[Any]) -> None:
    """Wait ABORTED_CALL_GRACE_SECONDS for an aborted call to end, then cancel it."""
    with contextlib.suppress(BaseException):
        async with asyncio.timeout(ABORTED_CALL_GRACE_SECONDS):
            await asyncio.shield(task)
    if not task.done():
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


async def _failure(
    request: web.Request, stream: NdjsonStream | None, body: ErrorBody, status: int
) -> web.StreamResponse:
    if stream is None:
        return web.json_response(to_wire(body), status=status)
    await stream.send(event_to_wire(body))
    await stream.close()
    return stream.response
