"""The wire's models and its one converter: names, what is left out, how a malformed value reads."""

from __future__ import annotations

from typing import Any

import pytest
from cattrs.errors import ClassValidationError

from argent.link.codec import (
    NotAnObject,
    event_to_wire,
    failed_fields,
    read,
    read_event,
    read_or_none,
    structure,
    to_wire,
)
from argent.link.models import (
    LISTED,
    ClientFileDirective,
    ErrorBody,
    FileInput,
    FileInputSpec,
    FlowRunResult,
    ImageResult,
    PrerequisiteNotice,
    ProgressEvent,
    ResultEvent,
    Spelling,
    StepReport,
    ToolEntry,
    ToolListing,
    WireMember,
)
from argent.reports.render import step_lines, summary_line


def step(**extra: Any) -> StepReport:
    return StepReport(**{"index": 0, "kind": "tap", "status": "pass", "flow": "main", **extra})


def test_a_step_report_travels_camel_cased_in_its_declared_order_without_its_unset_fields() -> None:
    full = step(depth=1, target="#go", snapshot_key="home", output_hint="text", duration_ms=1.5)
    assert list(to_wire(full).items()) == [
        ("index", 0),
        ("kind", "tap"),
        ("status", "pass"),
        ("flow", "main"),
        ("depth", 1),
        ("target", "#go"),
        ("outputHint", "text"),
        ("snapshotKey", "home"),
        ("durationMs", 1.5),
    ]
    # depth 0 is left out, durationMs never is
    assert to_wire(step()) == {"index": 0, "kind": "tap", "status": "pass", "flow": "main", "durationMs": 0.0}


def test_a_run_result_carries_the_counts_the_runner_computed() -> None:
    steps = [
        step(),
        step(index=1, status="fail"),
        StepReport(index=2, kind="echo", status="pass", flow="main"),
    ]
    wire = to_wire(FlowRunResult(flow="main", device="d", steps=steps))
    assert list(wire)[:8] == ["flow", "device", "ok", "passed", "failed", "skipped", "errored", "steps"]
    assert (wire["ok"], wire["passed"], wire["failed"]) == (False, 1, 1)  # an echo counts in no counter
    assert "aborted" not in wire and "executionPrerequisite" not in wire and "baselineWrites" not in wire
    notice = to_wire(PrerequisiteNotice(flow="main", execution_prerequisite="logged in"))
    assert notice["notice"].startswith("This flow has an execution prerequisite")


def test_events_are_a_tagged_union_with_the_tag_first() -> None:
    assert list(event_to_wire(ProgressEvent(step()))) == ["event", "data"]
    assert event_to_wire(ResultEvent(None)) == {"event": "result", "data": None}
    assert event_to_wire(ErrorBody("boom", "X_CODE")) == {
        "event": "error",
        "error": "boom",
        "error_code": "X_CODE",
    }
    assert read_event({"event": "error", "error": "boom", "error_kind": "validation"}) == ErrorBody(
        "boom", error_kind="validation"
    )
    assert read_event({"event": "progress", "data": {"index": 1}}) == ProgressEvent({"index": 1})
    for odd in ({"event": "mystery"}, {"data": 1}, ["event", "result"], "result", None):
        assert read_event(odd) is None


def test_scalars_are_never_coerced() -> None:
    with pytest.raises(ClassValidationError) as info:
        structure({"target": 5, "path": True, "kind": "file"}, FileInputSpec)
    assert failed_fields(info.value) == ["target", "path"]
    spec = structure({"target": "a", "path": "${a}", "kind": "file", "optional": "yes"}, FileInputSpec)
    assert spec == FileInputSpec("a", "${a}", "file")  # a malformed optional field reads as absent


def test_a_file_input_needs_its_marker_and_a_path_and_says_which_optional_fields_were_malformed() -> None:
    wrapper = FileInput(
        "/p/a.yaml",
        size=3,
        spelling=Spelling("case_folded", "A.yaml", False),
        members=[WireMember("flow", "k")],
    )
    wire = to_wire(wrapper)
    assert list(wire)[:2] == ["__argentFileInput", "path"]
    assert structure(wire, FileInput) == wrapper
    with pytest.raises(NotAnObject):
        structure({"path": "/p"}, FileInput)
    with pytest.raises(ClassValidationError):
        structure({"__argentFileInput": True}, FileInput)
    got = read({"__argentFileInput": True, "path": "/p", "mtimeMs": "x", "spelling": "listed"}, FileInput)
    assert got.value == FileInput("/p")
    assert sorted(got.wrong) == ["mtimeMs", "spelling"]


@pytest.mark.parametrize(
    "raw",
    [
        {"state": "folded"},
        {"state": "case_folded", "actual": "A.yaml"},
        {"state": "case_folded", "actual": "a/b", "addressable": True},
        {"state": "case_folded", "actual": "", "addressable": True},
        "listed",
    ],
)
def test_a_spelling_of_another_shape_does_not_read(raw: Any) -> None:
    assert read_or_none(raw, Spelling) is None


def test_spellings_read_back_as_written() -> None:
    for spelling in (LISTED, Spelling("absent"), Spelling("case_folded", "Login.yaml", True)):
        assert structure(to_wire(spelling), Spelling) == spelling


def test_a_listing_leaves_out_what_cannot_be_read_and_keeps_a_disabled_tool_disabled() -> None:
    listing = structure(
        {
            "tools": [
                "not an object",
                {"description": "no name"},
                {
                    "name": "odd",
                    "description": 5,
                    "disabled": "just text",
                    "fileInputs": ["x", {"target": "c"}, {"target": "c", "path": "${c}", "kind": "future"}],
                    "longRunning": "yes",
                },
                {"name": "other", "disabled": {"reason": 7}},
            ]
        },
        ToolListing,
    )
    odd, other = listing.tools
    assert odd.name == "odd" and odd.description is None and odd.long_running is False
    assert odd.disabled is not None and odd.disabled.reason == "just text"
    assert odd.file_inputs == [FileInputSpec("c", "${c}", "future")]  # a kind this client does not know
    assert other.disabled is not None and other.disabled.reason == "7"
    assert to_wire(ToolEntry("t")) == {"name": "t"}


def test_a_client_file_directive_is_marked() -> None:
    directive = ClientFileDirective("/p/.argent/flows/a.yaml", "steps: []\n")
    assert to_wire(directive) == {
        "__argentClientFile": True,
        "path": "/p/.argent/flows/a.yaml",
        "content": "steps: []\n",
    }
    assert read_or_none({"path": "/x"}, ClientFileDirective) is None
    assert read_or_none({"__argentClientFile": "yes", "path": "/x"}, ClientFileDirective) is None


def test_a_report_from_any_server_reads_without_failing() -> None:
    report = structure(
        {"ok": True, "flow": ["x"], "passed": "1", "steps": [1, None, {"index": "one"}]}, FlowRunResult
    )
    assert (report.ok, report.flow, report.passed, report.failed) == (True, "", 0, 0)
    assert report.steps == [StepReport(index=0, kind="", status="", flow="")]  # type: ignore[arg-type]


def test_a_status_that_is_not_text_renders_as_unknown_instead_of_crashing() -> None:
    # Failed before: GLYPHS.get() of a list raised TypeError, a traceback in the CLI.
    assert step_lines({"index": 0, "kind": "tap", "status": ["fail"]}, "m") == ["  ?  1 tap"]


def test_an_ok_that_is_not_a_boolean_never_reads_as_a_pass() -> None:
    # Failed before: bool("false") is True, so a hostile "ok": "false" printed PASS (and exited 0).
    assert summary_line({"ok": "false", "steps": []}).startswith("FAIL — 0 passed")


def test_an_image_result_is_written_in_upstream_s_order_with_its_mime_type_and_read_strictly() -> None:
    image = ImageResult("iVBORw0KGgo=", "image/png", 390, 844)
    wire = to_wire(image)
    assert list(wire.items()) == [
        ("image", "iVBORw0KGgo="),
        ("mimeType", "image/png"),
        ("width", 390),
        ("height", 844),
    ]
    assert read_or_none(wire, ImageResult) == image
    assert read_or_none({"image": 5, "mimeType": "image/png"}, ImageResult) is None
    assert read_or_none({"mimeType": "image/png"}, ImageResult) is None
    assert read_or_none({"image": "x", "mimeType": 7}, ImageResult) == ImageResult("x")
