"""Agent calls: how many MCP tool calls an agent makes to record a sign-in flow, replay it, and repair it
after the page changed.

    .venv/bin/python bench/agent_calls.py [--mode tools|directives|both] [--src NAME=DIR]

A scripted agent drives ``argent mcp`` (the official MCP Python SDK over stdio, an embedded
tool-server, real headless Chromium) through the scenario of issue 27: open a local sign-in page,
fill the email and the password, press "Sign in", wait for the welcome, finish the recording, stop
the browser and replay the flow over MCP (the *record* figure). Then the button is renamed "Log in"
and the agent repairs the flow: it replays it, finds what changed, edits the flow file and replays it
until it passes (the *repair* figure; the edit is a file write, not a call). It checks each answer as
an agent would (``isError``, the step recorded, the report) and counts every ``tools/call``.

``tools``: the way an agent had to before issue 27 — tool calls only: a field is a tap then a
``keyboard`` call, the wait an ``await-ui-element`` tool step, the page an absolute path; to see the
page after a failed replay it boots a browser again and describes it.
``directives``: ``flow-add-step`` with flow directives (``launch``, ``type``, ``tap``, ``await``); a
failed replay names what came nearest the selector that missed (with wt/locate), else the agent
looks as above.

``--src NAME=DIR`` runs ``argent mcp`` from the ``argent`` package in DIR (a checkout of main: the
figures before this change). The figures are counts: they do not depend on the machine. Prints one
line per mode and source with each call it made; writes ``bench/results/agent_calls.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import add_src_option, report, sources_of
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import TextContent

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
RENAMED = ('<button type="submit">Sign in</button>', '<button type="submit">Log in</button>')

FRAME = re.compile(r"\(([0-9.]+), ([0-9.]+), ([0-9.]+), ([0-9.]+)\)\s*$")
#: A button's line in ``describe`` (``button "Sign in" [clickable]``).
BUTTON = re.compile(r'button "([^"]+)"')
#: What a miss says is there instead (``— buttons here: "Log in"``, wt/locate's words).
NEAREST = re.compile(r'buttons here: "([^"]+)"')


def centre(description: str, needle: str) -> tuple[float, float]:
    """The centre of the first element whose ``describe`` line holds ``needle``, as an agent reads it."""
    for line in description.splitlines():
        found = FRAME.search(line)
        if needle in line and found:
            x, y, w, h = (float(v) for v in found.groups())
            return round(x + w / 2, 4), round(y + h / 2, 4)
    raise AssertionError(f"no element with {needle!r} in:\n{description}")


class Agent:
    """An MCP session that counts its tool calls; an unexpected error stops the scenario."""

    def __init__(self, session: ClientSession, project: Path) -> None:
        self.session = session
        self.project = project
        self.where = {"name": "signin", "project_root": str(project)}
        self.page = project / "pages" / "signin.html"
        self.flow = project / ".argent" / "flows" / "signin.yaml"
        self.calls: list[str] = []

    async def call(self, tool: str, args: dict[str, Any], *, may_fail: bool = False) -> Any:
        self.calls.append(tool if tool != "flow-add-step" else f"flow-add-step {args['command']}")
        result = await self.session.call_tool(tool, args)
        text = next((block.text for block in result.content if isinstance(block, TextContent)), "")
        if result.is_error and not may_fail:
            raise AssertionError(f"{tool} {json.dumps(args)[:200]}: {text}")
        try:
            return json.loads(text)
        except ValueError:
            return text

    async def step(self, command: str, args: Any) -> Any:
        return await self.call("flow-add-step", {**self.where, "command": command, "args": args})

    async def replay(self) -> str:
        """The report of a replay (MCP answers a failed flow as an error since issue 27; before, as text)."""
        text: str = await self.call("flow-execute", self.where, may_fail=True)
        return text

    async def look_again(self) -> str:
        """The page as it is now, when the report does not say: a browser booted on it, described, stopped."""
        udid = (await self.call("boot-device", {"url": str(self.page)}))["id"]
        screen: str = (await self.call("describe", {"udid": udid}))["description"]
        await self.call("stop-device", {"udid": udid})
        return screen

    async def repair(self) -> str:
        """Rename the button, then replay, find its new name, edit the flow, replay until it passes; the
        line of the step the failed replay blamed."""
        self.page.write_text(self.page.read_text().replace(*RENAMED))
        failed = await self.replay()
        assert "FAIL" in failed.splitlines()[-1], failed
        first = next(line for line in failed.splitlines() if "✗" in line)
        named = NEAREST.search(first)
        new = named.group(1) if named else BUTTON.search(await self.look_again())
        label = new if isinstance(new, str) else new.group(1) if new else None
        assert label == "Log in", (first, label)
        self.flow.write_text(self.flow.read_text().replace("text: Sign in", f"text: {label}"))
        passed = await self.replay()
        assert passed.splitlines()[-1].startswith("PASS"), passed
        return first.strip()


async def tools_mode(agent: Agent) -> None:
    await agent.call("flow-start-recording", agent.where)
    udid = (await agent.step("boot-device", json.dumps({"url": str(agent.page)})))["toolResult"]["id"]
    screen = (await agent.call("describe", {"udid": udid}))["description"]
    for needle, text in (('id="email"', "ada@example.com"), ('id="password"', "hunter2")):
        x, y = centre(screen, needle)
        await agent.step("gesture-tap", json.dumps({"udid": udid, "x": x, "y": y}))
        await agent.step("keyboard", json.dumps({"udid": udid, "text": text}))
    x, y = centre(screen, 'button "Sign in"')
    await agent.step("gesture-tap", json.dumps({"udid": udid, "x": x, "y": y}))
    wait = {"udid": udid, "selector": {"text": "Welcome"}, "condition": "visible"}
    await agent.step("await-ui-element", json.dumps(wait))
    await agent.call("flow-finish-recording", agent.where)
    await agent.call("stop-device", {"udid": udid})
    replayed = await agent.replay()
    assert replayed.splitlines()[-1].startswith("PASS"), replayed


async def directives_mode(agent: Agent) -> None:
    await agent.call("flow-start-recording", agent.where)
    udid = (await agent.step("launch", {"chromium": str(agent.page)}))["device"]
    await agent.call("describe", {"udid": udid})
    await agent.step("type", {"into": {"id": "email"}, "text": "ada@example.com", "submit": False})
    await agent.step("type", {"into": {"id": "password"}, "text": "hunter2", "submit": False})
    await agent.step("tap", {"text": "Sign in", "role": "button"})
    await agent.step("await", {"visible": {"text": "Welcome"}})
    await agent.call("flow-finish-recording", agent.where)
    await agent.call("stop-device", {"udid": udid})
    replayed = await agent.replay()
    assert replayed.splitlines()[-1].startswith("PASS"), replayed


MODES = {"tools": tools_mode, "directives": directives_mode}


async def measure(mode: str, pythonpath: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "proj"
        home.mkdir()
        (project / ".argent" / "flows").mkdir(parents=True)
        (project / "pages").mkdir()
        (project / "pages" / "signin.html").write_text(SIGN_IN_PAGE)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_")}
        env["HOME"] = str(home)
        if pythonpath is not None:
            env["PYTHONPATH"] = pythonpath
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "argent", "mcp"], env=env, cwd=str(project)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            agent = Agent(session, project)
            await MODES[mode](agent)
            recorded = list(agent.calls)
            print(agent.flow.read_text())
            blamed = await agent.repair()
            repaired = agent.calls[len(recorded) :]
    return {
        "record": len(recorded),
        "repair": len(repaired),
        "failed_at": blamed,
        "record_calls": " · ".join(recorded),
        "repair_calls": " · ".join(repaired),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    add_src_option(parser)
    options = parser.parse_args()
    modes = list(MODES) if options.mode == "both" else [options.mode]
    results: dict[str, dict[str, Any]] = {}
    for name, path in sources_of(parser, options.src).items():
        for mode in modes:
            if name and mode == "directives":
                continue  # another checkout may have no directive commands
            results[f"{mode}{'@' + name if name else ''}"] = asyncio.run(measure(mode, path))
    report("agent_calls", results)


if __name__ == "__main__":
    main()
