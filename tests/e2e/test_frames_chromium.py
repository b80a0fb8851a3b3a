"""Frames on a real headless Chromium: a page on one loopback site embedding pages of another.

The page is served at http://127.0.0.1:<p>, its widget at http://localhost:<q>: two sites, so
Chromium's site isolation puts the widget in another renderer process that the page's own walk
cannot read (an out-of-process frame). Flows run through the engine with ``DeviceDirectives`` on
one Chromium booted for the module; the widget's page itself is asked (over its own frame
session) what it saw.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio
from aiohttp import web

from argent.devices.chromium import ChromiumDevice
from argent.flows.parse import parse_flow
from argent.limits import FRAME_READ_SECONDS, MAX_FRAME_NESTING, MAX_FRAMES_PER_READ
from argent.runner import pixels as P
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from argent.runner.selectors import flatten
from tests.e2e.conftest import chromium_marks, pages_app

pytestmark = [*chromium_marks(), pytest.mark.asyncio(loop_scope="module")]

STYLE = "<style>body { margin: 0; font: 16px sans-serif } iframe { display: block }</style>"

#: The widget (another site): its page counts the clicks it gets and echoes what is typed.
WIDGET = f"""<!doctype html><html><head><title>Widget</title>{STYLE}</head><body>
<p>Secure payment</p>
<button id="pay" onclick="document.getElementById('paid').textContent = 'paid ' + (++window.clicks)">Pay</button>
<p id="paid">not paid</p>
<input id="card" placeholder="Name on card" autocomplete="off"
  oninput="document.getElementById('echo').textContent = 'card: ' + this.value">
<p id="echo">card:</p>
<select id="plan" onchange="document.getElementById('chosen').textContent = 'plan: ' + this.value">
  <option>Basic</option><option>Pro</option></select>
<p id="chosen">plan: Basic</p>
<button id="fade" onclick="fade()">Fade</button>
<div id="box" style="width: 200px; height: 40px; background: rgb(0, 0, 255)"></div>
<script>
  window.clicks = 0;
  // A colour change every second frame, twelve times, ending green (the frame's own page moves
  // for some 24 frames after the tap; the page around it not at all).
  function fade() {{
    let n = 0;
    const step = () => {{
      n++;
      if (n % 2 === 0) {{
        const k = n / 2;
        document.getElementById('box').style.background = k < 12 ? 'rgb(' + (k * 20) + ', 0, ' + (255 - k * 20) + ')' : 'rgb(0, 200, 0)';
        if (k >= 12) return;
      }}
      requestAnimationFrame(step);
    }};
    requestAnimationFrame(step);
  }}
</script>
</body></html>"""

#: A page of the widget's site holding a frame of the top page's site: a frame in a frame, each
#: in another process than its parent.
MIDDLE = """<!doctype html><html><head><title>Middle</title>{style}</head><body>
<p>Middle frame</p>
<iframe id="leaf" title="Leaf" src="{top}/leaf.html" style="width: 300px; height: 120px; border: 2px solid #444"></iframe>
</body></html>"""

LEAF = f"""<!doctype html><html><head><title>Leaf</title>{STYLE}</head><body>
<button id="deep" onclick="this.textContent = 'Deep done'">Deep</button>
</body></html>"""

#: A frame whose renderer spins for ever once loaded.
SPIN = f"""<!doctype html><html><head><title>Spin</title>{STYLE}</head><body>
<p>Spinning frame</p>
<script>window.onload = () => setTimeout(() => {{ for (;;) {{}} }}, 0);</script>
</body></html>"""

PAY = """<!doctype html><html><head><title>Checkout</title>{style}</head><body>
<h1>Checkout</h1>
<button id="outer" onclick="this.textContent = 'outer paid'">Pay</button>
<iframe id="payframe" title="Payment" src="{widget}/widget.html"
  style="width: 500px; height: 400px; border: 4px solid #888; margin: 10px 20px"></iframe>
</body></html>"""

SAME = f"""<!doctype html><html><head><title>Same</title>{STYLE}</head><body>
<h1>Same origin</h1>
<iframe id="same" src="/inside.html" style="width: 400px; height: 120px"></iframe>
</body></html>"""

INSIDE = f"""<!doctype html><html><head><title>Inside</title>{STYLE}</head><body>
<button id="inside" onclick="this.textContent = 'Inside done'">Inside</button>
</body></html>"""

NEST = """<!doctype html><html><head><title>Nest</title>{style}</head><body>
<h1>Nest</h1>
<iframe id="middle" src="{widget}/middle.html" style="width: 500px; height: 300px"></iframe>
</body></html>"""

BELOW = """<!doctype html><html><head><title>Below</title>{style}</head><body>
<h1>Far below</h1>
<div style="height: 2400px"></div>
<iframe id="payframe" src="{widget}/widget.html" style="width: 500px; height: 260px"></iframe>
<div style="height: 400px"></div>
</body></html>"""

#: A page whose cross-origin frame is replaced every few frames, each new one reloading itself.
CHURN = """<!doctype html><html><head><title>Churn</title>{style}</head><body>
<button id="main" onclick="this.textContent = 'main ok'">Main</button>
<div id="slot"></div>
<script>
  setInterval(() => {{
    const f = document.createElement('iframe');
    f.src = '{widget}/reload.html';
    document.getElementById('slot').replaceChildren(f);
  }}, 150);
</script>
</body></html>"""

RELOAD = f"""<!doctype html><html><head><title>Reload</title>{STYLE}</head><body>
<p>Reloading</p><script>setTimeout(() => location.reload(), 20);</script>
</body></html>"""

#: More cross-origin frames than a read walks.
MANY = """<!doctype html><html><head><title>Many</title>{style}</head><body>
{frames}
</body></html>"""

#: A frame in a frame in a frame ..., the sites alternating: every one in another process than its parent.
CHAIN = """<!doctype html><html><head><title>Chain</title>{style}</head><body>
<p>Level {level}</p>
{inner}
</body></html>"""

HOSTILE = """<!doctype html><html><head><title>Hostile</title>{style}</head><body>
<button id="main" onclick="this.textContent = 'main ok'">Main</button>
<iframe id="spin" src="{spin}/spin.html" style="width: 400px; height: 120px"></iframe>
</body></html>"""


#: Frames of many.html: more than a read walks.
MANY_FRAMES = MAX_FRAMES_PER_READ + 8
ONE = f"""<!doctype html><html><head><title>One</title>{STYLE}</head><body><b>one</b></body></html>"""
#: Frames below chain0.html: deeper than a read follows.
CHAIN_LEVELS = MAX_FRAME_NESTING + 2


class NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("no tools here")


@contextlib.asynccontextmanager
async def serve_on(app: web.Application, host: str, name: str) -> AsyncIterator[str]:
    """``app`` on a free port of the loopback address ``host``; its base URL under ``name``."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, 0).start()
        yield f"http://{name}:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def sites() -> AsyncIterator[dict[str, str]]:
    """Three sites: the page's (127.0.0.1), the widget's (localhost), a spinning frame's (127.0.0.2)."""
    top_pages: dict[str, str] = {}
    widget_pages: dict[str, str] = {"/widget.html": WIDGET}
    async with (
        serve_on(pages_app(top_pages), "127.0.0.1", "127.0.0.1") as top,
        serve_on(pages_app(widget_pages), "127.0.0.1", "localhost") as widget,
        serve_on(pages_app({"/spin.html": SPIN}), "127.0.0.2", "127.0.0.2") as spin,
    ):
        widget_pages["/middle.html"] = MIDDLE.format(style=STYLE, top=top)
        top_pages.update(
            {
                "/pay.html": PAY.format(style=STYLE, widget=widget),
                "/same.html": SAME,
                "/inside.html": INSIDE,
                "/leaf.html": LEAF,
                "/nest.html": NEST.format(style=STYLE, widget=widget),
                "/below.html": BELOW.format(style=STYLE, widget=widget),
                "/hostile.html": HOSTILE.format(style=STYLE, spin=spin),
                "/churn.html": CHURN.format(style=STYLE, widget=widget),
                "/many.html": MANY.format(
                    style=STYLE,
                    frames="".join(
                        f'<iframe src="{widget}/one.html#{i}" style="width: 60px; height: 30px"></iframe>'
                        for i in range(MANY_FRAMES)
                    ),
                ),
            }
        )
        widget_pages["/reload.html"] = RELOAD
        widget_pages["/one.html"] = ONE
        for level in range(CHAIN_LEVELS + 1):
            pages, other = (top_pages, widget) if level % 2 == 0 else (widget_pages, top)
            inner = (
                f'<iframe src="{other}/chain{level + 1}.html" style="width: 90%; height: 80%"></iframe>'
                if level < CHAIN_LEVELS
                else ""
            )
            pages[f"/chain{level}.html"] = CHAIN.format(style=STYLE, level=level, inner=inner)
        yield {"top": top, "widget": widget, "spin": spin}


async def run(
    tmp_path: Path, device: ChromiumDevice, name: str, text: str, *, update: bool = False
) -> FlowRunResult:
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    path = flows / f"{name}.yaml"
    path.write_text(text)
    files = DiskFlowFiles()
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
            update_baselines=update,
        ),
        120,
    )


def flow(url: str, *lines: str) -> str:
    return f"steps:\n  - launch: {{ chromium: {url} }}\n" + "".join(f"  - {line}\n" for line in lines)


def verdicts(res: FlowRunResult) -> list[tuple[str, str, str | None]]:
    return [(s.kind, s.status, s.reason) for s in res.steps]


def passed(res: FlowRunResult) -> bool:
    return all(s.status == "pass" for s in res.steps)


async def widget_says(device: ChromiumDevice, expression: str) -> Any:
    """``expression`` evaluated by the widget's own page (in its frame's session)."""
    sessions = device.signals.frames.sessions
    assert len(sessions) == 1, "the widget is one out-of-process frame"
    return await sessions[0].evaluate(expression)


async def test_a_cross_origin_frame_runs_in_another_process(
    device: ChromiumDevice, sites: dict[str, str]
) -> None:
    # The premise: the page's own world cannot see into the widget.
    await device.navigate(f"{sites['top']}/pay.html")
    assert await device.session.evaluate("document.getElementById('payframe').contentDocument === null")
    tree = await device.ui_tree()
    leaves = {leaf.identifier: leaf for leaf in flatten(tree).leaves if leaf.identifier}
    frame, pay = leaves["payframe"].frame, leaves["pay"].frame
    # Inside the iframe's box (its 4 px border and 10/20 px margin moved it), on the top-level viewport.
    assert frame.x < pay.x and frame.y < pay.y
    assert pay.x + pay.width <= frame.x + frame.width and pay.y + pay.height <= frame.y + frame.height
    assert leaves["payframe"].subtree_text.startswith("Payment Secure payment Pay not paid")
    assert not tree.truncated


async def test_tap_type_and_assert_in_a_cross_origin_frame(
    tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]
) -> None:
    res = await run(
        tmp_path,
        device,
        "pay",
        flow(
            f"{sites['top']}/pay.html",
            'assert: { visible: "Secure payment" }',
            "tap: { text: Pay, within: { role: iframe } }",
            'assert: { text: { in: { id: paid }, equals: "paid 1" } }',
            'assert: { text: { in: { id: outer }, equals: "Pay" } }',
            'type: { into: { text: "Name on card" }, text: "Ada Lovelace" }',
            'await: { text: { in: { id: echo }, equals: "card: Ada Lovelace" } }',
            "tap: { text: Pay, within: Payment }",
            'assert: { text: { in: { id: paid }, equals: "paid 2" } }',
        ),
    )
    assert passed(res), verdicts(res)
    # The widget's page itself got the clicks and the text.
    assert await widget_says(device, "window.clicks") == 2
    assert await widget_says(device, "document.getElementById('card').value") == "Ada Lovelace"
    assert await device.session.evaluate("document.getElementById('outer').textContent") == "Pay"


async def test_clear_and_select_act_in_a_cross_origin_frame(
    tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]
) -> None:
    res = await run(
        tmp_path,
        device,
        "forms",
        flow(
            f"{sites['top']}/pay.html",
            'type: { into: { text: "Name on card" }, text: "Ada" }',
            'type: { into: { id: card }, text: "Grace", clear: true }',
            'await: { text: { in: { id: echo }, equals: "card: Grace" } }',
            "select: { in: { id: plan }, option: Pro }",
            'assert: { text: { in: { id: chosen }, equals: "plan: Pro" } }',
        ),
    )
    assert passed(res), verdicts(res)
    assert await widget_says(device, "document.getElementById('card').value") == "Grace"
    assert await widget_says(device, "document.getElementById('plan').value") == "Pro"


async def test_the_focus_wait_follows_the_focus_into_the_frame(
    device: ChromiumDevice, sites: dict[str, str]
) -> None:
    await device.navigate(f"{sites['top']}/pay.html")
    leaves = {leaf.own_text: leaf for leaf in flatten(await device.ui_tree()).leaves}
    # A tap on the frame's text field: the frame's own monitor sees a text field take the focus at
    # once (the page's sees only its iframe focused, and would wait out the grace for it).
    card = leaves["Name on card"].frame.center
    await device.tap(*card)
    assert await asyncio.wait_for(device.wait_focus(*card, timeout=20, grace=20), 10)
    # A tap on the frame's plain text: the frame's body has the focus, no text field does.
    text = leaves["Secure payment"].frame.center
    await device.tap(*text)
    assert not await device.wait_focus(*text, timeout=0.3, grace=0.1)
    assert await widget_says(device, "document.activeElement === document.body")


async def test_within_an_iframe_selects_inside_it_and_not_outside(
    tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]
) -> None:
    res = await run(
        tmp_path,
        device,
        "within",
        flow(
            f"{sites['top']}/pay.html",
            "assert: { hidden: { text: Checkout, within: { role: iframe } } }",
            'assert: { visible: { text: "Name on card", within: { id: payframe } } }',
            "tap: { text: Pay, within: { id: payframe } }",
            'assert: { text: { in: { role: iframe }, contains: "paid 1" } }',
            "tap: { id: outer }",
            'assert: { text: { in: { id: outer }, equals: "outer paid" } }',
            'assert: { text: { in: { id: paid }, equals: "paid 1" } }',
        ),
    )
    assert passed(res), verdicts(res)


async def test_the_quiet_a_snapshot_waits_for_counts_the_frame(
    tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]
) -> None:
    res = await run(
        tmp_path,
        device,
        "fade",
        flow(f"{sites['top']}/pay.html", "tap: Fade", "snapshot: { name: faded, cropOn: { id: box } }"),
        update=True,
    )
    assert passed(res), verdicts(res)
    baseline = next((tmp_path / ".argent" / "flows" / "__baselines__" / "fade").glob("*.png"))
    img = P.decode_png(baseline.read_bytes())[..., :3].astype(int)
    assert img.shape[:2] == (40, 200)
    assert (np.abs(img - (0, 200, 0)).sum(axis=2) < 10).all()  # the end of the fade, not a step of it


async def test_a_same_origin_frame_still_works(
    tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]
) -> None:
    res = await run(
        tmp_path,
        device,
        "same",
        flow(
            f"{sites['top']}/same.html",
            "tap: { text: Inside, within: { id: same } }",
            'assert: { text: { in: { id: inside }, equals: "Inside done" } }',
        ),
    )
    assert passed(res), verdicts(res)


async def test_a_frame_in_a_frame(tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]) -> None:
    # nest.html (127.0.0.1) > middle.html (localhost) > leaf.html (127.0.0.1): each frame in another
    # process than its parent; the leaf in the top page's own process.
    res = await run(
        tmp_path,
        device,
        "nest",
        flow(
            f"{sites['top']}/nest.html",
            'assert: { visible: "Middle frame" }',
            "tap: { text: Deep, within: Leaf }",
            'assert: { text: { in: { id: deep }, equals: "Deep done" } }',
        ),
    )
    assert passed(res), verdicts(res)
    leaves = {leaf.identifier: leaf for leaf in flatten(await device.ui_tree()).leaves if leaf.identifier}
    middle, leaf, deep = leaves["middle"].frame, leaves["leaf"].frame, leaves["deep"].frame
    assert middle.x <= leaf.x <= deep.x and middle.y < leaf.y <= deep.y


async def test_scroll_to_an_element_of_a_frame_below_the_fold(
    tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]
) -> None:
    res = await run(
        tmp_path,
        device,
        "below",
        flow(
            f"{sites['top']}/below.html",
            'scroll-to: "Name on card"',
            'assert: { visible: "Secure payment" }',
            "tap: { text: Pay, within: { id: payframe } }",
            'assert: { text: { in: { id: paid }, equals: "paid 1" } }',
        ),
    )
    assert passed(res), verdicts(res)


async def test_reveal_scrolls_the_page_to_an_element_of_a_frame(
    device: ChromiumDevice, sites: dict[str, str]
) -> None:
    # One move: the element scrolled into view inside its frame, the frame into the page's view.
    await device.navigate(f"{sites['top']}/below.html")
    card = next(leaf for leaf in flatten(await device.kept_tree()).leaves if leaf.identifier == "card")
    assert not card.visible and card.ref >= 0
    tree = await device.reveal(card.ref)
    assert tree is not None
    card = next(leaf for leaf in flatten(tree).leaves if leaf.identifier == "card")
    assert card.visible and 0 < card.frame.y < 1
    assert await device.session.evaluate("window.scrollY") > 0


async def test_frames_that_come_go_and_reload_never_break_a_read(
    tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]
) -> None:
    await device.navigate(f"{sites['top']}/churn.html")
    for _ in range(12):
        tree = await asyncio.wait_for(device.ui_tree(), FRAME_READ_SECONDS + 8)
        assert any(leaf.identifier == "main" for leaf in flatten(tree).leaves)
    res = await run(
        tmp_path,
        device,
        "churn",
        flow(
            f"{sites['top']}/churn.html",
            "tap: Main",
            'assert: { text: { in: { id: main }, equals: "main ok" } }',
        ),
    )
    assert passed(res), verdicts(res)


async def test_a_read_walks_at_most_its_share_of_frames(
    device: ChromiumDevice, sites: dict[str, str]
) -> None:
    await device.navigate(f"{sites['top']}/many.html")
    tree = await device.ui_tree()
    ones = [leaf for leaf in flatten(tree).leaves if leaf.own_text == "one"]
    assert len(ones) == MAX_FRAMES_PER_READ
    assert tree.truncated


async def test_frames_in_frames_are_followed_to_a_bounded_depth(
    device: ChromiumDevice, sites: dict[str, str]
) -> None:
    await device.navigate(f"{sites['top']}/chain0.html")
    tree = await device.ui_tree()
    levels = [leaf.own_text for leaf in flatten(tree).leaves if leaf.own_text.startswith("Level")]
    assert levels == [f"Level {n}" for n in range(MAX_FRAME_NESTING + 1)]
    assert tree.truncated


async def test_a_frame_that_spins_does_not_hold_the_page(
    tmp_path: Path, device: ChromiumDevice, sites: dict[str, str]
) -> None:
    # Last in the module: the spinning renderer is gone with the page that holds it.
    await device.navigate(f"{sites['top']}/hostile.html")
    try:
        # Its walk never answers: the read leaves the frame out after FRAME_READ_SECONDS, and the
        # next reads at once while that walk is pending (a hang guard, far below the walk's own bound).
        for _ in range(3):
            tree = await asyncio.wait_for(device.ui_tree(), FRAME_READ_SECONDS + 8)
            texts = [leaf.own_text for leaf in flatten(tree).leaves]
            assert "Main" in texts and "Spinning frame" not in texts
            assert tree.truncated
        res = await run(
            tmp_path,
            device,
            "hostile",
            flow(
                f"{sites['top']}/hostile.html",
                "tap: Main",
                'assert: { text: { in: { id: main }, equals: "main ok" } }',
            ),
        )
        assert passed(res), verdicts(res)
    finally:
        await device.navigate("about:blank")
