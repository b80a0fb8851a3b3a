"""Every limit of the project, named once."""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

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
#: Problems one refused call's 400 names (its issues, and the keys of one unknown-keys issue); checking
#: stops there, so a 48 MiB body of bad list items answers small and fast.
MAX_ARG_ISSUES = 100
#: Largest flow file read or sent (the per-file cap of the link protocol).
MAX_FILE_BYTES = 32 * MIB
#: Total bytes of the flow members of one call.
MAX_FLOW_MEMBERS_BYTES = 32 * MIB
#: Members sent inside the call body before the rest go through POST /upload.
INLINE_MEMBERS_BUDGET = 256 * KIB
#: Calls one token may run at once on a tool-server whose config sets no limit (over it: 429): 200 busy
#: clients sharing one token fit, with room for a few more.
DEFAULT_CONCURRENT_CALLS_PER_TOKEN = 256
#: Seconds a 429 asks the caller to wait before calling again (Retry-After).
RETRY_AFTER_SECONDS = 1
#: How long `argent flow run --workers N` keeps retrying a flow the tool-server answered 429 (busy), or
#: refused a browser while another flow of the run holds one (TOO_MANY_DEVICES), before reporting it as an
#: error (a shared server may allow fewer calls, or browsers per token, at once than N).
SUITE_BUSY_RETRY_SECONDS = 600
#: Most flows `argent flow run --workers N` runs at once (a larger N runs this many, and says so):
#: each is a call, and on Chromium a browser; a typo like 10**9 must not become 10**9 tasks.
MAX_SUITE_WORKERS = 64
#: Shortest token a --config file may name: a shared server's token guards every tool.
MIN_TOKEN_CHARS = 16
#: Lifetime of an unused upload.
UPLOAD_EXPIRY_SECONDS = 15 * 60
#: Live recordings a tool-server keeps for one caller (a named token, or the one user) before it evicts that
#: caller's least recently used.
MAX_LIVE_RECORDINGS = 32
#: Lines (steps run or skipped, across all `run:` fragments and nested runs) one call may report;
#: bounds the time, memory and stream of a call however its fragments fan out.
MAX_STEPS_PER_CALL = 100_000
#: Longest one tool call runs on a tool-server whose config sets no limit (``limits.seconds_per_call``): past
#: it the call is aborted (its steps report `run aborted`, its device stops) and answers an error naming the
#: limit. A `wait:` of a year, or a fragment of 100,000 long awaits, otherwise holds its slot, connection and
#: browser for as long as its client stays.
DEFAULT_SECONDS_PER_CALL = 3600
#: How long a cancelled call (its client hung up, or the server shutting down past its grace) may
#: take to unwind on its abort event before its task is cancelled outright.
ABORTED_CALL_GRACE_SECONDS = 2.0
#: Longest stretch the flow engine runs without giving the event loop back to other calls.
ENGINE_YIELD_SECONDS = 0.005
#: Threads of the pool that runs CPU-heavy work (parsing, tar, PNG decode and diff; see ``argent.cpu``):
#: apart from the loop's default executor, so file I/O never waits behind it; few, since the GIL runs
#: one of them at a time and each may hold a large parse in memory.
CPU_WORKER_THREADS = 4
#: How long a thread running Python keeps the GIL from a waiting one while a server serves (Python's
#: default is 5 ms; the loop waits that long at each I/O point of a call while a parse runs in a thread).
GIL_SWITCH_INTERVAL_SECONDS = 0.001
#: Steps of a call's report encoded on the event loop; a larger one is encoded on the CPU pool (a report of
#: MAX_STEPS_PER_CALL lines takes seconds to encode).
RESULT_STEPS_ENCODED_IN_PLACE = 1_000
#: How long a GET /tools answer is reused for the same token (a tool's availability is looked up again after).
TOOL_LISTING_CACHE_SECONDS = 1.0
#: Progress lines a streamed call may queue for its next write; past it the call waits for the client.
STREAM_COALESCE_BYTES = 64 * KIB
#: Longest a progress line (or the headers of a streamed answer) waits to share its write with others.
STREAM_FLUSH_DELAY_SECONDS = 0.005
#: Flow files kept as read while inotify vouches that nothing they depend on changed (see
#: ``argent.runner.read_cache``): how many, and the longest text kept.
FLOW_TEXT_CACHE_ENTRIES = 256
FLOW_TEXT_CACHE_CHARS = 64 * KIB
#: (watch, name) pairs one inotify instance is asked about before it starts afresh (``argent.utils.watch``).
FILE_WATCHES = 4096
#: Characters of an offending entry quoted in a parse error.
ENTRY_RENDER_CHARS = 200

#: Defaults of the directives.
DEFAULT_AWAIT_TIMEOUT_MS = 7500
DEFAULT_ASSERT_GRACE_MS = 1000
DEFAULT_IDLE_TIMEOUT_MS = 7500
DEFAULT_IDLE_STABLE_FOR_MS = 250
DEFAULT_LONG_PRESS_MS = 800
DEFAULT_MAX_MISMATCH = 0.5
#: How long a failed device step waits for the screenshot it carries (the report's evidence).
FAILURE_SCREENSHOT_TIMEOUT_SECONDS = 5.0
#: Largest image the HTML report copies from a step's artifacts (a 4K screenshot is a few MiB).
MAX_REPORT_IMAGE_BYTES = 64 * MIB
#: Runs whose images of failed steps `argent flow run` keeps under .argent/results (older ones are removed).
RESULTS_KEPT = 10
DEFAULT_SCRIPT_TIMEOUT_MS = 120_000
MAX_SCRIPT_STDERR_TAIL = 2000

#: Largest JSON body of one tool call (inline file inputs and members ride in it).
MAX_BODY_BYTES = 48 * MIB
#: JSON values one tool call's body may hold (counted from its separators, before it is parsed: parsing a
#: million keys holds the GIL for seconds). A real call has tens to a few thousand (its members' entries);
#: file bytes ride in base64 strings, which count as one.
MAX_BODY_JSON_VALUES = 100_000
#: Bytes of such a refused body parsed to tell one nested too deep (answered as such) from one merely too large.
JSON_BODY_HEAD_BYTES = 64 * KIB
#: Largest body of one POST /upload (the tar of one member or one tar-upload input).
MAX_UPLOAD_BYTES = 2 * GIB
#: Bytes of stored uploads not yet consumed plus bytes of uploads still arriving.
MAX_PENDING_UPLOAD_BYTES = 8 * GIB
#: ... of which one named token may hold (a shared server: one token filling the store would refuse every
#: other token's uploads, with 507, until its own expire). A server without named tokens has only the total.
MAX_PENDING_UPLOAD_BYTES_PER_TOKEN = 2 * GIB
#: How often the upload sweeper deletes expired uploads.
UPLOAD_SWEEP_INTERVAL_SECONDS = 60
#: An upload's socket reads go to its writing thread in batches of this many bytes, or of
#: ``UPLOAD_BATCH_CHUNKS`` reads if those come first (a client sending tiny pieces: each read is an
#: object of its own).
UPLOAD_BATCH_BYTES = 1 * MIB
UPLOAD_BATCH_CHUNKS = 256
#: Bytes of one upload handed to its writing thread and not yet written; past this the event loop
#: stops reading that upload until the disk catches up. One upload holds at most this, one batch being
#: gathered and twice ``UPLOAD_READ_BUFFER_BYTES`` buffered by the socket's reader.
UPLOAD_BYTES_IN_FLIGHT = 4 * MIB
#: ... and at most this many batches (a client sending tiny pieces makes batches of
#: ``UPLOAD_BATCH_CHUNKS`` small objects: the count bounds their memory where the bytes do not).
UPLOAD_BATCHES_IN_FLIGHT = 8
#: The read buffer of an upload's body (aiohttp pauses the socket past twice this; its default,
#: 64 KiB, paused it after every read of a fast client).
UPLOAD_READ_BUFFER_BYTES = 1 * MIB
#: A tool-server's glibc malloc (argent/server/heap.py): up to the trim threshold of freed memory
#: stays for the next allocations, and only allocations from the mmap threshold up get pages of their
#: own (setting a threshold stops glibc adjusting them; its starting 128 KiB would map and unmap every
#: socket read of an upload).
SERVER_HEAP_MMAP_THRESHOLD_BYTES = 1 * MIB
SERVER_HEAP_TRIM_THRESHOLD_BYTES = 32 * MIB
#: Decompressed bytes of one uploaded archive (tar headers included); guards against gzip bombs.
MAX_ARCHIVE_EXPANDED_BYTES = 8 * GIB
#: Entries of one uploaded archive, directories included.
MAX_ARCHIVE_MEMBERS = 100_000
#: Payload of one pax extended header or GNU long name/link in an uploaded archive; tarfile holds it
#: in memory, so a larger one is refused at its header.
MAX_TAR_EXTENDED_HEADER_BYTES = 1 * MIB
#: Extended headers in a row before one entry, and global pax headers in one archive (a real
#: archive has one or two; tarfile recurses once per header and copies every global one per entry).
MAX_TAR_EXTENDED_HEADERS = 8
#: A member's archive holds one entry, its file, of at most MAX_FILE_BYTES; beyond the file it may
#: expand by this much (tar headers, end-of-archive blocks and record padding) before it is refused.
MEMBER_ARCHIVE_OVERHEAD_BYTES = 1 * MIB

#: Nesting of YAML flow collections (`[`/`{`) or compact block indicators (`- - -`) a flow file may use;
#: deeper text is refused before the YAML library scans it (its cost grows with the depth).
MAX_YAML_NESTING = 400
#: Characters of a value coerced to text (`echo:` of a list, a non-string executionPrerequisite).
MAX_COERCED_TEXT_CHARS = 1 * MIB
#: Nodes of all `tool:` steps' args of one file after alias expansion.
MAX_ARGS_NODES_PER_FILE = 1_000_000
#: Keys of one YAML mapping in a flow file (a step has a handful; tool args a tool's parameters).
MAX_YAML_MAPPING_KEYS = 1_000
#: Items of one YAML list in a flow file (real flows have tens to hundreds of steps). Reading the items
#: up to the limit is what a refused list costs: ~0.5 ms each under load, so 5,000 stay well within 5 s.
MAX_YAML_SEQUENCE_ITEMS = 5_000
#: YAML values (nodes) of one flow file as written, before alias expansion; bounds the time and memory
#: of reading one (about 0.1 ms and 1 KiB each in ruamel's round-trip composer).
MAX_YAML_NODES = 100_000
#: Digits of an integer in a flow file (Python's own int-conversion limit).
MAX_INTEGER_DIGITS = 4_300
#: Pixels of a PNG the runner decodes (a baseline or a capture); a 4K screen has 8.3M. A small PNG can
#: claim a huge canvas, and decoding and diffing one costs ~20 bytes of memory per pixel.
MAX_PNG_PIXELS = 20_000_000
#: Parsed flows kept by content hash, so a fragment reached many times is parsed once.
PARSED_FLOW_CACHE_ENTRIES = 256
#: Estimated bytes of the parsed flows kept (see ``argent.flows.load``).
PARSED_FLOW_CACHE_BYTES = 64 * MIB
#: Longest flow text looked up in that cache on the event loop (hashed there); a longer one is
#: hashed in the worker thread that would parse it.
PARSED_FLOW_LOOKUP_ON_LOOP_CHARS = 16 * KIB

#: Device directives: settle, auto-wait and polling (milliseconds).
SETTLE_INTERVAL_MS = 250
SETTLE_MAX_MS = 3000
ACTION_TIMEOUT_MS = 7500
ACTION_POLL_MS = 300
CONDITION_POLL_MS = 300
TYPE_FOCUS_MAX_MS = 3000
#: `type`: how long a tapped element that is no text field and keeps the focus gets to hand it on
#: (a search button that focuses its field) before the text goes to it; a text field takes it at once.
TYPE_FOCUS_GRACE_MS = 250
TYPE_FOCUS_POLL_MS = 100
#: `press: { keys, times }`: the most presses of one step.
MAX_PRESS_TIMES = 100
#: `select:`: the options a failed choice lists in its message (the rest counted).
MAX_LISTED_OPTIONS = 20
#: Native dialogs (alert, confirm, prompt, beforeunload): those a device remembers for the reports of
#: the steps and tool calls that opened them (oldest forgotten first), those one step's line names (the
#: rest counted), and the characters of a dialog's message a report shows.
MAX_KEPT_DIALOGS = 100
MAX_REPORTED_DIALOGS = 10
MAX_DIALOG_MESSAGE_CHARS = 200
IDLE_POLL_MS = 200
#: The event-driven settle: a request in flight longer than this no longer holds a page busy (a long
#: poll, a stream, a slow beacon), so such a page settles on its DOM alone.
QUIET_REQUEST_MAX_AGE_MS = 2000
#: Frames on a Chromium page that its walker cannot enter (iframes of another origin, maybe in another
#: renderer process) are walked each in its own right, all in parallel, beside the page's document: at most
#: this many per read, and a frame in a frame at most this deep; past either the read is marked truncated.
#: A page of a thousand ad frames costs a read no more than these walks.
MAX_FRAMES_PER_READ = 32
MAX_FRAME_NESTING = 4
#: Longest a read waits for its frames once the page's own document is read: a frame whose renderer is busy
#: (a cross-origin frame that spins) is left out of that read, and of the reads after it while its walk is
#: still pending, so it holds no read of the page longer than this.
FRAME_READ_SECONDS = 1.5
#: How long a frame's pending walk is kept waiting for (the reads meanwhile leave that frame out).
FRAME_WALK_TIMEOUT_SECONDS = 30.0
#: Out-of-process frames one page session follows (auto-attached); the frames past it stay unread.
MAX_FRAME_SESSIONS = 64
#: What resolving one selector on one screen may cost (12,000 elements): element checks, counting each pair a
#: scope compares (`within`/`after`/`next` over every element compares 144M pairs, minutes of Python), and
#: the seconds all its text patterns (`text: { matches }`) may take, a pattern that backtracks (`(a|aa)+$`)
#: included. Past either the step fails naming it; the matching runs on the CPU pool, off the event loop.
MAX_SELECTOR_WORK = 2_000_000
#: The pattern time is wall-clock time measured around each match and summed over the resolution (element
#: checks do not count), so a step fails only once its patterns took more than this: the error's "took
#: more than 1s" is exact. The stop is later, not sooner: the regex engine ends a match by its own clock,
#: the CPU time of the whole server process since the match began, which stands still while the process
#: waits for a core (at load 12 on two cores a 0.5 s limit stopped matching after 1.6–2.5 s of wall time);
#: when busy threads beside it end a match before its wall time is up, it runs again with what is left.
PATTERN_MATCH_SECONDS = 1.0
#: The product of a text pattern's counted repetitions (`{n}`, `{n,m}`: their smallest counts). The regex
#: engine unrolls them at compile, ~280 bytes each: `a{1000000}` takes 280 MB, `a{10000000}` gigabytes.
MAX_PATTERN_REPEATS = 100_000
#: The elements a selector that matched nothing is compared with to name its nearest candidates (in reading
#: order), and how many of them its message names.
MISS_CANDIDATES_EXAMINED = 200
MISS_CANDIDATES_SHOWN = 5
#: Longest text of one candidate a miss message quotes, and the most of it compared by edit distance.
MISS_CANDIDATE_CHARS = 60
#: Longest CSS selector a flow may give (`css:`): each read of the screen sends it to the page.
MAX_CSS_SELECTOR_CHARS = 4096
#: Longest text one read of a web page carries per element (its accessible name, its value, its own
#: text), in characters.
WALK_TEXT_CHARS = 200
#: Nodes the walker visits to read the text of one labelling element (a <label>, an aria-labelledby
#: target, a <legend>): a name never costs a walk of a large subtree.
WALK_LABEL_NODES = 200
#: Selectors one `snapshot`'s `mask` may list (each resolved on the screen of the capture).
MAX_SNAPSHOT_MASKS = 32
#: Scroll increments of `scroll-to` before it gives up, and the smallest increment (fraction of the screen).
SCROLL_TO_MAX_ATTEMPTS = 25
SCROLL_TO_MIN_STEP = 0.05

#: HTTP connections. A request's headers must arrive within this many seconds of the connection opening
#: (or of the first byte of a later request on a kept-alive connection); else 408 and close.
HEADER_READ_TIMEOUT_SECONDS = 10.0
#: Longest pause between two chunks of a request body before the server answers 408 and closes.
BODY_IDLE_TIMEOUT_SECONDS = 15.0
#: How long an idle kept-alive connection stays open: above the 15 s an aiohttp client keeps an idle
#: connection, so the client is the one that closes it and never reuses a connection being closed.
KEEPALIVE_TIMEOUT_SECONDS = 20.0
#: Open connections one tool-server holds; a connection over it is answered 503 and closed at once.
MAX_OPEN_CONNECTIONS = 4096
#: Connections the kernel queues before the server accepts them (a burst of clients is not dropped);
#: the kernel caps it at net.core.somaxconn.
LISTEN_BACKLOG = 1024
#: Call-log lines waiting for stderr before new ones are dropped: a stderr nobody reads (a pipe
#: whose reader stalls) costs at most this many lines of memory and never stops the server.
CALL_LOG_QUEUE_LINES = 10_000
#: File descriptors kept free beside the connections (uploads, temp files, Chromium pipes).
FD_RESERVE = 512
#: Request line, one header field, and headers of one request (aiohttp's defaults, named here).
MAX_REQUEST_LINE_BYTES = 8190
MAX_HEADER_FIELD_BYTES = 8190
MAX_REQUEST_HEADERS = 128

#: What the client reads from a tool-server (it trusts none): one NDJSON stream line, one buffered answer
#: (a result or an error body, also GET /tools), and the JSON values and nesting one answer may hold. A
#: JSON value becomes a Python object of up to ~100 bytes, so together they keep the CLI under 512 MiB.
MAX_STREAM_LINE_BYTES = 64 * MIB
MAX_RESULT_BYTES = 64 * MIB
MAX_RESULT_JSON_VALUES = 1_000_000
MAX_RESULT_JSON_DEPTH = 256
#: All the progress lines of one streamed call, together: their bytes and their JSON values. They are the
#: steps of the result (INTERFACE.md §2), which the client reads only within the caps above; twice those
#: leaves room for each line's wrapper, and bounds what a report keeps of a call that never ends.
MAX_PROGRESS_BYTES = 2 * MAX_RESULT_BYTES
MAX_PROGRESS_JSON_VALUES = 2 * MAX_RESULT_JSON_VALUES
#: TCP keep-alive on the client's connections to a tool-server: a flow's step may run for minutes with no
#: byte on the wire, so a call has no read timeout; after this much silence the kernel probes the peer, and
#: a peer that answers none of the probes (its machine or the network is gone) ends the call as closed
#: within about a minute and a half instead of never. A tool-server that is up answers them while it works.
CLIENT_TCP_KEEPALIVE_IDLE_SECONDS = 30
CLIENT_TCP_KEEPALIVE_INTERVAL_SECONDS = 10
CLIENT_TCP_KEEPALIVE_PROBES = 6

#: Upstream's pacing arguments of the device tools: keyboard's delayMs between key presses, and
#: gesture-scroll's durationMs a scroll is spread over (in steps of SCROLL_STEP_MS, at most MAX_SCROLL_STEPS).
MAX_KEY_DELAY_MS = 5_000
#: Longest a paced keyboard call may take (delayMs between each pair of characters).
MAX_PACED_TYPING_MS = 120_000
#: Characters one keyboard call types (each a real key event, ~3-4 ms on Chromium: 10,000 take ~40 s; a request
#: body of 48 MiB would have typed for two days). Longer text goes in parts, or through paste.
MAX_TYPED_CHARS = 10_000
MAX_SCROLL_DURATION_MS = 10_000
SCROLL_STEP_MS = 50
MAX_SCROLL_STEPS = 40

#: Web tools (argent/tools/web): network requests each Chromium device keeps (oldest dropped first; upstream's
#: count), the response-body characters a request's details show, the console entries a device keeps for
#: debugger-log-registry (oldest dropped first), the characters of one entry's message, and the distinct
#: messages it groups (later new ones are counted, not grouped).
MAX_NETWORK_RECORDS = 1000
MAX_NETWORK_BODY_CHARS = 1000
MAX_CONSOLE_LOG_ENTRIES = 10_000
MAX_CONSOLE_MESSAGE_CHARS = 2000
MAX_CONSOLE_CLUSTERS = 1000
#: Response bodies Chromium keeps for Network.getResponseBody, in all and per response (its own buffers; a
#: larger body is not kept and its details show none).
CDP_NETWORK_BUFFER_BYTES = 16 * MIB
CDP_NETWORK_RESOURCE_BUFFER_BYTES = 4 * MIB
#: Longest gesture-drag (upstream's: the button stays down this long) and steps of one run-sequence call.
MAX_DRAG_DURATION_MS = 10_000
MAX_SEQUENCE_STEPS = 1000
#: What one recorded request keeps from a hostile page: headers per side (later ones dropped), the characters of
#: a header's name or value and of its URL (cut), its request body as MAX_NETWORK_BODY_CHARS (cut, marked).
MAX_NETWORK_HEADERS = 200
MAX_NETWORK_HEADER_CHARS = 4096
MAX_NETWORK_URL_CHARS = 8192
#: ... and the characters of all its headers on one side (names and values), and the call frames of its
#: initiator's stack (its async parents dropped): at most ~50 KB a request, ~50 MB for the whole ring.
MAX_NETWORK_HEADERS_CHARS = 16 * 1024
MAX_NETWORK_INITIATOR_FRAMES = 20
#: The longest wait run-sequence takes after a step (upstream sets none; a recording never needs minutes).
MAX_SEQUENCE_DELAY_MS = 60_000
#: Tabs (page targets) a Chromium device may have open; chromium-tabs `new` past it is refused.
MAX_CHROMIUM_TABS = 50
#: Browser devices (of every engine) one tool-server runs at once (booted by boot-device or a flow's launch:), and
#: those one token may hold (a shared server's ``limits.devices_per_token``): each is a browser of ~100-300 MB, and
#: a booted one stays until stop-device. Over either: 429 TOO_MANY_DEVICES, nothing booted.
MAX_BROWSER_DEVICES = 32
DEFAULT_DEVICES_PER_TOKEN = 16
#: debugger-evaluate: the JSON of a result the page sends back, at most (measured in the page, so a 500 MB
#: string or a huge object never crosses the CDP socket), and the nesting depth of that JSON.
MAX_EVALUATE_RESULT_CHARS = 1 * MIB
MAX_EVALUATE_RESULT_DEPTH = 256
#: How long one debugger-evaluate runs in the page; past it V8 stops the script (or the page's execution is
#: terminated), so an endless expression never leaves the device frozen for the other tools.
EVALUATE_TIMEOUT_SECONDS = 10.0
#: The images of a run's failing steps a result carries inline over a link (``artifactImages``; the client cannot
#: read the tool-server's disk), and the bytes of one such image: a viewport PNG is ~0.1-1 MiB; one larger is named
#: by its path alone.
MAX_ARTIFACT_IMAGES = 4
MAX_ARTIFACT_IMAGE_BYTES = 4 * MIB

#: WebKit (WebKitGTK's ``WebKitWebDriver`` driving ``MiniBrowser`` over classic W3C WebDriver). Its new-session
#: request hangs for ever when MiniBrowser cannot start (no X display), so it is bounded: 0.8 s warm and ~5 s the
#: first time on two cores, far more on a loaded machine.
WEBDRIVER_SESSION_TIMEOUT_SECONDS = 45.0
#: Longest one WebDriver command may go unanswered (a page script that never yields holds every command).
WEBDRIVER_COMMAND_TIMEOUT_SECONDS = 20.0
#: How long a fresh ``WebKitWebDriver`` may take to answer ``GET /status``, and ``Xvfb`` to name its display.
WEBKIT_DRIVER_READY_TIMEOUT_SECONDS = 15.0
XVFB_READY_TIMEOUT_SECONDS = 15.0
#: Longest answer read from the driver (a viewport PNG in base64 is ~0.1-2 MiB; a walk of 12,000 nodes ~5 MiB).
WEBDRIVER_ANSWER_BYTES = 64 * MIB
#: Dialogs one WebDriver command answers before it gives up on a page that opens one after the other.
MAX_DIALOGS_PER_COMMAND = 20
#: WebKit's own page-load bound for a navigation (past it the page is used as it is, as on Chromium).
WEBKIT_PAGE_LOAD_TIMEOUT_SECONDS = 15.0
#: Longest wait for a window resize to reach the page while WebKit's viewport is sized (GTK applies it after
#: the command returns; a resize to the size the window already has fires no event).
WEBKIT_RESIZE_WAIT_SECONDS = 1.0
#: Longest wait at a Firefox's boot for its first page to take the focus (it does once it has painted, a
#: moment after its load; a Firefox that does not give it is driven all the same).
FIREFOX_FOCUS_WAIT_SECONDS = 5.0
#: A Chromium the tool-server launched is asked for its version every ``BROWSER_PING_SECONDS``. One that gives
#: no answer within ``BROWSER_ANSWER_SECONDS`` while its process is stopped (SIGSTOP) is declared hung; one
#: still running is given ``BROWSER_SILENT_SECONDS`` in all (a loaded machine delays the answer by seconds:
#: seen 5 s+ at load 7 on two cores), then declared hung (wedged). A hung browser fails the step that waits on
#: it at once saying so, and is killed and its profile removed.
BROWSER_PING_SECONDS = 1.0
BROWSER_ANSWER_SECONDS = 5.0
BROWSER_SILENT_SECONDS = 30.0
