"""GET /openapi.json (INTERFACE.md section 13): a valid OpenAPI 3.1 document of this server, generated
from the models it validates with, and the answers the real server gives match it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from argent.devices.chromium.provider import ChromiumDeviceProvider
from argent.link.models import FileInput, FlowRunResult, StepReport
from argent.link.schema import SchemaSet
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.openapi import openapi_body, tool_error_statuses
from argent.server.policy import ServerPolicy, TokenRule
from argent.tools.builtin import build_registry
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec

TOKEN = "openapi-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CI_TOKEN = "ci-token-0123456789abcdef"
#: Every error status INTERFACE.md section 13 names for a tool call.
CALL_ERRORS = {400, 401, 403, 404, 409, 413, 415, 422, 429, 507}


def registry() -> ToolRegistry:
    return build_registry(devices=ChromiumDeviceProvider())


@pytest.fixture
async def client(aiohttp_client: Any, tmp_path: Path) -> TestClient[Any, Any]:
    config = ServerConfig(token=TOKEN, tmp_dir=str(tmp_path / "srv"))
    (tmp_path / "srv").mkdir()
    return await aiohttp_client(create_app(config, registry()))  # type: ignore[no-any-return]


async def document(client: TestClient[Any, Any], headers: dict[str, str] = AUTH) -> dict[str, Any]:
    resp = await client.get("/openapi.json", headers=headers)
    assert resp.status == 200 and resp.content_type == "application/json"
    return await resp.json()  # type: ignore[no-any-return]


def conforms(doc: dict[str, Any], pointer: str, value: Any) -> None:
    """``value`` is valid under the schema at ``pointer`` of the document (its $refs resolved in it)."""
    resource = Resource.from_contents(doc, default_specification=DRAFT202012)
    refs = Registry().with_resource("urn:argent:openapi", resource)
    validator = Draft202012Validator({"$ref": f"urn:argent:openapi#{pointer}"}, registry=refs)
    errors = sorted(validator.iter_errors(value), key=str)
    assert not errors, f"{pointer}: {[e.message for e in errors[:3]]} in {json.dumps(value)[:500]}"


def answer_schema(doc: dict[str, Any], path: str, method: str, status: int, media: str) -> str:
    """The JSON pointer of the schema of one documented answer (through a shared response)."""
    answer = doc["paths"][path][method]["responses"][str(status)]
    if "$ref" in answer:
        name = answer["$ref"].rsplit("/", 1)[1]
        return f"/components/responses/{name}/content/{media.replace('/', '~1')}/schema"
    escaped = path.replace("~", "~0").replace("/", "~1")
    return f"/paths/{escaped}/{method}/responses/{status}/content/{media.replace('/', '~1')}/schema"


async def test_the_document_is_valid_openapi_31_and_needs_the_token(client: TestClient[Any, Any]) -> None:
    assert (await client.get("/openapi.json")).status == 401
    doc = await document(client)
    validate(doc)
    assert doc["openapi"] == "3.1.0"
    assert doc["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The token `argent server start` printed (or a named token of its --config).",
    }
    assert doc["paths"]["/healthz"]["get"]["security"] == []


async def test_every_route_and_one_operation_per_tool_with_the_schema_get_tools_lists(
    client: TestClient[Any, Any],
) -> None:
    doc = await document(client)
    listed = {
        tool["name"]: tool for tool in (await (await client.get("/tools", headers=AUTH)).json())["tools"]
    }
    assert set(doc["paths"]) == {"/healthz", "/tools", "/openapi.json", "/upload"} | {
        f"/tools/{name}" for name in listed
    }
    for name, tool in listed.items():
        operation = doc["paths"][f"/tools/{name}"]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        args = doc["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
        targets = {item["target"] for item in tool.get("fileInputs", [])}
        expected = dict(tool["inputSchema"]["properties"])
        for target in targets & set(expected):
            # A file argument also takes the file-input object the server resolves.
            expected[target] = {"anyOf": [expected[target], {"$ref": "#/components/schemas/FileInput"}]}
        assert {**args, "properties": expected} == args, name
        assert {key: value for key, value in args.items() if key != "properties"} == {
            key: value for key, value in tool["inputSchema"].items() if key != "properties"
        }
        assert set(operation["responses"]["200"]["content"]) == {"application/json", "application/x-ndjson"}
        assert operation["x-argent-long-running"] is tool.get("longRunning", False)


async def test_every_error_a_call_can_answer_is_documented_with_the_error_body(
    client: TestClient[Any, Any],
) -> None:
    doc = await document(client)
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            statuses = {int(code) for code in operation["responses"] if code != "200"}
            expected = {400, 403} if path == "/healthz" else {400, 401, 403}
            if path == "/upload":
                expected |= {408, 413, 503, 507}
            if path.startswith("/tools/"):
                expected |= CALL_ERRORS - {409} | tool_error_statuses() | {408, 500, 503}
            assert statuses == expected, (method, path)
            for status in statuses:
                name = operation["responses"][str(status)]["$ref"].rsplit("/", 1)[1]
                schema = doc["components"]["responses"][name]["content"]["application/json"]["schema"]
                assert schema == {
                    "allOf": [{"$ref": "#/components/schemas/ErrorBody"}],
                    "required": ["error"],
                }
    error_body = doc["components"]["schemas"]["ErrorBody"]["properties"]
    assert {"error", "error_code", "error_kind"} <= set(error_body)


async def test_the_tools_that_boot_or_drive_a_browser_are_tagged(client: TestClient[Any, Any]) -> None:
    doc = await document(client)
    tagged = {
        path for path, item in doc["paths"].items() if "browser" in item.get("post", {}).get("tags", [])
    }
    assert {"/tools/boot-device", "/tools/describe", "/tools/open-url", "/tools/gesture-tap"} <= tagged
    assert not tagged & {
        "/tools/flow-execute",
        "/tools/flow-start-recording",
        "/tools/list-devices",
        "/tools/stop-device",
        "/tools/screenshot-diff",
    }


async def test_a_tool_the_token_may_not_call_is_still_described(aiohttp_client: Any, tmp_path: Path) -> None:
    policy = ServerPolicy(tokens=(TokenRule("ci", CI_TOKEN, ("flow-execute",)),))
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path), policy=policy), registry()))
    doc = await document(client, {"Authorization": f"Bearer {CI_TOKEN}"})
    assert "/tools/boot-device" in doc["paths"] and "/tools/flow-add-echo" in doc["paths"]
    refused = await client.post(
        "/tools/boot-device", json={}, headers={"Authorization": f"Bearer {CI_TOKEN}"}
    )
    assert refused.status == 403
    conforms(
        doc, answer_schema(doc, "/tools/boot-device", "post", 403, "application/json"), await refused.json()
    )


async def test_the_real_answers_match_the_document(client: TestClient[Any, Any], tmp_path: Path) -> None:
    doc = await document(client)
    answers: list[tuple[str, str, Any, int, Any]] = []

    async def call(method: str, path: str, **kwargs: Any) -> None:
        resp = await client.request(method, path, **kwargs)
        answers.append((path, method.lower(), resp.status, resp.content_type, await resp.json()))

    await call("GET", "/healthz")
    await call("GET", "/tools", headers=AUTH)
    await call("GET", "/tools")  # 401
    await call("POST", "/upload", data=gzip.compress(b"not a tar"), headers=AUTH)
    await call("POST", "/tools/flow-add-echo", data="{}", headers=AUTH)  # 415: no content type
    await call("POST", "/tools/flow-execute", json={"name": "x", "bogus": 1}, headers=AUTH)  # 400
    await call(
        "POST", "/tools/flow-execute", json={"name": "x", "project_root": "/proc"}, headers=AUTH
    )  # 403
    await call(
        "POST",
        "/tools/flow-execute",
        json={"name": "absent", "project_root": str(tmp_path / "proj")},
        headers=AUTH,
    )  # 500: a tool's failure
    await call(
        "POST",
        "/tools/flow-execute",
        json={
            "flow_path": {"__argentFileInput": True, "path": "/nowhere/x.yaml"},
            "project_root": str(tmp_path),
        },
        headers=AUTH,
    )  # 422
    await call("POST", "/tools/list-devices", json={}, headers=AUTH)
    statuses = {status for _, _, status, _, _ in answers}
    assert statuses == {200, 400, 401, 403, 415, 422, 500}
    for path, method, status, media, body in answers:
        conforms(doc, answer_schema(doc, path, method, status, media), body)


async def test_a_streamed_run_is_lines_of_the_documented_union(
    client: TestClient[Any, Any], tmp_path: Path
) -> None:
    doc = await document(client)
    flows = tmp_path / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "hello.yaml").write_text("steps:\n  - echo: one\n  - wait: 1\n")
    resp = await client.post(
        "/tools/flow-execute",
        json={"name": "hello", "project_root": str(tmp_path / "proj")},
        headers={**AUTH, "Accept": "application/x-ndjson"},
    )
    assert resp.status == 200 and resp.content_type == "application/x-ndjson"
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert [line["event"] for line in lines] == ["progress", "progress", "result"]
    pointer = answer_schema(doc, "/tools/flow-execute", "post", 200, "application/x-ndjson")
    for line in lines:
        conforms(doc, pointer, line)
    buffered = await client.post(
        "/tools/flow-execute", json={"name": "hello", "project_root": str(tmp_path / "proj")}, headers=AUTH
    )
    conforms(
        doc, answer_schema(doc, "/tools/flow-execute", "post", 200, "application/json"), await buffered.json()
    )
    # A line of another event, or a result that is no run, is not of the union.
    with pytest.raises(AssertionError):
        conforms(doc, pointer, {"event": "result", "data": {"flow": "hello"}})
    with pytest.raises(AssertionError):
        conforms(doc, pointer, {"event": "done"})


@attrs.frozen
class NoArgs:
    pass


async def late(args: NoArgs, ctx: ToolContext) -> None:
    return None


def test_the_document_is_built_once_per_registry_and_again_for_a_new_tool() -> None:
    tools = registry()
    first = openapi_body(tools)
    assert openapi_body(tools) is first
    tools.register(ToolSpec(name="late-tool", description="Registered late.", args_type=NoArgs, execute=late))
    again = openapi_body(tools)
    assert again is not first and "/tools/late-tool" in json.loads(again)["paths"]
    assert openapi_body(registry()) == first  # another registry of the same tools: the same document


def test_a_model_is_described_under_the_codecs_rules() -> None:
    schemas = SchemaSet()
    schemas.model(FlowRunResult)
    schemas.model(FileInput)
    run, step, wrapper = (schemas.schemas[name] for name in ("FlowRunResult", "StepReport", "FileInput"))
    # Written always: the fields without a default, and the codec's ALWAYS (`steps`, `durationMs`).
    assert run["required"] == ["flow", "device", "ok", "passed", "failed", "skipped", "errored", "steps"]
    assert "durationMs" in step["required"] and "snapshotKey" in step["properties"]
    assert step["properties"]["status"] == {"type": "string", "enum": ["pass", "fail", "skip", "error"]}
    assert run["additionalProperties"] is False
    assert wrapper["required"] == ["__argentFileInput", "path"]
    assert wrapper["properties"]["__argentFileInput"] == {"const": True}
    assert wrapper["properties"]["mtimeMs"] == {"type": ["number", "null"]}
    assert "additionalProperties" not in wrapper  # the server ignores keys it does not know in what it reads
    assert set(schemas.schemas) >= {StepReport.__name__, "Spelling", "WireMember"}


def test_an_upload_body_is_bytes_of_either_media_type() -> None:
    doc = json.loads(openapi_body(registry()))
    content = doc["paths"]["/upload"]["post"]["requestBody"]["content"]
    binary = {"schema": {"type": "string", "format": "binary"}}
    assert content == {"application/gzip": binary, "application/octet-stream": binary}
