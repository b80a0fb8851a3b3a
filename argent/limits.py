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
