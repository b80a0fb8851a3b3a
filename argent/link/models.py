"""Every shape that crosses the link, as an attrs model: the one definition both sides use.

Field names are Python's; ``argent.link.codec`` turns each model into JSON and back (the
camelCase wire names, what is left out, how a malformed value reads). Nothing here does I/O or
knows a transport, so the server, the client and the runner can all import it.

What travels (INTERFACE.md §2):

- ``GET /tools`` answers a ``ToolListing`` of ``ToolEntry``; an entry advertises ``FileInputSpec``.
- ``POST /tools/<name>`` carries arguments in which a file argument is a ``FileInput`` (the
  ``__argentFileInput`` object) with, over a link, ``WireMember`` members and a ``Spelling``.
- A call answers a ``ResultBody`` (``{"data": ...}``) or, streamed, NDJSON ``Event`` lines (a
  tagged union on ``event``: progress / result / error, the last an ``ErrorBody``); a failure
  answers an ``ErrorBody``.
- A flow run's data is a ``FlowRunResult`` of ``StepReport`` lines, or a ``PrerequisiteNotice``;
  what the client must write comes back as ``ClientFileDirective`` objects.
- ``POST /upload`` answers an ``UploadAnswer``; ``GET /healthz`` a ``Health``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from attrs import Factory, define, field, frozen

# --------------------------------------------------------------------------------------------
# File inputs

#: The kinds a tool-server declares; a client sends an input of a kind it does not know as its path.
FileInputKind: TypeAlias = Literal["file", "directory", "probe", "tar-upload"]
FILE_INPUT_MARKER = "__argentFileInput"
CLIENT_FILE_MARKER = "__argentClientFile"
#: ``contentOmitted`` of a file the client did not send: it is over the 32 MiB file-input limit.
CONTENT_OMITTED_SIZE_LIMIT = "size-limit"


@frozen
class FileInputSpec:
    """A file argument the client resolves, as a tool advertises it in ``GET /tools``."""

    target: str
    path: str
    kind: str
    optional: bool | None = None
    skip_when_set: str | None = None
    unwrap_when_set: str | None = None
    collect: str | None = None


def _valid_spelling(instance: Spelling, _: Any, state: str) -> None:
    if state != "case_folded":
        return
    actual, addressable = instance.actual, instance.addressable
    if not isinstance(actual, str) or not actual or "/" in actual or "\0" in actual:
        raise ValueError("a case-folded spelling names its actual basename")
    if not isinstance(addressable, bool):
        raise ValueError("a case-folded spelling says whether it is addressable")


@frozen
class Spelling:
    """How a directory lists a basename: ``listed``, ``case_folded`` (as ``actual``) or ``absent``."""

    state: Literal["listed", "case_folded", "absent"] = field(validator=_valid_spelling)
    actual: str | None = None
    addressable: bool | None = None


LISTED = Spelling("listed")

MemberRole: TypeAlias = Literal["flow", "baseline", "tool", "upload"]
MemberState: TypeAlias = Literal["missing", "refused", "listed"]


@frozen
class WireMember:
    """One file a flow call brings: its bytes (inline ``content`` or an upload) or its state.

    ``role`` and ``key`` are free strings on the wire: the tool-server ignores a role it does not
    know and a key no lookup can produce."""

    role: str
    key: str
    path: str | None = None
    canonical: str | None = None
    spelling: Spelling | None = None
    size: int | None = None
    mtime_ms: float | None = None
    content: str | None = field(default=None, repr=False)
    upload_id: str | None = None
    content_hash: str | None = None
    state: str | None = None
    error: str | None = None


@frozen
class UploadRef:
    """The one field of a member a failed call still needs: the upload it names, to delete it."""

    upload_id: str | None = None


@frozen
class NamedUploads:
    """What a failed call still needs of a file-input object: the uploads its members name, read
    whatever else is wrong with them, so that each is deleted."""

    members: list[UploadRef] = Factory(list)


@frozen
class FileInput:
    """A file argument on the wire (``"__argentFileInput": true``): the client's path, its size and
    mtime, and over a link its bytes (``content``, ``contentOmitted``) or an upload; a flow input
    adds its ``canonical`` path, ``spelling`` and ``members``."""

    path: str
    size: int | None = None
    mtime_ms: float | None = None
    content: str | None = field(default=None, repr=False)
    content_omitted: str | None = None
    upload_id: str | None = None
    content_hash: str | None = None
    canonical: str | None = None
    spelling: Spelling | None = None
    members: list[WireMember] | None = None


# --------------------------------------------------------------------------------------------
# GET /tools, POST /upload, GET /healthz


@frozen
class Disabled:
    reason: str


@frozen
class ToolEntry:
    """One tool of ``GET /tools``. ``input_schema`` is a JSON Schema object, kept as JSON."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    output_hint: str | None = None
    file_inputs: list[FileInputSpec] = Factory(list)
    long_running: bool = False
    disabled: Disabled | None = None
    #: As upstream: an agent should load this tool up front (not only through a tool search).
    always_load: bool = False
    #: As upstream: words a tool search finds the tool by.
    search_hint: str | None = None


@frozen
class ToolListing:
    tools: list[ToolEntry]


@frozen
class UploadAnswer:
    upload_id: str


@frozen
class Health:
    ok: bool
    version: str


# --------------------------------------------------------------------------------------------
# Answers of a call


@frozen
class Issue:
    """One problem with a call's arguments, shaped as upstream argent's zod issues are: ``code``
    (``invalid_type``, ``invalid_value``, ``unrecognized_keys``, ``too_small``, ``too_big``,
    ``custom``), the ``path`` of the argument (keys and list indexes; ``[]`` for the whole
    object) and a ``message``; the other fields only where that code carries them."""

    code: str
    path: list[Any]
    message: str
    expected: str | None = None
    format: str | None = None
    keys: list[str] | None = None
    values: list[Any] | None = None
    origin: str | None = None
    minimum: Any = None
    maximum: Any = None
    inclusive: bool | None = None


@frozen
class ErrorBody:
    """A failed request: a message for a person, and for machines its code and kind when known.
    A proxy's JSON error may say ``message`` instead of ``error``. A call whose arguments do not
    fit adds ``issues`` (upstream's CLI reads them to tell a usage error from a failure) and says
    in ``message`` one sentence per bad argument, then which keys were sent."""

    error: str | None = None
    error_code: str | None = None
    error_kind: str | None = None
    message: str | None = None
    issues: list[Issue] | None = None

    @property
    def text(self) -> str | None:
        """The message to show: ``error``, else ``message``; None when neither is a non-empty text."""
        return self.error or self.message or None


@frozen
class ResultBody:
    """The buffered answer of a call: the tool's result as ``data``."""

    data: Any = None


@frozen
class ProgressEvent:
    """One progress line of a streamed call (a flow run's ``StepReport``, as it happens)."""

    data: Any = None


@frozen
class ResultEvent:
    """The terminal line of a call that succeeded."""

    data: Any = None


@frozen
class ImageResult:
    """The result of a tool whose listing says ``outputHint: "image"`` (``screenshot``): the PNG as
    base64 and its size. An MCP client is handed the image as image content."""

    image: str
    mime_type: str = "image/png"
    width: int | None = None
    height: int | None = None


#: One NDJSON line of a streamed call, tagged by its ``event`` field; a call that fails once the
#: stream is open ends with an ``ErrorBody`` line.
Event: TypeAlias = ProgressEvent | ResultEvent | ErrorBody
EVENT_TAGS: dict[type, str] = {ProgressEvent: "progress", ResultEvent: "result", ErrorBody: "error"}


@frozen
class ClientFileDirective:
    """A file the client is asked to write (``"__argentClientFile": true``): a recording's text,
    or with ``encoding: "base64"`` a baseline's bytes."""

    path: str
    content: str | None = field(default=None, repr=False)
    encoding: str | None = None


@frozen
class BaselineNotWritten:
    """What the client puts in a result's ``baselineWrites`` for a baseline it did not write."""

    path: str
    error: str


# --------------------------------------------------------------------------------------------
# Flow runs

StepStatus: TypeAlias = Literal["pass", "fail", "skip", "error"]


@frozen
class StepReport:
    """One line of a run. ``index`` counts every line pushed so far, across fragments and blocks."""

    index: int
    kind: str
    status: StepStatus
    flow: str
    depth: int = 0
    target: str | None = None
    reason: str | None = None
    warning: str | None = None
    message: str | None = None
    tool: str | None = None
    result: Any = None
    output_hint: str | None = None
    args: Any = None
    snapshot_key: str | None = None
    artifacts: dict[str, str] | None = field(default=None, hash=False)
    duration_ms: float = 0.0


@frozen
class ArtifactImage:
    """The bytes of one image a step line names in its ``artifacts`` (``path``), carried in the result
    of a run over a link: the client cannot read the tool-server's disk, and an agent must see why a
    step failed. Base64, like a screenshot's ``image``."""

    path: str
    data: str
    mime_type: str = "image/png"


@define
class FlowRunResult:
    """A run's summary. The runner builds it from its lines, which sets the counts and ``ok``; a
    client reads them as the wire carries them."""

    flow: str
    device: str
    execution_prerequisite: str = ""
    #: Skips alone never fail a run.
    ok: bool = field(init=False)
    aborted: bool = False
    passed: int = field(init=False)
    failed: int = field(init=False)
    skipped: int = field(init=False)
    errored: int = field(init=False)
    steps: list[StepReport] = field(factory=list)
    baseline_writes: list[Any] | None = None
    #: Over a link: the images of the failing steps' ``artifacts`` (``ArtifactImage``), at most
    #: ``MAX_ARTIFACT_IMAGES``; co-located, the paths are this host's and nothing is inlined.
    artifact_images: list[ArtifactImage] | None = None
    #: As upstream: when the run started (ms since the epoch) and how long it took (ms); left out
    #: of equality, like a step's duration is of nothing but its own line.
    started_at: int | None = field(default=None, eq=False)
    duration_ms: int | None = field(default=None, eq=False)

    def __attrs_post_init__(self) -> None:
        counted = self.counted
        self.passed = sum(1 for s in counted if s.status == "pass")
        self.failed = sum(1 for s in counted if s.status == "fail")
        self.skipped = sum(1 for s in counted if s.status == "skip")
        self.errored = sum(1 for s in counted if s.status == "error")
        self.ok = self.failed == 0 and self.errored == 0 and not self.aborted

    @property
    def counted(self) -> list[StepReport]:
        """Echo lines count in no counter, but for the one error an echo can report: the call's
        step limit reached on it (an error must never read as a pass)."""
        return [s for s in self.steps if s.kind != "echo" or s.status == "error"]


@frozen
class PrerequisiteNotice:
    """flow-execute's answer when the flow's execution prerequisite was not acknowledged."""

    flow: str
    execution_prerequisite: str
    notice: str = (
        "This flow has an execution prerequisite that must be fulfilled before it can run. Verify the "
        "prerequisite is met and call flow-execute again with prerequisiteAcknowledged set to true."
    )
