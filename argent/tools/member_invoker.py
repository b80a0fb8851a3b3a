"""`tool:` steps of a run over a link: file arguments come from the call, as temporary files.

A `tool:` step's file argument (an absolute ``.png``/``.yaml`` path that the tool declares as a
file input of its own) names a file on the client. The runner looks it up by the path as
written — a baseline an earlier step of the call wrote first, then the members — and hands the
tool the bytes in a temporary file, as a direct call over a link would. A path the client has
no file for, or one it refused, fails the step with a reason; the temporary files go when the
tool returns. A tool-server makes their directory with its own id in the name (``file_input_dirs``),
so the next server on its temp dir removes what a killed one left mid-step.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

from argent.errors import ServerStorageError, ToolExecutionError
from argent.link.rules import classify_file_inputs
from argent.runner.member_files import MemberFlowFiles
from argent.runner.run import ToolCallContext, ToolOutcome
from argent.tools.call_policy import CallPolicy
from argent.tools.registry import ResolvedFileInput, ToolContext, ToolRegistry

NO_CLIENT_FILE = 'the client has no file at "{path}" (argument {name} of {tool})'
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")

#: Makes a new private directory for the file arguments of one `tool:` step (blocking).
FileInputDirs = Callable[[], str]


def system_file_input_dir() -> str:
    """A file-input directory in the system temp dir (no server's: a run outside a tool-server)."""
    return tempfile.mkdtemp("", "argent-file-input-")


def _write_temp(directory: str, path: str, data: bytes) -> str:
    name = _UNSAFE_NAME.sub("_", path.rsplit("/", 1)[-1])
    if name in ("", ".", ".."):
        name = "upload"
    target = os.path.join(directory, name)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return target


class MemberToolInvoker:
    """The registry as the runner's ``ToolInvoker``, with file arguments read from the call."""

    def __init__(
        self,
        registry: ToolRegistry,
        files: MemberFlowFiles,
        policy: CallPolicy | None = None,
        file_input_dirs: FileInputDirs | None = None,
    ) -> None:
        self.registry = registry
        self.files = files
        self.file_input_dirs = file_input_dirs or system_file_input_dir
        #: The rules of the call whose run this is; its `tool:` steps obey them too.
        self.policy = policy

    def params(self, tool: str) -> frozenset[str] | None:
        spec = self.registry.find(tool)
        return spec.params if spec is not None else None

    def _client_bytes(self, path: str, name: str, tool: str) -> bytes:
        data, refusal = self.files.client_file(path)
        if data is not None:
            return data
        raise ToolExecutionError(refusal or NO_CLIENT_FILE.format(path=path, name=name, tool=tool))

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        spec = self.registry.get(tool)
        file_args, _ = classify_file_inputs(spec.file_inputs, args)
        resolved: dict[str, ResolvedFileInput] = {}
        directory: str | None = None
        call_args = dict(args)
        try:
            if file_args:
                for argument in file_args:
                    data = self._client_bytes(argument.path, argument.name, tool)
                    try:
                        if directory is None:
                            directory = await asyncio.to_thread(self.file_input_dirs)
                        sub = await asyncio.to_thread(tempfile.mkdtemp, "", "arg-", directory)
                        written = await asyncio.to_thread(_write_temp, sub, argument.path, data)
                    except OSError as exc:  # a full or read-only temp dir: the finally removes the part
                        what = f'write the file argument "{argument.name}" ({argument.path}) of {tool}'
                        raise ServerStorageError.refused(exc, what, "the step did not run") from None
                    call_args[argument.name] = written
                    resolved[argument.name] = ResolvedFileInput(argument.path, False, via_upload=True)
            result = await self.registry.invoke(
                tool,
                call_args,
                ToolContext(
                    abort=ctx.abort, file_inputs=resolved, linked=True, policy=self.policy, budget=ctx.budget
                ),
            )
        finally:
            if directory is not None:
                await asyncio.to_thread(shutil.rmtree, directory, True)
        return spec.outcome(result)
