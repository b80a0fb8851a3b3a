"""``--html DIR``: a report a person would rather look at than read, in ``DIR/index.html``.

Pass/fail at a glance (a banner and a bar of the counts), a row per flow with its status word
and duration, and per flow its steps (index, kind, target, status, ``durationMs``, reason) with
their timings as bars; a snapshot step that failed shows its baseline, current and diff images
side by side, a device step that failed the screenshot taken at the failure. The page is one
self-contained file that opens offline: inline CSS, no script, no external URL (a
Content-Security-Policy forbids loading anything but its own images); the images are files under
``DIR/images/``, linked relatively, so the directory can be published as one CI artifact.

Images are copied when each flow ends, while the tool-server that keeps them is still up; only
PNG files from a tool-server's snapshot scratch directories or a ``__baselines__`` directory are
copied (a result names paths, and a report is no way to publish other files of this machine).
Over a link to another machine the images stay on the tool-server: the report names their paths.
"""

from __future__ import annotations

import asyncio
import html
import os
import shutil
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from attrs import frozen

from argent.flows.names import BASELINES_DIR
from argent.limits import MAX_REPORT_IMAGE_BYTES
from argent.link.png import read_png
from argent.reports.junit import REPORT_FILE_MODE, ReportPathProblem
from argent.reports.model import FlowOutcome, counts
from argent.reports.render import terminal_safe
from argent.utils.atomic import write_atomically
from argent.utils.oserrors import DISK_ERRNOS, remedy

INDEX = "index.html"
IMAGES = "images"
#: The file that marks a directory as an argent HTML report (a later run may replace its images).
MARKER = ".argent-report"
#: Image roles shown, in this order: a failed snapshot's three, then a failed step's screenshot.
ROLES = ("baseline", "current", "diff", "screenshot")
#: Directory names an image may come from: a tool-server's snapshot scratch, a baselines directory.
_SCRATCH_PREFIX = "argent-flow-diff-"


class ReportDirProblem(Exception):
    """``--html DIR`` cannot hold a report (the message says why and what to pass instead)."""


@frozen
class ImageRef:
    """One image of a step: ``href`` relative to ``index.html``, or None when it stayed where
    ``source`` names it (on another machine, or refused)."""

    role: str
    source: str
    href: str | None


def prepare_report_dir(directory: str) -> None:
    """Make ``directory`` ready for a report before anything runs: created when missing; an
    earlier argent report there has its images replaced; any other non-empty directory is refused
    (a report never deletes or overwrites files it did not write)."""
    marker = os.path.join(directory, MARKER)
    if os.path.lexists(directory) and not os.path.isdir(directory):
        raise ReportDirProblem(f"--html needs a directory, but {directory} is a file.")
    try:
        os.makedirs(directory, exist_ok=True)
        entries = os.listdir(directory)
    except OSError as exc:
        raise _cannot_use(directory, exc) from None
    if entries and MARKER not in entries:
        raise ReportDirProblem(
            f"--html {directory} already holds files that are not an argent report; pass a new or empty "
            "directory (the report writes index.html and images/ there)."
        )
    images = os.path.join(directory, IMAGES)
    try:
        if os.path.isdir(images) and not os.path.islink(images):
            shutil.rmtree(images)
        elif os.path.lexists(images):
            os.unlink(images)
        os.makedirs(images)
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write("argent HTML report: index.html and images/ are replaced by the next run\n")
    except OSError as exc:
        raise _cannot_use(directory, exc) from None


def _cannot_use(directory: str, exc: OSError) -> ReportDirProblem:
    return ReportDirProblem(
        f"--html cannot use {directory}: {exc.strerror or exc}. "
        f"{remedy(exc) or 'Check that disk'} or pass another --html directory."
    )


def html_owned(path: str, directory: str) -> None:
    """Refuse another report's ``path`` inside the HTML report ``directory``: the HTML report
    replaces what is there (``index.html``, ``images/``), or refuses a directory holding it."""
    real, base = os.path.realpath(path), os.path.realpath(directory)
    if os.path.commonpath([real, base]) == base:
        raise ReportPathProblem(
            f"--junit-xml {path} is inside the --html report directory {directory}, which the HTML report "
            "replaces; write it elsewhere."
        )


def allowed_image_source(path: str) -> bool:
    """Whether ``path`` is where a report may copy an image from: a tool-server's snapshot scratch
    directory or a ``__baselines__`` directory (a result names paths; no other file of this machine)."""
    parts = os.path.normpath(path).split(os.sep)
    return os.path.isabs(path) and (
        BASELINES_DIR in parts or any(p.startswith(_SCRATCH_PREFIX) for p in parts)
    )


def copy_image(source: str, dest: str, *, trusted: Collection[str] = ()) -> bool:
    """Copy one PNG (a regular file, at most ``MAX_REPORT_IMAGE_BYTES``); False when it is not one.
    ``trusted``: copies this client made itself of images it checked (``argent.reports.artifacts``)."""
    if source not in trusted and not allowed_image_source(source):
        return False
    data = read_png(source, MAX_REPORT_IMAGE_BYTES)
    if data is None:
        return False
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    write_atomically(dest, data)  # a full disk leaves no part of an image behind
    return True


class HtmlReport:
    """Collects each flow's images as it ends, then writes ``index.html``."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._images: dict[tuple[int, int], list[ImageRef]] = {}
        #: The errors of the images a full or read-only disk kept out of the report (told, not hidden).
        self.not_copied: list[OSError] = []
        #: The images the client kept of a run's failed steps (``--output``, .argent/results), which
        #: the steps then name: checked when they were copied there.
        self.trusted: Collection[str] = ()

    async def collect(self, outcome: FlowOutcome) -> None:
        """Copy the images of ``outcome``'s steps into ``images/`` (in a thread: they can be large)."""
        await asyncio.to_thread(self._collect, outcome)

    def _collect(self, outcome: FlowOutcome) -> None:
        for step in outcome.steps:
            artifacts = step.get("artifacts")
            index = step.get("index")
            if not isinstance(artifacts, dict) or not isinstance(index, int) or isinstance(index, bool):
                continue
            refs: list[ImageRef] = []
            for role in ROLES:
                source = artifacts.get(role)
                if not isinstance(source, str) or not source:
                    continue
                href = f"{IMAGES}/{outcome.position + 1}/{index + 1}-{role}.png"
                dest = os.path.join(self.directory, *href.split("/"))
                try:
                    copied = copy_image(source, dest, trusted=self.trusted)
                except OSError as exc:
                    copied = False
                    if exc.errno in DISK_ERRNOS:
                        self.not_copied.append(exc)
                refs.append(ImageRef(role, source, href if copied else None))
            if refs:
                self._images[(outcome.position, index)] = refs

    def write(self, outcomes: Sequence[FlowOutcome], *, seconds: float, timestamp: datetime) -> None:
        page = render_page(outcomes, self._images, seconds=seconds, timestamp=timestamp)
        write_atomically(
            os.path.join(os.path.abspath(self.directory), INDEX), page.encode("utf-8"), mode=REPORT_FILE_MODE
        )


# --------------------------------------------------------------------------------------------
# The page


def _t(value: Any) -> str:
    """Text for the page: terminal-safe (no control characters) and HTML-escaped."""
    return html.escape(terminal_safe(str(value)), quote=True)


def _seconds(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 60 else f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def _ms(value: Any) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else 0.0
    )


def _pct(part: float, whole: float) -> str:
    return f"{(100.0 * part / whole) if whole > 0 else 0.0:.2f}%"


STEP_STATUS_WORDS = {"pass": "pass", "fail": "fail", "error": "error", "skip": "skip"}


def render_page(
    outcomes: Sequence[FlowOutcome],
    images: dict[tuple[int, int], list[ImageRef]],
    *,
    seconds: float,
    timestamp: datetime,
) -> str:
    tally = counts(outcomes)
    ok = tally["failed"] == 0 and tally["error"] == 0
    total = len(outcomes)
    verdict = "PASS" if ok else "FAIL"
    head = (
        f"{total} flow{'s' if total != 1 else ''} · {tally['passed']} passed · {tally['failed']} failed · "
        f"{tally['error']} error · {tally['skipped']} skipped · {_seconds(seconds)}"
    )
    bar = "".join(
        f'<span class="seg {status}" style="width:{_pct(tally[status], total)}" title="{tally[status]} {status}">'
        "</span>"
        for status in ("passed", "failed", "error", "skipped")
        if tally[status]
    )
    longest = max((o.seconds for o in outcomes), default=0.0)
    rows = "".join(_overview_row(o, longest) for o in outcomes) or (
        '<tr><td colspan="4" class="empty">No flow ran.</td></tr>'
    )
    flows = "".join(_flow_section(o, images) for o in outcomes)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>argent report — {verdict} — {_t(head)}</title>
<style>{CSS}</style>
</head>
<body>
<header class="banner {"ok" if ok else "bad"}">
<h1><span class="verdict">{verdict}</span> argent flow report</h1>
<p class="counts">{_t(head)}</p>
<p class="when">{_t(timestamp.isoformat(timespec="seconds"))}</p>
<div class="bar" aria-hidden="true">{bar}</div>
</header>
<main>
<section class="overview">
<table>
<thead><tr><th>status</th><th>flow</th><th>duration</th><th class="timing">time</th></tr></thead>
<tbody>{rows}</tbody>
</table>
</section>
{flows}
</main>
</body>
</html>
"""


def _pill(status: str) -> str:
    return f'<span class="pill {status}">{status}</span>'


def _overview_row(outcome: FlowOutcome, longest: float) -> str:
    return (
        f'<tr class="{outcome.status}"><td>{_pill(outcome.status)}</td>'
        f'<td><a href="#flow-{outcome.position + 1}">{_t(outcome.rel)}</a></td>'
        f'<td class="num">{_seconds(outcome.seconds)}</td>'
        f'<td class="timing"><span class="tbar {outcome.status}" '
        f'style="width:{_pct(outcome.seconds, longest)}"></span></td></tr>'
    )


def _flow_section(outcome: FlowOutcome, images: dict[tuple[int, int], list[ImageRef]]) -> str:
    opened = " open" if outcome.status in ("failed", "error") else ""
    parts = [
        f'<section class="flow {outcome.status}" id="flow-{outcome.position + 1}">',
        f'<details{opened}><summary>{_pill(outcome.status)} <span class="name">{_t(outcome.rel)}</span>'
        f' <span class="dur">{_seconds(outcome.seconds)}</span></summary>',
    ]
    if outcome.message and outcome.status != "passed":
        parts.append(f'<p class="message">{_t(outcome.message)}</p>')
    if outcome.problem:
        parts.append(f'<p class="problem">{_t(outcome.problem.strip())}</p>')
    if outcome.result is None and outcome.lines:  # a flow cut off: the lines that had arrived
        parts.append(f'<pre class="lines">{_t(chr(10).join(outcome.lines))}</pre>')
    if outcome.result is not None:
        parts.append(_steps_table(outcome, images))
        summary = outcome.lines[-1] if outcome.lines else ""
        parts.append(f'<p class="summary">{_t(summary)}</p>')
    parts.append("</details></section>")
    return "\n".join(parts)


def _steps_table(outcome: FlowOutcome, images: dict[tuple[int, int], list[ImageRef]]) -> str:
    steps = outcome.steps
    if not steps:
        return '<p class="empty">No steps.</p>'
    longest = max((_ms(s.get("durationMs")) for s in steps), default=0.0)
    rows: list[str] = []
    for step in steps:
        index = step.get("index")
        number = index + 1 if isinstance(index, int) and not isinstance(index, bool) else "?"
        status = STEP_STATUS_WORDS.get(str(step.get("status")), "unknown")
        depth = step.get("depth")
        indent = min(depth, 20) if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0 else 0
        target = step.get("tool") or step.get("target") or step.get("message") or ""
        flow = step.get("flow")
        reason = " — ".join(
            str(v) for v in (step.get("reason"), step.get("warning")) if isinstance(v, str) and v
        )
        ms = _ms(step.get("durationMs"))
        where = (
            f' <span class="from">[{_t(flow)}]</span>'
            if isinstance(flow, str) and flow and outcome.result and flow != outcome.result.get("flow")
            else ""
        )
        rows.append(
            f'<tr class="step {status}" data-index="{_t(index)}">'
            f'<td class="num">{_t(number)}</td>'
            f'<td class="kind" style="padding-left:{0.5 + indent}em">{_t(step.get("kind", "?"))}</td>'
            f'<td class="target">{_t(target)}{where}</td>'
            f"<td>{_pill(status)}</td>"
            f'<td class="num">{ms:.0f}</td>'
            f'<td class="timing"><span class="tbar {status}" style="width:{_pct(ms, longest)}"></span></td>'
            f'<td class="reason">{_t(reason)}</td></tr>'
        )
        refs = images.get((outcome.position, index)) if isinstance(index, int) else None
        if refs:
            rows.append(f'<tr class="images"><td></td><td colspan="6">{_figures(refs)}</td></tr>')
    return (
        '<table class="steps"><thead><tr><th>#</th><th>kind</th><th>target</th><th>status</th>'
        '<th>durationMs</th><th class="timing">time</th><th>reason</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _figures(refs: Iterable[ImageRef]) -> str:
    out = []
    for ref in refs:
        if ref.href is not None:
            body = f'<a href="{_t(ref.href)}"><img src="{_t(ref.href)}" alt="{_t(ref.role)}"></a>'
            caption = _t(ref.role)
        else:
            body = '<div class="nofile">not copied</div>'
            caption = (
                f"{_t(ref.role)} — not copied into the report (the tool-server's path: {_t(ref.source)})"
            )
        out.append(f'<figure class="{_t(ref.role)}">{body}<figcaption>{caption}</figcaption></figure>')
    return f'<div class="shots">{"".join(out)}</div>'


CSS = """
:root { --pass:#1a7f37; --fail:#cf222e; --error:#bc4c00; --skip:#6e7781; --bg:#f6f8fa; --line:#d0d7de; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:#1f2328;
  background:var(--bg); }
.banner { padding:18px 28px 14px; color:#fff; }
.banner.ok { background:var(--pass); } .banner.bad { background:var(--fail); }
.banner h1 { margin:0; font-size:22px; font-weight:600; }
.banner .verdict { display:inline-block; padding:2px 10px; margin-right:8px; border-radius:6px;
  background:rgba(255,255,255,.22); letter-spacing:.05em; }
.banner .counts { margin:6px 0 2px; font-size:15px; } .banner .when { margin:0 0 10px; opacity:.8; font-size:12px; }
.bar { display:flex; height:10px; border-radius:5px; overflow:hidden; background:rgba(255,255,255,.3); }
.seg { display:block; height:100%; } .seg.passed { background:#4ac26b; } .seg.failed { background:#ff8182; }
.seg.error { background:#ffb77c; } .seg.skipped { background:#d0d7de; }
main { padding:18px 28px 40px; max-width:1400px; }
table { border-collapse:collapse; width:100%; background:#fff; }
th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-weight:600; font-size:12px; color:#57606a; background:#f6f8fa; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
.overview table { border:1px solid var(--line); border-radius:6px; margin-bottom:18px; }
.timing { width:22%; } .tbar { display:block; height:10px; min-width:2px; border-radius:3px; background:var(--skip); }
.tbar.passed, .tbar.pass { background:var(--pass); } .tbar.failed, .tbar.fail { background:var(--fail); }
.tbar.error { background:var(--error); }
.pill { display:inline-block; min-width:58px; text-align:center; padding:1px 8px; border-radius:10px;
  font-size:12px; font-weight:600; color:#fff; background:var(--skip); }
.pill.passed, .pill.pass { background:var(--pass); } .pill.failed, .pill.fail { background:var(--fail); }
.pill.error { background:var(--error); }
.flow { margin:10px 0; background:#fff; border:1px solid var(--line); border-left:6px solid var(--skip);
  border-radius:6px; }
.flow.passed { border-left-color:var(--pass); } .flow.failed { border-left-color:var(--fail); }
.flow.error { border-left-color:var(--error); }
summary { cursor:pointer; padding:8px 12px; font-size:15px; }
summary .name { font-weight:600; font-family:ui-monospace, SFMono-Regular, Menlo, monospace; }
summary .dur { color:#57606a; margin-left:8px; font-size:13px; }
.flow details > :not(summary) { margin-left:12px; margin-right:12px; }
.message, .problem { font-family:ui-monospace, SFMono-Regular, Menlo, monospace; white-space:pre-wrap;
  padding:8px 10px; border-radius:6px; background:#fff1f0; border:1px solid #ffcecb; }
.summary { color:#57606a; font-size:13px; } .lines { font-size:12px; color:#57606a; }
table.steps { margin:6px 0 4px; width:calc(100% - 24px); }
table.steps td.kind, table.steps td.target { font-family:ui-monospace, SFMono-Regular, Menlo, monospace; }
table.steps td.reason { color:#57606a; white-space:pre-wrap; word-break:break-word; }
tr.step.fail td, tr.step.error td { background:#fff8f7; }
.from { color:#57606a; }
.shots { display:flex; flex-wrap:wrap; gap:12px; padding:6px 0; }
figure { margin:0; flex:1 1 240px; max-width:420px; }
figure img { display:block; width:100%; height:auto; border:1px solid var(--line); border-radius:4px;
  background:repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 50%/16px 16px; }
figcaption { font-size:12px; color:#57606a; padding-top:3px; word-break:break-all; }
.nofile { height:80px; display:flex; align-items:center; justify-content:center; color:#57606a;
  border:1px dashed var(--line); border-radius:4px; }
.empty { color:#57606a; padding:12px; }
a { color:#0969da; text-decoration:none; } a:hover { text-decoration:underline; }
"""
