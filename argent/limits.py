"""Every limit of the project, named once."""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB

#: Deepest `run:` chain (the root flow counts as one level); nested flow-execute runs count too.
MAX_RUN_DEPTH = 20
#: Deepest nesting of `when:` blocks inside one file.
MAX_WHEN_DEPTH = 20
#: Relational scopes (within/after/next) across one selector tree.
MAX_SELECTOR_SCOPES = 6
#: Steps in one flow file, counting `when:` children; guards against YAML alias bombs.
MAX_STEPS_PER_FILE = 100_000
#: Nodes of one `tool:` step's args after alias expansion; guards against alias bombs.
MAX_ARGS_NODES = 100_000
#: Largest flow file read or sent (the per-file cap of the link protocol).
MAX_FILE_BYTES = 32 * MIB
#: Total bytes of the flow members of one call.
MAX_FLOW_MEMBERS_BYTES = 32 * MIB
#: Members sent inside the call body before the rest go through POST /upload.
INLINE_MEMBERS_BUDGET = 256 * KIB
#: Calls one token may run at once on a tool-server whose config sets no limit (over it: 429).
DEFAULT_CONCURRENT_CALLS_PER_TOKEN = 64
#: Seconds a 429 asks the caller to wait before calling again (Retry-After).
RETRY_AFTER_SECONDS = 1
#: Shortest token a --config file may name: a shared server's token guards every tool.
MIN_TOKEN_CHARS = 16
#: Lifetime of an unused upload.
UPLOAD_EXPIRY_SECONDS = 15 * 60
#: Characters of an offending entry quoted in a parse error.
ENTRY_RENDER_CHARS = 200

#: Defaults of the directives.
DEFAULT_AWAIT_TIMEOUT_MS = 7500
DEFAULT_ASSERT_GRACE_MS = 1000
DEFAULT_IDLE_TIMEOUT_MS = 7500
DEFAULT_IDLE_STABLE_FOR_MS = 250
DEFAULT_LONG_PRESS_MS = 800
DEFAULT_MAX_MISMATCH = 0.5
DEFAULT_SCRIPT_TIMEOUT_MS = 120_000
MAX_SCRIPT_STDERR_TAIL = 2000

#: Largest body of one POST /upload (the tar of one member or one tar-upload input).
MAX_UPLOAD_BYTES = 2 * 1024 * MIB
#: Bytes of stored uploads not yet consumed plus bytes of uploads still arriving.
MAX_PENDING_UPLOAD_BYTES = 4 * 1024 * MIB
#: How often the upload sweeper deletes expired uploads.
UPLOAD_SWEEP_INTERVAL_SECONDS = 60
#: Decompressed bytes of one uploaded archive (tar headers included); guards against gzip bombs.
MAX_ARCHIVE_EXPANDED_BYTES = 8 * 1024 * MIB
#: Entries of one uploaded archive, directories included.
MAX_ARCHIVE_MEMBERS = 100_000

#: Nesting of YAML flow collections (`[`/`{`) or compact block indicators (`- - -`) a flow file may use;
#: deeper text is refused before the YAML library scans it (its cost grows with the depth).
MAX_YAML_NESTING = 400
#: Characters of a value coerced to text (`echo:` of a list, a non-string executionPrerequisite).
MAX_COERCED_TEXT_CHARS = 1 * MIB
#: Nodes of all `tool:` steps' args of one file after alias expansion.
MAX_ARGS_NODES_PER_FILE = 1_000_000

#: Device directives: settle, auto-wait and polling (milliseconds).
SETTLE_INTERVAL_MS = 250
SETTLE_MAX_MS = 3000
ACTION_TIMEOUT_MS = 7500
ACTION_POLL_MS = 300
CONDITION_POLL_MS = 300
TYPE_FOCUS_DELAY_MS = 500
TYPE_FOCUS_MAX_MS = 3000
TYPE_FOCUS_POLL_MS = 100
IDLE_POLL_MS = 200
#: Scroll increments of `scroll-to` before it gives up, and the smallest increment (fraction of the screen).
SCROLL_TO_MAX_ATTEMPTS = 25
SCROLL_TO_MIN_STEP = 0.05
