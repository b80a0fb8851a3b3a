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

import contextlib
import os
import re
import secrets
import stat
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import datetime

from argent.reports.model import FlowOutcome, counts
from argent.reports.render import terminal_safe
from argent.utils.atomic import write_atomically
from argent.utils.oserrors import remedy

SUITE_NAME = "argent"
CLASSNAME = "argent"
#: The mode of a report file (JUnit XML, the HTML page): readable by the CI that collects it.
REPORT_FILE_MODE = 0o644

#: Bytes of an existing file read to tell whether it is a JUnit report (one a run may replace).
JUNIT_SNIFF_BYTES = 4096
_JUNIT_ROOTS = (b"<testsuites", b"<testsuite")


class ReportPathProblem(Exception):
    """A report path that must not or cannot be written (the message says why and what to pass)."""


def prepare_junit_path(path: str) -> None:
    """Check, before anything runs, that the JUnit report can be written at ``path`` and that it
    destroys nothing: its directory is made and a file can be created there; an existing file is
    replaced only when it is a JUnit report (a careless ``--junit-xml`` naming a flow file or a
    README must not eat it)."""
    if os.path.isdir(path):
        raise ReportPathProblem(f"--junit-xml names a file to write, but {path} is a directory.")
    directory = os.path.dirname(path)
    probe = os.path.join(directory, f".argent-junit-probe.{secrets.token_hex(8)}.tmp")
    try:
        os.makedirs(directory, exist_ok=True)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))
        os.unlink(probe)
        if os.path.lexists(path) and not _is_junit_report(path):
            raise ReportPathProblem(
                f"--junit-xml {path} already holds a file that is not a JUnit report; pass the path of a new "
                "file or of an earlier report (it is replaced)."
            )
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(probe)
        raise ReportPathProblem(
            f"--junit-xml cannot write {path}: {exc.strerror or exc}. "
            f"{remedy(exc) or 'Check that disk'} or pass another --junit-xml path."
        ) from None


def _is_junit_report(path: str) -> bool:
    """An empty regular file, or one whose first bytes hold a JUnit root element (a link is
    judged by its target; the report then replaces the link, never the target)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        return False
    with open(path, "rb") as fh:
        head = fh.read(JUNIT_SNIFF_BYTES)
    return not head.strip() or any(root in head for root in _JUNIT_ROOTS)


#: Characters XML 1.0 cannot hold that ``terminal_safe`` leaves alone.
_NOT_XML = re.compile("[\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` as the CLI prints it, with nothing XML 1.0 refuses."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", terminal_safe(text))


def name_text(rel: str) -> str:
    """A flow path as a test name: one line, a newline or tab shown as ``\\uXXXX`` as well."""
    return xml_text(rel).replace("\n", "\\u000a").replace("\t", "\\u0009")


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
            {"name": name_text(outcome.rel), "classname": CLASSNAME, "time": seconds_text(outcome.seconds)},
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
