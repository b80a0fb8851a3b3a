"""What a person presses, types and chooses, on a real headless Chromium: `press:` chords as the page
sees them, `type` that keeps the selection the app made and `clear:`, `select:` on native selects,
and native dialogs answered (never left open to freeze the device), each in the line of its step.

Flows run through the engine with ``DeviceDirectives`` (real timings) on one Chromium booted for
the module; the pages come from an aiohttp server on loopback and record what they saw.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from argent.devices.base import UiNode
from argent.devices.chromium import ChromiumDevice, find_chromium
from argent.flows.parse import parse_flow
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from argent.tools.builtin import build_registry
from argent.tools.registry import ToolContext
from tests.e2e.conftest import pages_app, serve

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium binary (set ARGENT_CHROMIUM)"),
]

STYLE = (
    "<style>body { margin: 0; padding: 12px; font: 16px sans-serif } input, textarea { width: 300px }</style>"
)

#: Every key event the document sees: type, key, code, the four modifier flags.
KEY_LOG = """<script>
  window.keylog = [];
  for (const type of ['keydown', 'keypress', 'keyup']) {
    document.addEventListener(type, e => keylog.push(
      [type, e.key, e.code, e.shiftKey, e.ctrlKey, e.altKey, e.metaKey]), true);
  }
</script>"""

KEYS = f"""<!doctype html><html><head><title>Keys</title>{STYLE}</head><body>
<textarea id="pad"></textarea>
<input id="a" placeholder="A"><input id="b" placeholder="B"><input id="c" placeholder="C"><input id="d" placeholder="D">
<input id="words" value="hello big world">
{KEY_LOG}
<script>
  document.addEventListener('keydown', e => {{ if (e.ctrlKey && e.key === 's') e.preventDefault(); }});
  document.getElementById('pad').focus();
</script>
</body></html>"""

RENAME = f"""<!doctype html><html><head><title>Rename</title>{STYLE}</head><body>
<input id="file" value="Untitled.ipynb">
<button id="open" onclick="openRename()">Rename</button>
<form id="dialog" role="dialog" hidden onsubmit="event.preventDefault(); saved.textContent = 'saved ' + newname.value">
  <input id="newname">
</form>
<p id="saved"></p>
<script>
  const stem = el => el.setSelectionRange(0, el.value.lastIndexOf('.'));
  // An app that selects the stem whenever the field takes the focus (and a log of the clicks it got).
  window.pointer = [];
  document.getElementById('file').addEventListener('focus', e => stem(e.target));
  for (const type of ['pointerdown', 'mousedown', 'mouseup', 'click']) {{
    document.getElementById('file').addEventListener(type, () => pointer.push(type));
  }}
  // An app whose rename dialog opens with its field focused and the stem selected (Jupyter's).
  function openRename() {{
    const field = document.getElementById('newname');
    document.getElementById('dialog').hidden = false;
    field.value = 'Untitled.ipynb';
    field.focus();
    stem(field);
  }}
</script>
</body></html>"""

CLEAR = f"""<!doctype html><html><head><title>Clear</title>{STYLE}</head><body>
<form id="form" onsubmit="event.preventDefault(); window.submits++">
  <input id="keyed" value="old keyed">
  <textarea id="area">old
lines</textarea>
  <div id="rich" contenteditable="true" style="border: 1px solid #999; min-height: 24px">old <b>rich</b> text</div>
  <input id="emptied" value="to be emptied">
</form>
<script>
  window.submits = 0;
  window.inputs = {{}};
  document.addEventListener('input', e => {{ inputs[e.target.id] = (inputs[e.target.id] || 0) + 1; }});
  // A key listener: this field is typed key by key, the others take one insert.
  document.getElementById('keyed').addEventListener('keydown', () => {{}});
</script>
</body></html>"""

#: A code editor in the manner of CodeMirror 5 (Datasette's SQL editor): what it shows is its own model,
#: drawn as a line of highlighted spans with the text between them; the focus sits in a hidden textarea
#: (in a wrapper of no size) whose text is not the editor's; a click focuses it, Control+A selects the
#: model, each input is moved from the textarea into the model. Beside it, a plain field that logs keys.
EDITOR = f"""<!doctype html><html><head><title>Editor</title>{STYLE}</head><body>
<div id="editor" style="position: relative; width: 520px; border: 1px solid #999; font: 14px monospace">
  <div style="overflow: hidden; position: relative; width: 3px; height: 0">
    <textarea id="hidden" style="position: absolute; padding: 0; width: 1000px; height: 1em"></textarea>
  </div>
  <pre id="line" role="presentation" style="margin: 4px"></pre>
</div>
<input id="plain" value="old plain">
<script>
  window.model = 'select id, name, year from languages';
  window.keys = [];
  let all = false;
  const hidden = document.getElementById('hidden');
  const draw = () => {{
    line.innerHTML = model.replace(/\\b(select|from|where)\\b/g, '<span class="kw">$1</span>')
      .replace(/,/g, '<span class="punct">,</span>');
  }};
  draw();
  editor.addEventListener('mousedown', e => {{ e.preventDefault(); hidden.focus(); all = false; }});
  hidden.addEventListener('keydown', e => {{
    if (e.ctrlKey && e.key.toLowerCase() === 'a') {{ e.preventDefault(); all = true; }}
  }});
  hidden.addEventListener('input', () => {{
    model = all ? hidden.value : model + hidden.value;
    hidden.value = '';
    all = false;
    draw();
  }});
  document.getElementById('plain').addEventListener('keydown', e => keys.push(e.key));
</script>
</body></html>"""

#: Fields in an open shadow root and in a same-origin frame, and one behind its <label>: each logs the
#: clicks it gets and selects its stem when it takes the focus.
DEEP_FIELD = """<input id="{id}" value="Untitled.ipynb" style="width: 300px">
<script>
  (() => {{
    const root = {root};
    const field = root.getElementById ? root.getElementById('{id}') : root.querySelector('#{id}');
    field.addEventListener('focus', () => field.setSelectionRange(0, 8));
    for (const type of ['mousedown', 'click']) field.addEventListener(type, () => top.pointer.push('{id} ' + type));
  }})();
</script>"""

DEEP = f"""<!doctype html><html><head><title>Deep</title>{STYLE}</head><body>
<script>window.pointer = [];</script>
<div id="host"></div>
<script>
  const shadow = document.getElementById('host').attachShadow({{ mode: 'open' }});
  shadow.innerHTML = '<input id="shadowed" value="Untitled.ipynb" style="width: 300px">';
  const inner = shadow.getElementById('shadowed');
  inner.addEventListener('focus', () => inner.setSelectionRange(0, 8));
  for (const type of ['mousedown', 'click']) inner.addEventListener(type, () => pointer.push('shadowed ' + type));
</script>
<iframe id="frame" style="width: 360px; height: 60px; border: 0" srcdoc='{DEEP_FIELD.format(id="framed", root="document").replace("'", "&#39;")}'></iframe>
<p><label for="labelled">File name</label></p>
{DEEP_FIELD.format(id="labelled", root="document")}
</body></html>"""

SELECT = f"""<!doctype html><html><head><title>Select</title>{STYLE}</head><body>
<label for="lang">Language</label>
<select id="lang">
  <option value="py">Python</option><option value="r">R</option><option value="jl">Julia</option>
  <option value="sc" disabled>Scala</option>
</select>
<select id="tags" multiple size="3">
  <option value="a">Alpha</option><option value="b">Beta</option><option value="c">Gamma</option>
</select>
<div id="fake" style="width: 200px; height: 30px">Not a select</div>
<script>
  window.events = [];
  for (const type of ['input', 'change']) {{
    document.addEventListener(type, e => events.push([type, e.target.id, e.bubbles]));
  }}
</script>
</body></html>"""

DIALOGS = f"""<!doctype html><html><head><title>Dialogs</title>{STYLE}</head><body>
<button id="alert" onclick="alert('Saved'); out.textContent = 'alert closed'">Alert</button>
<button id="confirm" onclick="out.textContent = 'confirm ' + confirm('Delete all?')">Confirm</button>
<button id="prompt" onclick="out.textContent = 'prompt ' + prompt('Name?', 'Ann')">Prompt</button>
<a id="leave" href="/bye.html">Leave</a>
<p id="out">none</p>
<script>
  addEventListener('beforeunload', e => {{ e.preventDefault(); e.returnValue = ''; }});
</script>
</body></html>"""

#: A page that fights back: it replaces the DOM methods argent could have used in the page's world,
#: opens fifty alerts from one click, one with a megabyte of message, and offers 500 options.
HOSTILE = f"""<!doctype html><html><head><title>Hostile</title>{STYLE}</head><body>
<input id="field" value="old value">
<input id="nagging" onfocus="alert('Focus!')">
<button id="flood" onclick="alert('x'.repeat(1 << 20)); for (let i = 1; i < 50; i++) alert('alert ' + i); out.textContent = 'survived'">Flood</button>
<select id="many">{"".join(f"<option>Option {i}</option>" for i in range(500))}</select>
<p id="out">none</p>
<script>
  for (const name of ['focus', 'blur', 'click']) HTMLElement.prototype[name] = () => {{ throw new Error('no ' + name); }};
  HTMLInputElement.prototype.select = () => {{ throw new Error('no select'); }};
  HTMLInputElement.prototype.setSelectionRange = () => {{ throw new Error('no setSelectionRange'); }};
  Document.prototype.elementFromPoint = () => null;
  Document.prototype.elementsFromPoint = () => [];
  window.Event = function () {{ throw new Error('no Event'); }};
  EventTarget.prototype.dispatchEvent = () => {{ throw new Error('no dispatchEvent'); }};
</script>
</body></html>"""

BYE = f"<!doctype html><html><head><title>Bye</title>{STYLE}</head><body><p id='bye'>Bye</p></body></html>"

PAGES = {
    "/keys.html": KEYS,
    "/rename.html": RENAME,
    "/clear.html": CLEAR,
    "/select.html": SELECT,
    "/dialogs.html": DIALOGS,
    "/bye.html": BYE,
    "/hostile.html": HOSTILE,
    "/deep.html": DEEP,
    "/editor.html": EDITOR,
}


class NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("no tools here")


INNER = """<!doctype html><html><body style="margin: 0">
<button id="inner" style="width: 300px; height: 120px"
  onclick="document.body.dataset.answer = confirm('From the frame?')">Inner</button>
<script>requestAnimationFrame(() => requestAnimationFrame(() => parent.postMessage('painted', '*')));</script>
</body></html>"""


async def cross_origin(request: web.Request) -> web.Response:
    """A page whose frame comes from another site (``localhost`` beside ``127.0.0.1``): out of process."""
    frame = f"http://localhost:{request.url.port}/inner.html"
    body = (
        f"<!doctype html><html><head><title>Outer</title>{STYLE}</head><body>"
        "<script>window.painted = new Promise(r => addEventListener('message', e => e.data === 'painted' && r(1)));"
        "</script>"
        f'<iframe src="{frame}" style="width: 320px; height: 140px; border: 0"></iframe>'
        '<p id="outer">Outer page</p></body></html>'
    )
    return web.Response(text=body, content_type="text/html")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[str]:
    async with serve(pages_app({**PAGES, "/inner.html": INNER}, web.get("/outer.html", cross_origin))) as url:
        yield url


async def run(
    tmp_path: Path,
    device: ChromiumDevice,
    name: str,
    text: str,
    *,
    others: dict[str, str] | None = None,
    fresh: bool = True,
) -> FlowRunResult:
    """Run ``text`` on the module's device (``fresh``: from a blank page: the page of the test before
    is left first, so a launch has no dialog of it to report)."""
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    for other, body in (others or {}).items():
        (flows / other).write_text(body)
    path = flows / f"{name}.yaml"
    path.write_text(text)
    files = DiskFlowFiles()
    if fresh:
        await device.navigate("about:blank")
    return await asyncio.wait_for(
        run_flow(
            parse_flow(text),
            await files.locate(str(path)),
            name,
            files=files,
            tools=NoTools(),
            directives=DeviceDirectives(scratch_dir=str(tmp_path)),
            device=device,
            platform="chromium",
        ),
        120,
    )


def flow(url: str, *lines: str) -> str:
    return f"steps:\n  - launch: {{ chromium: {url} }}\n" + "".join(f"  - {line}\n" for line in lines)


def verdicts(res: FlowRunResult) -> list[tuple[str, str, str | None]]:
    return [(s.kind, s.status, s.reason) for s in res.steps]


def walk(node: UiNode) -> Iterator[UiNode]:
    yield node
    for child in node.children:
        yield from walk(child)


def passed(res: FlowRunResult) -> bool:
    return all(s.status == "pass" for s in res.steps)


async def page(device: ChromiumDevice, expression: str) -> Any:
    """A value the page holds, read in its own world (as JSON, so arrays and objects come whole)."""
    return json.loads(await device.session.evaluate(f"JSON.stringify({expression})"))


# --------------------------------------------------------------------------------------------
# press:

#: Each chord as a person presses it: modifiers down (each event with the flags of what is held),
#: the key down (keypress where it types a character) and up, the modifiers up in reverse order.
CHORDS: list[tuple[str, list[list[Any]]]] = [
    (
        "Shift+Enter",
        [
            ["keydown", "Shift", "ShiftLeft", True, False, False, False],
            ["keydown", "Enter", "Enter", True, False, False, False],
            ["keypress", "Enter", "Enter", True, False, False, False],
            ["keyup", "Enter", "Enter", True, False, False, False],
            ["keyup", "Shift", "ShiftLeft", False, False, False, False],
        ],
    ),
    (
        "control+s",
        [
            ["keydown", "Control", "ControlLeft", False, True, False, False],
            ["keydown", "s", "KeyS", False, True, False, False],
            ["keyup", "s", "KeyS", False, True, False, False],
            ["keyup", "Control", "ControlLeft", False, False, False, False],
        ],
    ),
    (
        "Control+Shift+ArrowLeft",
        [
            ["keydown", "Control", "ControlLeft", False, True, False, False],
            ["keydown", "Shift", "ShiftLeft", True, True, False, False],
            ["keydown", "ArrowLeft", "ArrowLeft", True, True, False, False],
            ["keyup", "ArrowLeft", "ArrowLeft", True, True, False, False],
            ["keyup", "Shift", "ShiftLeft", False, True, False, False],
            ["keyup", "Control", "ControlLeft", False, False, False, False],
        ],
    ),
    (
        "Escape",
        [
            ["keydown", "Escape", "Escape", False, False, False, False],
            ["keyup", "Escape", "Escape", False, False, False, False],
        ],
    ),
    (
        "F2",
        [
            ["keydown", "F2", "F2", False, False, False, False],
            ["keyup", "F2", "F2", False, False, False, False],
        ],
    ),
    (
        "Meta+A",
        [
            ["keydown", "Meta", "MetaLeft", False, False, False, True],
            ["keydown", "a", "KeyA", False, False, False, True],
            ["keyup", "a", "KeyA", False, False, False, True],
            ["keyup", "Meta", "MetaLeft", False, False, False, False],
        ],
    ),
    (
        "Alt+ArrowDown",
        [
            ["keydown", "Alt", "AltLeft", False, False, True, False],
            ["keydown", "ArrowDown", "ArrowDown", False, False, True, False],
            ["keyup", "ArrowDown", "ArrowDown", False, False, True, False],
            ["keyup", "Alt", "AltLeft", False, False, False, False],
        ],
    ),
    (
        "Shift+1",
        [
            ["keydown", "Shift", "ShiftLeft", True, False, False, False],
            ["keydown", "!", "Digit1", True, False, False, False],
            ["keypress", "!", "Digit1", True, False, False, False],
            ["keyup", "!", "Digit1", True, False, False, False],
            ["keyup", "Shift", "ShiftLeft", False, False, False, False],
        ],
    ),
    (
        "x",
        [
            ["keydown", "x", "KeyX", False, False, False, False],
            ["keypress", "x", "KeyX", False, False, False, False],
            ["keyup", "x", "KeyX", False, False, False, False],
        ],
    ),
]


async def test_press_sends_each_chord_as_a_person_presses_it(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path, device, "chords", flow(f"{site}/keys.html", *(f"press: {keys}" for keys, _ in CHORDS))
    )
    assert passed(res), verdicts(res)
    assert [s.target for s in res.steps[1:]] == [
        "Shift+Enter",
        "Control+S",
        "Control+Shift+ArrowLeft",
        "Escape",
        "F2",
        "Meta+A",
        "Alt+ArrowDown",
        "Shift+1",
        "x",
    ]
    expected = [event for _, events in CHORDS for event in events]
    assert await page(device, "keylog") == expected
    # What the keys did in the focused textarea, as an editor does them: Shift+Enter a newline,
    # Control+Shift+ArrowLeft selected it back (a word to the left), Shift+1 typed "!" over the
    # selection, x an "x"; the others typed nothing.
    assert await page(device, "pad.value") == "!x"


async def test_press_times_and_control_a_selects_the_whole_field(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "times",
        flow(
            f"{site}/keys.html",
            "tap: { id: a }",
            "press: { keys: Tab, times: 3 }",
        ),
    )
    assert passed(res), verdicts(res)
    assert res.steps[2].target == "Tab ×3"
    assert await page(device, "document.activeElement.id") == "d"
    res = await run(
        tmp_path,
        device,
        "select-all",
        flow(f"{site}/keys.html", "tap: { id: words }", "press: Control+A"),
    )
    assert passed(res), verdicts(res)
    assert await page(device, "[words.selectionStart, words.selectionEnd]") == [0, len("hello big world")]
    res = await run(tmp_path, device, "replace", "steps:\n  - press: z\n", fresh=False)
    assert passed(res), verdicts(res)
    assert await page(device, "words.value") == "z"


# --------------------------------------------------------------------------------------------
# type: focus without a click, the app's selection kept, clear


async def test_type_keeps_the_selection_the_app_made_on_focus(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "rename",
        flow(f"{site}/rename.html", 'type: { into: { id: file }, text: "answer", submit: false }'),
    )
    assert passed(res), verdicts(res)
    assert await page(device, "file.value") == "answer.ipynb"
    # The field took the focus without a click: no pointer event reached it.
    assert await page(device, "pointer") == []


async def test_type_into_a_field_that_has_the_focus_touches_nothing(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "dialog",
        flow(
            f"{site}/rename.html",
            "tap: Rename",
            'type: { into: { id: newname }, text: "answer" }',
            'assert: { text: { in: { id: saved }, equals: "saved answer.ipynb" } }',
        ),
    )
    assert passed(res), verdicts(res)


async def test_type_focuses_fields_in_shadow_roots_frames_and_behind_their_label(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "deep",
        flow(
            f"{site}/deep.html",
            'type: { into: { id: shadowed }, text: "shadow", submit: false }',
            'type: { into: { id: framed }, text: "frame", submit: false }',
            'type: { into: { text: "File name", role: label }, text: "label", submit: false }',
        ),
    )
    assert passed(res), verdicts(res)
    values = await page(
        device,
        "[host.shadowRoot.getElementById('shadowed').value, "
        "frame.contentDocument.getElementById('framed').value, labelled.value]",
    )
    assert values == ["shadow.ipynb", "frame.ipynb", "label.ipynb"]
    assert await page(device, "pointer") == []


async def test_clear_replaces_the_text_of_an_input_a_textarea_and_an_editable_element(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "clear",
        flow(
            f"{site}/clear.html",
            'type: { into: { id: keyed }, text: "new keyed", clear: true, submit: false }',
            'type: { into: { id: area }, text: "new area", clear: true, submit: false }',
            'type: { into: { id: rich }, text: "new rich", clear: true, submit: false }',
            "type: { into: { id: emptied }, clear: true }",
        ),
    )
    assert passed(res), verdicts(res)
    values = await page(device, "[keyed.value, area.value, rich.textContent, emptied.value, submits]")
    # The step that only clears sends no Enter: the form was never submitted.
    assert values == ["new keyed", "new area", "new rich", "", 0]
    inputs = await page(device, "inputs")
    # Key by key where a key listener is (one input a character), one insert elsewhere, one delete.
    assert inputs == {"keyed": len("new keyed"), "area": 1, "rich": 1, "emptied": 1}


async def test_clear_on_no_field_fails_naming_the_step_target(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "no-field",
        flow(f"{site}/select.html", 'type: { into: { id: fake }, text: "x", clear: true }'),
    )
    assert verdicts(res)[1] == (
        "type",
        "fail",
        'clear: the focus is on no text field after focusing id="fake" — there is nothing to clear; name the '
        "field itself in `into`",
    )


async def test_type_finds_a_code_editor_by_the_text_it_shows_and_clears_it_with_select_all(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    """No element's own text holds the line the editor shows (its words lie in highlighted spans and
    the text between them): the read gives the line in reading order, and `text:` takes the deepest
    element that shows it. Nothing there takes the focus without a click, so it is tapped and the
    editor's hidden textarea gets the focus: `clear` then presses the select-all chord, which the editor
    listens to (the textarea's own text is not the editor's). A field argent focuses itself is
    selected in the page, no chord."""
    await device.navigate(f"{site}/editor.html")
    pre = next(n for n in walk((await device.ui_tree()).root) if n.kind == "presentation" and n.value)
    assert (pre.value, pre.text) == ("id name year languages", "select id, name, year from languages")
    res = await run(
        tmp_path,
        device,
        "editor",
        flow(
            f"{site}/editor.html",
            'type: { into: { text: "select id, name, year" }, text: "select name from languages where year > 1970", '
            "clear: true, submit: false }",
            'assert: { visible: { text: "name from languages where year > 1970" } }',
            'type: { into: { id: plain }, text: "new plain", clear: true, submit: false }',
        ),
    )
    assert passed(res), verdicts(res)
    assert await page(device, "model") == "select name from languages where year > 1970"
    assert await page(device, "[plain.value, keys.includes('Control')]") == ["new plain", False]


# --------------------------------------------------------------------------------------------
# select:


async def test_select_by_label_value_and_several_options_fires_input_and_change(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "choose",
        flow(
            f"{site}/select.html",
            "select: { in: { id: lang }, option: Julia }",
            "select: { in: Language, value: r }",
            "select: { in: { id: tags }, options: [Alpha, Gamma] }",
            "select: { in: { id: tags }, values: [b] }",
            "select: { in: { id: tags }, values: [b] }",
        ),
    )
    assert passed(res), verdicts(res)
    assert [s.target for s in res.steps[1:3]] == ['"Julia" in id=lang', 'value "r" in "Language"']
    assert await page(device, "[lang.value, [...tags.selectedOptions].map(o => o.value)]") == ["r", ["b"]]
    # Each choice that changed something: input then change, both bubbling to the document; the
    # last step chose what was chosen already, as a person's choice it fires nothing.
    assert await page(device, "events") == [
        ["input", "lang", True],
        ["change", "lang", True],
        ["input", "lang", True],
        ["change", "lang", True],
        ["input", "tags", True],
        ["change", "tags", True],
        ["input", "tags", True],
        ["change", "tags", True],
    ]


@pytest.mark.parametrize(
    ("step", "reason"),
    [
        (
            "select: { in: { id: lang }, option: Rust }",
            'no option "Rust" in the select id="lang" — its options: "Python", "R", "Julia", "Scala"',
        ),
        (
            "select: { in: { id: lang }, value: rs }",
            'no value "rs" in the select id="lang" — its values: "py", "r", "jl", "sc"',
        ),
        (
            "select: { in: { id: lang }, option: Scala }",
            'option "Scala" of the select id="lang" is disabled — a person cannot choose it',
        ),
        (
            "select: { in: { id: lang }, options: [Python, R] }",
            'the select id="lang" takes one option, not 2 — use `option:` with one',
        ),
        (
            "select: { in: { id: fake }, option: Julia }",
            'select chooses in a native <select>, and id="fake" is a <div> — for a list the page draws itself, '
            "tap it open and tap the option",
        ),
    ],
)
async def test_select_fails_saying_what_there_is(
    tmp_path: Path, device: ChromiumDevice, site: str, step: str, reason: str
) -> None:
    res = await run(tmp_path, device, "wrong", flow(f"{site}/select.html", step))
    assert verdicts(res)[1] == ("select", "fail", reason)
    assert await page(device, "events") == []


# --------------------------------------------------------------------------------------------
# Native dialogs


async def test_dialogs_by_default_alert_accepted_the_others_dismissed(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "defaults",
        flow(
            f"{site}/dialogs.html",
            "tap: Alert",
            'assert: { text: { in: { id: out }, equals: "alert closed" } }',
            "tap: Confirm",
            'assert: { text: { in: { id: out }, equals: "confirm false" } }',
            "tap: Prompt",
            'assert: { text: { in: { id: out }, equals: "prompt null" } }',
            "tap: Leave",
            "assert: { visible: Leave }",
        ),
    )
    assert verdicts(res) == [
        ("launch", "pass", None),
        ("tap", "pass", 'dialog alert "Saved" accepted'),
        ("assert", "pass", None),
        ("tap", "pass", 'dialog confirm "Delete all?" dismissed'),
        ("assert", "pass", None),
        ("tap", "pass", 'dialog prompt "Name?" dismissed'),
        ("assert", "pass", None),
        ("tap", "pass", "dialog beforeunload dismissed"),
        ("assert", "pass", None),
    ]


async def test_dialogs_accept_holds_for_the_fragments_then_ends_with_the_flow(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    fragment = "steps:\n  - tap: Prompt\n  - tap: Leave\n"
    res = await run(
        tmp_path,
        device,
        "accepting",
        flow(
            f"{site}/dialogs.html",
            "dialogs: accept",
            "tap: Confirm",
            'assert: { text: { in: { id: out }, equals: "confirm true" } }',
            "run: leave",
            "assert: { visible: Bye }",
        ),
        others={"leave.yaml": fragment},
    )
    assert verdicts(res) == [
        ("launch", "pass", None),
        ("dialogs", "pass", None),
        ("tap", "pass", 'dialog confirm "Delete all?" accepted'),
        ("assert", "pass", None),
        ("run", "pass", None),
        ("tap", "pass", 'dialog prompt "Name?" accepted with "Ann"'),
        ("tap", "pass", "dialog beforeunload accepted"),
        ("assert", "pass", None),
    ], verdicts(res)
    # The flow is over: the device answers as it does outside a flow again (a tool call).
    registry = build_registry(StaticDevices(device))
    await device.navigate(f"{site}/dialogs.html")
    tree = await device.ui_tree()
    x, y = next(node for node in walk(tree.root) if node.identifier == "confirm").frame.center
    result = await registry.invoke("gesture-tap", {"udid": device.id, "x": x, "y": y}, ToolContext())
    assert result["dialogs"] == ['dialog confirm "Delete all?" dismissed']
    assert await page(device, "out.textContent") == "confirm false"


async def test_dialogs_dismiss_and_a_prompt_text(tmp_path: Path, device: ChromiumDevice, site: str) -> None:
    res = await run(
        tmp_path,
        device,
        "answers",
        flow(
            f"{site}/dialogs.html",
            "dialogs: dismiss",
            "tap: Alert",
            'dialogs: { accept: true, text: "Bob" }',
            "tap: Prompt",
            'assert: { text: { in: { id: out }, equals: "prompt Bob" } }',
        ),
    )
    assert verdicts(res) == [
        ("launch", "pass", None),
        ("dialogs", "pass", None),
        ("tap", "pass", 'dialog alert "Saved" dismissed'),
        ("dialogs", "pass", None),
        ("tap", "pass", 'dialog prompt "Name?" accepted with "Bob"'),
        ("assert", "pass", None),
    ]
    assert res.steps[3].target == 'accept with "Bob"'


async def test_a_launch_leaves_a_page_that_asks_before_unloading(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "relaunch",
        flow(
            f"{site}/dialogs.html",
            "tap: Confirm",
            f"launch: {{ chromium: {site}/bye.html }}",
            "assert: { visible: Bye }",
        ),
    )
    assert passed(res), verdicts(res)
    # The tap made the page one a person used: leaving it asks, and the launch said yes.
    assert res.steps[2].reason == "dialog beforeunload accepted"


async def test_a_page_that_fights_back_is_typed_into_chosen_in_and_survives_a_flood_of_dialogs(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "hostile",
        flow(
            f"{site}/hostile.html",
            'type: { into: { id: field }, text: "new", clear: true, submit: false }',
            'type: { into: { id: nagging }, text: "typed", submit: false }',
            "select: { in: { id: many }, option: Option 250 }",
            "tap: Flood",
            'assert: { text: { in: { id: out }, equals: "survived" } }',
            "select: { in: { id: many }, option: Option 999 }",
        ),
    )
    statuses = [(s.kind, s.status) for s in res.steps]
    assert statuses == [
        ("launch", "pass"),
        ("type", "pass"),
        ("type", "pass"),
        ("select", "pass"),
        ("tap", "pass"),
        ("assert", "pass"),
        ("select", "fail"),
    ], verdicts(res)
    assert await page(device, "[field.value, nagging.value, many.value]") == ["new", "typed", "Option 250"]
    # An alert from the focus argent gave the field (in its own world) froze nothing.
    assert res.steps[2].reason == 'dialog alert "Focus!" accepted'
    flood = res.steps[4].reason or ""
    notes = flood.split("; ")
    # Ten dialogs named, the rest counted; the megabyte message cut to its first 200 characters.
    assert len(notes) == 11 and notes[-1] == "40 more dialogs"
    assert notes[0] == f'dialog alert "{"x" * 199}…" accepted'
    assert notes[1:10] == [f'dialog alert "alert {i}" accepted' for i in range(1, 10)]
    listed = ", ".join(f'"Option {i}"' for i in range(20))
    assert res.steps[6].reason == (
        f'no option "Option 999" in the select id="many" — its options: {listed} (+480 more)'
    )


async def test_a_dialog_during_a_tool_call_is_answered_and_named_in_its_result(
    device: ChromiumDevice, site: str
) -> None:
    registry = build_registry(StaticDevices(device))
    await device.navigate(f"{site}/dialogs.html")
    tree = await device.ui_tree()
    x, y = next(node for node in walk(tree.root) if node.identifier == "alert").frame.center
    tapped = await registry.invoke("gesture-tap", {"udid": device.id, "x": x, "y": y}, ToolContext())
    assert tapped["dialogs"] == ['dialog alert "Saved" accepted']
    await device.session.evaluate("document.getElementById('prompt').focus()")
    pressed = await registry.invoke("keyboard", {"udid": device.id, "key": "Enter"}, ToolContext())
    assert pressed == {"typed": "Enter", "keys": 1, "dialogs": ['dialog prompt "Name?" dismissed']}
    assert await page(device, "out.textContent") == "prompt null"
    quiet = await registry.invoke("gesture-tap", {"udid": device.id, "x": 0.9, "y": 0.9}, ToolContext())
    assert "dialogs" not in quiet


async def test_a_dialog_from_a_cross_origin_frame_is_answered_too(device: ChromiumDevice, site: str) -> None:
    registry = build_registry(StaticDevices(device))
    await device.navigate(f"{site}/outer.html")
    # The frame painted (it said so), and the page drew a frame of its own since: it takes input.
    await device.session.evaluate(
        "painted.then(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))))",
        await_promise=True,
    )
    width, height = await device.refresh_viewport()
    # The middle of the frame's button: 12 px of body padding, then 150 x 60 into the frame.
    args = {"udid": device.id, "x": (12 + 150) / width, "y": (12 + 60) / height}
    tapped = await asyncio.wait_for(registry.invoke("gesture-tap", args, ToolContext()), 30)
    assert tapped["dialogs"] == ['dialog confirm "From the frame?" dismissed']


# --------------------------------------------------------------------------------------------
# The keyboard tool, and recording it


async def test_the_keyboard_tool_presses_chords_and_a_recording_writes_them_as_press(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    registry = build_registry(StaticDevices(device))
    await device.navigate(f"{site}/keys.html")
    recorder = {"name": "keys", "project_root": str(tmp_path)}
    ctx = ToolContext()
    await registry.invoke("flow-start-recording", recorder, ctx)
    for args in ({"key": "shift+enter"}, {"key": "Control+Shift+ArrowLeft"}, {"text": "ok"}):
        added = await registry.invoke(
            "flow-add-step",
            {**recorder, "command": "keyboard", "args": json.dumps({"udid": device.id, **args})},
            ctx,
        )
        assert added["toolResult"]["keys"] >= 1
    finished = await registry.invoke("flow-finish-recording", recorder, ctx)
    assert finished["summary"] == [
        '1. press: "Shift+Enter"',
        '2. press: "Control+Shift+ArrowLeft"',
        '3. tool: keyboard {"text":"ok"}',
    ]
    assert (tmp_path / ".argent" / "flows" / "keys.yaml").read_text() == (
        "steps:\n  - press: Shift+Enter\n  - press: Control+Shift+ArrowLeft\n"
        "  - tool: keyboard\n    args:\n      text: ok\n"
    )
    downs = [event[1:] for event in await page(device, "keylog") if event[0] == "keydown"]
    assert downs[:5] == [
        ["Shift", "ShiftLeft", True, False, False, False],
        ["Enter", "Enter", True, False, False, False],
        ["Control", "ControlLeft", False, True, False, False],
        ["Shift", "ShiftLeft", True, True, False, False],
        ["ArrowLeft", "ArrowLeft", True, True, False, False],
    ]
    with pytest.raises(Exception, match=r'^Unknown key "Entr" \(did you mean "Enter"\?\)\. Supported: '):
        await registry.invoke("keyboard", {"udid": device.id, "key": "Entr"}, ctx)


# --------------------------------------------------------------------------------------------
# Helpers


class StaticDevices:
    """A device provider that holds the module's one device."""

    def __init__(self, device: ChromiumDevice) -> None:
        self.device = device

    async def get(self, device_id: str) -> ChromiumDevice:
        return self.device

    async def list_booted(self) -> list[ChromiumDevice]:
        return [self.device]

    async def boot(self, platform: str, target: str | None = None) -> ChromiumDevice:
        return self.device

    async def stop(self, device_id: str) -> None:
        pass
