"""Agent calls: how many MCP tool calls an agent makes to record a sign-in flow and replay it.

    .venv/bin/python bench/agent_calls.py [--mode tools|directives|both]

A scripted agent drives ``argent mcp`` (the official MCP Python SDK over stdio, an embedded
tool-server, real headless Chromium) through the scenario of issue 27: open a local sign-in page,
fill the email and the password, press "Sign in", wait for the welcome, finish the recording, stop
the browser and replay the flow over MCP. It checks each answer as an agent would (``isError``, the
step it recorded) and counts every ``tools/call``.

``tools``: the way an agent had to before issue 27 — tool calls only: a field is a tap then a
``keyboard`` call, the wait an ``await-ui-element`` tool step, the page an absolute path.
``directives``: ``flow-add-step`` with flow directives (``launch``, ``type``, ``tap``, ``await``), the
page relative to the project. The figure is a count, not a time: it does not depend on the machine.
Prints one line per mode and each call it made; writes ``bench/results/agent_calls.json``.
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

from common import report
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

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

FRAME = re.compile(r"\(([0-9.]+), ([0-9.]+), ([0-9.]+), ([0-9.]+)\)\s*$")


def centre(description: str, needle: str) -> tuple[float, float]:
    """The centre of the first element whose ``describe`` line holds ``needle``, as an agent reads it."""
    for line in description.splitlines():
        found = FRAME.search(line)
        if needle in line and found:
            x, y, w, h = (float(v) for v in found.groups())
            return round(x + w / 2, 4), round(y + h / 2, 4)
    raise AssertionError(f"no element with {needle!r} in:\n{description}")


class Agent:
    """An MCP session that counts its tool calls and stops at the first error."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.calls: list[str] = []

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        self.calls.append(tool if tool != "flow-add-step" else f"flow-add-step {args['command']}")
        result = await self.session.call_tool(tool, args)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise AssertionError(f"{tool} {json.dumps(args)[:200]}: {text}")
        try:
            return json.loads(text)
        except ValueError:
            return text


async def tools_mode(agent: Agent, project: Path) -> None:
    where = {"name": "signin", "project_root": str(project)}
    page = str(project / "pages" / "signin.html")

    async def step(command: str, args: dict[str, Any]) -> Any:
        return await agent.call("flow-add-step", {**where, "command": command, "args": json.dumps(args)})

    await agent.call("flow-start-recording", where)
    udid = (await step("boot-device", {"url": page}))["toolResult"]["id"]
    screen = (await agent.call("describe", {"udid": udid}))["description"]
    for needle, text in (('id="email"', "ada@example.com"), ('id="password"', "hunter2")):
        x, y = centre(screen, needle)
        await step("gesture-tap", {"udid": udid, "x": x, "y": y})
        await step("keyboard", {"udid": udid, "text": text})
    x, y = centre(screen, 'label="Sign in" role="button"') if 'role="button"' in screen else (0, 0)
    if (x, y) == (0, 0):
        x, y = centre(screen, 'button "Sign in"')
    await step("gesture-tap", {"udid": udid, "x": x, "y": y})
    await step("await-ui-element", {"udid": udid, "selector": {"text": "Welcome"}, "condition": "visible"})
    await agent.call("flow-finish-recording", where)
    await agent.call("stop-device", {"udid": udid})
    report_text = await agent.call("flow-execute", where)
    assert "PASS" in report_text, report_text


async def directives_mode(agent: Agent, project: Path) -> None:
    where = {"name": "signin", "project_root": str(project)}
    page = str(project / "pages" / "signin.html")

    async def step(command: str, args: Any) -> Any:
        return await agent.call("flow-add-step", {**where, "command": command, "args": args})

    await agent.call("flow-start-recording", where)
    launched = await step("launch", {"chromium": page})
    udid = launched["device"]
    await agent.call("describe", {"udid": udid})
    await step("type", {"into": {"id": "email"}, "text": "ada@example.com", "submit": False})
    await step("type", {"into": {"id": "password"}, "text": "hunter2", "submit": False})
    await step("tap", {"text": "Sign in", "role": "button"})
    await step("await", {"visible": {"text": "Welcome"}})
    await agent.call("flow-finish-recording", where)
    await agent.call("stop-device", {"udid": udid})
    report_text = await agent.call("flow-execute", where)
    assert "PASS" in report_text, report_text


MODES = {"tools": tools_mode, "directives": directives_mode}


async def measure(mode: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "proj"
        home.mkdir()
        (project / ".argent" / "flows").mkdir(parents=True)
        (project / "pages").mkdir()
        (project / "pages" / "signin.html").write_text(SIGN_IN_PAGE)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGENT_")}
        env["HOME"] = str(home)
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "argent", "mcp"], env=env, cwd=str(project)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            agent = Agent(session)
            await MODES[mode](agent, project)
            print(f"{mode}: {len(agent.calls)} calls")
            print((project / ".argent" / "flows" / "signin.yaml").read_text())
            return agent.calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    options = parser.parse_args()
    modes = list(MODES) if options.mode == "both" else [options.mode]
    results: dict[str, dict[str, Any]] = {}
    for mode in modes:
        calls = asyncio.run(measure(mode))
        results[mode] = {"calls": len(calls), "sequence": " · ".join(calls)}
    report("agent_calls", results)


if __name__ == "__main__":
    main()
