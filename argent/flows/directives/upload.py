"""`upload: { into, files }` — set the files of a page's file input (`<input type=file>`, or the
`<label>` of one), as a person's pick in the file dialog does: `input` and `change` fire. Each path is
relative to the flow file that names it (its real directory), as a `run:` target is; over a link the
client sends the files with the call."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from attrs import frozen

from argent.flows.canonical import sel_json, selector_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, only_keys
from argent.flows.js import js_json
from argent.flows.labels import selector_label
from argent.flows.references import Reference, ToolFiles, UploadFile
from argent.flows.values import Selector, step_line

_NEEDS = (
    "upload needs { into, files } — the file input (or its label) and the files to set, relative to this "
    "flow's file, e.g. `upload: { into: Photo, files: [fixtures/photo.png] }`"
)
_FILES = (
    "upload.files must be a list of file paths relative to this flow's file, e.g. "
    "`files: [fixtures/photo.png]`"
)


@frozen
class UploadStep:
    into: Selector
    files: tuple[str, ...]
    line: int = step_line()
    kind: ClassVar[str] = "upload"
    executor: ClassVar[str] = "upload"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return f"into {selector_label(self.into)}"

    def to_data(self) -> dict[str, Any]:
        return {"upload": {"into": selector_to_data(self.into), "files": list(self.files)}}

    def summary(self) -> str:
        return f"upload: {sel_json(self.into)} ← {js_json(list(self.files))}"


def parse(nodes: Nodes, body: Any, line: int) -> UploadStep:
    mapping = nodes.mapping(body)
    if mapping is None or "into" not in mapping or "files" not in mapping:
        raise Reject(_NEEDS)
    only_keys("upload", mapping, ("into", "files"))
    files = nodes.string_list(mapping["files"])
    if files is None:
        raise Reject(_FILES)
    if not files:
        raise Reject("upload.files names no file — give at least one, e.g. `files: [fixtures/photo.png]`")
    for path in files:
        _check_path(path)
    into = nodes.selector(mapping["into"], "upload.into")
    return UploadStep(into=into, files=files, line=line)


def _check_path(path: str) -> None:
    if not path.strip():
        raise Reject(_FILES)
    if "\\" in path:
        raise Reject("an upload path uses forward slashes, e.g. `files: [fixtures/photo.png]`")
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        raise Reject("an upload path must be relative to the flow file that names it")
    if path.endswith("/") or path.rsplit("/", 1)[-1] in (".", ".."):
        raise Reject(f"an upload path names a file, not a directory: {path}")


def files(step: UploadStep, tools: ToolFiles) -> tuple[Reference, ...]:
    return tuple(UploadFile(path) for path in step.files)


UPLOAD = Directive(key="upload", models=(UploadStep,), parse=parse, files=files)
