"""The event-driven settle on a real headless Chromium: pages that animate, fetch after a click,
re-render lists, navigate, virtualize rows, listen for keys or hand the focus on.

Flows run through the engine with ``DeviceDirectives`` (real timings) on one Chromium booted for
the module; the pages come from an aiohttp server on loopback (its ``/data`` answers late).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio
from aiohttp import web

from argent.devices.base import UiNode
from argent.devices.chromium import ChromiumDevice, find_chromium
from argent.flows.parse import parse_flow
from argent.limits import SETTLE_MAX_MS
from argent.runner import pixels as P
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import ToolCallContext, ToolOutcome, run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from tests.e2e.conftest import pages_app, serve

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium binary (set ARGENT_CHROMIUM)"),
]

#: How late ``/data`` answers: longer than the old 250 ms two-reads settle ever waited.
FETCH_DELAY_MS = 400

STYLE = "<style>body { margin: 0; font: 16px sans-serif } li, .row { height: 40px }</style>"

ANIMATE = f"""<!doctype html><html><head><title>Animate</title>{STYLE}<style>
  #panel {{ position: absolute; left: 0; top: 120px; width: 320px; height: 220px; background: #36c;
           transform: translateX(-600px); transition: transform 450ms ease-out; }}
  #panel.open {{ transform: translateX(300px); }}
  .spinner {{ position: absolute; right: 20px; top: 20px; width: 24px; height: 24px; border: 4px solid #999;
             border-top-color: transparent; border-radius: 50%; animation: spin 0.8s linear infinite; }}
  @keyframes spin {{ to {{ transform: rotate(360deg) }} }}
</style></head><body>
<div class="spinner"></div>
<button id="open" onclick="document.getElementById('panel').classList.add('open')">Open</button>
<div id="panel"><button id="inside" style="margin: 90px 0 0 110px"
  onclick="document.getElementById('out').textContent = 'inside clicked'">Inside</button></div>
<p id="out" style="margin-top: 400px">idle</p>
</body></html>"""

FETCH = f"""<!doctype html><html><head><title>Fetch</title>{STYLE}</head><body>
<button id="load" onclick="load()">Load</button>
<div id="out" style="width: 400px; height: 200px">waiting</div>
<button id="next" hidden onclick="document.getElementById('out').textContent = 'next clicked'">Next</button>
<script>
  function load() {{
    fetch('/data').then(r => r.json()).then(d => {{
      const out = document.getElementById('out');
      out.textContent = 'Loaded ' + d.value;
      out.style.background = '#f00';
      document.getElementById('next').hidden = false;
    }});
  }}
</script>
</body></html>"""

LIST = f"""<!doctype html><html><head><title>List</title>{STYLE}</head><body>
<button id="shuffle" onclick="shuffle()">Shuffle</button>
<p id="picked">none</p>
<ul id="list"></ul>
<script>
  function render(order) {{
    const ul = document.getElementById('list');
    ul.textContent = '';
    for (const i of order) {{
      const li = document.createElement('li');
      li.textContent = 'Item ' + i;
      li.onclick = () => {{ document.getElementById('picked').textContent = 'picked Item ' + i; }};
      ul.appendChild(li);
    }}
  }}
  function order() {{ return [...Array(12).keys()].sort(() => Math.random() - 0.5); }}
  render([...Array(12).keys()]);
  // A re-render every frame for 20 frames (a list whose rows arrive and re-sort).
  function shuffle() {{
    let n = 0;
    const step = () => {{ render(order()); if (++n < 20) requestAnimationFrame(step); }};
    step();
  }}
</script>
</body></html>"""

LONG = (
    f"<!doctype html><html><head><title>Long</title>{STYLE}</head><body>"
    "<script>window.wheels = 0; addEventListener('wheel', () => window.wheels++, {passive: true});</script>"
    '<p id="top">Top of the page</p><p id="picked">none</p>'
    + "".join(
        f"<div class=\"row\" onclick=\"document.getElementById('picked').textContent = 'picked Row {i}'\">Row {i}</div>"
        for i in range(200)
    )
    + "</body></html>"
)

VIRTUAL = f"""<!doctype html><html><head><title>Virtual</title>{STYLE}</head><body>
<p id="picked">none</p>
<div id="vp" style="position: relative; height: 400px; width: 400px; overflow-y: auto">
  <div id="spacer" style="height: 20000px"></div>
</div>
<script>
  window.wheels = 0;
  addEventListener('wheel', () => window.wheels++, {{passive: true, capture: true}});
  const vp = document.getElementById('vp');
  function render() {{
    for (const old of vp.querySelectorAll('.row')) old.remove();
    const first = Math.floor(vp.scrollTop / 40);
    for (let i = first; i < first + 11 && i < 500; i++) {{
      const row = document.createElement('div');
      row.className = 'row';
      row.textContent = 'Row ' + i;
      row.style.cssText = 'position: absolute; left: 0; right: 0; top: ' + (i * 40) + 'px';
      row.onclick = () => {{ document.getElementById('picked').textContent = 'picked Row ' + i; }};
      vp.appendChild(row);
    }}
  }}
  vp.addEventListener('scroll', () => requestAnimationFrame(render));
  render();
</script>
</body></html>"""

#: A feed that loads more at its end: once scrolled to the bottom, a timer (standing in for an answer
#: over a socket, which no request in flight announces) appends rows 30 to 59 after 800 ms.
FEED = f"""<!doctype html><html><head><title>Feed</title>{STYLE}</head><body>
<p id="picked">none</p>
<div id="feed" style="height: 300px; width: 400px; overflow-y: auto"></div>
<script>
  const feed = document.getElementById('feed');
  function add(from, to) {{
    for (let i = from; i < to; i++) {{
      const row = document.createElement('div');
      row.className = 'row';
      row.textContent = 'Row ' + i;
      row.onclick = () => {{ document.getElementById('picked').textContent = 'picked Row ' + i; }};
      feed.appendChild(row);
    }}
  }}
  add(0, 30);
  let more = false;
  feed.addEventListener('scroll', () => {{
    if (!more && feed.scrollTop + feed.clientHeight >= feed.scrollHeight - 1) {{
      more = true;
      setTimeout(() => add(30, 60), 800);
    }}
  }});
</script>
</body></html>"""

TYPING = f"""<!doctype html><html><head><title>Typing</title>{STYLE}</head><body>
<input id="plain" placeholder="Plain" oninput="document.getElementById('inputs').textContent = ++window.inputs">
<p id="inputs">0</p>
<input id="keyed" placeholder="Keyed">
<p id="keys"></p>
<button id="search" onclick="setTimeout(() => {{ const q = document.getElementById('q'); q.hidden = false; q.focus(); }}, 50)">Search</button>
<input id="q" placeholder="Query" hidden>
<script>
  window.inputs = 0;
  const keys = [];
  document.getElementById('keyed').addEventListener('keydown', e => {{
    keys.push(e.key);
    document.getElementById('keys').textContent = keys.join(',');
  }});
</script>
</body></html>"""

FRAMES = f"""<!doctype html><html><head><title>Frames</title>{STYLE}</head><body>
<button id="move" onclick="requestAnimationFrame(() => requestAnimationFrame(() => {{
  document.getElementById('target').style.top = '300px'; }}))">Move</button>
<button id="soon" onclick="setTimeout(() => {{ document.getElementById('target').style.left = '400px'; }}, 0)">Soon</button>
<p id="out">none</p>
<div style="position: relative; height: 400px">
  <button id="decoy" style="position: absolute; left: 0; top: 40px; width: 200px; height: 40px"
    onclick="document.getElementById('out').textContent = 'decoy'">Decoy</button>
  <button id="target" style="position: absolute; left: 0; top: 40px; width: 200px; height: 40px; z-index: 1"
    onclick="document.getElementById('out').textContent = 'target ' + this.style.top + ' ' + this.style.left">Target</button>
</div>
</body></html>"""

FADE = f"""<!doctype html><html><head><title>Fade</title>{STYLE}</head><body>
<button id="fade" onclick="fade()">Fade</button>
<div id="box" style="width: 400px; height: 200px; background: rgb(0, 0, 255)"></div>
<script>
  // A colour change every second frame, twelve times, ending green: between two changes lies
  // one frame without any, and a snapshot must still show the end.
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

#: Animations (a hover's background fading, a glow, a box sliding away): "Slow" starts a CSS transition
#: and a keyframe animation of colours and a slide that run for a minute, "Paint" a transition of
#: 600 ms that ends green.
PAINT = f"""<!doctype html><html><head><title>Paint</title>{STYLE}<style>
  #slow, #paint {{ width: 400px; height: 120px; background-color: rgb(0, 0, 255); }}
  #slow.on {{ background-color: rgb(255, 0, 0); color: white; transition: background-color 60s linear, color 60s; }}
  #glow.on {{ animation: glow 60s linear; }}
  @keyframes glow {{ to {{ box-shadow: 0 0 20px red; opacity: 0.5 }} }}
  #paint.on {{ background-color: rgb(0, 200, 0); transition: background-color 600ms linear; }}
  #slide {{ width: 200px; height: 60px; background: #999; }}
  #slide.on {{ transform: translateX(600px); transition: transform 60s linear; }}
</style></head><body>
<button id="start-slow" onclick="for (const el of [slow, glow, slide]) el.classList.add('on')">Slow</button>
<button id="start-paint" onclick="paint.classList.add('on')">Paint</button>
<div id="slow">slow</div><p id="glow">glow</p><div id="slide">slide</div><div id="paint"></div>
</body></html>"""

#: "Go" sends "Catch" sliding to the right for 800 ms (linear, visible all the way); a decoy waits where
#: it started.
SLIDE = f"""<!doctype html><html><head><title>Slide</title>{STYLE}<style>
  #catch {{ position: absolute; left: 0; top: 100px; width: 160px; height: 40px; z-index: 1; }}
  #catch.away {{ left: 600px; transition: left 800ms linear; }}
  #decoy {{ position: absolute; left: 0; top: 100px; width: 160px; height: 40px; }}
</style></head><body>
<button id="go" onclick="document.getElementById('catch').classList.add('away')">Go</button>
<button id="decoy" onclick="out.textContent = 'decoy'">Decoy</button>
<button id="catch" onclick="out.textContent = 'caught'">Catch</button>
<p id="out" style="margin-top: 200px">none</p>
</body></html>"""

FIRST = f"""<!doctype html><html><head><title>First</title>{STYLE}</head><body>
<a id="go" href="/second.html">Go to the second page</a></body></html>"""

SECOND = f"""<!doctype html><html><head><title>Second</title>{STYLE}</head><body>
<button id="done" onclick="this.textContent = 'Done!'">Finish</button></body></html>"""

PAGES = {
    "/animate.html": ANIMATE,
    "/fetch.html": FETCH,
    "/list.html": LIST,
    "/long.html": LONG,
    "/feed.html": FEED,
    "/virtual.html": VIRTUAL,
    "/typing.html": TYPING,
    "/frames.html": FRAMES,
    "/fade.html": FADE,
    "/paint.html": PAINT,
    "/slide.html": SLIDE,
    "/first.html": FIRST,
    "/second.html": SECOND,
}


class NoTools:
    def params(self, tool: str) -> frozenset[str] | None:
        return None

    async def invoke(self, tool: str, args: dict[str, Any], ctx: ToolCallContext) -> ToolOutcome:
        raise AssertionError("no tools here")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[str]:
    async def data(request: web.Request) -> web.Response:
        await asyncio.sleep(FETCH_DELAY_MS / 1000)
        return web.json_response({"value": 42})

    async with serve(pages_app(PAGES, web.get("/data", data))) as url:
        yield url


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


def walk(node: UiNode) -> Iterator[UiNode]:
    yield node
    for child in node.children:
        yield from walk(child)


def passed(res: FlowRunResult) -> bool:
    return all(s.status == "pass" for s in res.steps)


# --------------------------------------------------------------------------------------------
# Animations


async def test_a_tap_waits_for_a_transition_to_end(tmp_path: Path, device: ChromiumDevice, site: str) -> None:
    res = await run(
        tmp_path,
        device,
        "animate",
        flow(
            f"{site}/animate.html",
            "tap: Open",
            "tap: Inside",
            'assert: { text: { in: { id: out }, equals: "inside clicked" } }',
        ),
    )
    assert passed(res), verdicts(res)


async def test_a_tap_on_an_element_that_slides_lands_where_it_comes_to_rest(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    # No animation holds the page's quiet: the tap waits for its own target to hold still, then
    # reads it again there (read where it was, it would land on the decoy left behind).
    res = await run(
        tmp_path,
        device,
        "slide",
        flow(
            f"{site}/slide.html",
            "tap: Go",
            "tap: Catch",
            'assert: { text: { in: { id: out }, equals: "caught" } }',
        ),
    )
    assert passed(res), verdicts(res)


async def test_a_snapshot_after_a_transition_shows_where_it_ended(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    text = flow(f"{site}/animate.html", "tap: Open", "snapshot: { name: panel, cropOn: { id: panel } }")
    adopted = await run(tmp_path, device, "panel", text, update=True)
    assert passed(adopted), verdicts(adopted)
    baseline = next((tmp_path / ".argent" / "flows" / "__baselines__" / "panel").glob("*.png"))
    img = P.decode_png(baseline.read_bytes())
    blue = (np.abs(img[..., :3].astype(int) - (0x33, 0x66, 0xCC)).sum(axis=2) < 10).sum()
    assert blue > 0.8 * img.shape[0] * img.shape[1] - 120 * 40  # the whole panel (but its button) is in
    again = await run(tmp_path, device, "panel", text)
    assert passed(again), verdicts(again)
    assert (again.steps[2].reason or "").startswith("diff 0.00% ≤ 0.5%")


async def test_an_infinite_animation_does_not_hold_a_step(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    # The spinner turns for ever: waiting for it to end would cost every step the 3 s ceiling.
    res = await run(
        tmp_path, device, "spinner", flow(f"{site}/animate.html", "tap: Open", "snapshot: spinning")
    )
    assert [s.kind for s in res.steps] == ["launch", "tap", "snapshot"]
    for step in res.steps[1:]:
        assert (step.duration_ms or 0) < SETTLE_MAX_MS * 0.8, verdicts(res)


async def test_an_animation_holds_no_step_but_its_own_target_and_a_capture_wait_for_it(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    """A colour fading (a transition, a keyframe animation of shadows and opacity) or a box sliding
    elsewhere on the page holds no step: the page is quiet while they run, and an element that does
    not move holds still at once. The element that slides is awaited until it rests (here it never
    does, so the wait ends moved). A capture shows colours, so it waits for the end."""
    await device.navigate(f"{site}/paint.html")
    assert await device.wait_quiet(10) is not None
    nodes = {n.identifier: n for n in walk((await device.ui_tree()).root) if n.identifier}
    await device.tap(*nodes["start-slow"].frame.center)
    assert await device.wait_quiet(10) is not None  # a minute before the animations end
    running = "document.getAnimations().filter(a => a.playState === 'running').length"
    assert await device.session.evaluate(running) == 4
    assert await device.hold_still(*nodes["start-paint"].frame.center, 10) is False
    assert await device.hold_still(*nodes["slide"].frame.center, 0.5) is True
    text = flow(
        f"{site}/paint.html", "tap: { id: start-paint }", "snapshot: { name: painted, cropOn: { id: paint } }"
    )
    adopted = await run(tmp_path, device, "painted", text, update=True)
    assert passed(adopted), verdicts(adopted)
    baseline = next((tmp_path / ".argent" / "flows" / "__baselines__" / "painted").glob("*.png"))
    img = P.decode_png(baseline.read_bytes())
    green = ((img[..., 0] < 30) & (abs(img[..., 1].astype(int) - 200) < 30) & (img[..., 2] < 30)).sum()
    assert green > 0.95 * img.shape[0] * img.shape[1]  # where the transition ended


async def test_a_tap_acts_where_the_frames_after_the_last_input_left_the_element(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    # "Target" covers "Decoy"; a click on Move moves Target away two frames later (a double
    # requestAnimationFrame), a click on Soon in a zero timeout. Read too early, the tap lands on
    # the Decoy that is left there.
    res = await run(
        tmp_path,
        device,
        "frames",
        flow(
            f"{site}/frames.html",
            "tap: Move",
            "tap: Target",
            'assert: { text: { in: { id: out }, equals: "target 300px 0px" } }',
            "tap: Soon",
            "tap: Target",
            'assert: { text: { in: { id: out }, equals: "target 300px 400px" } }',
        ),
    )
    assert passed(res), verdicts(res)


async def test_a_snapshot_shows_the_last_frame_of_a_change_that_runs_for_frames(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    text = flow(f"{site}/fade.html", "tap: Fade", "snapshot: faded")
    for update in (True, False, False):
        res = await run(tmp_path, device, "fade", text, update=update)
        assert passed(res), verdicts(res)
        if not update:
            assert (res.steps[2].reason or "").startswith("diff 0.00% ≤ 0.5%")
    baseline = next((tmp_path / ".argent" / "flows" / "__baselines__" / "fade").glob("*.png"))
    img = P.decode_png(baseline.read_bytes())
    green = ((img[..., 0] < 30) & (abs(img[..., 1].astype(int) - 200) < 30) & (img[..., 2] < 30)).sum()
    assert green > 350 * 180


# --------------------------------------------------------------------------------------------
# Network


async def test_a_snapshot_after_a_click_waits_for_the_fetch_it_started(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    text = flow(
        f"{site}/fetch.html",
        "tap: Load",
        "snapshot: loaded",
        "tap: Next",
        'assert: { text: { in: { id: out }, equals: "next clicked" } }',
    )
    adopted = await run(tmp_path, device, "fetch", text, update=True)
    assert passed(adopted), verdicts(adopted)
    assert (adopted.steps[2].duration_ms or 0) >= FETCH_DELAY_MS * 0.8
    baseline = next((tmp_path / ".argent" / "flows" / "__baselines__" / "fetch").glob("*.png"))
    img = P.decode_png(baseline.read_bytes())
    red = ((img[..., 0] > 200) & (img[..., 1] < 60) & (img[..., 2] < 60)).sum()
    assert red > 300 * 150  # the loaded box, drawn only once the response came
    again = await run(tmp_path, device, "fetch", text)
    assert passed(again), verdicts(again)
    assert (again.steps[2].reason or "").startswith("diff 0.00% ≤ 0.5%")


async def test_a_tap_that_navigates_then_a_tap_on_the_new_page(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "navigate",
        flow(f"{site}/first.html", "tap: Go to the second page", "tap: Finish", "assert: { visible: Done! }"),
    )
    assert passed(res), verdicts(res)


async def test_a_change_wait_carried_over_a_page_load_ends_with_the_new_page(
    device: ChromiumDevice, site: str
) -> None:
    """A mark taken on a page with many changes, then a new page: the new document is a change past
    that mark, so the wait ends once the new page is quiet (it used to wait for the new page to make
    as many changes as the old one had, and so ran out its time after every page load)."""
    await device.navigate(f"{site}/first.html")
    assert await device.wait_quiet(10) is not None
    await device.session.evaluate(
        "for (let i = 0; i < 300; i++) document.body.appendChild(document.createElement('p'))"
    )
    mark = await device.wait_quiet(10)
    assert mark is not None
    await device.navigate(f"{site}/second.html")
    assert await device.wait_quiet(5, after=mark) is not None


# --------------------------------------------------------------------------------------------
# Re-rendered lists


async def test_a_list_re_rendered_for_frames_is_tapped_where_it_ends_up(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "list",
        flow(
            f"{site}/list.html",
            "tap: Shuffle",
            "tap: { text: Item 7 }",
            'assert: { text: { in: { id: picked }, equals: "picked Item 7" } }',
            "tap: Shuffle",
            "tap: { text: Item 11 }",
            'assert: { text: { in: { id: picked }, equals: "picked Item 11" } }',
        ),
    )
    assert passed(res), verdicts(res)


# --------------------------------------------------------------------------------------------
# scroll-to


async def test_scroll_to_brings_an_element_into_view_in_one_move(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "long",
        flow(
            f"{site}/long.html",
            "scroll-to: Row 180",
            "tap: Row 180",
            "scroll-to: { target: Top of the page, direction: up }",
            'assert: { text: { in: { id: picked }, equals: "picked Row 180" } }',
        ),
    )
    assert passed(res), verdicts(res)
    assert await device.session.evaluate("window.wheels") == 0  # no step-by-step wheel scrolling


async def test_scroll_to_keeps_its_direction(tmp_path: Path, device: ChromiumDevice, site: str) -> None:
    res = await run(
        tmp_path,
        device,
        "direction",
        flow(f"{site}/long.html", "scroll-to: Row 199", "scroll-to: Row 3"),
    )
    assert verdicts(res)[1:] == [
        ("scroll-to", "pass", None),
        (
            "scroll-to",
            "fail",
            'reached the end of the scroll without finding text="Row 3" — one lies above the scroll area, '
            "give scroll-to direction: up",
        ),
    ]


async def test_scroll_to_scrolls_step_by_step_to_rows_not_rendered_yet(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "virtual",
        flow(
            f"{site}/virtual.html",
            "scroll-to: { target: Row 60, within: { id: vp } }",
            "tap: Row 60",
            'assert: { text: { in: { id: picked }, equals: "picked Row 60" } }',
        ),
    )
    assert passed(res), verdicts(res)
    assert await device.session.evaluate("window.wheels") > 0


async def test_scroll_to_waits_at_the_end_for_rows_that_arrive_there(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    # The end of the feed is reached before Row 45 exists: the step waits there for the rows the
    # feed loads, then scrolls on to it.
    res = await run(
        tmp_path,
        device,
        "feed",
        flow(
            f"{site}/feed.html",
            "scroll-to: { target: Row 45, within: { id: feed } }",
            "tap: Row 45",
            'assert: { text: { in: { id: picked }, equals: "picked Row 45" } }',
        ),
    )
    assert passed(res), verdicts(res)


# --------------------------------------------------------------------------------------------
# type


async def test_type_inserts_where_no_key_listener_needs_keys(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "typing",
        flow(
            f"{site}/typing.html",
            'type: { into: { id: plain }, text: "héllo wörld", submit: false }',
            'assert: { text: { in: { id: inputs }, equals: "1" } }',
            'type: { into: { id: keyed }, text: "abc", submit: false }',
            'assert: { text: { in: { id: keys }, equals: "a,b,c" } }',
        ),
    )
    assert passed(res), verdicts(res)
    values = await device.session.evaluate("[plain.value, keyed.value]")
    assert values == ["héllo wörld", "abc"]


async def test_type_waits_for_the_focus_a_tap_hands_on(
    tmp_path: Path, device: ChromiumDevice, site: str
) -> None:
    res = await run(
        tmp_path,
        device,
        "focus",
        flow(f"{site}/typing.html", 'type: { into: Search, text: "argent", submit: false }'),
    )
    assert passed(res), verdicts(res)
    assert await device.session.evaluate("q.value") == "argent"


# --------------------------------------------------------------------------------------------
# Reads in argent's world


async def test_a_read_in_argents_world_is_the_read_in_the_pages_own(
    device: ChromiumDevice, site: str
) -> None:
    from argent.devices.web.walker import parse_walk, walker_expression
    from tests.e2e.test_chromium_device import FORM_PAGE

    PAGES["/form.html"] = FORM_PAGE
    await device.navigate(f"{site}/form.html")
    ours = await device.ui_tree()
    theirs, _ = parse_walk(await device.session.evaluate(walker_expression()), device.id)
    assert ours == theirs and ours.scroll == theirs.scroll and ours.truncated == theirs.truncated

    def texts(node: Any) -> list[str]:
        return [node.label, node.value, *(t for child in node.children for t in texts(child))]

    assert {"In shadow", "Inner button", "Press me"} <= set(texts(ours.root))


async def test_a_page_that_patches_the_dom_does_not_derail_a_read(device: ChromiumDevice, site: str) -> None:
    PAGES["/patched.html"] = (
        "<!doctype html><body><button id='b'>Patched</button><script>"
        "Element.prototype.getBoundingClientRect = () => ({left: 0, top: 0, right: 0, bottom: 0, width: 0, height: 0});"
        "window.requestAnimationFrame = () => 0; window.MutationObserver = function () { throw new Error('no'); };"
        "</script></body>"
    )
    await device.navigate(f"{site}/patched.html")
    assert await device.wait_quiet(3.0) is not None
    tree = await device.ui_tree()

    def find(node: Any) -> Any:
        if node.identifier == "b":
            return node
        return next((hit for child in node.children if (hit := find(child)) is not None), None)

    button = find(tree.root)
    assert button is not None and button.frame.visible
