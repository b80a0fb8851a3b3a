"""Finding what a person sees on a real headless Chromium: visibility, ARIA roles, accessible names,
`css:` selectors and the messages of a selector that matches nothing.

One Chromium for the module; each test opens its page (served on loopback) and checks many things
on it. Flows run through the engine with the real directives on that device.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from argent.devices.base import CssSelectorError, UiNode, UiTree
from argent.errors import FlowParseError
from argent.flows.parse import parse_flow
from argent.limits import WALK_TEXT_CHARS
from argent.runner.directives import DeviceDirectives, Timings
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from argent.runner.selectors import flatten
from argent.tools.device_tools.tree_text import describe_text
from tests.e2e.conftest import chromium_marks, pages_app, serve

pytestmark = [*chromium_marks(), pytest.mark.asyncio(loop_scope="module")]

#: The issue's single-page-app shell: a body of zero height that hides its overflow, the app laid out
#: absolutely inside it.
SHELL = """<!doctype html><html><head><title>Shell</title></head>
<body style="margin:0;overflow:hidden;height:0"><div style="position:absolute;inset:0">
<button onclick="this.textContent = 'Gone'">Go</button></div></body></html>"""

#: <html> keeps its own overflow, so <body>'s clips for real: what is in flow in it is clipped away,
#: what is positioned against the page escapes it. Each case below sits in a positioned panel.
CLIPS = """<!doctype html><html style="overflow:hidden"><head><title>Clips</title><style>
  body { margin: 0; overflow: hidden; height: 0; font: 16px sans-serif }
  .panel { position: absolute; left: 0; top: 40px; width: 900px; height: 700px }
  .zero { height: 0; overflow: hidden }
</style></head><body>
<p id="inflow">In flow of the body</p>
<div id="escaped" style="position:absolute; left:0; top:0">Positioned against the page</div>
<div class="panel">
  <div class="zero"><span id="abs-escapes" style="position:absolute; left:0; top:0">Escapes</span>
    <span id="clipped">Clipped in flow</span></div>
  <div class="zero" style="position:relative"><span id="abs-trapped" style="position:absolute; top:0">Trapped</span></div>
  <div style="height:0"><span id="spills">Spills out of a zero-size box</span></div>
  <div class="zero" style="position:relative"><button id="fixed" style="position:fixed; right:0; bottom:0">Fixed</button></div>
  <div class="zero" style="transform:translateZ(0)"><button id="fixed-trapped" style="position:fixed; right:0; top:0">Held</button></div>
  <div style="position:absolute; top:100px; left:0; width:600px">
    <span id="sr-only" style="position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0,0,0,0)">Screen reader only</span>
    <span id="clip-path" style="clip-path:inset(50%)">Inset half</span>
    <div style="clip-path:inset(50%)"><b id="clip-path-kid">Inside a clip-path</b></div>
    <span id="clip-path-none" style="clip-path:inset(0)">Inset nothing</span>
    <span id="transparent" style="opacity:0">See-through</span>
    <div style="opacity:0"><span id="transparent-kid" style="opacity:1">Kid of see-through</span></div>
    <div style="visibility:hidden"><span id="hidden-kid">Hidden kid</span>
      <span id="visible-kid" style="visibility:visible">Visible kid</span></div>
    <div id="scroller" style="height:100px; width:300px; overflow:auto">
      <div style="height:400px">Tall</div><button id="deep" onclick="this.textContent = 'Deep pressed'">Deep</button>
    </div>
  </div>
</div></body></html>"""

FAR = """<!doctype html><html><head><title>Far</title></head><body style="margin:0">
<h1>Top</h1><button id="far" style="margin-top:2000px" onclick="this.textContent = 'Far pressed'">Far</button>
</body></html>"""

ROLES = """<!doctype html><html><head><title>Roles</title></head><body>
<header id="banner">Banner</header>
<nav id="nav"><a id="link" href="#x">Home</a> <a id="not-link">No href</a></nav>
<main id="main">
  <article id="article"><header id="article-header">Scoped header</header><p id="para">Paragraph</p></article>
  <section id="section-named" aria-label="Named region">Region</section><section id="section-bare">Bare</section>
  <aside id="aside">Aside</aside>
  <h1 id="h1">One</h1><h3 id="h3">Three</h3>
  <button id="button">Button</button>
  <input id="text" aria-label="t"><input id="email" type="email" aria-label="e"><input id="tel" type="tel" aria-label="p">
  <input id="url" type="url" aria-label="u"><input id="password" type="password" aria-label="pw">
  <input id="search" type="search" aria-label="s"><input id="listed" list="dl" aria-label="l"><datalist id="dl"></datalist>
  <input id="checkbox" type="checkbox" aria-label="c"><input id="radio" type="radio" aria-label="r">
  <input id="range" type="range" aria-label="g"><input id="number" type="number" aria-label="n">
  <input id="submit" type="submit"><input id="reset" type="reset"><input id="input-button" type="button" value="Go">
  <input id="image" type="image" alt="Send" src="data:,">
  <textarea id="textarea" aria-label="ta"></textarea><div id="editable" contenteditable="true">Edit me</div>
  <div id="not-editable" contenteditable="false">Fixed text</div>
  <select id="select" aria-label="sel"><option>Python</option></select>
  <select id="multi" multiple aria-label="m"><option>A</option></select>
  <ul id="ul"><li id="li">Item</li></ul><ol id="ol"><li>First</li></ol><menu id="menu"><li>m</li></menu>
  <dl><dt id="dt">Term</dt><dd id="dd">Definition</dd></dl>
  <table id="table"><caption>Prices</caption><thead id="thead"><tr id="tr"><th id="th">Name</th>
    <th id="rowheader" scope="row">Row</th></tr></thead><tbody><tr><td id="td">Cell</td></tr></tbody></table>
  <dialog id="dialog" open>Dialog</dialog>
  <img id="img" src="data:," alt="Logo" width="20" height="20"><img id="decorative" src="data:," alt="" width="20" height="20">
  <form id="form-named" aria-label="Sign in"><input aria-label="f"></form><form id="form-bare"><input aria-label="g"></form>
  <fieldset id="fieldset"><legend>Shipping</legend><input aria-label="x"></fieldset>
  <details id="details" open><summary id="summary">More</summary>Details</details>
  <figure id="figure"><figcaption>Fig</figcaption></figure>
  <hr id="hr"><progress id="progress" value="1" max="2"></progress><meter id="meter" value="1"></meter>
  <output id="output">Out</output><blockquote id="blockquote">Quote</blockquote>
  <div id="tab" role="tab">Tab one</div><div id="tablist" role="tablist tab">Tabs</div>
  <span id="explicit" role="switch" aria-checked="true">Wifi</span>
  <div id="plain">Plain</div><ul id="presentation" role="presentation"><li>Not an item</li></ul>
</main>
<footer id="contentinfo">Footer</footer>
</body></html>"""

ROLE_TABLE = {
    "banner": "banner", "nav": "navigation", "link": "link", "not-link": "", "main": "main",
    "article": "article", "article-header": "", "para": "paragraph", "section-named": "region",
    "section-bare": "", "aside": "complementary", "h1": "heading", "h3": "heading", "button": "button",
    "text": "textbox", "email": "textbox", "tel": "textbox", "url": "textbox", "password": "textbox",
    "search": "searchbox", "listed": "combobox", "checkbox": "checkbox", "radio": "radio",
    "range": "slider", "number": "spinbutton", "submit": "button", "reset": "button",
    "input-button": "button", "image": "button", "textarea": "textbox", "editable": "textbox",
    "not-editable": "", "select": "combobox", "multi": "listbox", "ul": "list", "li": "listitem",
    "ol": "list", "menu": "list", "dt": "term", "dd": "definition", "table": "table", "thead": "rowgroup",
    "tr": "row", "th": "columnheader", "rowheader": "rowheader", "td": "cell", "dialog": "dialog",
    "img": "img", "decorative": "", "form-named": "form", "form-bare": "", "fieldset": "group",
    "details": "group", "summary": "", "figure": "figure", "hr": "separator", "progress": "progressbar",
    "meter": "meter", "output": "status", "blockquote": "blockquote", "tab": "tab", "tablist": "tablist",
    "explicit": "switch", "plain": "", "presentation": "", "contentinfo": "contentinfo",
}  # fmt: skip

NAMES = """<!doctype html><html><head><title>Names</title></head><body>
<span id="lb1">Billing</span><span id="lb2">address</span>
<input id="labelledby" aria-labelledby="lb1 lb2" aria-label="ignored" placeholder="ignored too">
<input id="aria-label" aria-label="Search the docs" title="ignored">
<label for="for-label">Email</label><input id="for-label" placeholder="you@example.com">
<label>Full name <input id="wrapped" value="Ada"></label>
<label>Language <select id="wrapped-select"><option>Julia</option></select></label>
<button id="content">Rename <span>and</span> Save</button>
<button id="inner-name"><img src="data:," alt="Delete" width="10" height="10"> item</button>
<button id="aria-over-content" aria-label="Close dialog">x</button>
<a id="link-content" href="#">Read <b>more</b></a>
<div id="block-content" role="button"><div>Line one</div><div>Line two</div></div>
<input id="titled" title="Quantity"><input id="placeholder" placeholder="Search…">
<img id="alt" src="data:," alt="Company logo" width="10" height="10">
<input id="submit" type="submit"><input id="valued" type="submit" value="Send now">
<fieldset id="legend"><legend>Shipping <i>address</i></legend></fieldset>
<figure id="figcaption"><figcaption>Chart of sales</figcaption></figure>
<table id="caption"><caption>Price list</caption><tr><td>1</td></tr></table>
<h2 id="heading">Chapter <em>two</em></h2>
<div id="tooltip-only" role="img" title="Warning sign"></div>
<span id="big-target">{big}</span><input id="huge-labelledby" aria-labelledby="big-target">
<div id="deep-target">{deep}</div><input id="deep-labelledby" aria-labelledby="deep-target">
<input id="garbage-role" role="   TEXTBOX  whatever" aria-label="Shouty">
</body></html>""".replace("{big}", "word " * 200_000).replace(
    "{deep}", "<span>" * 2000 + "Deep label" + "</span>" * 2000
)

NAME_TABLE = {
    "labelledby": "Billing address", "aria-label": "Search the docs", "for-label": "Email",
    "wrapped": "Full name", "wrapped-select": "Language", "content": "Rename and Save",
    "inner-name": "Delete item", "aria-over-content": "Close dialog", "link-content": "Read more",
    "block-content": "Line one Line two", "titled": "Quantity", "placeholder": "Search…",
    "alt": "Company logo", "submit": "Submit", "valued": "Send now", "legend": "Shipping address",
    "figcaption": "Chart of sales", "caption": "Price list", "heading": "Chapter two",
    "tooltip-only": "Warning sign", "garbage-role": "Shouty",
}  # fmt: skip

APP = """<!doctype html><html><head><title>App</title><style>
  body { margin: 0; font: 16px sans-serif } .box { width: 40px; height: 40px; background: teal }
  .modal { position: fixed; left: 300px; top: 200px; width: 400px; height: 300px; border: 1px solid }
</style></head><body>
<p id="log">nothing yet</p>
<button onclick="log('page OK')">OK</button>
<button class="primary" onclick="log('page primary')">Save</button>
<div class="box" onclick="log('box')"></div>
<label for="name">Name</label><input id="name" placeholder="Your name">
<ul><li>Milk <button onclick="log('milk removed')">Remove</button></li>
    <li>Bread <button onclick="log('bread removed')">Remove</button></li></ul>
<div class="modal" role="dialog"><h2>Rename file</h2>
  <input aria-label="New name" value="Untitled.ipynb">
  <button onclick="log('dialog cancel')">Cancel</button>
  <button class="primary" onclick="log('dialog OK')">OK</button>
  <button onclick="log('rename saved')">Rename and Save</button>
</div>
<script>function log(text) { document.getElementById('log').textContent = text; }</script>
</body></html>"""

BLANK = "<!doctype html><html><head><title>Blank</title></head><body></body></html>"
ALL_HIDDEN = "<!doctype html><html><body style='visibility:hidden'><p>Secret</p><p>More</p></body></html>"


class NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("no tools here")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[str]:
    pages = {
        "/shell.html": SHELL,
        "/clips.html": CLIPS,
        "/far.html": FAR,
        "/roles.html": ROLES,
        "/names.html": NAMES,
        "/app.html": APP,
        "/blank.html": BLANK,
        "/hidden.html": ALL_HIDDEN,
    }
    async with serve(pages_app(pages)) as url:
        yield url


#: Real waits, made shorter (a miss waits out the action timeout: 1.5 s here).
QUICK = Timings().scaled(0.2)


async def run(device: Any, tmp_path: Path, steps: str, *, timings: Timings | None = None) -> FlowRunResult:
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    path = flows / "locate.yaml"
    text = f"steps:\n{steps}"
    path.write_text(text)
    files = DiskFlowFiles()
    return await asyncio.wait_for(
        run_flow(
            parse_flow(text),
            await files.locate(str(path)),
            "locate",
            files=files,
            tools=NoTools(),
            directives=DeviceDirectives(timings=timings, scratch_dir=str(tmp_path)),
            device=device,
            platform="chromium",
        ),
        120,
    )


def outcomes(res: FlowRunResult) -> list[tuple[str, str | None]]:
    return [(s.status, s.reason) for s in res.steps]


def nodes(node: UiNode) -> Iterator[UiNode]:
    yield node
    for child in node.children:
        yield from nodes(child)


def by_id(tree: UiTree, identifier: str) -> UiNode:
    found = [n for n in nodes(tree.root) if n.identifier == identifier]
    assert found, f"no node with id {identifier!r}"
    return found[0]


def visible(tree: UiTree, identifier: str) -> bool:
    return by_id(tree, identifier).frame.visible


# --------------------------------------------------------------------------------------------
# Visibility


async def test_the_issue_shell_app_is_seen_and_tapped(device: Any, site: str, tmp_path: Path) -> None:
    res = await run(
        device,
        tmp_path,
        f"  - launch: {{ chromium: {json.dumps(site + '/shell.html')} }}\n"
        "  - tap: Go\n"
        "  - assert: { visible: { role: button, text: Gone } }\n",
    )
    assert outcomes(res) == [("pass", None)] * 3
    text = describe_text(await device.ui_tree())
    assert 'button "Gone" [clickable, focused]' in text and "Nothing a selector can name" not in text


async def test_what_really_clips_and_what_escapes(device: Any, site: str, tmp_path: Path) -> None:
    await device.navigate(f"{site}/clips.html")
    tree = await device.ui_tree()
    seen = {
        key: visible(tree, key)
        for key in (
            "inflow", "escaped", "abs-escapes", "clipped", "abs-trapped", "spills", "fixed", "fixed-trapped",
            "sr-only", "clip-path", "clip-path-kid", "clip-path-none", "visible-kid", "scroller",
        )
    }  # fmt: skip
    assert seen == {
        "inflow": False,  # <body> clips its in-flow content (its own overflow: <html> keeps the viewport's)
        "escaped": True,  # positioned against the page: no clipping ancestor below its containing block
        "abs-escapes": True,  # a non-positioned zero-size clipper does not hold an absolute child
        "clipped": False,  # ... but clips its in-flow child
        "abs-trapped": False,  # a positioned clipper holds it
        "spills": True,  # a zero-size box with overflow: visible hides nothing
        "fixed": True,  # position: fixed escapes a positioned clipper
        "fixed-trapped": False,  # ... not one that contains it (transform)
        "sr-only": False,  # clip: rect(0 0 0 0)
        "clip-path": False,  # clip-path: inset(50%)
        "clip-path-kid": False,  # clip-path clips what the element holds
        "clip-path-none": True,  # clip-path: inset(0) clips nothing
        "visible-kid": True,  # visibility: visible under visibility: hidden
        "scroller": True,
    }
    ids = {n.identifier for n in nodes(tree.root)}
    assert not {"transparent", "transparent-kid", "hidden-kid"} & ids  # opacity 0 (with its kids), hidden
    deep, scroller = by_id(tree, "deep"), by_id(tree, "scroller").frame
    # off-screen in its scroll container: kept, with an empty frame beyond the container's bottom edge
    assert (deep.frame.visible, deep.frame.y >= scroller.y + scroller.height) == (False, True)
    assert tree.blank == ""
    res = await run(
        device,
        tmp_path,
        f"  - launch: {{ chromium: {json.dumps(site + '/clips.html')} }}\n"
        "  - scroll-to: { target: Deep, within: { id: scroller } }\n"
        "  - tap: Deep\n"
        "  - assert: { visible: Deep pressed }\n"
        "  - tap: Fixed\n",
    )
    assert outcomes(res) == [("pass", None)] * 5


async def test_off_screen_is_kept_and_the_hint_comes_only_when_it_exists(
    device: Any, site: str, tmp_path: Path
) -> None:
    launch = f"  - launch: {{ chromium: {json.dumps(site + '/far.html')} }}\n"
    res = await run(device, tmp_path, launch + "  - tap: Far\n", timings=QUICK)
    assert outcomes(res)[1] == (
        "fail",
        'no visible element matched selector text="Far" — one lies below the screen: add a scroll-to step before '
        "this one",
    )
    res = await run(device, tmp_path, launch + "  - tap: Tpo\n", timings=QUICK)
    assert outcomes(res)[1] == (
        "fail",
        'no visible element matched selector text="Tpo" — the nearest texts on the screen: heading "Top"',
    )
    res = await run(
        device, tmp_path, launch + "  - scroll-to: Far\n  - tap: Far\n  - assert: { visible: Far pressed }\n"
    )
    assert outcomes(res) == [("pass", None)] * 4


async def test_a_screen_that_shows_nothing_says_why(device: Any, site: str, tmp_path: Path) -> None:
    await device.navigate(f"{site}/blank.html")
    tree = await device.ui_tree()
    assert (tree.blank, flatten(tree).empty) == ("the page is blank (its <body> is empty)", True)
    assert describe_text(tree).endswith(
        "\n\nNothing a selector can name is visible: the page is blank (its <body> is empty)."
    )
    res = await run(
        device,
        tmp_path,
        f"  - launch: {{ chromium: {json.dumps(site + '/blank.html')} }}\n  - assert: {{ visible: Go }}\n",
        timings=QUICK,
    )
    assert outcomes(res)[1] == (
        "fail",
        "could not evaluate the condition — every read of the UI tree was empty: the page is blank (its <body> "
        "is empty)",
    )
    await device.navigate(f"{site}/hidden.html")
    assert (await device.ui_tree()).blank == "every element is hidden by visibility: hidden on <body>"
    await device.navigate(f"{site}/clips.html")
    assert (await device.ui_tree()).blank == ""


# --------------------------------------------------------------------------------------------
# ARIA roles and accessible names


async def test_implicit_and_explicit_aria_roles(device: Any, site: str) -> None:
    await device.navigate(f"{site}/roles.html")
    tree = await device.ui_tree()
    assert {key: by_id(tree, key).role for key in ROLE_TABLE} == ROLE_TABLE
    # the kind is upstream's role string: the role attribute, else the tag
    keys = ("text", "link", "tablist", "plain", "td", "explicit", "presentation")
    kinds = {key: by_id(tree, key).kind for key in keys}
    assert kinds == {
        "text": "input",
        "link": "a",
        "tablist": "tablist",
        "plain": "div",
        "td": "td",
        "explicit": "switch",
        "presentation": "presentation",  # role: presentation still finds it, as upstream's substring
    }
    screen = flatten(tree)
    # every element with a role is selectable, named or not
    assert {"ul", "tr", "thead", "hr", "article"} <= {leaf.identifier for leaf in screen.leaves}
    text = describe_text(await device.ui_tree())
    assert 'textbox "t" id="text" [clickable]' in text
    assert 'heading "One" id="h1"' in text
    assert 'div value="Plain" id="plain"' in text


async def test_accessible_names_from_every_source(device: Any, site: str) -> None:
    await device.navigate(f"{site}/names.html")
    tree = await device.ui_tree()
    assert {key: by_id(tree, key).label for key in NAME_TABLE} == NAME_TABLE
    assert by_id(tree, "wrapped").value == "Ada"  # the field's own value is not its name
    # a placeholder or title that does not name the element is its description (text: matches it)
    descriptions = {
        key: by_id(tree, key).description for key in ("for-label", "aria-label", "labelledby", "titled")
    }
    assert descriptions == {
        "for-label": "you@example.com",
        "aria-label": "ignored",
        "labelledby": "ignored too",
        "titled": "",
    }
    huge = by_id(tree, "huge-labelledby").label  # a name costs a bounded read
    assert huge.startswith("word word") and len(huge) <= WALK_TEXT_CHARS
    assert by_id(tree, "deep-labelledby").label == ""  # past the nodes a label may visit
    assert by_id(tree, "garbage-role").role == "textbox"


async def test_roles_and_names_select_as_a_person_names_them(device: Any, site: str, tmp_path: Path) -> None:
    res = await run(
        device,
        tmp_path,
        f"  - launch: {{ chromium: {json.dumps(site + '/app.html')} }}\n"
        "  - type: { into: { role: textbox, text: Name }, text: Ada }\n"  # <label for> names the input
        "  - assert: { text: { in: { text: Your name }, equals: Ada } }\n"  # its placeholder still finds it
        "  - assert: { visible: { role: input, text: Name } }\n"  # the tag still matches (upstream flows)
        "  - tap: { role: button, text: Remove, within: { role: listitem, text: Bread } }\n"
        "  - assert: { text: { in: { id: log }, equals: bread removed } }\n"
        "  - tap: { text: OK, within: { role: dialog } }\n"  # a dialog with no id or name is a scope
        "  - assert: { text: { in: { id: log }, equals: dialog OK } }\n"
        "  - tap: { role: button, text: OK }\n"  # the smallest, top-most OK of the page
        "  - assert: { text: { in: { id: log }, equals: page OK } }\n",
    )
    assert outcomes(res) == [("pass", None)] * 10
    tree = await device.ui_tree()
    assert [n.value for n in nodes(tree.root) if n.role == "textbox" and n.label == "Name"] == ["Ada"]


# --------------------------------------------------------------------------------------------
# css:


async def test_css_is_resolved_by_the_browser_and_combines_with_the_scopes(
    device: Any, site: str, tmp_path: Path
) -> None:
    launch = f"  - launch: {{ chromium: {json.dumps(site + '/app.html')} }}\n"
    res = await run(
        device,
        tmp_path,
        launch + '  - tap: { css: "button.primary", within: { role: dialog } }\n'
        "  - assert: { text: { in: { id: log }, equals: dialog OK } }\n"
        '  - tap: { css: ".primary", text: Save }\n'
        "  - assert: { text: { in: { id: log }, equals: page primary } }\n"
        '  - tap: { css: "div.box" }\n'  # no text, no role, no id: kept because it matched
        "  - assert: { text: { in: { id: log }, equals: box } }\n"
        "  - assert: { visible: { role: button, next: { css: \"[aria-label='New name']\" } } }\n"
        '  - when: { visible: { css: "#log" } }\n'
        "    steps:\n"
        '      - tap: { css: "li:nth-child(1) > button" }\n'
        "  - assert: { text: { in: { id: log }, equals: milk removed } }\n",
    )
    assert outcomes(res) == [
        *[("pass", None)] * 8,
        ("pass", 'condition met (visible css="#log")'),
        ("pass", None),
        ("pass", None),
    ]
    # strict: a css selector is never an id or a text; hidden elements are not on the screen
    res = await run(device, tmp_path, launch + '  - tap: { css: "log" }\n', timings=QUICK)
    assert outcomes(res)[1] == (
        "fail",
        'no visible element matched selector css="log" — no visible element on the screen matches that CSS '
        "selector",
    )
    res = await run(
        device, tmp_path, launch + '  - tap: { css: "button:frobnicate", within: { role: dialog } }\n'
    )
    reason = (
        "css selector \"button:frobnicate\" is not valid: the browser refused it ('button:frobnicate' is not a "
        "valid selector)"
    )
    assert outcomes(res)[1] == ("fail", reason)
    with pytest.raises(FlowParseError) as broken:  # refused when the flow is read
        await run(
            device, tmp_path, launch + '  - assert: { visible: { text: OK, within: { css: "div[" } } }\n'
        )
    assert broken.value.message.startswith(
        'Unrecognized flow entry (assert.visible.within: css "div[" is not a valid CSS selector: a `[` is never '
        "closed)"
    )
    with pytest.raises(CssSelectorError) as refused:
        await device.ui_tree(css=["a", "button:frobnicate"])
    assert str(refused.value) == reason


# --------------------------------------------------------------------------------------------
# Messages that teach


async def test_a_miss_names_what_comes_nearest(device: Any, site: str, tmp_path: Path) -> None:
    launch = f"  - launch: {{ chromium: {json.dumps(site + '/app.html')} }}\n"
    res = await run(
        device, tmp_path, launch + "  - tap: { role: button, text: Rename file }\n", timings=QUICK
    )
    assert outcomes(res)[1] == (
        "fail",
        'no visible element matched selector text="Rename file" role="button" — buttons here: "Rename and Save", '
        '"Remove", "Cancel", "Save", "OK"',
    )
    res = await run(
        device,
        tmp_path,
        launch + "  - tap: { role: button, text: Delete, within: { role: dialog } }\n",
        timings=QUICK,
    )
    assert outcomes(res)[1] == (
        "fail",
        'no visible element matched selector text="Delete" role="button" within (role="dialog") — buttons here: '
        '"Cancel", "OK", "Rename and Save"',
    )
    res = await run(
        device, tmp_path, launch + "  - assert: { visible: { text: Milk, within: { role: dialog } } }\n"
    )
    assert outcomes(res)[1] == (
        "fail",
        'no element matched selector text="Milk" within (role="dialog") — text="Milk" is on the screen, but not '
        'within (role="dialog")',
    )
    res = await run(device, tmp_path, launch + "  - assert: { visible: { role: checkbox } }\n")
    assert outcomes(res)[1] == (
        "fail",
        'no element matched selector role="checkbox" — roles on the screen: textbox, heading, button, label, '
        "dialog and 4 more",
    )
