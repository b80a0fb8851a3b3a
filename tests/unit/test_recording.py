"""The flow recorder's tools, driven through a registry with stand-in tools (no device, no HTTP)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from attrs import define, field, frozen

from argent.errors import ArgentError, ToolExecutionError
from argent.flows.parse import parse_flow
from argent.tools.args import arg
from argent.tools.flow_tools import flow_tools
from argent.tools.recording import (
    WARN_NO_DEVICES,
    WARN_NO_FLOW_NAME,
    Recorder,
)
from argent.tools.recording_sessions import MAX_LIVE_RECORDINGS
from argent.tools.registry import ResolvedFileInput, ToolContext, ToolRegistry, ToolSpec

# --------------------------------------------------------------------------------------------
# Stand-in tools


@frozen
class TapArgs:
    x: float = arg()
    y: float = arg()
    udid: str | None = arg(None)


@frozen
class GestureTapArgs:
    x: float = arg()
    y: float = arg()
    udid: str | None = arg(None)
    click_count: int | None = arg(None, wire="clickCount")


@frozen
class NoArgs:
    pass


@frozen
class SlowArgs:
    id: str = arg()


@frozen
class OpenArgs:
    udid: str | None = arg(None)
    url: str | None = arg(None)
    platform: str | None = arg(None)
    extra: str | None = arg(None)


@frozen
class TeardownArgs:
    devices: list[str] | None = arg(None)


@define
class Tools:
    """Records every call; ``gates`` hold a `slow` call until the test opens them."""

    calls: list[tuple[str, dict[str, Any]]] = field(factory=list)
    gates: dict[str, asyncio.Event] = field(factory=dict)
    started: dict[str, asyncio.Event] = field(factory=dict)

    def gate(self, key: str) -> asyncio.Event:
        return self.gates.setdefault(key, asyncio.Event())

    def was_started(self, key: str) -> asyncio.Event:
        return self.started.setdefault(key, asyncio.Event())

    def specs(self) -> list[ToolSpec[Any]]:
        async def poke(args: TapArgs, ctx: ToolContext) -> Any:
            self.calls.append(("poke", {"x": args.x, "y": args.y, "udid": args.udid}))
            return {"tapped": True}

        async def gesture_tap(args: GestureTapArgs, ctx: ToolContext) -> Any:
            self.calls.append(("gesture-tap", {"x": args.x, "y": args.y, "udid": args.udid}))
            return {"tapped": True}

        async def boom(args: NoArgs, ctx: ToolContext) -> Any:
            self.calls.append(("boom", {}))
            raise ToolExecutionError("boom went off")

        async def unmet(args: NoArgs, ctx: ToolContext) -> Any:
            self.calls.append(("unmet", {}))
            return {"success": False, "note": "never visible"}

        async def slow(args: SlowArgs, ctx: ToolContext) -> Any:
            self.calls.append(("slow", {"id": args.id}))
            self.was_started(args.id).set()
            await self.gate(args.id).wait()
            return {"id": args.id}

        async def boot(args: OpenArgs, ctx: ToolContext) -> Any:
            self.calls.append(("boot-device", {"url": args.url}))
            return {"udid": "chromium-cdp-1"}

        async def open_url(args: OpenArgs, ctx: ToolContext) -> Any:
            self.calls.append(("open-url", {"url": args.url, "udid": args.udid}))
            return {"opened": args.url}

        async def teardown(args: TeardownArgs, ctx: ToolContext) -> Any:
            self.calls.append(("teardown", {"devices": args.devices}))
            return {"stopped": args.devices or []}

        return [
            ToolSpec("poke", "poke", TapArgs, poke),
            ToolSpec("gesture-tap", "gesture-tap", GestureTapArgs, gesture_tap),
            ToolSpec("boom", "boom", NoArgs, boom),
            ToolSpec("unmet", "unmet", NoArgs, unmet),
            ToolSpec("slow", "slow", SlowArgs, slow),
            ToolSpec("teardown", "teardown", TeardownArgs, teardown),
            ToolSpec("boot-device", "boot-device", OpenArgs, boot),
            ToolSpec("open-url", "open-url", OpenArgs, open_url),
        ]


@define
class Env:
    registry: ToolRegistry
    recorder: Recorder
    tools: Tools
    root: Path

    def flow(self, name: str, root: Path | None = None) -> Path:
        return (root or self.root) / ".argent" / "flows" / f"{name}.yaml"

    def names(self) -> list[str]:
        return [name for name, _ in self.tools.calls]

    async def call(self, tool: str, args: dict[str, Any], ctx: ToolContext | None = None) -> Any:
        return await self.registry.invoke(tool, args, ctx or ToolContext())

    async def start(self, name: str = "checkout", root: Path | None = None, **extra: Any) -> Any:
        return await self.call(
            "flow-start-recording", {"name": name, "project_root": str(root or self.root), **extra}
        )

    async def echo(self, message: str, name: str = "checkout", root: Path | None = None) -> Any:
        args = {"name": name, "project_root": str(root or self.root), "message": message}
        return await self.call("flow-add-echo", args)

    async def step(
        self,
        command: str,
        args: str | dict[str, Any] | None = None,
        name: str = "checkout",
        root: Path | None = None,
        ctx: ToolContext | None = None,
        **extra: Any,
    ) -> Any:
        body: dict[str, Any] = {"name": name, "project_root": str(root or self.root), "command": command}
        if args is not None:
            body["args"] = args
        body.update(extra)
        return await self.call("flow-add-step", body, ctx)

    async def finish(self, name: str = "checkout", root: Path | None = None) -> Any:
        return await self.call(
            "flow-finish-recording", {"name": name, "project_root": str(root or self.root)}
        )


def make_env(
    root: Path, *, extra: tuple[ToolSpec[Any], ...] = (), flow_devices: Any = None, **recorder_kw: Any
) -> Env:
    registry = ToolRegistry()
    tools = Tools()
    for spec in (*tools.specs(), *extra):
        registry.register(spec)
    for spec in flow_tools(registry, devices=flow_devices):
        registry.register(spec)
    recorder = Recorder(registry, **recorder_kw)
    for spec in recorder.specs():
        registry.register(spec)
    return Env(registry, recorder, tools, root)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    root = tmp_path / "proj"
    root.mkdir()
    return make_env(root)


async def refused(coro: Any) -> ArgentError:
    with pytest.raises(ArgentError) as info:
        await coro
    return info.value


# --------------------------------------------------------------------------------------------
# flow-start-recording


async def test_start_creates_the_empty_flow_with_its_prerequisite(env: Env) -> None:
    out = await env.start(executionPrerequisite="logged in")
    path = env.flow("checkout")
    assert path.read_text() == "steps: []\nexecutionPrerequisite: logged in\n"
    assert out == {
        "message": 'Started recording "checkout" flow',
        "flowFile": str(path),
        "savedTo": str(path),
    }


async def test_start_without_prerequisite_writes_only_steps(env: Env) -> None:
    await env.start()
    assert env.flow("checkout").read_text() == "steps: []\n"


async def test_start_truncates_a_finished_flow(env: Env) -> None:
    path = env.flow("checkout")
    path.parent.mkdir(parents=True)
    path.write_text("steps:\n  - echo: an old take\n")
    out = await env.start()
    assert "restarted" not in out
    assert path.read_text() == "steps: []\n"


async def test_relative_project_root_is_refused(env: Env) -> None:
    err = await refused(env.call("flow-start-recording", {"name": "x", "project_root": "rel/dir"}))
    assert err.message.startswith('project_root must be an absolute path (got "rel/dir")')


async def test_invalid_name_is_refused(env: Env) -> None:
    err = await refused(env.start(name="../evil"))
    assert err.message.startswith('Invalid flow name "../evil"')
    assert not (env.root / ".argent").exists()


async def test_restart_discards_the_previous_take(env: Env) -> None:
    await env.start()
    await env.echo("Step 1")
    await env.echo("Step 2")
    path = env.flow("checkout")
    out = await env.start()
    assert out["message"] == (
        f'Restarted recording "checkout" — the previous take (2 steps) was discarded and {path} reset to an '
        "empty flow."
    )
    assert out["restarted"] is True
    assert out["discardedSteps"] == 2
    assert path.read_text() == "steps: []\n"
    again = await env.echo("new take")
    assert again["stepCount"] == 1


async def test_restart_after_one_step_is_singular(env: Env) -> None:
    await env.start()
    await env.echo("Step 1")
    out = await env.start()
    assert "(1 step) was discarded" in out["message"]


async def test_restart_of_an_unparseable_take_omits_the_count(env: Env) -> None:
    await env.start()
    env.flow("checkout").write_text("steps: [unclosed\n")
    out = await env.start()
    assert out["message"].startswith('Restarted recording "checkout" — the previous take was discarded and ')
    assert "discardedSteps" not in out
    assert out["restarted"] is True


async def test_other_names_and_projects_are_independent(env: Env, tmp_path: Path) -> None:
    other_root = tmp_path / "other"
    other_root.mkdir()
    await env.start("a")
    await env.echo("in a", name="a")
    assert "restarted" not in await env.start("b")
    assert "restarted" not in await env.start("a", root=other_root)
    await env.echo("in b", name="b")
    await env.echo("in other a", name="a", root=other_root)
    assert parse_flow(env.flow("a").read_text()).steps[0].message == "in a"  # type: ignore[union-attr]
    assert "in b" in env.flow("b").read_text()
    assert "in other a" in env.flow("a", other_root).read_text()


async def test_a_file_where_the_flows_directory_goes_is_refused(env: Env, tmp_path: Path) -> None:
    root = tmp_path / "afile"
    root.write_text("not a directory")
    err = await refused(env.start(root=root))
    flows = root / ".argent" / "flows"
    assert err.message == (
        f"Failed to create the flows directory {flows} (ENOTDIR) — a component of {flows} exists and is "
        "not a directory — check that project_root names a directory rather than a file."
    )


# --------------------------------------------------------------------------------------------
# flow-add-echo


async def test_echo_appends(env: Env) -> None:
    await env.start()
    out = await env.echo("Step 1")
    path = env.flow("checkout")
    assert out == {"message": 'Echo added to "checkout" flow', "stepCount": 1, "savedTo": str(path)}
    assert path.read_text() == "steps:\n  - echo: Step 1\n"


async def test_echo_without_a_recording_names_the_active_ones(env: Env, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    await env.start("b")
    await env.start("a")
    await env.start("z", root=other)
    err = await refused(env.echo("x", name="missing"))
    path = env.flow("missing")
    assert err.message == (
        f'No active recording for flow "missing" in {env.root}. If you have not started it yet, call '
        f"flow-start-recording — but note it truncates, so if {path} already holds a take you want "
        "(finished, or interrupted by a restart), copy it aside or record under a fresh name instead. "
        'Active recordings: "a", "b" (plus 1 in other projects).'
    )
    assert err.error_code == "FLOW_RECORDING_NOT_ACTIVE"


async def test_no_recording_in_this_project(env: Env) -> None:
    err = await refused(env.echo("x"))
    assert err.message.endswith("Active recordings: none in this project.")


async def test_echo_in_the_wrong_project_is_refused(env: Env, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    await env.start()
    err = await refused(env.echo("x", root=other))
    assert err.message.startswith('No active recording for flow "checkout" in ')
    assert not (other / ".argent").exists()


# --------------------------------------------------------------------------------------------
# flow-add-step


async def test_step_runs_the_tool_and_records_it(env: Env) -> None:
    await env.start()
    out = await env.step("poke", '{"x":0.5,"y":0.3}')
    assert env.tools.calls == [("poke", {"x": 0.5, "y": 0.3, "udid": None})]
    path = env.flow("checkout")
    assert out == {
        "message": 'Step added to "checkout" flow',
        "toolResult": {"tapped": True},
        "stepCount": 1,
        "recorded": '1. tool: poke {"x":0.5,"y":0.3}',
        "savedTo": str(path),
    }
    assert path.read_text() == "steps:\n  - tool: poke\n    args:\n      x: 0.5\n      y: 0.3\n"


async def test_step_counts_and_delays(env: Env) -> None:
    await env.start()
    first = await env.step("poke", '{"x":0.5,"y":0.3}', delayMs=500)
    second = await env.step("poke", '{"x":0.1,"y":0.2}')
    third = await env.step("unmet")
    assert first["recorded"] == '1. tool: poke {"x":0.5,"y":0.3} (after 500ms)'
    assert [first["stepCount"], second["stepCount"], third["stepCount"]] == [1, 2, 3]
    assert second["recorded"].startswith("2. ")
    assert third["recorded"] == "3. tool: unmet {}"
    # A result that reports an unmet condition still ran: it is recorded.
    assert third["toolResult"] == {"success": False, "note": "never visible"}
    assert "delayMs: 500" in env.flow("checkout").read_text()


async def test_step_waits_its_delay_before_running(env: Env) -> None:
    await env.start()
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await env.step("poke", '{"x":0.5,"y":0.3}', delayMs=120)
    assert loop.time() - t0 >= 0.11


async def test_device_ids_are_stripped_from_the_recorded_step(env: Env) -> None:
    await env.start()
    await env.step("poke", '{"x":0.5,"y":0.3,"udid":"chromium-cdp-9222"}')
    assert env.tools.calls == [("poke", {"x": 0.5, "y": 0.3, "udid": "chromium-cdp-9222"})]
    assert "udid" not in env.flow("checkout").read_text()


async def test_a_scoped_teardown_keeps_its_devices_list(env: Env) -> None:
    await env.start()
    out = await env.step("teardown", '{"devices":["chromium-cdp-9222"]}')
    assert out["recorded"] == '1. tool: teardown {"devices":["chromium-cdp-9222"]}'


async def test_omitted_args_are_an_empty_object(env: Env) -> None:
    await env.start()
    out = await env.step("unmet")
    assert env.tools.calls == [("unmet", {})]
    assert env.flow("checkout").read_text() == "steps:\n  - tool: unmet\n"
    assert out["stepCount"] == 1


async def test_a_failing_tool_records_nothing(env: Env) -> None:
    await env.start()
    err = await refused(env.step("boom"))
    assert err.message == "boom went off"
    assert env.names() == ["boom"]
    assert env.flow("checkout").read_text() == "steps: []\n"


async def test_an_unknown_tool_records_nothing(env: Env) -> None:
    await env.start()
    err = await refused(env.step("nonexistent-tool"))
    assert err.message.startswith(
        'No tool or flow directive "nonexistent-tool". flow-add-step runs a tool of this tool-server or a '
        "flow directive. Directives: tap, type, press, select, scroll-to, long-press, await, assert, "
        "snapshot, "
    )
    assert ". Tools: poke, gesture-tap, " in err.message
    assert "flow-start-recording" not in err.message  # not a step: never offered
    assert err.message.endswith(". Nothing was run or recorded.")
    assert env.flow("checkout").read_text() == "steps: []\n"


@pytest.mark.parametrize(
    ("command", "meant"),
    [("scrol-to", "scroll-to"), ("Tap", "tap"), ("gesture_tap", "gesture-tap"), ("pokee", "poke")],
)
async def test_a_misspelt_command_says_what_was_meant(env: Env, command: str, meant: str) -> None:
    await env.start()
    err = await refused(env.step(command, "{}"))
    assert err.message.startswith(f'No tool or flow directive "{command}" — did you mean "{meant}"? ')
    assert env.tools.calls == []


async def test_args_may_be_an_object(env: Env) -> None:
    await env.start()
    out = await env.step("poke", {"x": 0.5, "y": 0.3})
    assert env.tools.calls == [("poke", {"x": 0.5, "y": 0.3, "udid": None})]
    assert out["recorded"] == '1. tool: poke {"x":0.5,"y":0.3}'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"x":', "args must be an object or the JSON text of one (Expecting value at line 1, column 6)"),
        ("[1]", "args must be an object or the JSON text of one, not an array"),
        ("5", "args must be an object or the JSON text of one, not a number"),
        ("null", "args must be an object or the JSON text of one, not null"),
    ],
)
async def test_args_that_are_not_an_object_run_nothing(env: Env, text: str, message: str) -> None:
    await env.start()
    err = await refused(env.step("poke", text))
    assert err.message.startswith(message)
    assert err.status == 400
    assert env.tools.calls == []


async def test_a_negative_delay_runs_nothing(env: Env) -> None:
    await env.start()
    err = await refused(env.step("poke", '{"x":0.5,"y":0.3}', delayMs=-1))
    assert err.message.startswith("delayMs must be an integer ≥ 0 (got -1)")
    assert env.tools.calls == []


async def test_no_recording_means_the_tool_never_runs(env: Env) -> None:
    err = await refused(env.step("poke", '{"x":0.5,"y":0.3}'))
    assert err.message.startswith('No active recording for flow "checkout"')
    assert env.tools.calls == []


async def test_a_recorder_tool_is_not_a_step(env: Env) -> None:
    await env.start()
    err = await refused(env.step("flow-finish-recording", '{"name":"checkout"}'))
    assert "is a recorder tool" in err.message
    assert env.flow("checkout").read_text() == "steps: []\n"


async def test_a_coordinate_tap_keeps_its_click_count(env: Env) -> None:
    await env.start()
    out = await env.step("gesture-tap", '{"udid":"dev-1","x":0.5,"y":0.52,"clickCount":2}')
    assert out["recorded"] == "1. tap: (0.5, 0.52) ×2"
    assert out["message"] == f'Step added to "checkout" flow — {WARN_NO_DEVICES}'
    assert (
        env.flow("checkout").read_text()
        == "steps:\n  - tap:\n      on:\n        x: 0.5\n        y: 0.52\n      times: 2\n"
    )


async def test_a_tap_outside_the_screen_runs_nothing(env: Env) -> None:
    await env.start()
    err = await refused(env.step("gesture-tap", '{"udid":"dev-1","x":1.5,"y":0.5}'))
    assert "normalized 0–1 fractions" in err.message
    assert env.tools.calls == []
    assert env.flow("checkout").read_text() == "steps: []\n"


async def test_a_tap_with_a_delay_stays_a_tool_step(env: Env) -> None:
    await env.start()
    out = await env.step("gesture-tap", '{"udid":"dev-1","x":0.5,"y":0.5}', delayMs=1)
    assert out["recorded"] == '1. tool: gesture-tap {"x":0.5,"y":0.5} (after 1ms)'


async def test_opening_a_page_is_recorded_as_a_launch(env: Env) -> None:
    await env.start()
    out = await env.step("boot-device", '{"url":"http://127.0.0.1:8000/shop.html"}')
    assert out["toolResult"] == {"udid": "chromium-cdp-1"}
    assert out["recorded"] == '1. launch: {"chromium":"http://127.0.0.1:8000/shop.html"}'
    later = await env.step("open-url", '{"udid":"chromium-cdp-1","url":"http://127.0.0.1:8000/cart"}')
    assert later["recorded"] == '2. launch: {"chromium":"http://127.0.0.1:8000/cart"}'
    assert env.flow("checkout").read_text() == (
        "steps:\n  - launch:\n      chromium: http://127.0.0.1:8000/shop.html\n"
        "  - launch:\n      chromium: http://127.0.0.1:8000/cart\n"
    )


async def test_a_page_of_the_project_is_launched_relative_to_the_flow_file(env: Env, tmp_path: Path) -> None:
    await env.start()
    page = env.root / "site" / "index.html"
    out = await env.step("boot-device", {"url": str(page)})
    assert env.tools.calls == [("boot-device", {"url": str(page)})]  # the tool opens what it was given
    assert out["recorded"] == '1. launch: {"chromium":"../../site/index.html"}'
    later = await env.step("open-url", {"udid": "chromium-cdp-1", "url": page.as_uri()})
    assert later["recorded"] == '2. launch: {"chromium":"../../site/index.html"}'
    outside = tmp_path / "elsewhere.html"
    kept = await env.step("open-url", {"udid": "chromium-cdp-1", "url": str(outside)})
    assert kept["recorded"] == f'3. launch: {{"chromium":"{outside}"}}'
    assert kept["message"] == (
        f'Step added to "checkout" flow — {outside} is outside the project root {env.root}: the recording keeps '
        "its absolute path, so the flow opens it only on this machine — move it under the project to make the "
        "flow portable"
    )


@pytest.mark.parametrize(
    ("command", "args", "recorded"),
    [
        ("boot-device", "{}", "1. tool: boot-device {}"),
        (
            "boot-device",
            '{"url":"http://x","extra":"y"}',
            '1. tool: boot-device {"url":"http://x","extra":"y"}',
        ),
        (
            "boot-device",
            '{"url":"http://x","platform":"ios"}',
            '1. tool: boot-device {"url":"http://x","platform":"ios"}',
        ),
    ],
)
async def test_other_openings_stay_tool_steps(env: Env, command: str, args: str, recorded: str) -> None:
    await env.start()
    out = await env.step(command, args)
    assert out["recorded"] == recorded


async def test_a_leading_launch_under_a_prerequisite_runs_nothing(env: Env) -> None:
    await env.start(executionPrerequisite="logged in")
    err = await refused(env.step("boot-device", '{"url":"http://x"}'))
    assert "must not declare executionPrerequisite" in err.message
    assert env.tools.calls == []
    assert env.flow("checkout").read_text() == "steps: []\nexecutionPrerequisite: logged in\n"


# --------------------------------------------------------------------------------------------
# flow-execute steps


def write_flow(root: Path, name: str, text: str = "steps:\n  - echo: inner\n") -> Path:
    path = root / ".argent" / "flows" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


async def test_a_sibling_flow_becomes_run(env: Env) -> None:
    await env.start()
    write_flow(env.root, "login")
    out = await env.step("flow-execute", f'{{"name":"login","project_root":"{env.root}"}}')
    assert out["recorded"] == "1. run: login.yaml"
    assert out["toolResult"].ok is True
    assert env.flow("checkout").read_text() == "steps:\n  - run: login.yaml\n"


async def test_a_flow_of_another_project_stays_a_raw_step(env: Env, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write_flow(other, "login")
    await env.start()
    out = await env.step("flow-execute", f'{{"name":"login","project_root":"{other}"}}')
    assert out["message"] == (
        'Step added to "checkout" flow — kept the raw flow-execute step — "login" is a flow of another '
        f"project ({other}), and run: resolves beside the recording"
    )
    assert out["recorded"] == f'1. tool: flow-execute {{"name":"login","project_root":"{other}"}}'


async def test_a_flow_execute_without_a_name_stays_raw(env: Env) -> None:
    await env.start()
    # The run refuses it, so nothing is recorded; the plan's warning is what a passing call would say.
    err = await refused(env.step("flow-execute", f'{{"project_root":"{env.root}"}}'))
    assert err.message == "Pass exactly one flow source: name or flow_path."
    assert WARN_NO_FLOW_NAME.startswith("flow-execute call had no flow name")


async def test_a_sibling_flow_path_is_rewritten_to_run(env: Env) -> None:
    await env.start()
    inner = write_flow(env.root, "login")
    out = await env.step("flow-execute", f'{{"flow_path":"{inner}","project_root":"{env.root}"}}')
    assert out["recorded"] == "1. run: login.yaml"


@pytest.mark.parametrize(
    ("flow_path", "project_root", "detail"),
    [
        ("{flows}/Login.yaml", "{root}", 'this filesystem lists "Login.yaml" as "login.yaml"'),
        ("{other}/.argent/flows/login.yaml", "{root}", "it is not beside the recording in"),
        ("{flows}/../flows/login.yaml", "{root}", 'it has a ".." segment'),
        ("{flows}/login.yml", "{root}", "it does not end in .yaml"),
        ("{flows}/login.YAML", "{root}", "it must end in the lowercase .yaml extension"),
        ("{flows}/login.yaml", "relative/root", "it comes without an absolute project_root"),
        ("{flows}/login.yaml", "{other}", 'its project_root "{other}" is not the project of the recording'),
        ("relative/login.yaml", "{root}", "it is not an absolute path"),
        ("{flows}/ghost.yaml", "{root}", 'no file named "ghost.yaml" is beside the recording'),
    ],
)
async def test_other_flow_paths_are_refused_before_running(
    env: Env, tmp_path: Path, flow_path: str, project_root: str, detail: str
) -> None:
    other = tmp_path / "other"
    write_flow(other, "login")
    write_flow(env.root, "login")
    await env.start()
    values = {"flows": str(env.root / ".argent" / "flows"), "root": str(env.root), "other": str(other)}
    fp, pr = flow_path.format(**values), project_root.format(**values)
    err = await refused(env.step("flow-execute", f'{{"flow_path":"{fp}","project_root":"{pr}"}}'))
    assert err.message.startswith(
        f'Cannot record a flow-execute of flow_path "{fp}": {detail.format(**values)}'
    )
    assert "flow_path carries no file-input resolution through flow-add-step's opaque args" in err.message
    assert env.flow("checkout").read_text() == "steps: []\n"


async def test_a_flow_execute_step_that_fails_records_nothing(env: Env) -> None:
    await env.start()
    err = await refused(env.step("flow-execute", f'{{"name":"ghost","project_root":"{env.root}"}}'))
    assert "ENOENT" in err.message
    assert env.flow("checkout").read_text() == "steps: []\n"


# --------------------------------------------------------------------------------------------
# flow-finish-recording and summaries


async def test_finish_summarizes_and_ends_the_recording(env: Env) -> None:
    await env.start(executionPrerequisite="logged in")
    await env.echo("Step 1")
    out = await env.finish()
    path = str(env.flow("checkout"))
    assert out == {
        "message": 'Finished recording "checkout" flow (1 steps)',
        "path": path,
        "executionPrerequisite": "logged in",
        "steps": 1,
        "summary": ["1. echo: Step 1"],
        "flowFile": path,
        "savedTo": path,
    }
    err = await refused(env.finish())
    assert err.message.startswith('No active recording for flow "checkout"')


async def test_finish_summarizes_hand_written_steps(env: Env) -> None:
    await env.start()
    env.flow("checkout").write_text(
        "steps:\n"
        "  - await: { idle: true }\n"
        "  - assert: { text: { in: { id: status }, contains: 'Saved \"x\"' } }\n"
        "  - await: { text: { in: { id: status }, equals: Ready } }\n"
        "  - assert: { text: { in: { id: status }, matches: '^R.*y$' } }\n"
    )
    out = await env.finish()
    assert out["summary"] == [
        "1. await: screen idle",
        '2. assert: text {"id":"status"} contains "Saved \\"x\\""',
        '3. await: text {"id":"status"} == "Ready"',
        '4. assert: text {"id":"status"} matches /^R.*y$/',
    ]
    assert out["executionPrerequisite"] == ""


async def test_a_broken_hand_edit_keeps_the_recording_finishable(env: Env) -> None:
    await env.start()
    await env.echo("one")
    path = env.flow("checkout")
    path.write_text("steps:\n  - echo: one\n  - bogus: 1\n")
    with pytest.raises(ArgentError):
        await env.finish()
    with pytest.raises(ArgentError):
        await env.echo("two")  # the next append throws too
    path.write_text("steps:\n  - echo: one\n")
    out = await env.finish()
    assert out["summary"] == ["1. echo: one"]


async def test_a_hand_edit_survives_the_next_append(env: Env) -> None:
    await env.start()
    await env.echo("one")
    path = env.flow("checkout")
    path.write_text("# keep me\nsteps:\n  - echo: one  # a note\n  - wait: 100\n")
    out = await env.step("poke", '{"x":0.5,"y":0.3}')
    assert out["stepCount"] == 3
    text = path.read_text()
    assert text.startswith("# keep me\nsteps:\n  - echo: one  # a note\n  - wait: 100\n  - tool: poke\n")


# --------------------------------------------------------------------------------------------
# Files: atomic writes and modes


async def test_writes_keep_the_file_mode_and_leave_no_temp_files(env: Env) -> None:
    await env.start()
    path = env.flow("checkout")
    os.chmod(path, 0o640)
    await env.echo("one")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == ["checkout.yaml"]


async def test_writes_go_through_a_temp_file_beside_the_real_file(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_dir = tmp_path / "real-flows"
    real_dir.mkdir()
    (env.root / ".argent").mkdir()
    (env.root / ".argent" / "flows").symlink_to(real_dir)
    seen: list[tuple[str, str]] = []
    replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        seen.append((str(src), str(dst)))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    await env.start()
    await env.echo("one")
    assert len(seen) == 2
    for src, dst in seen:
        assert dst == str(real_dir / "checkout.yaml")
        assert os.path.dirname(src) == str(real_dir)
        assert os.path.basename(src).startswith(f".argent-flow-{os.getpid()}-")
        assert src.endswith(".tmp")
    assert seen[0][0] != seen[1][0]


async def test_a_read_only_flow_file_is_refused(env: Env) -> None:
    await env.start()
    await env.echo("one")
    path = env.flow("checkout")
    os.chmod(path, 0o444)
    err = await refused(env.echo("two"))
    assert err.message == (
        f"Failed to write flow file {path} (EACCES) — {path} is not writable (mode 444). Make it writable "
        f"(chmod u+w {path}) or record under another name."
    )
    assert path.read_text() == "steps:\n  - echo: one\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    err = await refused(env.start())
    assert "(EACCES)" in err.message
    assert path.read_text() == "steps:\n  - echo: one\n"


# --------------------------------------------------------------------------------------------
# Sessions: keys, concurrency, eviction


async def test_a_symlinked_root_names_the_same_recording(env: Env, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(env.root)
    await env.start()
    await env.echo("one")
    out = await env.start(root=alias)
    assert out["restarted"] is True
    assert out["discardedSteps"] == 1
    err = await refused(env.echo("x"))  # the real spelling is no longer the registered one
    assert err.message == (
        f'Recording of "checkout" in {env.root} is not registered under that spelling — it was started as '
        f"{env.flow('checkout', alias)}, which is the same file. Use that name and project_root for every "
        "call of this recording."
    )
    await env.echo("two", root=alias)
    assert env.flow("checkout").read_text() == "steps:\n  - echo: two\n"


async def test_interleaved_appends_land_in_their_own_files(env: Env) -> None:
    await env.start("a")
    await env.start("b")
    await asyncio.gather(*(env.echo(f"{n}{i}", name=n) for i in range(10) for n in ("a", "b")))
    for n in ("a", "b"):
        steps = parse_flow(env.flow(n).read_text()).steps
        assert [s.message for s in steps] == [f"{n}{i}" for i in range(10)]  # type: ignore[union-attr]


async def test_concurrent_steps_lose_nothing_and_keep_their_order(env: Env) -> None:
    await env.start()
    calls = [
        env.step("poke", f'{{"x":0.{i % 10},"y":0.5}}') if i % 2 else env.echo(f"echo {i}") for i in range(40)
    ]
    results = await asyncio.gather(*calls)
    assert sorted(r["stepCount"] for r in results) == list(range(1, 41))
    assert [r["stepCount"] for r in results] == list(range(1, 41))  # in arrival order
    assert len(parse_flow(env.flow("checkout").read_text()).steps) == 40


async def test_a_step_in_flight_when_a_restart_lands_is_rejected(env: Env) -> None:
    await env.start()
    pending = asyncio.ensure_future(env.step("slow", '{"id":"s1"}'))
    await env.tools.was_started("s1").wait()
    await env.start()
    env.tools.gate("s1").set()
    err = await refused(pending)
    assert err.message == (
        f'Recording of "checkout" in {env.root} is no longer active — it was finished, restarted or evicted '
        "while this call waited or ran, so nothing was recorded (the tool did run). Call flow-start-recording "
        "to begin a new take."
    )
    assert env.flow("checkout").read_text() == "steps: []\n"


async def test_finish_while_a_step_waits_gives_consistent_counts(env: Env) -> None:
    await env.start()
    await env.echo("one")
    pending = asyncio.ensure_future(env.step("slow", '{"id":"s1"}'))
    await env.tools.was_started("s1").wait()
    queued = asyncio.ensure_future(env.echo("queued"))
    await asyncio.sleep(0)
    out = await env.finish()
    assert out["steps"] == 1
    env.tools.gate("s1").set()
    for task in (pending, queued):
        with pytest.raises(ArgentError, match="no longer active"):
            await task
    assert env.flow("checkout").read_text() == "steps:\n  - echo: one\n"


async def test_the_33rd_recording_evicts_the_least_recently_used(env: Env) -> None:
    for i in range(MAX_LIVE_RECORDINGS):
        await env.start(f"r{i}")
    await env.echo("touch r0", name="r0")  # r1 is now the least recently used
    await env.start("r-new")
    err = await refused(env.echo("x", name="r1"))
    assert err.message.startswith('No active recording for flow "r1"')
    await env.echo("still here", name="r0")
    assert len(env.recorder.sessions) == MAX_LIVE_RECORDINGS


# --------------------------------------------------------------------------------------------
# Client-kept recordings


def directive(path: Path, content: str) -> dict[str, Any]:
    return {"__argentClientFile": True, "path": str(path), "content": content}


async def test_a_root_absent_here_keeps_the_recording_on_the_client(env: Env, tmp_path: Path) -> None:
    remote = tmp_path / "client-only"
    out = await env.start(root=remote, executionPrerequisite="home screen")
    path = env.flow("checkout", remote)
    assert out["savedTo"] == directive(path, "steps: []\nexecutionPrerequisite: home screen\n")
    assert out["flowFile"] == str(path)
    assert not remote.exists()
    await env.echo("one", root=remote)
    second = await env.step("poke", '{"x":0.5,"y":0.3}', root=remote)
    content = "steps:\n  - echo: one\n  - tool: poke\n    args:\n      x: 0.5\n      y: 0.3\nexecutionPrerequisite: home screen\n"
    assert second["savedTo"] == directive(path, content)
    done = await env.finish(root=remote)
    assert done["savedTo"] == directive(path, content)
    assert done["summary"] == ["1. echo: one", '2. tool: poke {"x":0.5,"y":0.3}']
    assert not remote.exists()


async def test_a_linked_call_keeps_the_recording_on_the_client(env: Env) -> None:
    ctx = ToolContext(linked=True)
    out = await env.call("flow-start-recording", {"name": "checkout", "project_root": str(env.root)}, ctx)
    assert out["savedTo"] == directive(env.flow("checkout"), "steps: []\n")
    assert not (env.root / ".argent").exists()


async def test_the_probe_decides_without_the_header(env: Env) -> None:
    probe = {"project_root": ResolvedFileInput(str(env.root), present_on_host=False)}
    out = await env.call(
        "flow-start-recording",
        {"name": "checkout", "project_root": str(env.root)},
        ToolContext(file_inputs=probe),
    )
    assert isinstance(out["savedTo"], dict)
    assert not (env.root / ".argent").exists()


async def test_a_rejected_client_append_rolls_back(env: Env, tmp_path: Path) -> None:
    remote = tmp_path / "client-only"
    await env.start(root=remote)
    await env.echo("one", root=remote)
    with pytest.raises(ArgentError):
        await env.step("boom", root=remote)
    with pytest.raises(ArgentError, match="normalized 0–1"):
        await env.step("gesture-tap", '{"udid":"d","x":2,"y":0.5}', root=remote)
    out = await env.finish(root=remote)
    assert out["summary"] == ["1. echo: one"]


# --------------------------------------------------------------------------------------------
# flow-add-script


def script_args(env: Env, path: str, **extra: Any) -> dict[str, Any]:
    return {"name": "checkout", "project_root": str(env.root), "path": path, **extra}


async def test_a_script_runs_once_and_is_recorded(env: Env) -> None:
    await env.start()
    scripts = env.root / ".argent" / "flows" / "scripts"
    scripts.mkdir()
    (scripts / "seed.py").write_text(
        "import os, sys\nopen(os.path.join(os.environ['ARGENT_PROJECT_ROOT'], 'ran'), 'a').write(sys.argv[1])\n"
    )
    out = await env.call("flow-add-script", script_args(env, "scripts/seed.py", args=["x"]))
    assert (env.root / "ran").read_text() == "x"
    assert out["recorded"] == '1. script: scripts/seed.py ["x"]'
    assert out["stepCount"] == 1
    assert (
        env.flow("checkout").read_text()
        == "steps:\n  - script:\n      path: scripts/seed.py\n      args:\n        - x\n"
    )
    plain = await env.call("flow-add-script", script_args(env, "scripts/seed.py", args=["y"], timeout=5000))
    assert plain["recorded"] == '2. script: scripts/seed.py ["y"] (timeout 5000ms)'


async def test_a_failing_script_records_nothing(env: Env) -> None:
    await env.start()
    (env.root / ".argent" / "flows" / "fail.py").write_text(
        "import sys\nsys.stderr.write('nope')\nsys.exit(3)\n"
    )
    err = await refused(env.call("flow-add-script", script_args(env, "fail.py")))
    assert err.message == "script fail.py exited with code 3: nope; nothing was recorded."
    assert env.flow("checkout").read_text() == "steps: []\n"


async def test_a_script_over_a_link_is_refused_and_never_runs(env: Env, tmp_path: Path) -> None:
    await env.start()
    marker = env.root / "ran"
    (env.root / ".argent" / "flows" / "seed.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    err = await refused(env.call("flow-add-script", script_args(env, "seed.py"), ToolContext(linked=True)))
    assert err.message.startswith("flow-add-script records nothing over a link")
    assert not marker.exists()
    remote = tmp_path / "client-only"
    await env.start(root=remote)
    err = await refused(
        env.call("flow-add-script", {"name": "checkout", "project_root": str(remote), "path": "seed.py"})
    )
    assert err.message.startswith("flow-add-script records nothing over a link")
    assert not marker.exists()
    assert env.flow("checkout").read_text() == "steps: []\n"


def test_the_recorder_tools_are_the_ones_a_linked_replay_rejects() -> None:
    from argent.link.rules import RECORDING_TOOLS

    assert {spec.name for spec in Recorder(ToolRegistry()).specs()} == RECORDING_TOOLS


def test_the_recording_remembers_the_device_its_tool_steps_acted_on() -> None:
    from argent.tools.recording import _note_device
    from argent.tools.recording_sessions import RecordingSession

    session = RecordingSession(key="k", name="n", project_root="/p", flow_file="/p/f.yaml", client_kept=False)
    _note_device(
        session, "boot-device", {"url": "http://x"}, {"id": "chromium-cdp-1", "platform": "chromium"}
    )
    assert session.device == "chromium-cdp-1"
    _note_device(session, "gesture-tap", {"udid": "chromium-cdp-2", "x": 0.5, "y": 0.5}, {})
    assert session.device == "chromium-cdp-2"
    _note_device(session, "list-devices", {}, {"devices": []})
    assert session.device == "chromium-cdp-2"
    _note_device(session, "stop-device", {"udid": "chromium-cdp-9"}, {})
    assert session.device == "chromium-cdp-2"  # another device stopped: this one stays
    _note_device(session, "stop-device", {"udid": "chromium-cdp-2"}, {})
    assert session.device is None


# --------------------------------------------------------------------------------------------
# A directive as the command: what is refused before anything runs (runs: tests/e2e/test_mcp_agents.py)


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        (
            "press",
            None,
            'a press step needs args: the directive\'s value as JSON, e.g. "Enter". Nothing was run',
        ),
        (
            "press",
            "Enter",
            "args of a press step must be the directive's value as JSON — an object, or the JSON text of any of its "
            'forms, e.g. "Enter" (Expecting value at line 1, column 1). Nothing was run or recorded.',
        ),
        (
            "tap",
            "[" * 100_000 + "]" * 100_000,
            "args of a tap step must be the directive's value as JSON — an object, or the JSON text of any of its "
            'forms, e.g. {"text": "Sign in", "role": "button"} (it nests arrays or objects too deeply to read).',
        ),
        (
            "tap",
            {"bogus": 1},
            "flow-add-step cannot run this tap step: tap: selector has unknown key `bogus` — allowed keys: text, "
            "id, identifier, role, css, any, within, after, next. Nothing was run or recorded.",
        ),
        (
            "type",
            {"into": {"id": "email"}},
            "flow-add-step cannot run this type step: type needs a non-empty text. Nothing was run or recorded.",
        ),
        (
            "tap",
            json.dumps(list(range(6000))),
            "flow-add-step cannot run this tap step: a list with more than 5000 items at line 1, column ",
        ),
    ],
)
async def test_a_directive_value_that_is_not_one_runs_nothing(
    env: Env, command: str, args: Any, message: str
) -> None:
    await env.start()
    err = await refused(env.step(command, args))
    assert err.message.startswith(message)
    assert err.status == 400
    assert env.tools.calls == [] and env.flow("checkout").read_text() == "steps: []\n"


async def test_a_directive_takes_no_delay_and_a_tool_no_deep_json(env: Env) -> None:
    await env.start()
    err = await refused(env.step("press", '"Enter"', delayMs=10))
    assert err.message.startswith("delayMs applies to tool steps; a press step waits for what it needs")
    deep = await refused(env.step("poke", "{" + '"a":{' * 50_000 + "}" * 50_001))
    assert deep.message == (
        "args must be an object or the JSON text of one (it nests arrays or objects too deeply to read); nothing "
        "was run or recorded."
    )


async def test_a_directive_on_a_tool_server_without_devices_says_so(env: Env) -> None:
    await env.start()
    err = await refused(env.step("press", '"Enter"'))
    assert err.message == (
        "this tool-server has no devices. flow-add-step runs a press step on the recording's device: record a "
        "launch step first (it boots one), or pass device."
    )
    assert env.flow("checkout").read_text() == "steps: []\n"


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (
            "wait",
            "a fixed wait makes a flow slow and flaky — record an await step, which waits for what the app does",
        ),
        ("echo", "call flow-add-echo"),
        ("dialogs", "add it to the flow file by hand (each step runs on its own while recording)"),
    ],
)
async def test_a_directive_flow_add_step_does_not_record_says_what_to_do(
    env: Env, command: str, why: str
) -> None:
    await env.start()
    err = await refused(env.step(command, "1"))
    assert (
        err.message == f"flow-add-step does not record {command}: steps: {why}. Nothing was run or recorded."
    )
