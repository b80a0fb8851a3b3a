"""The members of a recorded step: the files one ``flow-add-step`` call makes the tool-server read.

Over a link the ``project_root`` probe of ``flow-add-step`` (``"collect": "step"``) carries
``members`` — and no ``content``, ``canonical`` or ``spelling``. The client builds the step from
``command`` and the JSON text of ``args`` and sends:

- a ``tool:`` step with file arguments: each file argument, as for the tool files of a run;
- ``flow-execute`` with ``name`` and an absolute ``project_root``: the recording file (by its
  directory and file name), the file with the step's flow name beside the recording's real
  file, and the named flow with its members and the baselines of its run, as a nested flow
  (whose baselines are updated only when the step sets ``updateBaselines: true``);
- ``flow-execute`` with the ``flow_path`` of a file in the recording's directory: the members of
  the row above for that file's name, and the file itself, by the recording's directory and the
  file name;
- ``flow-execute`` with another ``flow_path``: the recording file;
- anything else, or a call without a valid name, an absolute project_root or object args: none.

The recording file is ``<project_root>/.argent/flows/<name>.yaml``; the client policy applies
with it in place of the flow file. Everything here blocks; async callers run it in a thread.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from argent.client.client_policy import ClientPolicy
from argent.client.collect import Collection, Listing, collect_step_files, followable_nested_flow, tool_inputs
from argent.flows.names import is_safe_flow_name
from argent.link.paths import canonical_path, spelling_of
from argent.link.rules import (
    FLOW_EXECUTE,
    classify_file_inputs,
    has_dotdot,
    is_posix_absolute,
)
from argent.link.spelling import LISTED

YAML_EXT = ".yaml"


@frozen
class RecordedStepCall:
    """A ``flow-add-step`` call whose step the client can build."""

    name: str
    project_root: str
    command: str
    args: dict[str, Any]

    @property
    def flows_dir(self) -> str:
        return f"{self.project_root}/.argent/flows"

    @property
    def recording(self) -> str:
        return f"{self.flows_dir}/{self.name}{YAML_EXT}"


def recorded_step_call(call_args: Mapping[str, Any]) -> RecordedStepCall | None:
    """The step of a call; None without a valid name, an absolute project_root, a command or
    ``args`` that are the JSON text of an object."""
    name = call_args.get("name")
    root = call_args.get("project_root")
    command = call_args.get("command")
    text = call_args.get("args")
    if not is_safe_flow_name(name) or not isinstance(root, str) or not is_posix_absolute(root):
        return None
    if not isinstance(command, str) or not command:
        return None
    if text is None:
        args: Any = {}
    elif isinstance(text, str):
        try:
            args = json.loads(text)
        except ValueError:
            return None
    else:
        return None
    if not isinstance(args, dict):
        return None
    assert isinstance(name, str)
    return RecordedStepCall(name=name, project_root=root, command=command, args=args)


def sibling_flow_path(flow_path: Any, recording_real_dir: str) -> str | None:
    """The flow name of a ``flow_path`` in the recording's (real) directory, else None."""
    if not isinstance(flow_path, str) or not is_posix_absolute(flow_path) or has_dotdot(flow_path):
        return None
    directory, base = posixpath.split(flow_path)
    if not base.endswith(YAML_EXT) or not is_safe_flow_name(base[: -len(YAML_EXT)]):
        return None
    if canonical_path(directory) != recording_real_dir:
        return None
    return base[: -len(YAML_EXT)]


def _empty() -> Collection:
    return Collection(canonical="", spelling=LISTED, members=())


def collect_step_members(call_args: Mapping[str, Any], listing: Listing) -> Collection:
    """The members of the step a ``flow-add-step`` call records (``canonical``/``spelling`` of the
    recording file; no members for a call whose step cannot be built)."""
    call = recorded_step_call(call_args)
    if call is None:
        return _empty()
    listing = list(listing)
    recording_canonical = canonical_path(call.recording)
    real_dir = os.path.dirname(recording_canonical)
    policy = ClientPolicy.for_call(call.project_root, call.recording, recording_canonical)
    nested: dict[str, Any] | None = None
    by_name: list[tuple[str, str]] = []  # flow files sent by name only
    tool_paths: list[str] = []
    if call.command == FLOW_EXECUTE:
        step_args = call.args
        also: str | None = None  # a flow_path file, sent by the recording's directory and its name
        flow_path = step_args.get("flow_path")
        if flow_path is not None and step_args.get("name") is None:
            stem = sibling_flow_path(flow_path, real_dir)
            if stem is not None:
                root = step_args.get("project_root")
                if not isinstance(root, str) or not is_posix_absolute(root) or has_dotdot(root):
                    root = call.project_root
                step_args = {**step_args, "name": stem, "project_root": root}
                step_args.pop("flow_path", None)
                also = posixpath.basename(flow_path)
            else:
                step_args = {}
        ref = followable_nested_flow(step_args)
        if ref is not None:
            nested = step_args  # the step as a one-step flow: the named flow and all it reaches
        if ref is not None or flow_path is not None:
            by_name.append((call.flows_dir, f"{call.name}{YAML_EXT}"))
        if ref is not None:
            by_name.append((real_dir, ref.target))
        if also is not None:
            by_name.append((call.flows_dir, also))
    else:
        files, _ = classify_file_inputs(tool_inputs(listing).get(call.command), call.args)
        tool_paths = [argument.path for argument in files]
    members, update_dirs = collect_step_files(
        policy,
        listing,
        origin=recording_canonical,
        run_name=call.name,
        nested=nested,
        flows_by_name=by_name,
        tool_paths=tool_paths,
    )
    return Collection(
        canonical=recording_canonical,
        spelling=spelling_of(call.flows_dir, f"{call.name}{YAML_EXT}"),
        members=members,
        policy=policy,
        update_dirs=update_dirs,
    )
