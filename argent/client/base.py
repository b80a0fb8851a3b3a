"""What every transport to the tools offers the CLI: list tools, call one.

The in-process client (embedded) and the HTTP client (over a link) both implement
``ToolClient``; the CLI never knows which one it talks to.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from argent.client.client_files import RefusedClientFile
from argent.link.models import ToolEntry

ProgressCallback = Callable[[dict[str, Any]], Awaitable[None] | None]
#: Receives each client-file directive of a result that the client did not write.
RefusalCallback = Callable[[RefusedClientFile], None]


class ToolCallError(Exception):
    """A call that failed, with the tool-server's message, status and codes."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 500,
        error_code: str | None = None,
        error_kind: str | None = None,
        may_have_run: bool = False,
        hint: str | None = None,
    ) -> None:
        full = message if hint is None else f"{message}\n{hint}"
        super().__init__(full)
        #: The whole message: what the tool-server (or the transport) said, then the client's hint.
        self.message = full
        #: What the tool-server or the transport said, without the client's hint.
        self.said = message
        #: The client's own advice on its own line (what to set when a token was refused), or None.
        self.hint = hint
        self.status = status
        self.error_code = error_code
        self.error_kind = error_kind
        #: The call may have run on the tool-server (the connection closed before its result).
        self.may_have_run = may_have_run

    @property
    def is_usage(self) -> bool:
        """Bad arguments (400) and unknown tools (404) are the caller's to fix."""
        return self.status in (400, 404)


class ToolClient(Protocol):
    async def list_tools(self) -> list[ToolEntry]: ...

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        on_progress: ProgressCallback | None = None,
        on_refused: RefusalCallback | None = None,
    ) -> Any:
        """Run one tool; returns the result's wire form (the ``data`` of the response).

        A text directive of the result the client refuses goes to ``on_refused``, else to the
        client's notice as its line.
        """
        ...
