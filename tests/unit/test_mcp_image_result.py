"""The MCP adapter hands an image tool's result to its client as image content, read through the
link's ``ImageResult`` model; anything else that tool answers is shown as JSON text. A flow that did
not pass is an error, with the images of its failing steps (inline over a link, read from this disk
only co-located and only from where a report's images come from)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import mcp_types as types

from argent.limits import MAX_ARTIFACT_IMAGES
from argent.link.models import StepReport, ToolEntry
from argent.link.png import failure_image_paths
from argent.mcp.server import _content, failure_images, flow_answer

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


# --------------------------------------------------------------------------------------------
# A flow that did not pass: an error, its failing steps' images (issue 27)

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def failed_run(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"flow": "f", "device": "d", "ok": False, "steps": list(steps), **extra}


def failing_tap(path: str, index: int = 1) -> dict[str, Any]:
    return {
        "index": index,
        "kind": "tap",
        "status": "fail",
        "flow": "f",
        "target": '"Pay"',
        "reason": "no",
        "artifacts": {"screenshot": path},
    }


def test_failure_image_paths_take_the_first_telling_role_of_each_failing_step() -> None:
    steps = [
        StepReport(0, "tap", "pass", "f", artifacts={"screenshot": "/a.png"}),
        StepReport(
            1,
            "snapshot",
            "fail",
            "f",
            artifacts={"baseline": "/b.png", "current": "/c.png", "diff": "/d.png"},
        ),
        StepReport(2, "snapshot", "fail", "f", artifacts={"current": "/e.png"}),
        StepReport(3, "tap", "error", "f", artifacts={"screenshot": "/s.png"}),
        StepReport(4, "tap", "fail", "f"),
    ]
    assert failure_image_paths(steps) == ["/d.png", "/e.png", "/s.png"]
    many = [StepReport(i, "tap", "fail", "f", artifacts={"screenshot": f"/{i}.png"}) for i in range(9)]
    assert len(failure_image_paths(many)) == MAX_ARTIFACT_IMAGES


async def test_over_a_link_only_inline_pngs_become_images() -> None:
    good = base64.b64encode(PNG).decode()
    result = failed_run(
        failing_tap("/srv/1.png", 1),
        failing_tap("/srv/2.png", 2),
        failing_tap("/srv/3.png", 3),
        failing_tap("/srv/4.png", 4),
        artifactImages=[
            {"path": "/srv/1.png", "data": good},
            {"path": "/srv/2.png", "data": base64.b64encode(b"GIF89a").decode()},  # not a PNG
            {"path": "/srv/3.png", "data": "%%%not base64%%%"},
            {"path": "/srv/4.png", "data": 7},  # unreadable: left out, not a failure
        ],
    )
    blocks = await failure_images(result, co_located=False)
    assert [type(b) for b in blocks] == [types.TextContent, types.ImageContent]
    caption, image = blocks
    assert isinstance(caption, types.TextContent) and isinstance(image, types.ImageContent)
    assert caption.text == 'Step 2 (tap "Pay") failed — its screenshot (/srv/1.png):'
    assert image.data == good


async def test_over_a_link_a_path_is_never_read_from_this_disk(tmp_path: Path) -> None:
    shot = tmp_path / "argent-flow-diff-x" / "step-2-screenshot.png"
    shot.parent.mkdir()
    shot.write_bytes(PNG)
    assert await failure_images(failed_run(failing_tap(str(shot))), co_located=False) == []
    (_caption, image) = await failure_images(failed_run(failing_tap(str(shot))), co_located=True)
    assert isinstance(image, types.ImageContent) and base64.b64decode(image.data) == PNG


async def test_co_located_only_a_report_image_directory_is_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG)
    assert await failure_images(failed_run(failing_tap(str(secret))), co_located=True) == []
    linked = tmp_path / "argent-flow-diff-y" / "link.png"
    linked.parent.mkdir()
    linked.symlink_to(secret)  # a link is not followed
    assert await failure_images(failed_run(failing_tap(str(linked))), co_located=True) == []


def test_the_answer_is_an_error_unless_the_flow_passed_and_carries_the_result() -> None:
    inline = [{"path": "/p.png", "data": "AA=="}]
    failed = flow_answer(failed_run(failing_tap("/p.png"), artifactImages=inline), [])
    assert failed.is_error is True
    assert failed.structured_content is not None and "artifactImages" not in failed.structured_content
    passed = flow_answer({"flow": "f", "device": "", "ok": True, "steps": []}, [])
    assert passed.is_error is False and passed.structured_content == {
        "flow": "f",
        "device": "",
        "ok": True,
        "steps": [],
    }
    notice = flow_answer({"flow": "f", "executionPrerequisite": "signed in", "notice": "acknowledge"}, [])
    assert notice.is_error is True
    assert notice.structured_content == {
        "flow": "f",
        "executionPrerequisite": "signed in",
        "notice": "acknowledge",
    }
