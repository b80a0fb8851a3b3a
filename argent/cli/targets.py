"""Turning what the user typed into flows to run: a saved name, a YAML path or a directory.

Every refusal here is a usage problem (exit 2) and says what to type instead.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from argent.cli.problems import UsageProblem as UsageProblem  # the error of this module, re-exported
from argent.flows.names import BASELINES_DIR, FLOW_NAME_RE
from argent.link.paths import spelling_of
from argent.reports.model import FlowTarget as FlowTarget  # the value of this module, re-exported

PROJECT_MARKERS = (".argent", ".git", "pyproject.toml")
SKIPPED_DIRS = ("node_modules", BASELINES_DIR)


def find_project_root(start: Path) -> Path:
    """The nearest ancestor holding .argent, .git or pyproject.toml, else ``start``."""
    for candidate in (start, *start.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return start


def _did_you_mean(path: str, command: str = "run") -> str:
    return f"Did you mean: argent flow {command} {shlex.quote(path)}"


def resolve_flow_ref(
    ref: str, project_root: Path, *, recursive: bool, command: str = "run"
) -> FlowTarget | list[FlowTarget]:
    """A single flow, or the flows of a directory (sorted by relative path); ``command`` is the
    `argent flow` subcommand the messages name."""
    is_name = bool(FLOW_NAME_RE.match(ref))
    saved = project_root / ".argent" / "flows" / f"{ref}.yaml"
    if is_name and not saved.exists() and os.path.isdir(ref):
        # A bare word that names no saved flow but a directory here: run that directory.
        return discover_flows(os.path.abspath(ref), recursive=recursive)
    if is_name:
        path = project_root / ".argent" / "flows" / f"{ref}.yaml"
        if recursive:
            raise UsageProblem(
                f'flow {command} --recursive requires a directory path: "{ref}" is a saved-flow name, '
                f"which always addresses the single file {path}."
            )
        return _single(str(path), ref, name=ref, project_root=project_root, command=command)
    parts = ref.replace("\\", "/").split("/")
    if ".." in parts:
        real = os.path.realpath(os.path.dirname(ref) or ".")
        fixed = os.path.join(real, os.path.basename(ref))
        recovery = (
            _did_you_mean(fixed, command)
            if os.path.exists(fixed)
            else "Pass the fully resolved path to the flow's YAML."
        )
        raise UsageProblem(
            'Flow path must not contain ".." segments — they are collapsed without following symlinks, '
            f"so the path can name a different file than the one your shell opens: {ref}\n{recovery}"
        )
    absolute = os.path.abspath(ref)
    if os.path.isdir(absolute):
        return discover_flows(absolute, recursive=recursive)
    if recursive:
        if not os.path.exists(absolute):
            raise UsageProblem(f"Flow directory not found: {absolute}")
        raise UsageProblem(f"flow {command} --recursive requires a directory path: {ref}")
    if ref.endswith(("/", os.sep)):
        trimmed = ref.rstrip("/" + os.sep)
        raise UsageProblem(
            "Flow path must not end in a path separator — a flow is one YAML file or a directory of them: "
            f"{ref}\n{_did_you_mean(trimmed, command)}"
        )
    base = os.path.basename(ref)
    if base.lower() == ".yaml":
        raise UsageProblem(
            f'Flow filename must have a non-empty name containing only letters, numbers, "_", or "-": {ref}'
        )
    stem, ext = os.path.splitext(base)
    if ext == "" and "/" not in ref:
        raise UsageProblem(
            f'Flow name must contain only letters, numbers, "_", or "-": {ref}\n'
            "Names run `.argent/flows/<name>.yaml`; pass a path ending in .yaml to run a flow file kept elsewhere."
        )
    if ext.lower() == ".yaml" and ext != ".yaml":
        raise UsageProblem(f"Flow extension must be lowercase .yaml, not {ext}: {ref}")
    if ext != ".yaml":
        raise UsageProblem(f"Flow path must end in .yaml: {ref}")
    if not FLOW_NAME_RE.match(stem):
        raise UsageProblem(
            f'Flow filename must have a non-empty name containing only letters, numbers, "_", or "-": {ref}'
        )
    return _single(absolute, ref, name=None, project_root=project_root, command=command)


def _single(path: str, ref: str, *, name: str | None, project_root: Path, command: str = "run") -> FlowTarget:
    if os.path.isdir(path):
        raise UsageProblem(f"Flow path is not a file: {path}")
    if not os.path.exists(path):
        message = f"Flow file not found: {path}"
        if name is not None:
            message += (
                f'\nNo flow named "{name}" is saved there — run `argent flow list` to see the saved flows.'
            )
        else:
            stem = Path(path).stem
            saved = project_root / ".argent" / "flows" / f"{stem}.yaml"
            if saved.is_file():
                message += f'\nA flow named "{stem}" is saved under .argent/flows — did you mean: argent flow {command} {stem}'
        spelled = spelling_of(os.path.dirname(path), os.path.basename(path))
        if spelled.state == "case_folded" and spelled.addressable and spelled.actual:
            # A case-sensitive filesystem: the directory holds the name in another case.
            actual = spelled.actual
            fix = Path(actual).stem if name is not None else os.path.join(os.path.dirname(ref), actual)
            message += f"\n{_did_you_mean(fix, command)}"
        raise UsageProblem(message)
    if not os.access(path, os.R_OK) or not os.path.isfile(path):
        raise UsageProblem(f"Could not read flow file: {path}")
    spelled = spelling_of(os.path.dirname(path), os.path.basename(path))
    if spelled.state == "case_folded":
        actual = spelled.actual or ""
        fix = (
            _did_you_mean(os.path.join(os.path.dirname(ref), actual), command)
            if spelled.addressable
            else f"Rename {actual} to {os.path.basename(path)} to run it — flow files must be lowercase .yaml."
        )
        raise UsageProblem(
            f'Flow path must name the file as it appears on disk — this filesystem matched "{os.path.basename(path)}" '
            f'case-insensitively to "{actual}", so the flow name (which keys the report, __baselines__/, and '
            f"--output) would be one no file carries: {ref}\n{fix}"
        )
    return FlowTarget(path=path, name=name)


def discover_flows(directory: str, *, recursive: bool) -> list[FlowTarget]:
    """Runnable flow files of a directory; with ``recursive`` also its subdirectories."""
    found: list[str] = []
    if not os.access(directory, os.R_OK | os.X_OK):
        raise UsageProblem(f"Could not read flow directory: {directory}")
    for current, dirs, files in os.walk(directory, followlinks=False):
        dirs[:] = (
            sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS) if recursive else []
        )
        for name in files:
            full = os.path.join(current, name)
            stem, ext = os.path.splitext(name)
            if (
                ext == ".yaml"
                and FLOW_NAME_RE.match(stem)
                and os.path.isfile(full)
                and os.access(full, os.R_OK)
            ):
                found.append(full)
    if not found:
        hint = "" if recursive else "\nPass -r/--recursive to include subdirectories."
        raise UsageProblem(f"No flows found in {directory}{hint}")
    found.sort(key=lambda p: os.path.relpath(p, directory))
    return [FlowTarget(path=p) for p in found]


def list_saved_flows(project_root: Path) -> list[str]:
    """`.argent/flows/<rel>` of every runnable saved flow, at any depth, never in __baselines__."""
    flows_dir = project_root / ".argent" / "flows"
    if not flows_dir.is_dir():
        raise UsageProblem(f"No .argent/flows directory in {project_root}.")
    try:
        targets = discover_flows(str(flows_dir), recursive=True)
    except UsageProblem:
        return []
    return [os.path.join(".argent", "flows", os.path.relpath(t.path, flows_dir)) for t in targets]
