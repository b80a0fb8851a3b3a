"""``--junit-xml PATH``: the flows of a run as JUnit XML, the schema CI systems read.

One ``<testsuites>`` holds one ``<testsuite>``; each flow is a ``<testcase>`` named by its path
relative to the project root, with ``classname="argent"`` and its time in seconds. A flow with a
failed or errored step gets ``<failure message="<its first such step line>">`` with every step
line in the text; a flow that could not start ``<error message="<the error>">``; an aborted flow
``<skipped message="run aborted"/>`` (INTERFACE.md §7). The file validates against Jenkins'
``junit-10.xsd`` and is written atomically.

Texts come from a tool-server and from file names, so they may hold characters XML 1.0 cannot
carry at all (NUL, most C0 controls, lone surrogates): they are shown as ``\\uXXXX`` like the CLI
shows them on a terminal, and the file always parses.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import datetime

from argent.reports.model import FlowOutcome, counts
from argent.reports.render import terminal_safe
from argent.utils.atomic import write_atomically

SUITE_NAME = "argent"
CLASSNAME = "argent"
#: The mode of a report file (JUnit XML, the HTML page): readable by the CI that collects it.
REPORT_FILE_MODE = 0o644

#: Characters XML 1.0 cannot hold that ``terminal_safe`` leaves alone.
_NOT_XML = re.compile("[\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` as the CLI prints it, with nothing XML 1.0 refuses."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", terminal_safe(text))


def seconds_text(seconds: float) -> str:
    """Seconds with millisecond precision (the ``SUREFIRE_TIME`` form of the schema)."""
    return f"{max(0.0, seconds):.3f}"


def junit_xml(outcomes: Sequence[FlowOutcome], *, seconds: float, timestamp: datetime) -> bytes:
    """The JUnit document of ``outcomes`` (in their order); ``seconds`` is the run's wall time."""
    tally = counts(outcomes)
    totals = {
        "tests": str(len(outcomes)),
        "failures": str(tally["failed"]),
        "errors": str(tally["error"]),
    }
    root = ET.Element("testsuites", {"name": SUITE_NAME, **totals, "time": seconds_text(seconds)})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": SUITE_NAME,
            **totals,
            "skipped": str(tally["skipped"]),
            "time": seconds_text(seconds),
            "timestamp": timestamp.isoformat(timespec="seconds"),
        },
    )
    for outcome in outcomes:
        case = ET.SubElement(
            suite,
            "testcase",
            {"name": xml_text(outcome.rel), "classname": CLASSNAME, "time": seconds_text(outcome.seconds)},
        )
        text = xml_text("\n".join(outcome.lines))
        if outcome.status == "failed":
            failure = ET.SubElement(case, "failure", {"message": xml_text(outcome.problem or "")})
            failure.text = text
        elif outcome.status == "error":
            error = ET.SubElement(case, "error", {"message": xml_text(outcome.message or "")})
            error.text = xml_text(outcome.message or "")
        elif outcome.status == "skipped":
            ET.SubElement(case, "skipped", {"message": xml_text(outcome.message or "")})
            if text:
                ET.SubElement(case, "system-out").text = text
        elif text:
            ET.SubElement(case, "system-out").text = text
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


def write_junit(path: str, outcomes: Sequence[FlowOutcome], *, seconds: float, timestamp: datetime) -> None:
    data = junit_xml(outcomes, seconds=seconds, timestamp=timestamp)
    write_atomically(os.path.abspath(path), data, mode=REPORT_FILE_MODE)
