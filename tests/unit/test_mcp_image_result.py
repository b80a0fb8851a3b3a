"""The MCP adapter hands an image tool's result to its client as image content, read through the
link's ``ImageResult`` model; anything else that tool answers is shown as JSON text."""

from __future__ import annotations

import json

import mcp_types as types

from argent.link.models import ToolEntry
from argent.mcp.server import _content

SCREENSHOT = ToolEntry(name="screenshot", output_hint="image")


def test_an_image_result_is_image_content_and_its_other_fields_json_text() -> None:
    result = {"image": "iVBORw0KGgo=", "mimeType": "image/jpeg", "width": 3, "height": 4}
    image, meta = _content(SCREENSHOT, result)
    assert isinstance(image, types.ImageContent)
    assert (image.data, image.mime_type) == ("iVBORw0KGgo=", "image/jpeg")
    assert isinstance(meta, types.TextContent)
    assert json.loads(meta.text) == {"mimeType": "image/jpeg", "width": 3, "height": 4}


def test_an_image_result_without_a_mime_type_is_png() -> None:
    image, _meta = _content(SCREENSHOT, {"image": "AA=="})
    assert isinstance(image, types.ImageContent)
    assert image.mime_type == "image/png"


def test_a_result_that_is_not_an_image_is_json_text() -> None:
    for result in ({"image": 5}, {"picture": "AA=="}, ["AA=="]):
        (block,) = _content(SCREENSHOT, result)
        assert isinstance(block, types.TextContent)
        assert json.loads(block.text) == result


def test_a_tool_without_the_image_hint_is_json_text() -> None:
    (block,) = _content(ToolEntry(name="other"), {"image": "AA=="})
    assert isinstance(block, types.TextContent)
