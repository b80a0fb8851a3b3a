"""The HTTP API fuzzed against itself (INTERFACE.md section 13): schemathesis reads GET /openapi.json
of a real `argent server start` and sends generated requests, valid and invalid, to every operation
that runs without a browser (the operations tagged ``browser`` are left out: they boot or drive
one). No answer may be an internal error, and every answer must match its documented status,
media type, headers and schema (the checks of ``api_fuzz_hooks`` and schemathesis' own).

Bounded for CI: ``ARGENT_FUZZ_EXAMPLES`` examples per operation (default 25); a longer fuzz sets
more, and ``ARGENT_FUZZ_SECONDS`` fuzzes until that many seconds are spent (docs/development.md).
``ARGENT_FUZZ_SEED`` replays a seed (CI uses a fixed one, so a run is the same run each time);
``ARGENT_FUZZ_SEED=random`` draws a new one, printed with the figures.

The server runs with a policy that keeps generated calls off this machine's files: project roots
are one empty temp dir, no `script:` steps, and a short wall-clock bound per call.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, start_server_process

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("ARGENT_FUZZ_EXAMPLES", "25"))
SECONDS = os.environ.get("ARGENT_FUZZ_SECONDS")
SEED = os.environ.get("ARGENT_FUZZ_SEED", "20240624")
#: The run's own deadline when no time budget is set: the fuzz is bounded by examples, this only
#: catches a run that hangs.
DEADLINE_SECONDS = 600
TOKEN = "fuzz-token-" + "0123456789abcdef" * 3

POLICY = """\
project_roots: [{roots}]
scripts: false
limits:
  seconds_per_call: 30
"""


def schemathesis_command(url: str, report: Path) -> list[str]:
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "run",
        f"{url}/openapi.json",
        "--header",
        f"Authorization: Bearer {TOKEN}",
        "--exclude-tag",
        "browser",
        "--checks",
        "all",
        # The server's own 5xx rule replaces this one (api_fuzz_hooks: a tool's failure is a 500).
        # A schema cannot say a tool's cross-argument rules (exactly one of name and flow_path, a
        # path that exists), so a schema-valid call may still be refused with 400 and its issues.
        "--exclude-checks",
        "not_a_server_error,positive_data_acceptance",
        "--max-examples",
        str(EXAMPLES),
        "--workers",
        "2",
        "--generation-database",
        "none",
        "--report",
        "junit",
        "--report-junit-path",
        str(report),
        "--no-color",
        "--output-truncate",
        "true",
    ]
    if SECONDS:
        command += ["--max-time", SECONDS]
    if SEED != "random":
        command += ["--seed", SEED]
    return command


def test_generated_requests_get_documented_answers_and_no_internal_error(cli: Cli, tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    roots.mkdir()
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY.format(roots=roots))
    server = start_server_process(cli, "--config", str(policy), ARGENT_AUTH_TOKEN=TOKEN)
    # Its log (a line per call) is read as it comes, or a full pipe would stall the server.
    assert server.proc.stderr is not None
    log = threading.Thread(target=server.proc.stderr.read, daemon=True)
    log.start()
    try:
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "SCHEMATHESIS_HOOKS": "tests.e2e.api_fuzz_hooks",
        }
        done = subprocess.run(
            schemathesis_command(server.url, tmp_path / "fuzz.xml"),
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEADLINE_SECONDS + int(SECONDS or 0),
            stdin=subprocess.DEVNULL,
        )
        summary = done.stdout[done.stdout.find("SUMMARY") :] if "SUMMARY" in done.stdout else done.stdout
        assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-3000:]
        print(summary)  # the figures: operations, test cases, phases (shown with pytest -s)
        assert server.proc.poll() is None, "the tool-server died under the fuzz"
    finally:
        assert server.stop() == 0
