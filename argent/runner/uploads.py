"""The files `upload:` steps set, checked before the browser starts: each one is there.

A run that would reach an `upload:` step (not one in a `when:` block, nor one in a fragment that only a
`when:` block runs: those may never run) needs its files. Before the first step, each is had through
``FlowFiles.local_file`` — the file on this host under the call's policy, or the copy of the bytes the
call brought — and one that cannot be had stops the run with ``FLOW_FILE_INVALID``, each such file on a
line that names its step and why (ENOENT with its path, the client's or the policy's refusal, the cap).
"""

from __future__ import annotations

from collections import deque

from argent.errors import FlowError
from argent.flows.graph import FlowGraph, GraphFile
from argent.flows.references import Fragment, UploadFile
from argent.flows.write import STEP_LINE, render_step
from argent.limits import MAX_RUN_DEPTH
from argent.runner.files import FlowFileError, FlowFiles, FlowRef

HEADER = "This flow uploads files that cannot be had, so no step ran:"

__all__ = ["HEADER", "check_upload_files", "unconditional_files"]


def unconditional_files(graph: FlowGraph[FlowRef]) -> list[GraphFile[FlowRef]]:
    """The root, and the fragments its top-level `run:` steps reach the same way (to the depth of a run):
    the files whose top-level steps a run surely reaches, up to a step that stops it."""
    out: list[GraphFile[FlowRef]] = []
    levels = {graph.root.canonical: 1}
    queue = deque([graph.root])
    while queue:
        current = queue.popleft()
        out.append(current)
        top = {id(step) for step in current.flow.steps}
        if levels[current.canonical] >= MAX_RUN_DEPTH:
            continue
        for edge in current.edges:
            reached = graph.reached(edge)
            if not isinstance(edge.ref, Fragment) or id(edge.step) not in top or reached is None:
                continue
            if reached.canonical in levels or reached.handle.spelling.state == "case_folded":
                continue
            levels[reached.canonical] = levels[current.canonical] + 1
            queue.append(reached)
    return out


async def check_upload_files(graph: FlowGraph[FlowRef], files: FlowFiles) -> None:
    """Raise ``FlowError`` when a file an `upload:` step the run reaches sets cannot be had."""
    lines: list[str] = []
    for file in unconditional_files(graph):
        top = {id(step) for step in file.flow.steps}
        for edge in file.edges:
            if not isinstance(edge.ref, UploadFile) or id(edge.step) not in top:
                continue
            try:
                await files.local_file(file.handle, edge.ref.path)
            except FlowFileError as exc:
                step = render_step(edge.step)
                lines.append(STEP_LINE.format(n=edge.n, path=file.handle.canonical, step=step, reason=exc))
    if lines:
        raise FlowError("\n".join([HEADER, *lines]))
