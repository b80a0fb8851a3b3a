"""One error hierarchy for the whole project.

Every error carries a message for a person (what happened and what to do), an
``error_code`` and ``error_kind`` for machines, and the HTTP status the tool-server
answers with. Transports serialize these; nothing else invents status codes.
"""

from __future__ import annotations

import errno
from typing import Any

from argent.link.codec import to_wire
from argent.link.models import ErrorBody, Issue

# The error codes (``error_code`` on the wire), each named once. A raise site names its code from
# here; the classes below carry the default of each kind.
ARGENT_UNCLASSIFIED_FAILURE = "ARGENT_UNCLASSIFIED_FAILURE"
FLOW_FILE_INVALID = "FLOW_FILE_INVALID"
FLOW_ENTRY_UNRECOGNIZED = "FLOW_ENTRY_UNRECOGNIZED"
FLOW_NAME_INVALID = "FLOW_NAME_INVALID"
FLOW_PROJECT_ROOT_INVALID = "FLOW_PROJECT_ROOT_INVALID"
FLOW_E2E_HAS_PREREQUISITE = "FLOW_E2E_HAS_PREREQUISITE"
FLOW_DEVICE_RESOLUTION = "FLOW_DEVICE_RESOLUTION"
FLOW_RECORDING_FAILED = "FLOW_RECORDING_FAILED"
FLOW_RECORDING_NOT_ACTIVE = "FLOW_RECORDING_NOT_ACTIVE"
FLOW_RECORDING_WRITE_FAILED = "FLOW_RECORDING_WRITE_FAILED"
FLOW_RECORDING_REFUSED = "FLOW_RECORDING_REFUSED"
FLOW_RECORDING_CONFLICT = "FLOW_RECORDING_CONFLICT"
REGISTRY_TOOL_NOT_FOUND = "REGISTRY_TOOL_NOT_FOUND"
REGISTRY_TOOL_EXECUTION_FAILED = "REGISTRY_TOOL_EXECUTION_FAILED"
TOOL_INPUT_INVALID = "TOOL_INPUT_INVALID"
FILE_INPUT_INVALID = "FILE_INPUT_INVALID"
UPLOAD_TOO_LARGE = "UPLOAD_TOO_LARGE"
UPLOAD_STORAGE_FULL = "UPLOAD_STORAGE_FULL"
UPLOAD_STORE_CLOSED = "UPLOAD_STORE_CLOSED"
SERVER_STORAGE_FULL = "SERVER_STORAGE_FULL"
# Policy refusals (HTTP 403/415/429): which rule refused.
TOOL_NOT_ALLOWED = "TOOL_NOT_ALLOWED"
LOCAL_FLOWS_DISABLED = "LOCAL_FLOWS_DISABLED"
SCRIPTS_DISABLED = "SCRIPTS_DISABLED"
WORKSPACE_UNSAFE = "WORKSPACE_UNSAFE"
ORIGIN_REFUSED = "ORIGIN_REFUSED"
BODY_NOT_JSON = "BODY_NOT_JSON"
TOO_MANY_CALLS = "TOO_MANY_CALLS"
TOO_MANY_DEVICES = "TOO_MANY_DEVICES"
CALL_TOO_LONG = "CALL_TOO_LONG"
SELECTOR_TOO_COSTLY = "SELECTOR_TOO_COSTLY"
# What the client reports when the tool-server's answer never came or made no sense.
TOOL_SERVER_CONNECTION_CLOSED = "TOOL_SERVER_CONNECTION_CLOSED"
TOOL_SERVER_UNREACHABLE = "TOOL_SERVER_UNREACHABLE"
TOOL_SERVER_PROTOCOL = "TOOL_SERVER_PROTOCOL"


#: What a tool-server says when its temp dir's disk refused a write (``ServerStorageError.refused``).
STORAGE_REFUSED = (
    "The tool-server could not {what} in its temp dir ({reason}); {then}. Retry later; if it keeps failing, "
    "the tool-server's operator must {fix} its temp dir (TMPDIR)."
)


class ArgentError(Exception):
    """Base class: a failure we anticipated and can explain."""

    status: int = 500
    default_code: str = ARGENT_UNCLASSIFIED_FAILURE
    default_kind: str = "unknown"

    def __init__(self, message: str, *, error_code: str | None = None, error_kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.error_code = error_code or self.default_code
        self.error_kind = error_kind or self.default_kind

    def body(self) -> ErrorBody:
        """The error as the wire carries it."""
        return ErrorBody(self.message, self.error_code, self.error_kind)

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self.body())  # type: ignore[no-any-return]


class FlowError(ArgentError):
    """A flow file, flow name or flow source that the runner refuses (HTTP 500 like upstream)."""

    default_code = FLOW_FILE_INVALID
    default_kind = "validation"


class YamlSyntax:
    """What the YAML reader said about a text it could not read, kept beside the message (whose words
    stay the upstream-shaped ones) so `argent flow check` can say it in plain words: its ``context``
    and ``problem``, where the problem is (1-based ``line`` and ``column``) and where the construct it
    was reading began (``context_line``)."""

    __slots__ = ("column", "context", "context_line", "line", "problem")

    def __init__(
        self, context: str | None, problem: str | None, line: int, column: int, context_line: int | None
    ) -> None:
        self.context = context
        self.problem = problem
        self.line = line
        self.column = column
        self.context_line = context_line


class FlowParseError(FlowError):
    """A flow file that does not parse; ``line`` is 1-based when known; ``syntax`` is set when the
    YAML itself could not be read."""

    def __init__(
        self,
        message: str,
        *,
        error_code: str = FLOW_FILE_INVALID,
        line: int | None = None,
        step: str | None = None,
        syntax: YamlSyntax | None = None,
    ) -> None:
        super().__init__(message, error_code=error_code, error_kind="validation")
        self.line = line
        self.step = step
        self.syntax = syntax


class ConflictError(ArgentError):
    """A call that would undo another caller's work (HTTP 409): nothing was changed."""

    status = 409
    default_code = FLOW_RECORDING_CONFLICT
    default_kind = "conflict"


class ToolNotFoundError(ArgentError):
    status = 404
    default_code = REGISTRY_TOOL_NOT_FOUND
    default_kind = "not_found"

    def __init__(self, name: str) -> None:
        super().__init__(f'Tool "{name}" not found')
        self.name = name


class InvalidToolInputError(ArgentError):
    """Arguments that do not fit the tool's schema or its rules (HTTP 400).

    Its wire form adds ``issues`` (zod-shaped, as upstream's; a rule given only a message is one
    ``custom`` issue over the whole object) and ``detail`` as the body's ``message``."""

    status = 400
    default_code = TOOL_INPUT_INVALID
    default_kind = "validation"

    def __init__(
        self,
        message: str,
        *,
        issues: list[Issue] | None = None,
        detail: str | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(message, error_code=error_code)
        self.issues = issues if issues else [Issue("custom", [], message)]
        self.detail = detail or message

    def body(self) -> ErrorBody:
        return ErrorBody(self.message, self.error_code, self.error_kind, self.detail, self.issues)

    def schema_body(self) -> ErrorBody:
        """The answer of a call refused before its tool ran: no code or kind, as before issues."""
        return ErrorBody(self.message, message=self.detail, issues=self.issues)


class FileInputError(ArgentError):
    """A file input or member that cannot be resolved (HTTP 422)."""

    status = 422
    default_code = FILE_INPUT_INVALID
    default_kind = "validation"


class DeviceResolutionError(ArgentError):
    default_code = FLOW_DEVICE_RESOLUTION
    default_kind = "not_found"


class TooManyDevicesError(ArgentError):
    """A boot over the devices a caller (or the whole tool-server) may hold at once (HTTP 429)."""

    status = 429
    default_code = TOO_MANY_DEVICES
    default_kind = "unavailable"


class SelectorTooCostlyError(ArgentError):
    """A selector or text pattern whose matching on one screen went past its work or time bound."""

    default_code = SELECTOR_TOO_COSTLY
    default_kind = "validation"


class ToolExecutionError(ArgentError):
    default_code = REGISTRY_TOOL_EXECUTION_FAILED
    default_kind = "unknown"


class UploadTooLargeError(ArgentError):
    """A POST /upload body over the per-upload cap (HTTP 413)."""

    status = 413
    default_code = UPLOAD_TOO_LARGE
    default_kind = "validation"


class UploadStorageFullError(ArgentError):
    """Pending uploads over the storage cap (HTTP 507); retry once earlier uploads are consumed."""

    status = 507
    default_code = UPLOAD_STORAGE_FULL
    default_kind = "unavailable"


class ServerStorageError(ArgentError):
    """The tool-server's own disk (its temp dir) refused what a call needs written: full or read-only
    (HTTP 507). Nothing of the call stays behind; retry once its operator freed space."""

    status = 507
    default_code = SERVER_STORAGE_FULL
    default_kind = "unavailable"

    @classmethod
    def refused(cls, exc: OSError, what: str, then: str) -> ServerStorageError:
        """The error for a file of the temp dir that the disk refused (``exc``): ``what`` the server
        was doing, and ``then`` what became of the call."""
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        fix = "free space in" if full else "make writable"
        return cls(STORAGE_REFUSED.format(what=what, reason=exc.strerror or exc, then=then, fix=fix))


class PolicyRefusal(ArgentError):
    """A call the tool-server's policy refuses before anything runs (HTTP 403, or 429 for a limit).

    The wire form is ``{"error", "error_code"}``: the code says which rule refused."""

    status = 403
    default_kind = "forbidden"

    def __init__(self, message: str, *, error_code: str, status: int = 403) -> None:
        super().__init__(message, error_code=error_code)
        self.status = status

    def body(self) -> ErrorBody:
        return ErrorBody(self.message, self.error_code)
