"""The HTML report's page and images, without a browser (tests/e2e/test_cli_suite.py opens one)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from argent.reports.html import (
    MARKER,
    HtmlReport,
    ReportDirProblem,
    ReportPathProblem,
    html_owned,
    prepare_report_dir,
)
from argent.reports.model import FlowOutcome, outcome_of
from argent.runner import pixels as P
from tests.unit.test_reports_junit import report, step

WHEN = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


class Links(HTMLParser):
    """Every URL the page would load or link to, and its visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "poster", "data") and value is not None:
                self.urls.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def png(tmp: Path, name: str, color: tuple[int, int, int]) -> str:
    img = np.zeros((20, 30, 4), dtype=np.uint8)
    img[..., :3] = color
    img[..., 3] = 255
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(P.encode_png(img))
    return str(path)


def outcome(position: int, rel: str, seconds: float = 0.5, **how: Any) -> FlowOutcome:
    return outcome_of(position, f"/p/{rel}", rel, seconds, stem=Path(rel).stem, **how)


async def write_report(directory: Path, outcomes: list[FlowOutcome]) -> tuple[str, Links]:
    prepare_report_dir(str(directory))
    html = HtmlReport(str(directory))
    for item in outcomes:
        await html.collect(item)
    html.write(outcomes, seconds=3.0, timestamp=WHEN)
    page = (directory / "index.html").read_text(encoding="utf-8")
    links = Links()
    links.feed(page)
    return page, links


async def test_flows_steps_and_images_side_by_side(tmp_path: Path) -> None:
    scratch = tmp_path / "srv" / "argent-artifacts-1" / "argent-flow-diff-abc"
    snap = {
        role: png(scratch, f"home-{role}.png", color)
        for role, color in (("baseline", (0, 0, 255)), ("current", (255, 0, 0)), ("diff", (255, 255, 0)))
    }
    shot = png(tmp_path / "srv" / "argent-flow-diff-x", "step-2-screenshot.png", (0, 255, 0))
    outcomes = [
        outcome(0, "flows/a.yaml", result=report(step(0, "launch", "pass", durationMs=400))),
        outcome(
            1,
            "flows/b.yaml",
            result=report(
                step(0, "launch", "pass", durationMs=300),
                step(1, "snapshot", "fail", target='"home"', reason="diff 3% > 0.5%", artifacts=snap),
            ),
        ),
        outcome(
            2,
            "flows/c.yaml",
            result=report(
                step(0, "tap", "pass", target='"Go"', durationMs=12),
                step(
                    1,
                    "assert",
                    "fail",
                    target='visible "X"',
                    reason="no element",
                    artifacts={"screenshot": shot},
                ),
            ),
        ),
        outcome(3, "flows/d.yaml", error="Unrecognized flow entry"),
        outcome(4, "flows/e.yaml", skipped="not run (batch stopped)"),
    ]
    out = tmp_path / "report"
    page, links = await write_report(out, outcomes)
    text = " ".join(links.text)
    for rel in ("flows/a.yaml", "flows/b.yaml", "flows/c.yaml", "flows/d.yaml", "flows/e.yaml"):
        assert rel in text
    for word in ("passed", "failed", "error", "skipped"):
        assert f'<span class="pill {word}">{word}</span>' in page
    assert "durationMs" in text and "diff 3% &gt; 0.5%" in page and "Unrecognized flow entry" in text
    images = sorted({u for u in links.urls if u.endswith(".png")})
    assert images == sorted(
        {
            "images/2/2-baseline.png",
            "images/2/2-current.png",
            "images/2/2-diff.png",
            "images/3/2-screenshot.png",
        }
    )
    for rel in images:
        copied = out / rel
        assert copied.is_file() and copied.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "images/2/2-diff.png").read_bytes() == Path(snap["diff"]).read_bytes()
    # baseline, current, diff in that order, in one row
    at = [page.index(f"images/2/2-{role}.png") for role in ("baseline", "current", "diff")]
    assert at == sorted(at)
    assert "script" not in links.tags
    assert all(not u.startswith(("http:", "https:", "//", "/", "file:", "data:")) for u in links.urls), (
        links.urls
    )
    assert "default-src 'none'" in page


async def test_images_that_are_not_pngs_from_a_tool_server_are_not_copied(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("PRIVATE KEY")
    outside_png = png(tmp_path / "photos", "me.png", (1, 2, 3))
    fake = tmp_path / "argent-flow-diff-q" / "x.png"
    fake.parent.mkdir()
    fake.write_text("not a png")
    link = tmp_path / "argent-flow-diff-l" / "y.png"
    link.parent.mkdir()
    link.symlink_to(outside_png)
    far = "/elsewhere/argent-flow-diff-z/remote.png"
    artifacts = {
        "baseline": str(secret),
        "current": outside_png,
        "diff": str(fake),
        "screenshot": str(link),
        "../../escape": png(tmp_path / "argent-flow-diff-r", "r.png", (1, 1, 1)),
    }
    remote = {"current": far}
    outcomes = [
        outcome(0, "a.yaml", result=report(step(0, "snapshot", "fail", artifacts=artifacts))),
        outcome(1, "b.yaml", result=report(step(0, "snapshot", "fail", artifacts=remote))),
    ]
    out = tmp_path / "report"
    page, links = await write_report(out, outcomes)
    assert [u for u in links.urls if u.endswith(".png")] == []
    assert sorted(p.name for p in (out / "images").rglob("*") if p.is_file()) == []
    assert f"not copied into the report (the tool-server's path: {far})" in page
    assert "escape" not in page


async def test_text_from_a_tool_server_is_escaped(tmp_path: Path) -> None:
    evil = '<script>alert(1)</script><img src="http://evil.test/x.png">\x1b[2J'
    outcomes = [outcome(0, "a.yaml", result=report(step(0, "tap", "fail", target=evil, reason=evil)))]
    page, links = await write_report(tmp_path / "r", outcomes)
    assert "<script>" not in page and "script" not in links.tags
    assert links.urls == ["#flow-1"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "\\u001b[2J" in page and "\x1b" not in page


def test_the_report_directory_is_new_empty_or_an_earlier_report(tmp_path: Path) -> None:
    fresh = tmp_path / "a" / "b"
    prepare_report_dir(str(fresh))
    assert sorted(os.listdir(fresh)) == [MARKER, "images"]
    (fresh / "images" / "1").mkdir()
    (fresh / "images" / "1" / "old.png").write_bytes(b"x")
    (fresh / "index.html").write_text("old")
    prepare_report_dir(str(fresh))  # an earlier report: its images go
    assert list((fresh / "images").iterdir()) == []
    foreign = tmp_path / "docs"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    with pytest.raises(ReportDirProblem, match="already holds files that are not an argent report"):
        prepare_report_dir(str(foreign))
    assert os.listdir(foreign) == ["keep.txt"]
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(ReportDirProblem, match="is a file"):
        prepare_report_dir(str(file))


async def test_a_fifo_or_an_oversized_image_is_not_copied_and_nothing_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "argent-flow-diff-f" / "x.png"
    fifo.parent.mkdir()
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    big = png(tmp_path / "argent-flow-diff-b", "big.png", (9, 9, 9))
    monkeypatch.setattr("argent.reports.html.MAX_REPORT_IMAGE_BYTES", os.path.getsize(big) - 1)
    artifacts = {"current": str(fifo), "diff": big}
    out = tmp_path / "report"
    page, links = await write_report(
        out, [outcome(0, "a.yaml", result=report(step(0, "snapshot", "fail", artifacts=artifacts)))]
    )
    assert [u for u in links.urls if u.endswith(".png")] == []
    assert f"path: {fifo})" in page and f"path: {big})" in page


async def test_each_step_row_says_its_number_kind_status_depth_origin_and_reasons(tmp_path: Path) -> None:
    """A step's row, cell by cell: its 1-based number, kind, status word (an unknown status is
    "unknown", never the tool-server's word), indentation by depth (capped at 20), the fragment it
    came from when that is not the flow itself, and its reason and warning together."""
    steps = [
        step(0, "tap", "pass", target="Login", durationMs=10),
        step(1, "run", "fail", target="frag", depth=25, flow="frag", reason="boom", warning="careful"),
        {"index": True, "kind": "?", "status": "<odd>", "depth": True, "flow": "f", "durationMs": 40},
        step(3, "assert", "skip", depth=2, warning="only a warning"),
    ]
    result = report(*steps)
    del result["steps"][2]["kind"]  # no kind at all
    failing = [outcome(0, "a.yaml", result=result)]
    page, _ = await write_report(tmp_path / "r", failing)
    rows = [row.split("</tr>", 1)[0] for row in page.split('<tr class="step ')[1:]]
    assert len(rows) == 4
    assert rows[0].startswith('pass" data-index="0"><td class="num">1</td>')
    assert '<td class="kind" style="padding-left:0.5em">tap</td><td class="target">Login</td>' in rows[0]
    assert rows[1].startswith('fail" data-index="1"><td class="num">2</td>')
    assert 'style="padding-left:20.5em">run</td>' in rows[1]
    assert '<td class="target">frag <span class="from">[frag]</span></td>' in rows[1]
    assert '<td class="reason">boom — careful</td>' in rows[1]
    assert rows[2].startswith('unknown" data-index="True"><td class="num">?</td>')
    assert '<td class="kind" style="padding-left:0.5em">?</td>' in rows[2]
    assert '<td class="num">40</td>' in rows[2] and 'class="tbar unknown" style="width:100' in rows[2]
    assert 'style="padding-left:2.5em">assert</td>' in rows[3]
    assert '<td class="reason">only a warning</td>' in rows[3]
    assert '<header class="banner bad">' in page
    assert "<details open><summary>" in page  # a failed flow opens

    passing = [outcome(0, "b.yaml", result=report(step(0, "tap", "pass")))]
    page, _ = await write_report(tmp_path / "s", passing)
    assert '<header class="banner ok">' in page
    assert "<details><summary>" in page  # a passed flow stays closed


def test_a_report_directory_that_cannot_be_made_is_refused_saying_why(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    wanted = blocker / "report"
    with pytest.raises(ReportDirProblem) as caught:
        prepare_report_dir(str(wanted))
    message = str(caught.value)
    assert message.startswith(f"--html cannot use {wanted}: Not a directory. ")
    assert message.endswith(" or pass another --html directory.")


def test_a_junit_file_inside_the_html_report_directory_is_refused(tmp_path: Path) -> None:
    report_dir = tmp_path / "reports" / "html"
    inside = report_dir / "junit.xml"
    with pytest.raises(ReportPathProblem) as caught:
        html_owned(str(inside), str(report_dir))
    assert str(caught.value) == (
        f"--junit-xml {inside} is inside the --html report directory {report_dir}, which the HTML report "
        "replaces; write it elsewhere."
    )
    html_owned(str(tmp_path / "reports" / "junit.xml"), str(report_dir))  # beside it: fine


async def test_the_banner_counts_the_flows_and_the_overview_links_each_with_its_share_of_time(
    tmp_path: Path,
) -> None:
    outcomes = [
        outcome(0, "a.yaml", seconds=2.0, result=report(step(0, "tap", "pass"))),
        outcome(1, "b.yaml", seconds=1.0, result=report(step(0, "tap", "fail"))),
    ]
    page, _ = await write_report(tmp_path / "r", outcomes)
    assert '<p class="counts">2 flows · 1 passed · 1 failed · 0 error · 0 skipped · 3.00 s</p>' in page
    assert (
        '<div class="bar" aria-hidden="true"><span class="seg passed" style="width:50.00%" title="1 passed">'
        '</span><span class="seg failed" style="width:50.00%" title="1 failed"></span></div>'
    ) in page
    assert (
        '<tr class="passed"><td><span class="pill passed">passed</span></td><td><a href="#flow-1">a.yaml</a></td>'
        '<td class="num">2.00 s</td><td class="timing"><span class="tbar passed" style="width:100.00%"></span>'
        "</td></tr>"
    ) in page
    assert '<a href="#flow-2">b.yaml</a></td><td class="num">1.00 s</td>' in page
    assert 'class="tbar failed" style="width:50.00%"' in page
    assert "<title>argent report — FAIL — 2 flows · 1 passed" in page


async def test_a_flow_without_steps_says_so_and_an_echo_row_shows_its_message(tmp_path: Path) -> None:
    outcomes = [
        outcome(0, "empty.yaml", result=report()),
        outcome(
            1,
            "talks.yaml",
            result=report(step(0, "echo", "pass", message="hello there"), step(1, "tap", "fail")),
        ),
    ]
    page, _ = await write_report(tmp_path / "r", outcomes)
    assert '\n<p class="empty">No steps.</p>\n' in page
    assert '<td class="target">hello there</td>' in page
    assert (
        '</td></tr><tr class="step fail" data-index="1">' in page
    )  # one row after the other, nothing between
    assert '<p class="message">' not in page  # a failed flow with a report has no message line of its own
