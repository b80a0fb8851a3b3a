"""The tool registry: what each tool declares, and one way to call it.

A ``ToolSpec`` is the whole declaration of a tool — name, description, an attrs args
class (its JSON Schema is derived), file inputs, ``longRunning``, an output hint and
whether it can run on this machine. Transports (HTTP, the in-process client, the
runner's ``tool:`` steps) all call ``ToolRegistry.invoke``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs
from attrs import field, frozen

from argent.devices.caller import DEVICE_CALLER
from argent.devices.web.file_access import FILE_ACCESS
from argent.errors import ArgentError, ToolExecutionError, ToolNotFoundError
from argent.link.models import Disabled, FileInputSpec, ToolEntry
from argent.runner.budget import StepBudget
from argent.runner.run import ToolOutcome, ToolVerdict
from argent.tools.args import json_schema, listed_fields, structure_args, wire_name

if TYPE_CHECKING:
    from argent.link.members import MemberStore
    from argent.runner.member_files import MemberFlowFiles
    from argent.tools.call_policy import CallPolicy

A = TypeVar("A")


@frozen
class ResolvedFileInput:
    """What a tool learns about one file input the transport resolved for it."""

    client_path: str
    present_on_host: bool
    via_upload: bool = False
    stat_verified: bool | None = None
    #: The call's policy let it read ``client_path`` when its presence was checked (so ``precheck``
    #: need not check again: the same rules, and the path's watches vouch nothing changed since).
    read_checked: bool = False


ProgressSink = Callable[[Any], Awaitable[None]]


@frozen
class ToolContext:
    """What a call brings besides its arguments."""

    abort: asyncio.Event = field(factory=asyncio.Event)
    emit_progress: ProgressSink | None = None
    file_inputs: Mapping[str, ResolvedFileInput] = field(factory=dict)
    linked: bool = False
    #: Flow file inputs (``collect: "flow"``) that came over a link, by target: the run's files.
    flow_files: Mapping[str, MemberFlowFiles] = field(factory=dict)
    #: The members of a recorded step (a ``collect: "step"`` probe over a link), by target.
    step_members: Mapping[str, MemberStore] = field(factory=dict)
    #: Lines the flow runs of this call may report (the server's steps-per-call limit), shared
    #: by the tools it reaches (a flow's tool: steps, a recorded step that runs a flow).
    budget: StepBudget = field(factory=StepBudget)
    #: The tool-server's rules for this call (its token's tools, where it may work); None: no rules.
    policy: CallPolicy | None = None


@frozen
class ToolSpec(Generic[A]):
    name: str
    description: str
    args_type: type[A]
    execute: Callable[[A, ToolContext], Awaitable[Any]]
    file_inputs: tuple[FileInputSpec, ...] = ()
    long_running: bool = False
    output_hint: str | None = None
    #: Returns None when the tool can run here, else why not.
    availability: Callable[[], str | None] | None = None
    #: The tool's own policy checks, run before it starts (a refusal answers with its real status).
    precheck: Callable[[A, ToolContext], Awaitable[None]] | None = None
    #: The tool's own verdict on a result, as a flow's `tool:` step (None from it: a pass).
    verdict: Callable[[Any], ToolVerdict | None] | None = None
    #: Upstream's hints to an agent's tool search: load the tool up front, and words to find it by.
    always_load: bool = False
    search_hint: str | None = None
    #: The type of the tool's result (``data``), for the API's description (GET /openapi.json);
    #: None: any JSON value.
    result_type: Any = None

    def outcome(self, result: Any) -> ToolOutcome:
        """A result as a `tool:` step's outcome: with the output hint and the tool's verdict."""
        verdict = self.verdict(result) if self.verdict is not None else None
        return ToolOutcome(result=result, output_hint=self.output_hint, verdict=verdict)

    @property
    def disabled_reason(self) -> str | None:
        return self.availability() if self.availability else None

    @property
    def needs_browser(self) -> bool:
        """Whether the tool boots or drives a browser: it declares the availability check of one
        (this host may have none). A flow tool reaches a browser only through a flow's own steps."""
        return self.availability is not None

    @property
    def params(self) -> frozenset[str]:
        return frozenset(wire_name(f) for f in listed_fields(self.args_type))

    def input_schema(self) -> dict[str, Any]:
        return json_schema(self.args_type)

    def entry(self) -> ToolEntry:
        """The GET /tools entry."""
        reason = self.disabled_reason
        return ToolEntry(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema(),
            output_hint=self.output_hint or None,
            file_inputs=list(self.file_inputs),
            long_running=self.long_running,
            disabled=Disabled(reason) if reason else None,
            always_load=self.always_load,
            search_hint=self.search_hint,
        )


#: The attribute of each wire name, by args class (a class's fields never change).
_ATTRIBUTE_NAMES: dict[type, Mapping[str, str]] = {}


def _attribute_names(args_type: type) -> Mapping[str, str]:
    names = _ATTRIBUTE_NAMES.get(args_type)
    if names is None:
        names = _ATTRIBUTE_NAMES[args_type] = {wire_name(f): f.name for f in attrs.fields(args_type)}
    return names


class ToolRegistry:
    """Tools by name, in registration order."""

    def __init__(self, specs: Iterable[ToolSpec[Any]] = ()) -> None:
        self._tools: dict[str, ToolSpec[Any]] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: ToolSpec[Any]) -> None:
        if spec.name in self._tools:
            raise ValueError(f'Tool "{spec.name}" already registered')
        self._tools[spec.name] = spec

    def replace(self, spec: ToolSpec[Any]) -> None:
        """Put ``spec`` in the place of the registered tool of its name (its description amended)."""
        if spec.name not in self._tools:
            raise ToolNotFoundError(spec.name)
        self._tools[spec.name] = spec

    def get(self, name: str) -> ToolSpec[Any]:
        spec = self._tools.get(name)
        if spec is None:
            raise ToolNotFoundError(name)
        return spec

    def find(self, name: str) -> ToolSpec[Any] | None:
        return self._tools.get(name)

    def __iter__(self) -> Any:
        return iter(self._tools.values())

    def entries(self) -> list[ToolEntry]:
        return [spec.entry() for spec in self._tools.values()]

    def parse_args(self, name: str, raw: Any) -> Any:
        spec = self.get(name)
        return structure_args(name, raw, spec.args_type, say_accepted=True)

    async def invoke(self, name: str, raw_args: Any, ctx: ToolContext | None = None) -> Any:
        """Validate and run one tool."""
        spec = self.get(name)
        args = structure_args(name, raw_args, spec.args_type, say_accepted=True)
        return await self.run(spec, args, ctx or ToolContext())

    async def precheck(self, spec: ToolSpec[Any], args: Any, ctx: ToolContext) -> None:
        """The call's policy before the tool starts: its token may call the tool, the tool's own
        checks pass, and every file input it would read on this host is one it may read."""
        policy = ctx.policy
        if policy is None:
            return
        policy.check_tool(spec.name)
        if spec.precheck is not None:
            await spec.precheck(args, ctx)
        attr_of = _attribute_names(spec.args_type)
        for file_input in spec.file_inputs:
            meta = ctx.file_inputs.get(file_input.target)
            if file_input.kind == "probe" or (meta is not None and meta.via_upload):
                continue
            unwrapped_by = file_input.unwrap_when_set
            if unwrapped_by and getattr(args, attr_of.get(unwrapped_by, ""), None) is not None:
                continue  # kept as text: the tool does not read it
            value = getattr(args, attr_of.get(file_input.target, ""), None)
            if meta is not None and meta.read_checked and value == meta.client_path:
                continue  # checked with its presence, under this policy (argent.server.file_inputs)
            if isinstance(value, str):
                await policy.check_read(value)

    async def run(self, spec: ToolSpec[Any], args: Any, ctx: ToolContext, *, checked: bool = False) -> Any:
        """Run a tool on validated args; anticipated failures stay ArgentErrors, others are wrapped.

        ``checked``: the caller ran ``precheck`` already (the HTTP route does, before it streams)."""
        if not checked:
            await self.precheck(spec, args, ctx)
        reason = spec.disabled_reason
        if reason:
            raise ToolExecutionError(f"Tool {spec.name} cannot run on this tool-server: {reason}")
        # The devices this call uses let their pages load only the local files the call may read.
        rules = FILE_ACCESS.set(ctx.policy.may_load_sync if ctx.policy is not None else None)
        # ... and are the caller's own: on a shared server another token's devices are not found.
        caller = DEVICE_CALLER.set(
            ctx.policy.device_caller() if ctx.policy is not None else DEVICE_CALLER.get()
        )
        try:
            return await spec.execute(args, ctx)
        except ArgentError:
            raise
        except Exception as exc:  # a tool bug: say which tool, keep the cause
            raise ToolExecutionError(f"[Tool:{spec.name}] {exc}") from exc
        finally:
            DEVICE_CALLER.reset(caller)
            FILE_ACCESS.reset(rules)
