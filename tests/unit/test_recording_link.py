"""The recorder over a link: the refusals, the members of a recorded step (client collection and
server use), older clients, and the baselines a recorded flow-execute step writes."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from attrs import define, frozen

from argent.client.baselines import BaselineWriteScope, apply_baseline_writes
from argent.client.collect import Collection, collect_step_members
from argent.client.members import member_wire, plan_transfer
from argent.errors import ArgentError
from argent.link.members import MemberStore
from argent.runner import pixels as P
from argent.server.members import read_members
from argent.tools.args import arg
from argent.tools.recording import (
    NESTED_NOT_RUN,
    NOT_BESIDE,
    OLDER_FILE_ARGUMENT,
    OLDER_NESTED,
    OLDER_SIBLING_PATH,
)
from argent.tools.registry import FileInputSpec, ToolContext, ToolSpec
from tests.unit.test_directives import FakeDevice, OneDevice, canvas
from tests.unit.test_recording import Env, make_env, refused, write_flow

# --------------------------------------------------------------------------------------------
# Stand-in tools with file inputs


@frozen
class DirArgs:
    dir: str = arg()


@frozen
class AppArgs:
    app_path: str = arg(wire="appPath")


@frozen
class OutArgs:
    output_dir: str = arg(wire="outputDir")


@frozen
class CompareArgs:
    baseline_path: str = arg(wire="baselinePath")


@define
class FileTools:
    seen: list[tuple[str, Any]]

    def specs(self) -> tuple[ToolSpec[Any], ...]:
        async def scan(args: DirArgs, ctx: ToolContext) -> Any:
            self.seen.append(("scan", args.dir))
            return {}

        async def install(args: AppArgs, ctx: ToolContext) -> Any:
            self.seen.append(("install", args.app_path))
            return {}

        async def export(args: OutArgs, ctx: ToolContext) -> Any:
            self.seen.append(("export", args.output_dir))
            return {}

        async def compare(args: CompareArgs, ctx: ToolContext) -> Any:
            data = Path(args.baseline_path).read_bytes()
            self.seen.append(("compare", data))
            return {"bytes": len(data)}

        return (
            ToolSpec("scan", "scan", DirArgs, scan, (FileInputSpec("dir", "${dir}", "directory"),)),
            ToolSpec(
                "install",
                "install",
                AppArgs,
                install,
                (FileInputSpec("appPath", "${appPath}", "tar-upload"),),
            ),
            ToolSpec(
                "export", "export", OutArgs, export, (FileInputSpec("outputDir", "${outputDir}", "probe"),)
            ),
            ToolSpec(
                "compare",
                "compare",
                CompareArgs,
                compare,
                (FileInputSpec("baselinePath", "${baselinePath}", "file"),),
            ),
        )


@define
class Link:
    env: Env
    seen: list[tuple[str, Any]]
    root: Path  # the client's project

    @property
    def flows(self) -> Path:
        return self.root / ".argent" / "flows"

    def call(self, command: str, args: dict[str, Any], name: str = "checkout") -> dict[str, Any]:
        return {"name": name, "project_root": str(self.root), "command": command, "args": json.dumps(args)}

    def collect(self, command: str, args: dict[str, Any], name: str = "checkout") -> Collection:
        return collect_step_members(self.call(command, args, name), self.env.registry.entries())

    async def start(self, *, linked: bool = True) -> None:
        args = {"name": "checkout", "project_root": str(self.root)}
        await self.env.call("flow-start-recording", args, ToolContext(linked=linked))

    async def step(
        self,
        command: str,
        args: dict[str, Any],
        *,
        members: MemberStore | None = None,
        linked: bool = True,
        drop_project: bool = False,
    ) -> Any:
        """flow-add-step as it arrives over a link: with the members the real client collects
        (unless ``members`` is given), the client's project gone from this disk if asked."""
        call = self.call(command, args)
        store = members
        if store is None and linked:
            store = await wire_store(self.collect(command, args))
        if drop_project:
            shutil.rmtree(self.root)
        step_members = {"project_root": store} if store is not None else {}
        return await self.env.call(
            "flow-add-step", call, ToolContext(linked=linked, step_members=step_members)
        )

    async def finish(self) -> Any:
        return await self.env.call(
            "flow-finish-recording", {"name": "checkout", "project_root": str(self.root)}
        )

    def ran(self) -> list[str]:
        """Every stand-in tool that ran, file tools and plain ones."""
        return [name for name, _ in self.seen] + self.env.names()

    async def nothing_ran_or_recorded(self) -> None:
        assert self.ran() == []
        assert (await self.finish())["steps"] == 0


async def wire_store(collection: Collection) -> MemberStore:
    """The members as the tool-server reads them off the wire (all inline)."""
    wire = [member_wire(m, how, None) for m, how in plan_transfer(collection.members)]

    async def no_uploads(upload_id: str, content_hash: Any, member_path: str) -> bytes:
        raise AssertionError("no uploads here")

    return await read_members(wire, owner="project_root", fetch_upload=no_uploads)


@pytest.fixture
def link(tmp_path: Path) -> Link:
    server_side = tmp_path / "server"
    server_side.mkdir()
    seen: list[tuple[str, Any]] = []
    root = tmp_path / "client"
    (root / ".argent" / "flows").mkdir(parents=True)
    device = FakeDevice()
    env = make_env(server_side, extra=FileTools(seen).specs(), flow_devices=OneDevice(device))
    return Link(env, seen, root)


def members_of(collection: Collection) -> list[tuple[str, str, str | None]]:
    return [(m.role, m.key, m.state) for m in collection.members]


# --------------------------------------------------------------------------------------------
# Client: the members of each step shape


def test_a_tool_step_sends_its_file_arguments(link: Link) -> None:
    png = link.root / "shots" / "home.png"
    png.parent.mkdir()
    png.write_bytes(b"\x89PNG fake")
    collection = link.collect("compare", {"baselinePath": str(png)})
    assert members_of(collection) == [("tool", str(png), None)]
    assert collection.members[0].data == b"\x89PNG fake"


def test_a_named_flow_sends_the_recording_its_sibling_the_flow_and_its_reach(link: Link) -> None:
    flows = link.flows
    (flows / "checkout.yaml").write_text("steps: []\n")
    write_flow(link.root, "login", "steps:\n  - run: parts/frag.yaml\n  - snapshot: home\n")
    (flows / "parts").mkdir()
    (flows / "parts" / "frag.yaml").write_text("steps:\n  - echo: frag\n")
    shots = flows / "__baselines__" / "login"
    shots.mkdir(parents=True)
    (shots / "home__chromium-100x80.png").write_bytes(b"png")
    (shots / "other__chromium-100x80.png").write_bytes(b"png")
    collection = link.collect("flow-execute", {"name": "login", "project_root": str(link.root)})
    keys = {(role, key) for role, key, _ in members_of(collection)}
    assert keys == {
        ("flow", f"{flows}\0login.yaml"),  # the named flow, which is also the file beside the recording
        ("flow", f"{flows}\0parts/frag.yaml"),
        ("flow", f"{flows}\0checkout.yaml"),
        ("baseline", f"{shots}/home__chromium-100x80.png"),
    }
    assert collection.update_dirs == ()


def test_a_named_flow_that_updates_baselines_lists_them(link: Link) -> None:
    write_flow(link.root, "login", "steps:\n  - snapshot: home\n")
    shots = link.flows / "__baselines__" / "login"
    shots.mkdir(parents=True)
    (shots / "home__chromium-100x80.png").write_bytes(b"png")
    args = {"name": "login", "project_root": str(link.root), "updateBaselines": True}
    collection = link.collect("flow-execute", args)
    assert ("baseline", f"{shots}/home__chromium-100x80.png", "listed") in members_of(collection)
    assert collection.update_dirs == (str(shots),)


def test_the_sibling_is_looked_up_beside_the_recordings_real_file(link: Link, tmp_path: Path) -> None:
    real = tmp_path / "real-flows"
    real.mkdir()
    shutil.rmtree(link.flows)
    link.flows.symlink_to(real)
    (real / "checkout.yaml").write_text("steps: []\n")
    write_flow(link.root, "login")
    collection = link.collect("flow-execute", {"name": "login", "project_root": str(link.root)})
    keys = {key for _, key, _ in members_of(collection)}
    assert f"{real}\0login.yaml" in keys
    assert f"{link.flows}\0login.yaml" in keys
    assert f"{link.flows}\0checkout.yaml" in keys


def test_a_sibling_flow_path_sends_the_named_rows_and_the_file(link: Link) -> None:
    write_flow(link.root, "login")
    collection = link.collect(
        "flow-execute", {"flow_path": str(link.flows / "login.yaml"), "project_root": str(link.root)}
    )
    keys = {key for _, key, _ in members_of(collection)}
    assert keys == {f"{link.flows}\0login.yaml", f"{link.flows}\0checkout.yaml"}


def test_a_sibling_flow_path_of_another_spelling_sends_the_file_by_the_recordings_directory(
    link: Link, tmp_path: Path
) -> None:
    """Seed table, flow_path row: the named rows for the file's name, and also the file by the
    recording's directory and the file name — a separate member when flow_path spells the project
    another way."""
    write_flow(link.root, "login")
    alias = tmp_path / "alias"
    alias.symlink_to(link.root)
    args = {"flow_path": f"{alias}/.argent/flows/login.yaml", "project_root": str(alias)}
    collection = link.collect("flow-execute", args)
    keys = {key for _, key, _ in members_of(collection)}
    assert keys == {
        f"{alias}/.argent/flows\0login.yaml",  # the flow the step names
        f"{link.flows}\0login.yaml",  # beside the recording's real file, and by the recording's directory
        f"{link.flows}\0checkout.yaml",  # the recording
    }


def test_another_flow_path_sends_the_recording_only(link: Link, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("steps: []\n")
    collection = link.collect("flow-execute", {"flow_path": str(elsewhere), "project_root": str(link.root)})
    assert members_of(collection) == [("flow", f"{link.flows}\0checkout.yaml", "missing")]


@pytest.mark.parametrize(
    "call",
    [
        {"name": "checkout", "project_root": "/p", "command": "unmet"},
        {"name": "checkout", "project_root": "/p", "command": "unmet", "args": '{"x": 1}'},
        {
            "name": "bad name",
            "project_root": "/p",
            "command": "compare",
            "args": '{"baselinePath": "/p/a.png"}',
        },
        {
            "name": "checkout",
            "project_root": "rel",
            "command": "compare",
            "args": '{"baselinePath": "/p/a.png"}',
        },
        {"name": "checkout", "project_root": "/p", "command": "compare", "args": '["/p/a.png"]'},
        {"name": "checkout", "project_root": "/p", "command": "compare", "args": "{not json"},
        {
            "name": "checkout",
            "project_root": "/p",
            "command": "flow-execute",
            "args": '{"project_root": "/p"}',
        },
    ],
)
def test_calls_that_read_no_file_send_no_members(link: Link, call: dict[str, Any]) -> None:
    assert collect_step_members(call, link.env.registry.entries()).members == ()


# --------------------------------------------------------------------------------------------
# Server: refusals over a link


@pytest.mark.parametrize(
    ("command", "args", "why"),
    [
        ("scan", {"dir": "/tmp/x"}, "dir takes a directory"),
        ("install", {"appPath": "/tmp/app.apk"}, "appPath takes an app"),
        ("export", {"outputDir": "/tmp/out"}, "outputDir takes an output directory"),
        ("compare", {"baselinePath": "rel/a.png"}, 'baselinePath is a relative path ("rel/a.png")'),
        (
            "compare",
            {"baselinePath": "/tmp/a.txt"},
            'baselinePath is a file that does not end in .png or .yaml ("/tmp/a.txt")',
        ),
    ],
)
async def test_a_step_a_linked_replay_rejects_runs_nothing(
    link: Link, command: str, args: dict[str, Any], why: str
) -> None:
    await link.start()
    err = await refused(link.step(command, args))
    assert err.message == (
        f"flow-add-step cannot record this {command} step: a replay over a link rejects it — a replay over a "
        f"link sends only file arguments, and {why}. Nothing ran and nothing was recorded."
    )
    assert err.error_code == "FLOW_RECORDING_REFUSED"
    assert link.seen == []
    assert (await link.finish())["steps"] == 0


@pytest.mark.parametrize(
    "args",
    [
        {"name": "login", "project_root": "relative"},
        {"name": "login", "project_root": "/p/../q"},
        {"name": "login", "project_root": "{root}/../client"},  # names the real flow, through ".."
        {"project_root": "/p"},
    ],
)
async def test_a_flow_execute_not_named_by_name_and_root_is_refused(link: Link, args: dict[str, Any]) -> None:
    write_flow(link.root, "login", "steps:\n  - tool: unmet\n")
    args = {key: value.format(root=link.root) for key, value in args.items()}
    await link.start()
    err = await refused(link.step("flow-execute", args))
    assert (
        "a nested flow-execute over a link must name its flow with name and an absolute project_root"
        in err.message
    )
    await link.nothing_ran_or_recorded()


async def test_the_header_refuses_on_a_host_recording_too(link: Link) -> None:
    await link.start(linked=False)
    err = await refused(link.step("scan", {"dir": "/tmp/x"}))
    assert "a replay over a link rejects it" in err.message
    assert link.seen == []
    assert (link.flows / "checkout.yaml").read_text() == "steps: []\n"
    await link.nothing_ran_or_recorded()


async def test_without_the_header_a_host_recording_refuses_nothing(link: Link) -> None:
    await link.start(linked=False)
    out = await link.step("scan", {"dir": "/tmp/x"}, linked=False)
    assert out["recorded"] == '1. tool: scan {"dir":"/tmp/x"}'
    assert link.seen == [("scan", "/tmp/x")]


# --------------------------------------------------------------------------------------------
# Server: a client older than the tool-server (no header, no members, a client-kept recording)


@pytest.fixture
async def older(link: Link) -> Link:
    shutil.rmtree(link.root)  # the project exists on the client only: the recording is client-kept
    await link.start(linked=False)
    return link


async def test_an_older_client_cannot_record_a_named_flow(older: Link) -> None:
    err = await refused(
        older.step("flow-execute", {"name": "login", "project_root": str(older.root)}, linked=False)
    )
    assert err.message.startswith(
        f"flow-add-step cannot record {OLDER_NESTED}: this recording is kept on the client"
    )
    assert "Update the argent CLI or MCP adapter on the client" in err.message
    assert err.error_code == "FLOW_RECORDING_REFUSED"
    await older.nothing_ran_or_recorded()


async def test_an_older_client_cannot_record_a_flow_this_host_could_run(older: Link, tmp_path: Path) -> None:
    """Seed "The x-argent-linked header": refused even when a flow of that name is on this host."""
    here = tmp_path / "server"
    write_flow(here, "login", "steps:\n  - tool: unmet\n")
    err = await refused(
        older.step("flow-execute", {"name": "login", "project_root": str(here)}, linked=False)
    )
    assert err.message.startswith(f"flow-add-step cannot record {OLDER_NESTED}: ")
    await older.nothing_ran_or_recorded()


async def test_an_older_client_cannot_record_a_sibling_flow_path(older: Link) -> None:
    args = {"flow_path": str(older.flows / "login.yaml"), "project_root": str(older.root)}
    err = await refused(older.step("flow-execute", args, linked=False))
    assert err.message.startswith(f"flow-add-step cannot record {OLDER_SIBLING_PATH}: ")
    assert "Update the argent CLI or MCP adapter on the client" in err.message
    await older.nothing_ran_or_recorded()


async def test_an_older_client_cannot_record_a_file_argument(older: Link) -> None:
    err = await refused(older.step("compare", {"baselinePath": "/x/home.png"}, linked=False))
    what = OLDER_FILE_ARGUMENT.format(command="compare", names="baselinePath")
    assert err.message.startswith(f"flow-add-step cannot record {what}: ")
    assert "Update the argent CLI or MCP adapter on the client" in err.message
    assert older.seen == []
    await older.nothing_ran_or_recorded()


async def test_an_older_client_still_gets_the_link_refusals_and_records_the_rest(older: Link) -> None:
    err = await refused(older.step("scan", {"dir": "/tmp/x"}, linked=False))
    assert "a replay over a link rejects it" in err.message
    assert older.ran() == []
    out = await older.step("unmet", {}, linked=False)
    assert out["recorded"] == "1. tool: unmet {}"
    script = {"name": "checkout", "project_root": str(older.root), "path": "seed.py"}
    err = await refused(older.env.call("flow-add-script", script))
    assert err.message.startswith("flow-add-script records nothing over a link")
    assert older.ran() == ["unmet"]
    assert (await older.finish())["summary"] == ["1. tool: unmet {}"]


async def test_an_older_client_whose_recording_this_host_writes_gets_no_refusal(link: Link) -> None:
    """Seed "The x-argent-linked header": no header, and project_root exists here (a link to
    127.0.0.1) — the recorder applies none of the refusals, a script: step among them."""
    png = link.root / "shots" / "home.png"
    png.parent.mkdir()
    png.write_bytes(b"host bytes")
    write_flow(link.root, "login", "steps:\n  - tool: boom\n")
    marker = link.root / "ran"
    (link.flows / "seed.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    await link.start(linked=False)
    assert (await link.step("scan", {"dir": "/tmp/x"}, linked=False))[
        "recorded"
    ] == '1. tool: scan {"dir":"/tmp/x"}'
    out = await link.step("compare", {"baselinePath": str(png)}, linked=False)
    assert out["recorded"].startswith("2. tool: compare")
    out = await link.step("flow-execute", {"name": "login", "project_root": str(link.root)}, linked=False)
    assert out["recorded"] == "3. run: login.yaml"
    assert out["toolResult"].ok is False  # a flow that does not pass is still recorded here
    script = {"name": "checkout", "project_root": str(link.root), "path": "seed.py"}
    assert (await link.env.call("flow-add-script", script))["recorded"] == "4. script: seed.py"
    assert marker.read_text() == "x"
    assert link.ran() == ["scan", "compare", "boom"]
    assert (await link.finish())["steps"] == 4


async def test_another_flow_path_is_refused_for_an_older_client(older: Link, tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    err = await refused(
        older.step("flow-execute", {"flow_path": str(other), "project_root": str(older.root)}, linked=False)
    )
    detail = NOT_BESIDE.format(dir=str(older.flows))
    assert err.message.startswith(f'Cannot record a flow-execute of flow_path "{other}": {detail}.')
    await older.nothing_ran_or_recorded()


# --------------------------------------------------------------------------------------------
# Server: the members a current client sent


async def test_a_sibling_runs_from_the_members_and_becomes_run(link: Link) -> None:
    write_flow(link.root, "login", "steps:\n  - echo: from the client\n")
    await link.start()
    out = await link.step(
        "flow-execute", {"name": "login", "project_root": str(link.root)}, drop_project=True
    )
    assert out["recorded"] == "1. run: login.yaml"
    assert out["message"] == 'Step added to "checkout" flow'
    report = out["toolResult"]
    assert report.ok is True
    assert report.steps[0].message == "from the client"
    assert out["savedTo"]["content"] == "steps:\n  - run: login.yaml\n"


async def test_a_sibling_flow_path_is_rewritten_from_the_members(link: Link) -> None:
    write_flow(link.root, "login")
    await link.start()
    args = {"flow_path": str(link.flows / "login.yaml"), "project_root": str(link.root)}
    out = await link.step("flow-execute", args, drop_project=True)
    assert out["recorded"] == "1. run: login.yaml"


async def test_a_sibling_flow_path_of_another_spelling_runs_from_the_members(
    link: Link, tmp_path: Path
) -> None:
    write_flow(link.root, "login", "steps:\n  - echo: via the alias\n")
    alias = tmp_path / "alias"
    alias.symlink_to(link.root)
    await link.start()
    args = {"flow_path": f"{alias}/.argent/flows/login.yaml", "project_root": str(alias)}
    out = await link.step("flow-execute", args, drop_project=True)
    assert out["recorded"] == "1. run: login.yaml"
    assert out["toolResult"].steps[0].message == "via the alias"


async def test_a_file_argument_the_client_does_not_have_runs_nothing(link: Link) -> None:
    """Seed table, tool: row: a missing file argument reaches the tool as no file — the step
    fails with the run's words, the tool does not run, nothing is recorded."""
    missing = link.root / "shots" / "gone.png"
    await link.start()
    err = await refused(link.step("compare", {"baselinePath": str(missing)}))
    assert err.message == f'the client has no file at "{missing}" (argument baselinePath of compare)'
    await link.nothing_ran_or_recorded()


async def test_a_flow_path_elsewhere_is_refused_with_members(link: Link, tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("steps: []\n")
    await link.start()
    err = await refused(link.step("flow-execute", {"flow_path": str(other), "project_root": str(link.root)}))
    assert err.message.startswith(f'Cannot record a flow-execute of flow_path "{other}": it is not beside')


async def test_a_flow_outside_the_clients_roots_is_refused(link: Link, tmp_path: Path) -> None:
    other = tmp_path / "other-project"
    write_flow(other, "login", "steps:\n  - tool: unmet\n")
    await link.start()
    err = await refused(link.step("flow-execute", {"name": "login", "project_root": str(other)}))
    assert "outside every root this client serves" in err.message
    await link.nothing_ran_or_recorded()


async def test_a_flow_of_another_project_stays_raw(link: Link) -> None:
    inner = link.root / "packages" / "web"
    write_flow(inner, "login", "steps:\n  - echo: inner project\n")
    await link.start()
    out = await link.step("flow-execute", {"name": "login", "project_root": str(inner)}, drop_project=True)
    assert out["message"] == (
        'Step added to "checkout" flow — kept the raw flow-execute step — "login" is a flow of another '
        f"project ({inner}), and run: resolves beside the recording"
    )
    assert out["recorded"] == f'1. tool: flow-execute {{"name":"login","project_root":"{inner}"}}'
    assert out["toolResult"].steps[0].message == "inner project"


async def test_a_nested_flow_that_a_link_rejects_is_refused(link: Link) -> None:
    marker = link.root / "ran"
    (link.flows / "seed.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    write_flow(link.root, "login", "steps:\n  - tool: unmet\n  - script: seed.py\n")
    await link.start()
    err = await refused(link.step("flow-execute", {"name": "login", "project_root": str(link.root)}))
    assert err.message.startswith("This flow cannot run over a link")
    assert err.error_code == "FLOW_FILE_INVALID"
    assert not marker.exists()
    await link.nothing_ran_or_recorded()


async def test_a_nested_flow_that_does_not_pass_is_not_recorded(link: Link) -> None:
    """Seed "The x-argent-linked header": flow-add-step refuses a flow-execute step when the nested
    flow does not pass; the recorder records no step (the flow itself did run)."""
    write_flow(link.root, "login", "steps:\n  - echo: hi\n  - tool: boom\n  - tool: unmet\n")
    await link.start()
    err = await refused(link.step("flow-execute", {"name": "login", "project_root": str(link.root)}))
    assert err.message == (
        'flow-add-step cannot record this flow-execute step: its flow "login" did not pass (1 errored; '
        "first: step 2 tool — boom went off), and over a link a flow-execute step is recorded only when "
        "its flow passes. The flow ran; nothing was recorded."
    )
    assert err.error_code == "FLOW_RECORDING_REFUSED"
    assert link.ran() == ["boom"]
    assert (await link.finish())["steps"] == 0


async def test_a_nested_flow_that_did_not_run_for_its_prerequisite_is_not_recorded(link: Link) -> None:
    write_flow(link.root, "login", "executionPrerequisite: signed out\nsteps:\n  - tool: unmet\n")
    await link.start()
    err = await refused(link.step("flow-execute", {"name": "login", "project_root": str(link.root)}))
    assert err.message == NESTED_NOT_RUN.format(flow="login")
    await link.nothing_ran_or_recorded()
    await link.start()
    args = {"name": "login", "project_root": str(link.root), "prerequisiteAcknowledged": True}
    assert (await link.step("flow-execute", args))["recorded"] == "1. run: login.yaml"


async def test_a_missing_named_flow_fails_with_enoent(link: Link) -> None:
    await link.start()
    err = await refused(link.step("flow-execute", {"name": "ghost", "project_root": str(link.root)}))
    assert err.message == f"ENOENT: no such file or directory, open '{link.flows / 'ghost.yaml'}'"


async def test_a_file_argument_reaches_the_tool_from_the_members(link: Link) -> None:
    png = link.root / "shots" / "home.png"
    png.parent.mkdir()
    png.write_bytes(b"client bytes")
    await link.start()
    out = await link.step("compare", {"baselinePath": str(png)}, drop_project=True)
    assert link.seen == [("compare", b"client bytes")]
    assert out["recorded"] == f'1. tool: compare {{"baselinePath":"{png}"}}'


async def test_a_recorded_run_that_updates_baselines_returns_them(link: Link) -> None:
    write_flow(link.root, "login", "steps:\n  - snapshot: home\n")
    (link.flows / "checkout.yaml").write_text("steps: []\n")
    await link.start()
    args = {
        "name": "login",
        "project_root": str(link.root),
        "device": "chromium-cdp-9222",
        "updateBaselines": True,
    }
    collection = link.collect("flow-execute", args)
    out = await link.step("flow-execute", args, members=await wire_store(collection))
    shot = link.flows / "__baselines__" / "login" / "home__chromium-100x80.png"
    writes = out["baselineWrites"]
    assert [w["path"] for w in writes] == [str(shot)]
    assert out["toolResult"].baseline_writes is None  # the step's result carries them once
    assert P.decode_png(base64.b64decode(writes[0]["content"])).shape == canvas().shape
    scope = BaselineWriteScope()
    scope.add(collection)
    applied = apply_baseline_writes({"baselineWrites": writes}, scope)
    assert applied.written == (str(shot),)
    assert shot.exists()


async def test_a_recorded_run_that_compares_writes_no_baselines(link: Link) -> None:
    write_flow(link.root, "login", "steps:\n  - echo: plain\n")
    await link.start()
    out = await link.step("flow-execute", {"name": "login", "project_root": str(link.root)})
    assert "baselineWrites" not in out


async def test_a_step_with_empty_members_runs(link: Link) -> None:
    await link.start()
    out = await link.step("unmet", {})
    assert out["recorded"] == "1. tool: unmet {}"


async def test_a_refused_step_records_nothing_even_after_others(link: Link) -> None:
    await link.start()
    await link.step("unmet", {})
    with pytest.raises(ArgentError):
        await link.step("scan", {"dir": "/x"})
    assert (await link.finish())["summary"] == ["1. tool: unmet {}"]
