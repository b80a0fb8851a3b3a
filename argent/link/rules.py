"""What a flow may use when it runs over a link: file arguments, nested flows, recording tools.

Over a link the tool-server has only the files the client sends with the call. The client
and the tool-server must agree on which `tool:` arguments are files to send (a *file
argument*) and which nested `tool: flow-execute` steps name a flow the client can send. Both
sides use the functions here: the client to collect members, the runner's preflight to refuse
what a replay over a link cannot do.

File-input specs are ``argent.link.models.FileInputSpec`` (JSON ones, as a listing carries
them, are read with ``argent.link.codec``), so the client applies the rules to a listing and the
tool-server to its own registry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from attrs import frozen

from argent.link.codec import read_specs
from argent.link.models import FileInputSpec

#: The extensions (any case) of a file argument.
FILE_ARGUMENT_EXTENSIONS: tuple[str, ...] = (".png", ".yaml")
#: The tools that record a flow; a replay over a link rejects a `tool:` step that calls one.
RECORDING_TOOLS = frozenset(
    {
        "flow-start-recording",
        "flow-add-step",
        "flow-add-echo",
        "flow-add-script",
        "flow-finish-recording",
    }
)
FLOW_EXECUTE = "flow-execute"
#: The one derived path of a file input the protocol knows: the flow file of a saved flow (flow-execute's
#: and flow-read-prerequisite's ``flow_file``). A client sends the bytes of a derived path only for this
#: template; any other template a listing declares could name a file the user never named.
FLOW_FILE_TEMPLATE = "${project_root}/.argent/flows/${name}.yaml"
#: An argument that is only a key over a link (INTERFACE.md §9): never a file or a tree the client sends.
PROJECT_ROOT_ARG = "project_root"

_TEMPLATE_REF = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
_SEGMENTS = re.compile(r"[\\/]+")

#: What a non-file-argument input of each kind takes, in the preflight's words.
_KIND_WORDS = {"directory": "a directory", "tar-upload": "an app", "probe": "an output directory"}


@frozen
class FileArgument:
    """An argument whose value is a file the client sends: an absolute ``.png``/``.yaml`` path."""

    name: str
    path: str


@frozen
class OtherFileInput:
    """A file input of a `tool:` step that is not a file argument, and why."""

    name: str
    why: str


def template_refs(template: str) -> list[str]:
    return _TEMPLATE_REF.findall(template)


def _applies(spec: FileInputSpec, args: Mapping[str, Any]) -> bool:
    """Whether the spec's template yields a path for ``args`` (every reference a non-empty string)."""
    for ref in template_refs(spec.path):
        value = args.get(ref)
        if not isinstance(value, str) or value == "":
            return False
    if spec.unwrap_when_set is not None and spec.unwrap_when_set in args:
        return False
    return not (spec.skip_when_set is not None and spec.skip_when_set in args)


def sends_bytes(spec: FileInputSpec) -> bool:
    """Whether a client sends the bytes (content, or an upload) of a ``file`` or ``tar-upload`` input.

    A listing comes from the tool-server, and the client trusts it only as far as the user's own
    arguments go: an input whose path is its own argument (``${<target>}``, a file the argument
    names), or the flow file of a saved flow (``FLOW_FILE_TEMPLATE``). A constant path, a path
    built from other text (``${project_root}/.env``, ``${project_root}/../x``) or the project root
    itself would let a tool-server take files nobody named; such an input goes as its path alone.
    """
    if spec.kind not in ("file", "tar-upload"):
        return True  # directory, probe: the path alone anyway
    if spec.path == "${" + spec.target + "}":
        return spec.target != PROJECT_ROOT_ARG
    return spec.kind == "file" and spec.path == FLOW_FILE_TEMPLATE


def is_posix_absolute(path: str) -> bool:
    return path.startswith("/")


def has_dotdot(path: str) -> bool:
    return ".." in _SEGMENTS.split(path)


def has_file_argument_extension(path: str) -> bool:
    return path.lower().endswith(FILE_ARGUMENT_EXTENSIONS)


def classify_file_inputs(
    specs: Iterable[FileInputSpec | Mapping[str, Any]] | None, args: Any
) -> tuple[list[FileArgument], list[OtherFileInput]]:
    """The file arguments of one `tool:` step and its other file inputs.

    A file argument is a ``file`` input whose path template is only that argument
    (``${<target>}``), with an absolute value ending in ``.png`` or ``.yaml`` in any case.
    An input that does not apply to ``args`` (a reference unset, or its ``unwrapWhenSet`` /
    ``skipWhenSet`` parameter set) is neither.
    """
    files: list[FileArgument] = []
    others: list[OtherFileInput] = []
    if not specs or not isinstance(args, Mapping):
        return files, others
    for spec in read_specs(specs):
        target, template, kind = spec.target, spec.path, spec.kind
        if not _applies(spec, args):
            continue
        refs = template_refs(template)
        if kind != "file":
            words = _KIND_WORDS.get(kind, f"a {kind} input")
            others.append(OtherFileInput(target, f"{target} takes {words}"))
            continue
        if len(refs) > 1:
            names = ", ".join(dict.fromkeys(refs))
            others.append(OtherFileInput(target, f"{target} is a path the tool builds from {names}"))
            continue
        if template != f"${{{target}}}":
            others.append(OtherFileInput(target, f"{target} is a path the tool builds from {template}"))
            continue
        value = args[target]
        if not is_posix_absolute(value):
            others.append(OtherFileInput(target, f'{target} is a relative path ("{value}")'))
            continue
        if not has_file_argument_extension(value):
            others.append(
                OtherFileInput(target, f'{target} is a file that does not end in .png or .yaml ("{value}")')
            )
            continue
        files.append(FileArgument(target, value))
    return files, others


def file_arguments(
    specs: Iterable[FileInputSpec | Mapping[str, Any]] | None, args: Any
) -> list[tuple[str, str]]:
    """The file arguments of one `tool:` step as ``(argument, path)`` pairs (``classify_file_inputs``):
    what the reference graph of either side asks of a tool's ``fileInputs``."""
    files, _ = classify_file_inputs(specs, args)
    return [(argument.name, argument.path) for argument in files]


@frozen
class NestedFlowRef:
    """A nested `tool: flow-execute` step that names its flow the way a link can send it."""

    project_root: str
    name: str

    @property
    def directory(self) -> str:
        return f"{self.project_root}/.argent/flows"

    @property
    def target(self) -> str:
        return f"{self.name}.yaml"

    @property
    def key(self) -> str:
        return f"{self.directory}\0{self.target}"

    @property
    def path(self) -> str:
        return f"{self.directory}/{self.target}"


def nested_flow_ref(args: Any) -> NestedFlowRef | None:
    """The flow a `tool: flow-execute` step names with ``name`` and an absolute ``project_root``
    without a ``..`` segment; None for any other step (``flow_path``, a relative root, ...)."""
    if not isinstance(args, Mapping):
        return None
    name = args.get("name")
    root = args.get("project_root")
    if args.get("flow_path") is not None:
        return None
    if not isinstance(name, str) or not isinstance(root, str):
        return None
    if not is_posix_absolute(root) or has_dotdot(root):
        return None
    return NestedFlowRef(project_root=root, name=name)
