"""The files a step names: one small value per kind, declared by each directive.

A directive that names a file declares it in its table entry (``Directive.files``): given the step,
the references it makes, in the order they are written. Nothing else in argent decides which steps
name files; the reference graph (``argent.flows.graph``) asks the table, and every consumer (the
client's members, the link preflight, the device scan, the script refusal) asks the graph.

Two kinds are *followed*: a ``Fragment`` (`run:`) and a ``NestedFlow`` (`tool: flow-execute`) name
other flow files, which the graph reads and walks in turn. The others are leaves: their files are
sent, checked or refused by the consumer that cares about that kind.

A `tool:` step's file arguments depend on the tool (its ``fileInputs``), which the flow language does
not know: the graph is given ``ToolFiles``, the tool-server's registry or the client's listing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol, TypeAlias

from attrs import frozen

__all__ = [
    "FLOW_EXECUTE",
    "FOLLOWED",
    "NO_TOOL_FILES",
    "Baseline",
    "Fragment",
    "LaunchFile",
    "NestedFlow",
    "Reference",
    "ScriptFile",
    "ToolFile",
    "ToolFiles",
    "UploadFile",
    "flow_key",
]

#: The tool a `tool:` step names to run another saved flow (the runner runs it itself).
FLOW_EXECUTE = "flow-execute"


def flow_key(directory: str, target: str) -> str:
    """The key of a flow file named by ``target`` in ``directory``: the link protocol's member key."""
    return f"{directory}\0{target}"


@frozen
class Fragment:
    """`run: <target>`: a flow file beside the real file that names it."""

    target: str
    kind: ClassVar[str] = "fragment"

    def key(self, naming_canonical: str) -> str:
        return flow_key(posixpath.dirname(naming_canonical), self.target)


@frozen
class NestedFlow:
    """`tool: flow-execute`: a saved flow (``name`` in ``project_root``) or a flow file (``flow_path``).

    Each field is the value of the step's argument as written (None when absent; a value of another
    type is kept, so a rule that asks "is it set?" reads it as the runner does), and
    ``update_baselines`` too (a nested run updates baselines when its step says so, else as its
    caller does)."""

    name: Any = None
    project_root: Any = None
    flow_path: Any = None
    update_baselines: Any = None
    kind: ClassVar[str] = "nested"

    @classmethod
    def of_args(cls, args: Any) -> NestedFlow:
        if not isinstance(args, Mapping):
            return cls()
        return cls(
            args.get("name"), args.get("project_root"), args.get("flow_path"), args.get("updateBaselines")
        )

    @property
    def by_name(self) -> bool:
        """Named as a saved flow: a ``name`` and a ``project_root`` (strings), no ``flow_path``."""
        return isinstance(self.name, str) and isinstance(self.project_root, str) and self.flow_path is None

    def args(self) -> dict[str, Any]:
        """The source arguments, as the step gave them (absent ones left out)."""
        given = {"name": self.name, "project_root": self.project_root, "flow_path": self.flow_path}
        return {key: value for key, value in given.items() if value is not None}

    def key(self, naming_canonical: str) -> str:
        if self.by_name:
            return flow_key(f"{self.project_root}/.argent/flows", f"{self.name}.yaml")
        return flow_key("", repr((self.name, self.project_root, self.flow_path)))


@frozen
class Baseline:
    """`snapshot: <name>`: the run's baselines of that name (``__baselines__/<key>/<name>__*.png``)."""

    name: str
    kind: ClassVar[str] = "baseline"


@frozen
class ScriptFile:
    """`script: <path>`: a program beside the flow file."""

    path: str
    kind: ClassVar[str] = "script"


@frozen
class LaunchFile:
    """`launch:`: the chromium target as written (a page beside the flow, a ``file:`` URL or a URL)."""

    target: str
    kind: ClassVar[str] = "launch"


@frozen
class UploadFile:
    """`upload:`: a file set into a page's file input, by a path relative to the real file that names
    it (as a `run:` target); its key is a flow key's shape (``<real dir>\\0<path>``)."""

    path: str
    kind: ClassVar[str] = "upload"

    def key(self, naming_canonical: str) -> str:
        return flow_key(posixpath.dirname(naming_canonical), self.path)


@frozen
class ToolFile:
    """A file argument of a `tool:` step: ``argument`` of ``tool`` names the absolute ``path``."""

    tool: str
    argument: str
    path: str
    kind: ClassVar[str] = "tool"


Reference: TypeAlias = Fragment | NestedFlow | Baseline | ScriptFile | LaunchFile | UploadFile | ToolFile
#: The kinds the graph reads and walks.
FOLLOWED: tuple[type, ...] = (Fragment, NestedFlow)


class ToolFiles(Protocol):
    """Which arguments of a `tool:` step are files: ``(argument, path)`` pairs, in order."""

    def __call__(self, tool: str, args: Any) -> Sequence[tuple[str, str]]: ...


def _no_tool_files(tool: str, args: Any) -> Sequence[tuple[str, str]]:
    return ()


#: For a graph that does not care about the file arguments of `tool:` steps.
NO_TOOL_FILES: ToolFiles = _no_tool_files
