"""``GET /openapi.json``: an OpenAPI 3.1 description of this tool-server, generated, not written.

Every schema in it comes from what the server validates and writes with: the wire models of
``argent.link.models`` under the codec's rules (``argent.link.schema``), and each tool's argument
schema (``ToolSpec.input_schema``, the ``inputSchema`` of ``GET /tools``), where a declared file
argument also takes the ``__argentFileInput`` object the server resolves. The answers each route
gives are the ones its code gives: the front guard's (Host, Origin, auth), the call gate's (a JSON
body, the token's tools and concurrent calls), the body reader's, and for a tool call the status
of every error class of ``argent.errors`` (an anticipated failure answers its class's status).

A tool the caller's token may not call is described all the same (it answers 403), so the
document is one per registry, built once and kept while the registry holds the same tools.
"""

from __future__ import annotations

import json
import re
import weakref
from http import HTTPStatus
from typing import Any

from argent import __version__, errors
from argent.link.codec import to_wire
from argent.link.models import (
    ErrorBody,
    FileInput,
    Health,
    ProgressEvent,
    ResultEvent,
    StepReport,
    ToolListing,
    UploadAnswer,
)
from argent.link.schema import SchemaSet, ref
from argent.server.stream import NDJSON
from argent.tools.registry import ToolRegistry, ToolSpec

OPENAPI_VERSION = "3.1.0"
#: The media types of a POST /upload body (the bytes of a gzipped tar, whatever the header says).
UPLOAD_MEDIA = ("application/gzip", "application/octet-stream")
#: The tag of the tools that boot or drive a browser (``ToolSpec.needs_browser``).
BROWSER_TAG = "browser"

#: What each error status means, wherever the server answers it.
STATUS_TEXT: dict[int, str] = {
    400: (
        "The request is malformed: the body is not a JSON object of the tool's arguments, the arguments do "
        "not fit its schema (`issues` names each problem, `message` says it per argument), or the Host "
        "header is missing."
    ),
    401: "Missing or wrong `Authorization: Bearer <token>`.",
    403: (
        "Refused before anything ran: a foreign `Origin` (`ORIGIN_REFUSED`), a Host the server does not "
        "accept, a tool the caller's token may not call (`TOOL_NOT_ALLOWED`), or a rule of the server's "
        "policy (`WORKSPACE_UNSAFE`, `LOCAL_FLOWS_DISABLED`, `SCRIPTS_DISABLED`)."
    ),
    404: "A tool that does not exist (the one called, or one the call names).",
    408: "The request body stalled: no bytes arrived within the server's idle timeout.",
    409: "The call would undo another caller's work (e.g. a recording another token holds); nothing changed.",
    413: "The body is over the server's limit (a large file goes through `POST /upload`).",
    415: "A tool call's body is not `application/json` (`BODY_NOT_JSON`).",
    422: "A file input or a member of the call cannot be resolved (`FILE_INPUT_INVALID`).",
    429: (
        "The caller's token runs as many calls at once as the server allows (`TOO_MANY_CALLS`, with "
        "`Retry-After`), or holds as many devices (`TOO_MANY_DEVICES`)."
    ),
    500: (
        "The tool ran and failed, as upstream argent answers: `error_code` and `error_kind` say why "
        "(e.g. `FLOW_FILE_INVALID`, `FLOW_RECORDING_NOT_ACTIVE`, `DEVICE_FAILED`)."
    ),
    503: "The server is shutting down; retry once it is back.",
    507: (
        "The server's temp dir refused a write (`SERVER_STORAGE_FULL`), or pending uploads are over their "
        "cap (`UPLOAD_STORAGE_FULL`); retry later."
    ),
}

#: Every route meets the Host check and the Origin check; every route but /healthz the token.
_FRONT = (400, 403)
_AUTHED = (*_FRONT, 401)
#: A body the server reads: stalled (408), over the limit (413), interrupted by shutdown (503).
_BODY = (408, 413, 503)
#: The call gate: not JSON (415), the token's concurrent calls (429); the arguments (400), a file
#: input (422), a disk that refused a write (507).
_CALL = (*_AUTHED, *_BODY, 415, 422, 429, 507)
_UPLOAD = (*_AUTHED, *_BODY, 507)


def tool_error_statuses() -> frozenset[int]:
    """The status of every error class of ``argent.errors``: a tool's anticipated failure answers
    its class's status (``ArgentError.status``)."""
    found = {
        value.status
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, errors.ArgentError)
    }
    return frozenset(found)


class _Builder:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.schemas = SchemaSet()
        self.responses: dict[str, Any] = {}

    def document(self) -> dict[str, Any]:
        # The lines every stream shares: a flow step's ``StepReport``, and the error line.
        self.schemas.schemas["ProgressLine"] = self.schemas.tagged(
            ProgressEvent, self.schemas.model(StepReport)
        )
        error_line = self.schemas.tagged(ErrorBody)
        self.schemas.schemas["ErrorLine"] = {**error_line, "required": [*error_line["required"], "error"]}
        paths: dict[str, Any] = {
            "/healthz": {"get": self._healthz()},
            "/tools": {"get": self._listing()},
            "/openapi.json": {"get": self._self()},
            "/upload": {"post": self._upload()},
        }
        for spec in self.registry:
            paths[f"/tools/{spec.name}"] = {"post": self._tool(spec)}
        return {
            "openapi": OPENAPI_VERSION,
            "info": {
                "title": "argent tool-server",
                "version": __version__,
                "description": (
                    "Call the tools of an argent tool-server over HTTP: `POST /tools/<name>` with a JSON "
                    'object of arguments answers `{"data": <result>}`, or, with `Accept: '
                    "application/x-ndjson`, streams one JSON object per line (progress lines, then one "
                    "result or error line). Every error is JSON: `{error, error_code?, error_kind?}`."
                ),
            },
            "tags": [
                {"name": "server", "description": "Health, the tool listing, this document, uploads."},
                {"name": "tools", "description": "One operation per tool."},
                {"name": BROWSER_TAG, "description": "Tools that boot or drive a browser."},
            ],
            "security": [{"bearer": []}],
            "paths": paths,
            "components": {
                "securitySchemes": {
                    "bearer": {
                        "type": "http",
                        "scheme": "bearer",
                        "description": "The token `argent server start` printed (or a named token of its --config).",
                    }
                },
                "schemas": self.schemas.schemas,
                "responses": self.responses,
            },
        }

    # ---------------------------------------------------------------------------------------
    # Responses

    def _json(self, schema: dict[str, Any], description: str) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    def _errors(self, statuses: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for status in sorted(set(statuses)):
            name = f"Error{status}"
            if name not in self.responses:
                text = STATUS_TEXT.get(status, HTTPStatus(status).phrase)
                answer = self._json({"allOf": [self.schemas.model(ErrorBody)], "required": ["error"]}, text)
                if status == 429:
                    answer["headers"] = {
                        "Retry-After": {
                            "description": "Seconds to wait before a retry (with `TOO_MANY_CALLS`).",
                            "schema": {"type": "string"},
                        }
                    }
                self.responses[name] = answer
            out[str(status)] = {"$ref": f"#/components/responses/{name}"}
        return out

    # ---------------------------------------------------------------------------------------
    # Operations

    def _healthz(self) -> dict[str, Any]:
        return {
            "operationId": "healthz",
            "tags": ["server"],
            "summary": "Liveness, for a balancer's or an orchestrator's probe (no token).",
            "security": [],
            "responses": {
                "200": self._json(self.schemas.model(Health), "The server is up; its version."),
                **self._errors(_FRONT),
            },
        }

    def _listing(self) -> dict[str, Any]:
        return {
            "operationId": "listTools",
            "tags": ["server"],
            "summary": "The tools, each with its argument schema; one the caller's token may not call is listed "
            "with `disabled`.",
            "responses": {
                "200": self._json(self.schemas.model(ToolListing), "The tools of this server."),
                **self._errors(_AUTHED),
            },
        }

    def _self(self) -> dict[str, Any]:
        return {
            "operationId": "openapi",
            "tags": ["server"],
            "summary": "This document.",
            "responses": {
                "200": self._json({"type": "object"}, "An OpenAPI 3.1 description of this server."),
                **self._errors(_AUTHED),
            },
        }

    def _upload(self) -> dict[str, Any]:
        return {
            "operationId": "upload",
            "tags": ["server"],
            "summary": "Store a gzipped tar for a later call (its file input or member names the `uploadId`): "
            "single use, kept 15 minutes.",
            # Archive validity is checked where a call uses the upload (422), as upstream: an empty body is
            # stored too.
            "requestBody": {
                "required": False,
                # The client sends application/gzip; the server reads the bytes whatever their type.
                "content": {
                    media: {"schema": {"type": "string", "format": "binary"}} for media in UPLOAD_MEDIA
                },
            },
            "responses": {
                "200": self._json(self.schemas.model(UploadAnswer), "Stored; the id a call names it by."),
                **self._errors(_UPLOAD),
            },
        }

    def _tool(self, spec: ToolSpec[Any]) -> dict[str, Any]:
        base = _component_name(spec.name)
        self.schemas.schemas[f"{base}Args"] = self._args(spec)
        result = self.schemas.of_type(spec.result_type) if spec.result_type is not None else {}
        if result:
            self.schemas.schemas[f"{base}Result"] = result
            result = ref(f"{base}Result")
        body = {
            "type": "object",
            "properties": {"data": result},
            "required": ["data"],
            "additionalProperties": False,
        }
        self.schemas.schemas[f"{base}ResultLine"] = self.schemas.tagged(ResultEvent, result)
        mapping = {
            "progress": ref("ProgressLine")["$ref"],
            "result": ref(f"{base}ResultLine")["$ref"],
            "error": ref("ErrorLine")["$ref"],
        }
        lines = {
            "oneOf": [{"$ref": target} for target in mapping.values()],
            "discriminator": {"propertyName": "event", "mapping": mapping},
        }
        operation: dict[str, Any] = {
            "operationId": _operation_id(spec.name),
            "tags": ["tools", BROWSER_TAG] if spec.needs_browser else ["tools"],
            "summary": spec.description,
            "requestBody": {
                "required": True,  # a call's body is JSON (`{}` for no arguments): 415 without it
                "content": {"application/json": {"schema": ref(f"{base}Args")}},
            },
            "responses": {
                "200": {
                    "description": (
                        "The tool's result as `data`; with `Accept: application/x-ndjson`, one JSON object per "
                        "line: a `progress` line per flow step, then one `result` or `error` line (a failure "
                        "once the stream is open is its last line, the status stays 200)."
                    ),
                    "content": {"application/json": {"schema": body}, NDJSON: {"schema": lines}},
                },
                **self._errors({*_CALL, *tool_error_statuses()}),
            },
            "x-argent-long-running": spec.long_running,
            "x-argent-needs-browser": spec.needs_browser,
        }
        if spec.file_inputs:
            operation["x-argent-file-inputs"] = [to_wire(item) for item in spec.file_inputs]
        return operation

    def _args(self, spec: ToolSpec[Any]) -> dict[str, Any]:
        """The tool's argument schema; a declared file argument also takes a file-input object."""
        schema = spec.input_schema()
        props = dict(schema.get("properties", {}))
        for item in spec.file_inputs:
            if item.target in props:
                props[item.target] = {"anyOf": [props[item.target], self.schemas.model(FileInput)]}
        return {**schema, "properties": props}


def _component_name(tool: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", tool) if part)


def _operation_id(tool: str) -> str:
    return "call" + _component_name(tool)


def openapi_document(registry: ToolRegistry) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a tool-server with these tools."""
    return _Builder(registry).document()


#: The document of each registry, as JSON, with the tool names it was built for.
_DOCUMENTS: weakref.WeakKeyDictionary[ToolRegistry, tuple[tuple[str, ...], bytes]] = (
    weakref.WeakKeyDictionary()
)


def openapi_body(registry: ToolRegistry) -> bytes:
    """``openapi_document`` as JSON, built once per registry (again only when a tool was registered)."""
    names = tuple(spec.name for spec in registry)
    kept = _DOCUMENTS.get(registry)
    if kept is not None and kept[0] == names:
        return kept[1]
    body = json.dumps(openapi_document(registry)).encode()
    _DOCUMENTS[registry] = (names, body)
    return body
