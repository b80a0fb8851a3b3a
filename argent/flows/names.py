"""Flow names, baseline keys, fragment display names, and the labels of steps.

The JavaScript formatting rules (``argent.flows.js``) and the selector/condition labels
(``argent.flows.labels``) are re-exported here, where callers have always found them.
"""

from __future__ import annotations

import os
import re
from typing import Protocol

from argent.errors import FLOW_NAME_INVALID, FlowError
from argent.flows.js import js_json, js_json_string, js_number, js_string
from argent.flows.labels import condition_label, describe_selector, selector_label, target_label

__all__ = [
    "FLOW_FILE_NAME_PATTERN_TEXT",
    "FLOW_FILE_NAME_RE",
    "FLOW_NAME_PATTERN_TEXT",
    "FLOW_NAME_RE",
    "assert_safe_flow_name",
    "baseline_key",
    "condition_label",
    "describe_selector",
    "fragment_display_name",
    "is_safe_flow_name",
    "js_json",
    "js_json_string",
    "js_number",
    "js_string",
    "selector_label",
    "step_target_label",
    "target_label",
]

# `\Z`, not `$`: Python's `$` also matches before a trailing newline, JavaScript's does not.
#: A flow name (also a snapshot name): letters, digits, underscore, hyphen.
FLOW_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+\Z")
#: A flow file name: a flow name plus the lowercase `.yaml` extension.
FLOW_FILE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+\.yaml\Z")

FLOW_NAME_PATTERN_TEXT = "/^[A-Za-z0-9_-]+$/"
FLOW_FILE_NAME_PATTERN_TEXT = "/^[A-Za-z0-9_-]+\\.yaml$/"

_YAML_EXT = ".yaml"


def is_safe_flow_name(name: object) -> bool:
    """True when ``name`` can name a flow file and a baseline directory."""
    return isinstance(name, str) and FLOW_NAME_RE.match(name) is not None


def assert_safe_flow_name(name: str) -> None:
    """Refuse a flow name that could escape the flows directory (``FLOW_NAME_INVALID``)."""
    if not is_safe_flow_name(name):
        raise FlowError(
            f'Invalid flow name "{name}". Flow names must match {FLOW_NAME_PATTERN_TEXT} '
            '(letters, digits, underscore, hyphen — no path separators, no "..", no spaces).',
            error_code=FLOW_NAME_INVALID,
        )


def _stem(base: str) -> str:
    """A file's name without its `.yaml` extension (a bare `.yaml` keeps its name, like node's basename)."""
    if base.endswith(_YAML_EXT) and len(base) > len(_YAML_EXT):
        return base[: -len(_YAML_EXT)]
    return base


def baseline_key(canonical_path: str, written_name: str) -> str:
    """The directory under `__baselines__/` for a root flow.

    The canonical root file's stem when it is a safe flow name, else the name as written.
    """
    stem = _stem(os.path.basename(os.fspath(canonical_path)))
    if is_safe_flow_name(stem):
        return stem
    return written_name


#: The directory beside a root flow's real file that holds its baselines, one subdirectory per key.
BASELINES_DIR = "__baselines__"


def baseline_dir(canonical_path: str, written_name: str) -> str:
    """Where a run keeps its baselines: ``<dir of the root's real file>/__baselines__/<key>``.

    The one rule both sides use: the client sends and writes baselines at this path, and the
    tool-server's runner reads and writes them there (``baseline_key`` picks ``<key>``).
    """
    return f"{os.path.dirname(canonical_path)}/{BASELINES_DIR}/{baseline_key(canonical_path, written_name)}"


def fragment_display_name(target: str, root_name: str) -> str:
    """The `flow` label of a `run:` fragment: its stem, never the root's own name.

    When the fragment's stem equals the root flow's name, the as-written target minus
    `.yaml` is used (``helpers/login``), or ``./{stem}`` for a bare file name.
    """
    base = target.rsplit("/", 1)[-1]
    stem = _stem(base)
    if stem != root_name:
        return stem
    if "/" in target:
        return target[: -len(_YAML_EXT)] if target.endswith(_YAML_EXT) else target
    return f"./{stem}"


# --------------------------------------------------------------------------------------------
# Labels


class _Labelled(Protocol):
    def label(self) -> str | None: ...


def step_target_label(step: _Labelled) -> str | None:
    """The `target` of a step report (none for echo, tool, launch, wait and idle): the step's own label."""
    return step.label()
