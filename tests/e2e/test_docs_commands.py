"""Every shell block of README.md and docs/*.md either runs here, as a user would run it, or is
skipped for a reason this file names (issue 23 item 7): docs that do not work as written fail CI.

A shell block is a fenced block marked ``sh``, ``bash`` or ``shell`` (indented under a list item
too). Each block that is not in ``SKIPPED`` runs as one ``bash -euo pipefail`` script in a fresh
empty directory, with this venv's ``argent`` first on PATH, a private HOME and no ``ARGENT_*``
variable; whatever it started in the background is stopped when it ends. It passes when it exits 0.
``SKIPPED`` is keyed by the file and the block's first line, and every entry must still match a
block (a stale rule fails), so a new shell block in a doc runs until someone says why it cannot.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from attrs import frozen

from tests.e2e.conftest import chromium_marks

pytestmark = chromium_marks()

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[A-Za-z]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S
)
SHELLS = ("sh", "bash", "shell")
#: Seconds one block may take (a block starts a Chromium at most a few times).
BLOCK_TIMEOUT = 180

#: (doc, first line of the block) -> why it cannot run here.
SKIPPED: dict[tuple[str, str], str] = {
    (
        "README.md",
        "./scripts/demo   # sets up .venv (+ headless Chromium and Firefox via apt when root) and runs the example "
        "flows",
    ): (
        "sets up the repository's own .venv and, second, runs this whole test suite (./scripts/test is what "
        ".ci/run runs); the example flows it runs are tests/e2e's"
    ),
    ("README.md", "pip install argent-flows          # the command and the import package are `argent`"): (
        "needs the package index and sudo apt-get; tests/e2e/test_packaging.py builds the wheel and installs "
        "it into a fresh venv instead"
    ),
    (
        "docs/engines.md",
        "sudo apt-get install chromium firefox-esr      # or ./scripts/install-system-deps (root)",
    ): ("needs sudo apt-get; ./scripts/install-system-deps (what .ci/run runs) installs both browsers"),
    (
        "docs/engines.md",
        "argent flow run .argent/flows -r --platform chromium --platform firefox --junit-xml j.xml --html report",
    ): (
        "runs a project's flows (this block has none); tests/e2e/test_engines.py runs both commands on a real "
        "project, on both engines"
    ),
    (
        "docs/deploy-nginx.md",
        "ARGENT_AUTH_TOKEN=<long random token> argent server start --host 127.0.0.1 --port 3001 &",
    ): ("a placeholder token to replace; tests/e2e/test_docs_nginx.py runs this recipe with a real token"),
    (
        "docs/http-api.md",
        "pipx run openapi-python-client generate --path openapi.json   # makes argent-tool-server-client/",
    ): "needs the package index (pipx fetches openapi-python-client)",
    ("docs/security.md", "ARGENT_TOKEN_CI=<openssl rand -hex 32>"): (
        "the lines of a service's environment file (/etc/argent/env), with placeholders, not commands"
    ),
    ("docs/security.md", "export ARGENT_TOOLS_URL=https://tools.example.internal/"): (
        "a remote host (tools.example.internal) and a placeholder token; tests/e2e/test_docs_security.py runs "
        "the policy it documents"
    ),
    (
        "docs/mcp.md",
        "claude mcp add argent -- argent mcp",
    ): "needs the Claude Code CLI (`claude`), another product",
    (
        "docs/development.md",
        "ARGENT_FUZZ_EXAMPLES=500 ARGENT_FUZZ_SEED=random .venv/bin/pytest -s tests/e2e/test_api_fuzz.py",
    ): (
        "a long fuzz run of the repository's own tests (minutes to 30 min); the suite runs the short one, "
        "tests/e2e/test_api_fuzz.py"
    ),
    ("docs/development.md", ".venv/bin/pip install -e '.[test,mutation]'"): (
        "needs the package index (mutmut) and runs mutation testing of the repository itself for up to 30 min; "
        "scripts/mutation --list is what a developer checks first"
    ),
}

#: Ports a block binds as written: the block is skipped (saying so) when another process holds one.
FIXED_PORTS = re.compile(r"--port (\d+)")


@frozen
class Block:
    doc: str
    line: int
    text: str

    @property
    def first(self) -> str:
        return self.text.strip().splitlines()[0].strip()

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def shell_blocks() -> list[Block]:
    blocks = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group("lang") not in SHELLS:
                continue
            indent = match.group("indent")
            body = "".join(
                line.removeprefix(indent) for line in match.group("body").splitlines(keepends=True)
            )
            line = text.count("\n", 0, match.start()) + 1
            blocks.append(Block(str(path.relative_to(REPO)), line, body))
    return blocks


BLOCKS = shell_blocks()
RUNNABLE = [block for block in BLOCKS if (block.doc, block.first) not in SKIPPED]


def test_every_skip_rule_names_a_block_and_some_blocks_run() -> None:
    keys = {(block.doc, block.first) for block in BLOCKS}
    assert [key for key in SKIPPED if key not in keys] == []
    assert {block.doc for block in RUNNABLE} >= {"README.md", "docs/http-api.md"}


def port_taken(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


#: Stops what a block left running in the background (a server it started with `&`).
PROLOGUE = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"


@pytest.mark.parametrize("block", RUNNABLE, ids=[block.id for block in RUNNABLE])
def test_the_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    for port in FIXED_PORTS.findall(block.text):
        if port_taken(int(port)):
            pytest.skip(f"port {port}, which the block binds as written, is taken on this machine")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_")}
    env.update(
        HOME=str(home),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        NO_COLOR="1",
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", PROLOGUE + block.text],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"{block.id} failed as written:\n{block.text}\n{done.stdout}\n{done.stderr}"
