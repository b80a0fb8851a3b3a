"""One `argent flow run` on the terminal: its lines, its summary, its exit code and the images it exports.

The flows run through the public driver (``argent.driver.FlowDriver``), as the suite runner
(``argent.cli.suite``), the pytest plugin and a user's own Python code run them, so a flow runs with
the same arguments and reads the same whichever started it."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from argent.cli.live import LiveStatus
from argent.cli.problems import CommandFailed, call_failed
from argent.cli.targets import (
    FlowTarget,
    UsageProblem,
)
from argent.client.base import RefusalCallback, ToolCallError
from argent.client.client_files import RefusedClientFile
from argent.driver import FlowDriver, SuiteEntry
from argent.link.codec import read_or_none
from argent.link.models import PrerequisiteNotice, StepReport
from argent.reports.html import allowed_image_source, copy_image
from argent.reports.render import (
    echo,
    hang,
    is_report,
    json_text,
    one_line,
    prefixed_lines,
    read_report,
    read_step,
    step_lines,
    summary_line,
    unwritten_baseline_lines,
)
from argent.utils.oserrors import DISK_ERRNOS, remedy

EXIT_OK, EXIT_FAILED = 0, 1


class FlowRunCommand:
    """`argent flow run` on the terminal: the lines, the summary, the exit code and the exported images
    of the flows a public ``FlowDriver`` runs (``argent.driver``)."""

    def __init__(self, root: Path, options: dict[str, Any], *, as_json: bool, output: str | None) -> None:
        self.root = root
        self.as_json = as_json
        self.output = output
        self.driver = FlowDriver(root, options, notice=self.notice)

    def notice(self, text: str) -> None:
        """A note for the user on stderr (a ``[flow-files]`` line, an upload): a JSON warning object
        with ``--json``, so stderr stays machine-readable too."""
        if self.as_json:
            echo(json_text({"warning": text}, indent=None), err=True)
        else:
            echo(text, err=True)

    def _flow_notice(self, prefix: str) -> Callable[[str], None]:
        """A flow's own notes for stderr (a refused file, an unwritten baseline), each physical
        line under ``prefix`` (§7); a JSON warning object with ``--json``."""

        def notice(text: str) -> None:
            if self.as_json or not prefix:
                self.notice(text)
            else:
                for part in prefixed_lines(prefix, text):
                    echo(part, err=True)

        return notice

    @staticmethod
    def _tell_refused(notice: Callable[[str], None]) -> RefusalCallback:
        def refused(refusal: RefusedClientFile) -> None:
            notice(refusal.line())

        return refused

    async def single(self, target: FlowTarget, *, prefix: str = "") -> int:
        """One flow: its lines as its progress lines arrive (under a live status line on a
        terminal), then its summary. With ``prefix`` (``--workers N``, N > 1: INTERFACE.md §7)
        every line but a blank one starts with it, and the lines are plain on a terminal too."""
        printed_header = False
        root_flow = target.stem
        note = self._flow_notice(prefix)

        live = LiveStatus(enabled=False if self.as_json or prefix else None)

        def say(line: str) -> None:
            for part in prefixed_lines(prefix, line):
                live.line(part)

        def out(line: str) -> None:
            for part in prefixed_lines(prefix, line) if line else [line]:
                echo(part)

        def progress(step: dict[str, Any]) -> None:
            nonlocal printed_header
            if self.as_json:
                return
            if not printed_header:
                say(f'Flow "{root_flow}"')
                printed_header = True
            report = read_step(step)
            for line in step_lines(report if report is not None else step, root_flow):
                say(line)
            live.next_step = (report.index if report is not None else 0) + 2

        async with self.driver, live:
            try:
                run = await self.driver.run(target, on_step=progress, on_refused=self._tell_refused(note))
            except ToolCallError as exc:
                raise call_failed(exc) from None
            result = run.result
            # Copy failed snapshots' images while the tool-server that keeps them is still up.
            exported = self._export(result, target) if is_report(result) else []
        report = read_report(result)  # read after the export: it points the report at the copies
        if report is None:
            notice = read_or_none(result, PrerequisiteNotice)
            if notice is not None and notice.notice:
                raise CommandFailed(notice.notice)
            raise UsageProblem(f'"{target.stem}" did not produce a run report.')
        unwritten = self._unwritten_baselines(report, note)
        if self.as_json:
            echo(json_text(result))
        else:
            if not printed_header:
                out(f'Flow "{one_line(report.flow or root_flow)}"')
                for step in report.steps:
                    for line in step_lines(step, root_flow):
                        out(line)
            else:
                # The live lines named the tool-server's copies; say where --output put them.
                for step in exported:
                    out(f"  {step.kind} (step {step.index + 1}):")
                    for role, path in (step.artifacts or {}).items():
                        out(f"       {role}: {path}")
            if report.execution_prerequisite:
                out(hang(f"  assumes: {report.execution_prerequisite}", "    "))
            out("")
            out(summary_line(report))
        return EXIT_OK if report.ok and not unwritten and not run.refused else EXIT_FAILED

    def _unwritten_baselines(self, result: Any, notice: Callable[[str], None] | None = None) -> int:
        """Say why each baseline of the result was not written; how many were not."""
        lines = unwritten_baseline_lines(result)
        for line in lines:
            (notice or self.notice)(line)
        return len(lines)

    async def batch(self, targets: list[FlowTarget], directory: str) -> int:
        """The flows of a directory one at a time: each flow's start line, every step line as
        its progress line arrives (under a live status line on a terminal), then its summary."""
        total = len(targets)
        flows: list[dict[str, Any]] = [{"path": target.path} for target in targets]
        shown = [0] * total
        live = LiveStatus(enabled=False if self.as_json else None)

        def say(line: str) -> None:
            if not self.as_json:
                live.line(line)

        def start(position: int, target: FlowTarget) -> None:
            say(f"[{position + 1}/{total}] {os.path.relpath(target.path, directory)}")
            live.next_step = 1

        def progress(position: int, target: FlowTarget, step: dict[str, Any]) -> None:
            shown[position] += 1
            report = read_step(step)
            for line in step_lines(report if report is not None else step, target.stem):
                say(line)
            live.next_step = (report.index if report is not None else 0) + 2

        def end(position: int, entry: SuiteEntry) -> None:
            target, flow = entry.target, flows[position]
            if entry.skipped:
                start(position, target)
                flow["status"] = "skip"
                say("  · not run (batch stopped)")
            elif entry.error is not None:
                flow.update(status="fail", error=entry.error.message)
                # The tool-server's words: their later lines stay under the mark (no line of theirs
                # can pose as a summary among this batch's lines).
                say(hang(f"  ✗ {entry.error.message}", "    "))
            elif entry.run is not None and entry.run.report is None:
                flow.update(status="fail", error=f'"{target.stem}" did not produce a run report.')
            elif entry.run is not None:
                result = entry.run.result
                exported = self._export(result, target, directory)
                flow["report"] = result
                report = entry.run.report  # its ``ok`` is the JSON true, nothing else truthy
                ok = (
                    bool(report and report.ok)
                    and not self._unwritten_baselines(result)
                    and not entry.run.refused
                )
                flow["status"] = "pass" if ok else "fail"
                for line in closing_lines(result, target.stem, shown[position], exported):
                    say(line)

        async with self.driver, live:
            await self.driver.run_suite(
                targets,
                on_start=start,
                on_step=progress,
                on_end=end,
                on_refused=lambda position, target, refusal: self.notice(refusal.line()),
            )
        return self._summary(flows)

    def _summary(self, flows: list[dict[str, Any]]) -> int:
        """The closing line of a directory run (or its JSON), and its exit code."""
        total = len(flows)
        passed = sum(1 for flow in flows if flow.get("status") == "pass")
        failed = sum(1 for flow in flows if flow.get("status") == "fail")
        skipped = sum(1 for flow in flows if flow.get("status") == "skip")
        ok = failed == 0
        if self.as_json:
            summary = {"ok": ok, "total": total, "passed": passed, "failed": failed, "skipped": skipped}
            echo(json_text({**summary, "flows": flows}))
        else:
            plural = "s" if total != 1 else ""
            echo(
                f"\n{'PASS' if ok else 'FAIL'} — {total} flow{plural}: {passed} passed, {failed} failed, "
                f"{skipped} skipped"
            )
        return EXIT_OK if ok else EXIT_FAILED

    def _export(self, result: Any, target: FlowTarget, directory: str | None = None) -> list[StepReport]:
        """Copy the images of failed snapshot steps to ``--output`` (see ``export_artifacts``)."""
        if not self.output:
            return []
        out = Path(self.output)
        if directory is not None:
            sub = os.path.relpath(os.path.dirname(target.path), directory)
            if sub not in (".", "") and not sub.startswith(".."):
                out = out / sub

        def warn(text: str) -> None:
            echo(json_text({"warning": text}, indent=None) if self.as_json else text, err=True)

        return export_artifacts(result, os.path.realpath(target.path), target.stem, out, warn)


def closing_lines(result: Any, root_flow: str, shown: int, exported: Sequence[StepReport]) -> list[str]:
    """What is left to print when a flow of a directory run ends: the steps whose progress lines
    never came (a tool-server that does not stream), where ``--output`` put the images the live
    lines named, then the flow's summary line."""
    lines: list[str] = []
    for step in result["steps"][shown:]:
        lines.extend(step_lines(step, root_flow))
    if shown:
        for step in exported:
            lines.append(f"  {step.kind} (step {step.index + 1}):")
            lines.extend(f"       {role}: {path}" for role, path in (step.artifacts or {}).items())
    lines.append(f"  {summary_line(result)}")
    return lines


#: The file that claims an export directory for one flow file (its resolved path and a newline).
EXPORT_MARKER = ".argent-flow-source"
EXPORT_ROLES = ("baseline", "current", "diff", "screenshot")
_SAFE_EXPORT_NAME = re.compile(r"^[A-Za-z0-9_-]+\Z")
EXPORT_REFUSED = (
    "warning: not exporting {src} (the {role} of step {number}): the client copies only a PNG image of a "
    "__baselines__ or snapshot directory, which it is not."
)


def export_artifacts(
    result: Any, flow_path: str, stem: str, out: Path, warn: Callable[[str], None]
) -> list[StepReport]:
    """Copy each failed step's images to ``<out>/<stem>/<snapshotKey>-<role>.png`` (a failed device
    step's screenshot to ``<out>/<stem>/step-<n>-screenshot.png``) and point the
    report at the copies. A result names paths, so only a PNG image of a tool-server's snapshot scratch
    or a ``__baselines__`` directory is copied (``argent.reports.html.copy_image``, as the HTML report
    does); another file it names is left where it is, with a warning. The directory is claimed with a
    marker naming the flow file, only once a file is about to be copied; another flow's directory is
    never written into: the export moves to
    ``<stem>-<hash of the flow path>`` instead (longer hashes while those are taken too).
    Returns the steps whose artifacts now name the copies."""
    jobs: list[tuple[dict[str, Any], str, str, str, int]] = []
    steps: list[dict[str, Any]] = []
    for raw in _raw_steps(result):
        step = read_step(raw)
        if step is None or step.status not in ("fail", "error") or not step.artifacts:
            continue
        key = step.snapshot_key
        if not key and set(step.artifacts) == {"screenshot"}:
            key = f"step-{step.index + 1}"  # a failed device step's screenshot
        elif not key:
            baseline = step.artifacts.get("baseline", "")
            key = os.path.basename(baseline)[:-4] if baseline.endswith(".png") else ""
        if not _SAFE_EXPORT_NAME.match(key):
            warn(f"warning: not exporting the artifacts of step {step.index}: unsafe snapshot key {key!r}")
            continue
        for role in EXPORT_ROLES:
            src = step.artifacts.get(role)
            if src is None or not os.path.isfile(src):
                continue  # over a link to another machine the images stay there
            if not allowed_image_source(src):
                warn(EXPORT_REFUSED.format(src=src, role=role, number=step.index + 1))
                continue
            jobs.append((raw["artifacts"], role, src, key, step.index + 1))
            if not steps or steps[-1] is not raw:
                steps.append(raw)
    if not jobs:
        return []
    if not _SAFE_EXPORT_NAME.match(stem):
        warn(f"warning: not exporting artifacts for {flow_path}: unsafe flow name {stem!r}")
        return []
    dest = _claim_export_dir(out, stem, flow_path, warn)
    if dest is None:
        return []
    copied: set[int] = set()
    for artifacts, role, src, key, number in jobs:
        target = dest / f"{key}-{role}.png"
        try:
            ok = copy_image(src, str(target))
        except OSError as exc:
            advice = remedy(exc)
            then = f" {advice} and run again, or pass another --output directory." if advice else ""
            warn(f"warning: could not export {src} to {target}: {exc.strerror or exc}.{then}")
            continue
        if not ok:  # not a PNG image, a link, or over the size cap
            warn(EXPORT_REFUSED.format(src=src, role=role, number=number))
            continue
        artifacts[role] = str(target)
        copied.add(id(artifacts))
    return [step for raw in steps if id(raw["artifacts"]) in copied and (step := read_step(raw)) is not None]


def _raw_steps(result: Any) -> list[dict[str, Any]]:
    """The step objects of a report's JSON, which an export rewrites in place."""
    steps = result.get("steps") if isinstance(result, dict) else None
    return [step for step in steps if isinstance(step, dict)] if isinstance(steps, list) else []


def _claim_export_dir(out: Path, stem: str, flow_path: str, warn: Callable[[str], None]) -> Path | None:
    digest = hashlib.sha256(flow_path.encode("utf-8", "surrogateescape")).hexdigest()
    candidates = [out / stem] + [out / f"{stem}-{digest[:n]}" for n in range(8, 65, 8)]
    owned = f"{flow_path}\n"
    for i, cand in enumerate(candidates):
        try:
            why = _claim(cand, owned)
        except OSError as exc:  # a full or read-only disk: every other candidate is on it too
            warn(
                f"warning: could not export the artifacts of {stem} to {cand}: {exc.strerror or exc}. "
                f"{remedy(exc)} and run again, or pass another --output directory."
            )
            return None
        if why is None:
            return cand
        if i + 1 < len(candidates):
            warn(
                f"warning: {cand} {why}; writing this flow's artifacts to {candidates[i + 1]} so neither set is "
                "overwritten"
            )
        else:
            warn(
                f"warning: not exporting artifacts for {flow_path}: {cand} {why}, and so does every other candidate"
            )
    return None


def _claim(directory: Path, owned: str) -> str | None:
    """None when ``directory`` is (now) this flow's; else why it is not."""
    marker = directory / EXPORT_MARKER
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not marker.exists() and any(directory.iterdir()):
            return "already holds files from an unknown source"
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            owner = marker.read_text(encoding="utf-8", errors="replace")
        else:
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(owned)
            except BaseException:
                # An empty or cut marker would claim the directory for "an unknown source" for ever.
                with contextlib.suppress(OSError):
                    marker.unlink()
                raise
            return None
    except OSError as exc:
        if exc.errno in DISK_ERRNOS:
            raise
        return f"cannot be used ({exc.strerror or exc})"
    if owner == owned:
        return None
    return f"already holds artifacts from {owner.strip() or 'an unknown source'}"
