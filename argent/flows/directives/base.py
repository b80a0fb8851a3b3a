"""What a directive is made of, and what its grammar may ask of the parser.

A directive module declares its step model — a frozen attrs class with ``kind`` (the report
kind), ``executor`` (the hook the runner maps to the code that carries the step out), ``on_device``,
and the methods ``label`` (the report ``target``), ``to_data`` (its canonical YAML spelling) and
``summary`` (its recording summary) — and one ``Directive`` entry: the YAML key and the grammar
that builds the model from the parsed YAML nodes (``Nodes``: the parser's node access and the
grammar pieces directives share), and, for a directive that names files, which ones
(``Directive.files``). ``argent.flows.directives`` registers the entries in one table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol

from attrs import frozen

from argent.flows.references import Reference, ToolFiles
from argent.flows.values import Condition, Selector, Target

__all__ = ["Directive", "EntryAt", "Nodes", "Step"]


class Step(Protocol):
    """One step of a flow (every directive's model)."""

    #: The directive's name in step reports (`await` for both its condition and its idle form).
    kind: ClassVar[str]
    #: The runner's name for the code that carries the step out (``argent.runner.handlers``).
    executor: ClassVar[str]
    #: Whether the step acts on a device screen.
    on_device: ClassVar[bool]

    @property
    def line(self) -> int:
        """The 1-based line of the step's entry in its file (0 when built in code)."""
        ...

    def label(self) -> str | None:
        """The step report's ``target`` (None for a step that has none)."""
        ...

    def to_data(self) -> dict[str, Any]:
        """The canonical minimal YAML spelling: one directive key, options only when set."""
        ...

    def summary(self) -> str:
        """The recording summary line, after its number (``tap: {"id":"buy"}``)."""
        ...


class Nodes(Protocol):
    """The parser as a directive's grammar sees it: values of the YAML nodes (aliases shared, lines
    kept) and the grammar pieces several directives use."""

    def scalar(self, node: Any) -> Any:
        """The scalar value of a node, or ``MISSING`` for a collection."""
        ...

    def mapping(self, node: Any) -> dict[str, Any] | None:
        """A mapping node's keys (JavaScript order) to their value nodes; None for any other node."""
        ...

    def string(self, node: Any) -> str | None: ...

    def number(self, node: Any) -> float | int | None:
        """The value when it is a JavaScript number (``typeof value === "number"``), else None."""
        ...

    def to_number(self, node: Any) -> float | int:
        """``Number(value)``."""
        ...

    def js_string(self, node: Any) -> str:
        """``String(value)``, bounded."""
        ...

    def string_list(self, node: Any) -> tuple[str, ...] | None: ...

    def plain(self, node: Any, counter: list[int]) -> Any:
        """JSON-able data for a node, aliases expanded, bounded by ``counter`` and cycle-checked."""
        ...

    def spend_args(self, count: int) -> None:
        """Count ``count`` values of `tool:` args against the file's total (refused beyond it)."""
        ...

    def selector(self, node: Any, where: str) -> Selector: ...

    def target(self, node: Any, where: str) -> Target:
        """A selector or ``{ x, y }``."""
        ...

    def condition(self, body: Any, kind: str) -> Condition:
        """An `assert` body (also the UI part of `await` and `when`)."""
        ...

    def steps(self, nodes: Sequence[Any], *, depth: int, prefix: str) -> tuple[Step, ...]:
        """The steps of a list (a `when:` block's children), each with its own errors."""
        ...


@frozen
class EntryAt:
    """A whole step entry, for a directive whose entry has keys beside its own (`tool`, `when`)."""

    node: Any
    entry: dict[str, Any]
    depth: int
    path: str
    line: int


@frozen
class Directive:
    """One entry of the directive table.

    ``parse`` builds the step from the value under ``key`` (the entry must have no other key);
    ``parse_entry`` instead takes the whole entry and checks its other keys itself. ``models`` are
    the step classes the directive builds. ``files`` declares the files a step names (its references,
    ``argent.flows.references``, in the order written; the `tool:` step asks ``ToolFiles`` which of its
    arguments are files); None for a directive that names no file."""

    key: str
    models: tuple[type[Any], ...]
    parse: Callable[[Nodes, Any, int], Step] | None = None
    parse_entry: Callable[[Nodes, EntryAt], Step] | None = None
    files: Callable[[Any, ToolFiles], tuple[Reference, ...]] | None = None
