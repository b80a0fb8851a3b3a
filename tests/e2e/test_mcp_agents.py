"""Issue 27 through the official MCP Python SDK against a real `argent mcp` on real headless Chromium:
a flow that did not pass is an error with its failing step's screen as an image, co-located and over
a link."""

from __future__ import annotations

import base64
import json
import re
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from argent.link.png import is_png
from tests.e2e.conftest import Cli, chromium_marks, start_server_process

pytestmark = chromium_marks()

#: A page with a button "Go" and no "Pay": a tap on "Pay" fails on it.
GO_PAGE = "data:text/html,<title>Go</title><h1>Checkout</h1><button>Go</button>"


@asynccontextmanager
async def mcp_session(cli: Cli, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "argent", "mcp"], env=cli.env(**env), cwd=str(cli.cwd)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def images(result: types.CallToolResult) -> list[bytes]:
    return [base64.b64decode(b.data) for b in result.content if isinstance(b, types.ImageContent)]


def write_flow(project: Path, name: str, text: str) -> None:
    (project / ".argent" / "flows" / f"{name}.yaml").write_text(text)


async def check_failing_flow_answer(session: ClientSession, project: Path) -> None:
    write_flow(
        project, "pay", f"steps:\n  - launch: '{GO_PAGE}'\n  - tap: Go\n  - tap: Pay\n  - echo: never\n"
    )
    failed = await session.call_tool("flow-execute", {"name": "pay", "project_root": str(project)})
    assert failed.is_error is True
    report, caption = texts(failed)
    lines = report.splitlines()
    assert lines[0].startswith('Running flow "pay" on chromium-cdp-') and lines[0].endswith(" (4 steps)")
    assert lines[-1].startswith("FAIL (started on chromium-cdp-")
    assert lines[-1].endswith(") — 2 passed, 1 failed, 0 skipped, 0 errored")
    assert any(line.startswith('  ✗  3 tap "Pay" — no visible element matched') for line in lines)
    assert caption.startswith('Step 3 (tap "Pay") failed — its screenshot (')
    (png,) = images(failed)
    assert is_png(png)
    structured: Any = failed.structured_content
    assert structured is not None
    assert (structured["ok"], structured["passed"], structured["failed"]) == (False, 2, 1)
    assert [s["status"] for s in structured["steps"]] == ["pass", "pass", "fail", "skip"]
    assert "artifactImages" not in structured  # the bytes are the image content, not repeated

    write_flow(project, "go", f"steps:\n  - launch: '{GO_PAGE}'\n  - tap: Go\n")
    passed = await session.call_tool("flow-execute", {"name": "go", "project_root": str(project)})
    assert passed.is_error is False and images(passed) == []
    assert texts(passed)[0].splitlines()[-1].endswith(") — 2 passed, 0 failed, 0 skipped, 0 errored")
    assert passed.structured_content is not None and passed.structured_content["ok"] is True


async def test_a_failing_flow_is_an_error_with_its_screenshot_as_an_image(cli: Cli, project: Path) -> None:
    async with mcp_session(cli) as session:
        await check_failing_flow_answer(session, project)


async def test_over_a_link_the_screenshot_comes_in_the_result(cli: Cli, project: Path) -> None:
    server = start_server_process(cli)
    try:
        async with mcp_session(cli, ARGENT_TOOLS_URL=server.url, ARGENT_AUTH_TOKEN=server.token) as session:
            await check_failing_flow_answer(session, project)
    finally:
        server.stop()


async def test_a_flow_waiting_for_its_prerequisite_is_an_error_that_says_so(cli: Cli, project: Path) -> None:
    write_flow(project, "later", "executionPrerequisite: signed in\nsteps:\n  - echo: hi\n")
    async with mcp_session(cli) as session:
        waiting = await session.call_tool("flow-execute", {"name": "later", "project_root": str(project)})
        assert waiting.is_error is True
        assert "prerequisiteAcknowledged" in texts(waiting)[0]
        assert waiting.structured_content is not None
        assert waiting.structured_content["executionPrerequisite"] == "signed in"


# --------------------------------------------------------------------------------------------
# A recording made of directives, replayed from a copy of the project elsewhere

SIGN_IN_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body>
<h1>Sign in</h1>
<form onsubmit="event.preventDefault(); document.getElementById('msg').textContent =
  'Welcome, ' + document.getElementById('email').value;">
  <p><label for="email">Email</label> <input id="email" type="email"></p>
  <p><label for="password">Password</label> <input id="password" type="password"></p>
  <p><button type="submit">Sign in</button></p>
</form>
<p id="msg"></p>
</body></html>
"""

SIGN_IN_FLOW = """steps:
  - launch:
      chromium: ../../pages/signin.html
  - type:
      into:
        id: email
      text: ada@example.com
      submit: false
  - type:
      into:
        id: password
      text: hunter2
      submit: false
  - tap:
      text: Sign in
      role: button
  - await:
      visible:
        text: Welcome, ada@example.com
"""


def sign_in_project(root: Path) -> Path:
    (root / ".argent" / "flows").mkdir(parents=True)
    (root / "pages").mkdir()
    (root / "pages" / "signin.html").write_text(SIGN_IN_PAGE)
    return root


async def record_sign_in(session: ClientSession, project: Path) -> list[types.CallToolResult]:
    """The sign-in flow recorded as an agent would: one call per step, each a directive, its args an
    object or the JSON text of one of its forms."""
    where = {"name": "signin", "project_root": str(project)}
    answers = [await session.call_tool("flow-start-recording", where)]
    for command, args in (
        ("launch", {"chromium": str(project / "pages" / "signin.html")}),  # absolute: written relative
        ("type", '{"into": {"id": "email"}, "text": "ada@example.com", "submit": false}'),
        ("type", {"into": {"id": "password"}, "text": "hunter2", "submit": False}),
        ("tap", {"text": "Sign in", "role": "button"}),
        ("await", {"visible": {"text": "Welcome, ada@example.com"}}),
    ):
        answers.append(await session.call_tool("flow-add-step", {**where, "command": command, "args": args}))
    answers.append(await session.call_tool("flow-finish-recording", where))
    return answers


async def test_a_recording_of_directives_replays_from_a_copy_of_the_project(cli: Cli, tmp_path: Path) -> None:
    project = sign_in_project(tmp_path / "here" / "proj")
    async with mcp_session(cli) as session:
        answers = await record_sign_in(session, project)
        assert [a.is_error for a in answers] == [False] * 7, [texts(a) for a in answers if a.is_error]
        added = [json.loads(texts(a)[0]) for a in answers[1:6]]
        assert [a["recorded"] for a in added] == [
            '1. launch: {"chromium":"../../pages/signin.html"}',
            '2. type: {"id":"email"} ← "ada@example.com"',
            '3. type: {"id":"password"} ← "hunter2"',
            '4. tap: {"text":"Sign in","role":"button"}',
            '5. await: visible {"text":"Welcome, ada@example.com"}',
        ]
        device = added[0]["device"]
        assert device.startswith("chromium-cdp-") and {a["device"] for a in added} == {device}
        assert [a["report"]["status"] for a in added] == ["pass"] * 5
        assert (project / ".argent" / "flows" / "signin.yaml").read_text() == SIGN_IN_FLOW
        await session.call_tool("stop-device", {"udid": device})

    elsewhere = tmp_path / "there" / "checkout"
    shutil.copytree(project, elsewhere)
    shutil.rmtree(project)  # nothing of the first checkout is left to find
    async with mcp_session(cli) as session:
        replay = await session.call_tool("flow-execute", {"name": "signin", "project_root": str(elsewhere)})
        assert replay.is_error is False, texts(replay)
        assert replay.structured_content is not None and replay.structured_content["passed"] == 5
    ran = cli.run("flow", "run", "signin", cwd=elsewhere, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr


async def test_a_directive_that_fails_is_not_recorded_and_says_why(cli: Cli, project: Path) -> None:
    where = {"name": "pay", "project_root": str(project)}
    flow = project / ".argent" / "flows" / "pay.yaml"
    async with mcp_session(cli) as session:
        await session.call_tool("flow-start-recording", where)
        launched = await session.call_tool(
            "flow-add-step", {**where, "command": "launch", "args": json.dumps(GO_PAGE)}
        )
        device = json.loads(texts(launched)[0])["device"]
        try:
            missed = await session.call_tool(
                "flow-add-step", {**where, "command": "tap", "args": {"text": "Pay"}}
            )
            assert missed.is_error is True
            (said,) = texts(missed)
            assert said.startswith(
                'tap: {"text":"Pay"} failed: no visible element matched selector text="Pay"'
            )
            assert "Nothing was recorded — a replay would stop at this step. Its screenshot: /" in said
            assert flow.read_text() == f"steps:\n  - launch: {GO_PAGE}\n"
            # The device is as the step left it, and the recording goes on there.
            shot = await session.call_tool("screenshot", {"udid": device})
            assert shot.is_error is False and images(shot)
            pressed = await session.call_tool("flow-add-step", {**where, "command": "press", "args": '"Tab"'})
            assert json.loads(texts(pressed)[0])["recorded"] == '2. press: "Tab"'
            bad = await session.call_tool("flow-add-step", {**where, "command": "press", "args": "Tab"})
            assert bad.is_error is True
            assert texts(bad)[0].startswith(
                "args of a press step must be the directive's value as JSON — an object, or the JSON text of any "
                'of its forms, e.g. "Enter" (Expecting value at line 1, column 1).'
            )
            wrong = await session.call_tool("flow-add-step", {**where, "command": "press", "args": '"Entr"'})
            assert texts(wrong)[0].startswith(
                'flow-add-step cannot run this press step: press: Unknown key "Entr" (did you mean "Enter"?)'
            )
        finally:
            await session.call_tool("stop-device", {"udid": device})
    assert flow.read_text() == f"steps:\n  - launch: {GO_PAGE}\n  - press: Tab\n"


async def test_over_a_link_directives_are_recorded_on_the_client(cli: Cli, project: Path) -> None:
    server = start_server_process(cli)
    where = {"name": "go", "project_root": str(project)}
    try:
        async with mcp_session(cli, ARGENT_TOOLS_URL=server.url, ARGENT_AUTH_TOKEN=server.token) as session:
            await session.call_tool("flow-start-recording", where)
            launched = await session.call_tool(
                "flow-add-step", {**where, "command": "launch", "args": {"chromium": GO_PAGE}}
            )
            device = json.loads(texts(launched)[0])["device"]
            tapped = await session.call_tool(
                "flow-add-step", {**where, "command": "tap", "args": {"text": "Go", "role": "button"}}
            )
            assert tapped.is_error is False, texts(tapped)
            await session.call_tool("flow-finish-recording", where)
            await session.call_tool("stop-device", {"udid": device})
            assert (project / ".argent" / "flows" / "go.yaml").read_text() == (
                f"steps:\n  - launch:\n      chromium: {GO_PAGE}\n  - tap:\n      text: Go\n      role: button\n"
            )
            replay = await session.call_tool("flow-execute", where)
            assert replay.is_error is False, texts(replay)
    finally:
        server.stop()


# --------------------------------------------------------------------------------------------
# A tap recorded by its text names the tapped element alone; a renamed button fails at that tap

FRAME = re.compile(r"\(([0-9.]+), ([0-9.]+), ([0-9.]+), ([0-9.]+)\)\s*$")


def centre_of(description: str, needle: str) -> tuple[float, float]:
    """The centre of the first element whose describe line holds ``needle``, as an agent reads it."""
    for line in description.splitlines():
        found = FRAME.search(line)
        if needle in line and found:
            x, y, w, h = (float(v) for v in found.groups())
            return round(x + w / 2, 4), round(y + h / 2, 4)
    raise AssertionError(f"no element with {needle!r} in:\n{description}")


async def test_a_renamed_button_fails_at_the_tap_that_no_longer_matches(cli: Cli, project: Path) -> None:
    sign_in_project_into(project)
    where = {"name": "signin", "project_root": str(project)}
    async with mcp_session(cli) as session:
        await session.call_tool("flow-start-recording", where)

        async def step(command: str, args: Any) -> dict[str, Any]:
            answer = await session.call_tool("flow-add-step", {**where, "command": command, "args": args})
            assert answer.is_error is False, texts(answer)
            added: dict[str, Any] = json.loads(texts(answer)[0])
            return added

        device = (await step("launch", {"chromium": "../../pages/signin.html"}))["device"]
        await step("type", {"into": {"id": "email"}, "text": "ada@example.com", "submit": False})
        await step("type", {"into": {"id": "password"}, "text": "hunter2", "submit": False})
        described = await session.call_tool("describe", {"udid": device})
        x, y = centre_of(json.loads(texts(described)[0])["description"], 'button "Sign in"')
        tapped = await step("gesture-tap", {"udid": device, "x": x, "y": y})
        # "Sign in" is the heading's text too: the tap is recorded with its role, which names it alone
        assert tapped["recorded"] == '4. tap: {"text":"Sign in","role":"button"}'
        await step("await", {"visible": {"text": "Welcome"}})
        await session.call_tool("flow-finish-recording", where)
        await session.call_tool("stop-device", {"udid": device})

        page = project / "pages" / "signin.html"
        page.write_text(
            page.read_text().replace(
                '<button type="submit">Sign in</button>', '<button type="submit">Log in</button>'
            )
        )
        replay = await session.call_tool("flow-execute", where)
    assert replay.is_error is True
    steps = replay.structured_content["steps"] if replay.structured_content else []
    assert [(s["kind"], s["status"]) for s in steps] == [
        ("launch", "pass"),
        ("type", "pass"),
        ("type", "pass"),
        ("tap", "fail"),
        ("await", "skip"),
    ]
    # The miss names what is there instead, and no false lead: the element is not off-screen, it is gone.
    assert (
        steps[3]["reason"]
        == 'no visible element matched selector text="Sign in" role="button" — buttons here: "Log in"'
    )
    assert (
        '  ✗  4 tap "Sign in" role=button — no visible element matched selector text="Sign in" role="button" — buttons here: "Log in"'
        in texts(replay)[0].splitlines()
    )
    assert len(images(replay)) == 1


def sign_in_project_into(root: Path) -> None:
    (root / "pages").mkdir()
    (root / "pages" / "signin.html").write_text(SIGN_IN_PAGE)


# --------------------------------------------------------------------------------------------
# An upload recorded by its absolute path is written relative to the flow file

AVATAR_PAGE = """<!doctype html><meta charset="utf-8"><title>Profile</title>
<label for="avatar">Avatar</label> <input id="avatar" type="file">
<p id="picked"></p>
<script>document.getElementById('avatar').addEventListener('change', e =>
  document.getElementById('picked').textContent = 'Picked ' + e.target.files[0].name);</script>
"""


async def test_an_upload_is_recorded_relative_to_the_flow_file_and_replays_elsewhere(
    cli: Cli, tmp_path: Path
) -> None:
    project = tmp_path / "here" / "proj"
    (project / ".argent" / "flows").mkdir(parents=True)
    (project / "pages").mkdir()
    (project / "pages" / "profile.html").write_text(AVATAR_PAGE)
    (project / "fixtures").mkdir()
    (project / "fixtures" / "me.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    outside = tmp_path / "secret.png"
    outside.write_bytes(b"x")
    where = {"name": "avatar", "project_root": str(project)}
    async with mcp_session(cli) as session:
        await session.call_tool("flow-start-recording", where)

        async def step(command: str, args: Any) -> types.CallToolResult:
            return await session.call_tool("flow-add-step", {**where, "command": command, "args": args})

        device = json.loads(
            texts(await step("launch", {"chromium": str(project / "pages" / "profile.html")}))[0]
        )["device"]
        refused = await step("upload", {"into": {"id": "avatar"}, "files": [str(outside)]})
        assert refused.is_error is True
        assert texts(refused)[0] == (
            f"flow-add-step cannot run this upload step: {outside} is outside the project root {project}: an upload "
            "names its files relative to the flow file, so a file must be under the project — copy it there (e.g. "
            "into fixtures/) and name that copy. Nothing was run or recorded."
        )
        uploaded = await step(
            "upload", {"into": {"id": "avatar"}, "files": [str(project / "fixtures" / "me.png")]}
        )
        assert (
            json.loads(texts(uploaded)[0])["recorded"]
            == '2. upload: {"id":"avatar"} ← ["../../fixtures/me.png"]'
        )
        assert (await step("assert", {"visible": {"text": "Picked me.png"}})).is_error is False
        await session.call_tool("flow-finish-recording", where)
        await session.call_tool("stop-device", {"udid": device})
    assert (project / ".argent" / "flows" / "avatar.yaml").read_text() == (
        "steps:\n  - launch:\n      chromium: ../../pages/profile.html\n"
        "  - upload:\n      into:\n        id: avatar\n      files:\n        - ../../fixtures/me.png\n"
        "  - assert:\n      visible:\n        text: Picked me.png\n"
    )
    elsewhere = tmp_path / "there" / "checkout"
    shutil.copytree(project, elsewhere)
    shutil.rmtree(project)
    ran = cli.run("flow", "run", "avatar", cwd=elsewhere, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
