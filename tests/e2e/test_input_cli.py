"""A flow that presses, types, chooses and meets a native dialog, run end to end by `argent flow run`
(an embedded tool-server, its own headless Chromium): the lines it prints and the JSON it gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, chromium_marks

pytestmark = chromium_marks()

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Notebook</title>
<style>body { margin: 0; padding: 12px; font: 16px sans-serif }</style></head><body>
<button id="delete" onclick="out.textContent = confirm('Delete all?') ? 'deleted' : 'kept'">Delete</button>
<p id="out">none</p>
<label for="lang">Language</label>
<select id="lang" onchange="chosen.textContent = this.value">
  <option value="py">Python</option><option value="jl">Julia</option>
</select>
<p id="chosen">py</p>
<input id="name" value="Untitled.ipynb" onfocus="this.setSelectionRange(0, 8)">
<textarea id="cell"></textarea>
<p id="ran">none</p>
<script>
  document.getElementById('cell').addEventListener('keydown', e => {
    if (e.key === 'Enter' && e.shiftKey) { e.preventDefault(); ran.textContent = 'ran ' + e.target.value; }
  });
</script>
</body></html>"""

FLOW = """steps:
  - launch: { chromium: site }
  - tap: Delete
  - assert: { text: { in: { id: out }, equals: kept } }
  - dialogs: accept
  - tap: Delete
  - assert: { text: { in: { id: out }, equals: deleted } }
  - select: { in: Language, option: Julia }
  - assert: { text: { in: { id: chosen }, equals: jl } }
  - type: { into: { id: name }, text: answer, submit: false }
  - assert: { text: { in: { id: name }, equals: answer.ipynb } }
  - type: { into: { id: cell }, text: "1 + 1", clear: true, submit: false }
  - press: shift+enter
  - assert: { text: { in: { id: ran }, equals: "ran 1 + 1" } }
"""


@pytest.fixture
def flows(project: Path) -> Path:
    flows = project / ".argent" / "flows"
    (flows / "site").mkdir(parents=True)
    (flows / "site" / "index.html").write_text(PAGE)
    (flows / "notebook.yaml").write_text(FLOW)
    return flows


def test_flow_run_presses_types_chooses_and_reports_each_dialog_in_its_line(cli: Cli, flows: Path) -> None:
    run = cli.run("flow", "run", "notebook", timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert '  ✓  2 tap "Delete" — dialog confirm "Delete all?" dismissed' in lines
    assert "  ✓  4 dialogs accept" in lines
    assert '  ✓  5 tap "Delete" — dialog confirm "Delete all?" accepted' in lines
    assert '  ✓  7 select "Julia" in "Language"' in lines
    assert "  ✓ 12 press Shift+Enter" in lines
    assert lines[-1].startswith("PASS") and "13 passed, 0 failed" in lines[-1]

    as_json = cli.run("flow", "run", "notebook", "--json", timeout=120)
    assert as_json.returncode == 0, as_json.stdout + as_json.stderr
    steps = json.loads(as_json.stdout)["steps"]
    assert [(s["kind"], s.get("reason")) for s in steps if s.get("reason")] == [
        ("tap", 'dialog confirm "Delete all?" dismissed'),
        ("tap", 'dialog confirm "Delete all?" accepted'),
    ]
