"""A page's dedicated web worker runs under argent's Chromium: the device auto-attaches frames with
``waitForDebuggerOnStart``, and a worker held at its start that way never ran (MkDocs Material's
search stayed at "Initializing search" in tests/realapps)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import Cli, chromium_marks
from tests.e2e.test_cli_flow import write

pytestmark = chromium_marks()

WORKER_PAGE = """<!doctype html><html><body><p id="out">waiting for the worker</p>
<script>
const code = "postMessage('the worker ran')";
const worker = new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
worker.onmessage = (e) => { document.getElementById("out").textContent = e.data; };
</script></body></html>
"""


def test_a_pages_dedicated_worker_runs(cli: Cli, project: Path) -> None:
    write(project / "site" / "index.html", WORKER_PAGE)
    write(
        project / ".argent" / "flows" / "worker.yaml",
        "steps:\n  - launch: { chromium: ../../site }\n  - await: { visible: the worker ran, timeout: 5000 }\n",
    )
    done = cli.run("flow", "run", "worker", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout.splitlines()[-1]
