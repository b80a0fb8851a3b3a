"""The images of failed steps, kept where the user can open them after the command exits.

A flow report names images by their paths on the tool-server (a failed snapshot's baseline, current
and diff, a failed device step's screenshot), in a scratch directory the tool-server removes when it
stops. ``export_artifacts`` copies a result's images to a directory of the user's (``--output``, or
the run's folder under ``.argent/results``: ``argent.reports.results``) and points the report at the
copies. ``KeepingClient`` does it as each step line arrives, beneath everything that prints or
records a run, so every path a line, a JUnit case or an HTML report names is one that stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from argent.client.base import ProgressCallback, RefusalCallback, ToolClient
from argent.link.models import StepReport, ToolEntry
from argent.reports.html import allowed_image_source, copy_image
from argent.reports.render import read_step
from argent.utils.oserrors import DISK_ERRNOS, remedy

__all__ = [
    "EXPORT_MARKER",
    "EXPORT_REFUSED",
    "EXPORT_ROLES",
    "Exporter",
    "KeepingClient",
    "export_artifacts",
]

FLOW_EXECUTE = "flow-execute"

#: The file that claims an export directory for one flow file (its resolved path and a newline).
EXPORT_MARKER = ".argent-flow-source"
EXPORT_ROLES = ("baseline", "current", "diff", "screenshot")
_SAFE_EXPORT_NAME = re.compile(r"^[A-Za-z0-9_-]+\Z")
EXPORT_REFUSED = (
    "warning: not exporting {src} (the {role} of step {number}): the client copies only a PNG image of a "
    "__baselines__ or snapshot directory, which it is not."
)


def export_artifacts(
    result: Any,
    flow_path: str,
    stem: str,
    out: Path | Callable[[], Path | None],
    warn: Callable[[str], None],
    state: Exporter | None = None,
) -> list[StepReport]:
    """Copy each failed step's images to ``<out>/<stem>/<snapshotKey>-<role>.png`` (a failed device
    step's screenshot to ``<out>/<stem>/step-<n>-screenshot.png``) and point the
    report at the copies. A result names paths, so only a PNG image of a tool-server's snapshot scratch
    or a ``__baselines__`` directory is copied (``argent.reports.html.copy_image``, as the HTML report
    does); another file it names is left where it is, with a warning. The directory is claimed with a
    marker naming the flow file, only once a file is about to be copied; another flow's directory is
    never written into: the export moves to
    ``<stem>-<hash of the flow path>`` instead (longer hashes while those are taken too).
    ``out`` may be a function that makes the directory once there is an image to copy (None: no
    directory could be made, and it said why); ``state`` keeps the copies and claims of earlier calls
    (an image copied once is pointed at again, not copied twice).
    Returns the steps whose artifacts now name the copies."""
    state = state if state is not None else Exporter()
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
    dest = state.claim(out, stem, flow_path, warn)
    if dest is None:
        return []
    copied: set[int] = set()
    for artifacts, role, src, key, number in jobs:
        target = dest / f"{key}-{role}.png"
        kept = state.copies.get(src)
        if kept is not None:
            artifacts[role] = kept
            copied.add(id(artifacts))
            continue
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
        artifacts[role] = state.copies[src] = str(target)
        state.kept.add(str(target))
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


class Exporter:
    """What the exports of one run have done: the images copied (source -> copy) and the directory
    each flow file claimed, so a flow's steps exported one at a time land in one directory."""

    def __init__(self, kept: set[str] | None = None) -> None:
        self.copies: dict[str, str] = {}
        self.claims: dict[str, Path | None] = {}
        #: Every copy made (shared with the HTML report, which may copy these in turn).
        self.kept: set[str] = kept if kept is not None else set()

    def claim(
        self, out: Path | Callable[[], Path | None], stem: str, flow_path: str, warn: Callable[[str], None]
    ) -> Path | None:
        key = f"{flow_path}\0{stem}"  # one flow's runs on several platforms: one directory each
        if key not in self.claims:
            base = out() if callable(out) else out
            self.claims[key] = _claim_export_dir(base, stem, flow_path, warn) if base is not None else None
        return self.claims[key]


#: Where one flow-execute call's images go: its flow file, its stem and the directory (or a function
#: that makes it); None to keep nothing of that call.
Destination = Callable[[dict[str, Any]], "tuple[str, str, Path | Callable[[], Path | None]] | None"]


class KeepingClient:
    """A ``ToolClient`` that copies the images of each flow-execute call's failed steps as their
    lines arrive (and those of the result, for a tool-server that does not stream), pointing the
    lines at the copies before anything above it sees them."""

    def __init__(
        self,
        inner: ToolClient,
        destination: Destination,
        warn: Callable[[str], None],
        *,
        kept: set[str] | None = None,
    ) -> None:
        self.inner = inner
        self.destination = destination
        self.warn = _once(warn)
        self.state = Exporter(kept)

    @property
    def linked(self) -> bool:
        return bool(getattr(self.inner, "linked", False))

    async def list_tools(self) -> list[ToolEntry]:
        return await self.inner.list_tools()

    async def _keep(self, where: tuple[str, str, Path | Callable[[], Path | None]], result: Any) -> None:
        flow_path, stem, out = where
        await asyncio.to_thread(export_artifacts, result, flow_path, stem, out, self.warn, self.state)

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        on_progress: ProgressCallback | None = None,
        on_refused: RefusalCallback | None = None,
    ) -> Any:
        where = self.destination(args) if name == FLOW_EXECUTE else None
        if where is None:
            return await self.inner.call(name, args, on_progress=on_progress, on_refused=on_refused)
        kept = where
        progress: ProgressCallback | None = None
        if on_progress is not None:
            tell = on_progress

            async def progress(step: dict[str, Any]) -> None:
                if isinstance(step, dict) and step.get("artifacts"):
                    await self._keep(kept, {"steps": [step]})
                told = tell(step)
                if isinstance(told, Awaitable):
                    await told

        result = await self.inner.call(name, args, on_progress=progress, on_refused=on_refused)
        if isinstance(result, dict):
            await self._keep(kept, result)
        return result


def _once(warn: Callable[[str], None]) -> Callable[[str], None]:
    """``warn``, saying each text once (a step's images are exported as its line arrives and again
    with the result)."""
    said: set[str] = set()

    def once(text: str) -> None:
        if text not in said:
            said.add(text)
            warn(text)

    return once
