"""JUnit XML from flow outcomes (INTERFACE.md §7), validated against Jenkins' junit-10.xsd."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import xmlschema

from argent.reports.junit import junit_xml, write_junit
from argent.reports.model import FlowOutcome, outcome_of

SCHEMA = xmlschema.XMLSchema(str(Path(__file__).parents[1] / "fixtures" / "junit-10.xsd"))
WHEN = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


def step(index: int, kind: str, status: str, **more: Any) -> dict[str, Any]:
    return {"index": index, "kind": kind, "status": status, "flow": "f", "durationMs": 1.5, **more}


def report(*steps: dict[str, Any], aborted: bool = False) -> dict[str, Any]:
    bad = any(s["status"] in ("fail", "error") for s in steps)
    counted = [s for s in steps if s["kind"] != "echo"]
    return {
        "flow": "f",
        "device": "",
        "ok": not bad and not aborted,
        **({"aborted": True} if aborted else {}),
        "passed": sum(s["status"] == "pass" for s in counted),
        "failed": sum(s["status"] == "fail" for s in counted),
        "skipped": sum(s["status"] == "skip" for s in counted),
        "errored": sum(s["status"] == "error" for s in counted),
        "steps": list(steps),
    }


def outcome(position: int, rel: str, seconds: float = 0.25, **how: Any) -> FlowOutcome:
    return outcome_of(position, f"/p/{rel}", rel, seconds, stem=Path(rel).stem, **how)


def parse(data: bytes) -> ET.Element:
    SCHEMA.validate(data.decode("utf-8"))
    return ET.fromstring(data)


def test_one_testcase_per_flow_with_counts_on_both_containers() -> None:
    outcomes = [
        outcome(
            0, "flows/a.yaml", result=report(step(0, "echo", "pass", message="hi"), step(1, "wait", "pass"))
        ),
        outcome(
            1,
            "flows/b.yaml",
            1.5,
            result=report(
                step(0, "wait", "pass"),
                step(1, "tap", "fail", target='"Pay"', reason="no visible element"),
                step(2, "assert", "error", target="x", reason="later"),
                step(3, "wait", "skip"),
            ),
        ),
        outcome(2, "flows/c.yaml", 0.01, error="Unrecognized flow entry (line 2)"),
        outcome(
            3, "flows/d.yaml", 2.0, result=report(step(0, "wait", "skip", reason="run aborted"), aborted=True)
        ),
    ]
    root = parse(junit_xml(outcomes, seconds=4.0, timestamp=WHEN))
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "time")} == {
        "tests": "4",
        "failures": "1",
        "errors": "1",
        "time": "4.000",
    }
    suites = list(root)
    assert [s.tag for s in suites] == ["testsuite"]
    suite = suites[0]
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors", "skipped", "time")} == {
        "name": "argent",
        "tests": "4",
        "failures": "1",
        "errors": "1",
        "skipped": "1",
        "time": "4.000",
    }
    cases = suite.findall("testcase")
    assert [(c.get("name"), c.get("classname"), c.get("time")) for c in cases] == [
        ("flows/a.yaml", "argent", "0.250"),
        ("flows/b.yaml", "argent", "1.500"),
        ("flows/c.yaml", "argent", "0.010"),
        ("flows/d.yaml", "argent", "2.000"),
    ]
    assert [child.tag for child in cases[0]] == ["system-out"]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == '  ✗  2 tap "Pay" — no visible element'
    assert (failure.text or "").splitlines() == [
        "  ✓  1 wait",
        '  ✗  2 tap "Pay" — no visible element',
        "  ✗  3 assert x — later",
        "  ·  4 wait",
        "FAIL — 1 passed, 1 failed, 1 skipped, 1 errored",
    ]
    error = cases[2].find("error")
    assert error is not None and error.get("message") == "Unrecognized flow entry (line 2)"
    skipped = cases[3].find("skipped")
    assert skipped is not None and skipped.get("message") == "run aborted"


def test_an_empty_run_is_a_valid_document() -> None:
    root = parse(junit_xml([], seconds=0.0, timestamp=WHEN))
    assert root.get("tests") == "0" and root[0].get("tests") == "0" and root[0].get("skipped") == "0"


def test_a_flow_failed_by_an_unwritten_baseline_or_a_refused_file_is_a_failure() -> None:
    ok_report = report(step(0, "snapshot", "pass"))
    ok_report["baselineWrites"] = [{"path": "/p/b.png", "error": "not a PNG"}]
    refused = outcome(
        1, "r.yaml", result=report(step(0, "wait", "pass")), refused=["✗ client file not written: x"]
    )
    root = parse(junit_xml([outcome(0, "b.yaml", result=ok_report), refused], seconds=1, timestamp=WHEN))
    messages = [case.find("failure").get("message") for case in root.iter("testcase")]  # type: ignore[union-attr]
    assert messages == ["✗ baseline not written: /p/b.png: not a PNG", "✗ client file not written: x"]


def test_not_run_and_no_report_flows() -> None:
    notice = {"flow": "n", "notice": "This flow has an execution prerequisite", "executionPrerequisite": "x"}
    outcomes = [
        outcome(0, "n.yaml", result=notice),
        outcome(1, "s.yaml", skipped="not run (batch stopped)"),
        outcome(2, "z.yaml", result=None),
    ]
    root = parse(junit_xml(outcomes, seconds=1, timestamp=WHEN))
    cases = list(root.iter("testcase"))
    assert cases[0].find("error").get("message") == "This flow has an execution prerequisite"  # type: ignore[union-attr]
    assert cases[1].find("skipped").get("message") == "not run (batch stopped)"  # type: ignore[union-attr]
    assert cases[2].find("error").get("message") == '"z" did not produce a run report.'  # type: ignore[union-attr]


HOSTILE = "\x00\x1b[2J\x07\x0b\x0c\ud800\ufffe\uffff\u202e<&>\"'"


def test_characters_xml_cannot_carry_are_escaped_and_the_file_still_validates() -> None:
    bad = step(0, "tap", "fail", target=HOSTILE, reason=HOSTILE)
    outcomes = [
        outcome(0, f"dir{HOSTILE}/a.yaml", result=report(bad)),
        outcome(1, "e.yaml", error=HOSTILE),
    ]
    data = junit_xml(outcomes, seconds=1, timestamp=WHEN)
    data.decode("utf-8")  # no lone surrogate made it into the bytes
    root = parse(data)
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    message = failure.get("message") or ""
    assert "\\u0000\\u001b[2J\\u0007" in message and "\\ud800\\ufffe\\uffff\\u202e<&>\"'" in message
    case_names = [c.get("name") or "" for c in root.iter("testcase")]
    assert case_names[0].startswith("dir\\u0000")


def test_written_atomically_over_an_old_file(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("old")
    write_junit(str(path), [outcome(0, "a.yaml", error="x")], seconds=1, timestamp=WHEN)
    parse(path.read_bytes())
    assert os.listdir(tmp_path) == ["junit.xml"]


def test_a_failed_write_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("old")

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        write_junit(str(path), [], seconds=1, timestamp=WHEN)
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["junit.xml"]


def test_a_newline_or_tab_in_a_flow_path_shows_escaped_in_its_testcase_name() -> None:
    """A path holding a newline is one name, shown as the CLI shows it, not a two-line name."""
    root = parse(junit_xml([outcome(0, "odd/n\nl\tt/a.yaml", error="x")], seconds=1, timestamp=WHEN))
    assert [c.get("name") for c in root.iter("testcase")] == ["odd/n\\u000al\\u0009t/a.yaml"]
