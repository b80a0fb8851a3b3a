"""Seed "What the tool-server does with the members" (the preflight) and "Older clients and tool-servers"."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from argent.errors import FlowError
from argent.flows.parse import parse_flow
from argent.flows.write import render_step
from argent.link.members import MemberStore
from argent.link.spelling import Spelling
from argent.runner.member_files import MemberFlowFiles
from argent.server.members import read_members
from argent.tools.link_preflight import check_linked_flow

D = "/work/proj/.argent/flows"
INPUTS: dict[str, list[dict[str, Any]]] = {
    "screenshot-diff": [
        {"target": "baselinePath", "path": "${baselinePath}", "kind": "file", "optional": True},
        {"target": "outputDir", "path": "${outputDir}", "kind": "probe", "optional": True},
    ],
    "reinstall-app": [{"target": "appPath", "path": "${appPath}", "kind": "tar-upload"}],
    "gather-workspace-data": [{"target": "workspacePath", "path": "${workspacePath}", "kind": "directory"}],
    "join": [{"target": "out", "path": "${dir}/${name}.png", "kind": "file"}],
    "note": [],
}


def inputs_of(tool: str) -> list[dict[str, Any]] | None:
    return INPUTS.get(tool)


def member(target: str, text: str | None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": "flow",
        "key": f"{D}\0{target}",
        "path": f"{D}/{target}",
        "canonical": f"{D}/{target}",
        "spelling": {"state": "listed"},
    }
    if text is not None:
        out["content"] = base64.b64encode(text.encode()).decode()
    out.update(extra)
    return out


async def no_uploads(upload_id: str, content_hash: Any, path: str) -> bytes:
    raise AssertionError


async def check(root: str, *members: dict[str, Any], sent: bool = True) -> None:
    store: MemberStore | None = None
    if sent:
        store = await read_members(list(members), owner="x", fetch_upload=no_uploads)
    files = MemberFlowFiles.for_root(
        f"{D}/main.yaml", f"{D}/main.yaml", Spelling("listed"), root.encode(), store
    )
    await check_linked_flow(parse_flow(root), files.root, files, inputs_of)


async def rejected(root: str, *members: dict[str, Any], sent: bool = True) -> str:
    with pytest.raises(FlowError) as info:
        await check(root, *members, sent=sent)
    assert info.value.error_code == "FLOW_FILE_INVALID"
    return info.value.message


HEADER = (
    "This flow cannot run over a link: the tool-server runs a flow only from the files that the client sends "
    "with the call, and these steps need more:"
)


async def test_a_flow_with_members_that_link_can_run_passes() -> None:
    await check(
        "steps:\n  - run: a.yaml\n  - tool: flow-execute\n    args: { name: n, project_root: /work/proj }\n"
        "  - tool: screenshot-diff\n    args: { baselinePath: /work/proj/a.PNG }\n  - snapshot: home\n",
        member("a.yaml", "steps:\n  - echo: a\n"),
        member("n.yaml", "steps:\n  - run: gone.yaml\n"),
        member("gone.yaml", None, state="missing"),
    )


async def test_a_script_step_in_a_nested_flow_is_listed_in_the_seeds_format() -> None:
    message = await rejected(
        "steps:\n  - tool: flow-execute\n    args: { name: inner-script, project_root: /work/proj }\n",
        member("inner-script.yaml", "steps:\n  - script: { path: ../../scripts/hello.mjs }\n"),
    )
    assert message == (
        f"{HEADER}\nstep 1 in /work/proj/.argent/flows/inner-script.yaml: script: "
        "{ path: ../../scripts/hello.mjs } — a replay over a link runs no script: step"
    )


async def test_every_offending_step_is_listed_in_fragments_and_when_blocks() -> None:
    message = await rejected(
        "steps:\n  - echo: hi\n  - script: ./a.sh\n  - run: frag.yaml\n",
        member(
            "frag.yaml",
            "steps:\n  - when: { platform: ios }\n    steps:\n      - tool: flow-add-step\n"
            "        args: { name: x, project_root: /p, command: tap }\n"
            "  - tool: flow-execute\n    args: { flow_path: /work/proj/x.yaml, project_root: /work/proj }\n"
            "  - tool: flow-execute\n    args: { name: x, project_root: relative }\n"
            "  - tool: flow-execute\n    args: { name: x, project_root: /work/../proj }\n",
        ),
    )
    lines = message.split("\n")
    assert lines[0] == HEADER
    assert (
        lines[1]
        == f"step 2 in {D}/main.yaml: script: {{ path: ./a.sh }} — a replay over a link runs no script: step"
    )
    assert lines[2].startswith(
        f"step 2 in {D}/frag.yaml: tool: flow-add-step, args: {{ name: x, project_root: /p, command: tap }} — a replay over a link records no flow"
    )
    nested = (
        "a nested flow-execute over a link must name its flow with name and an absolute project_root without "
        "a .. segment"
    )
    assert lines[3] == (
        f"step 3 in {D}/frag.yaml: tool: flow-execute, args: {{ flow_path: /work/proj/x.yaml, "
        f"project_root: /work/proj }} — {nested}"
    )
    assert lines[4].startswith(f"step 4 in {D}/frag.yaml: tool: flow-execute") and lines[4].endswith(nested)
    assert lines[5].startswith(f"step 5 in {D}/frag.yaml: tool: flow-execute") and lines[5].endswith(nested)
    assert len(lines) == 6


@pytest.mark.parametrize(
    ("step", "why"),
    [
        (
            "tool: gather-workspace-data\n    args: { workspacePath: /work/proj }",
            "workspacePath takes a directory",
        ),
        ("tool: reinstall-app\n    args: { appPath: /work/app.apk }", "appPath takes an app"),
        ("tool: screenshot-diff\n    args: { outputDir: /work/out }", "outputDir takes an output directory"),
        ("tool: join\n    args: { dir: /work, name: a }", "out is a path the tool builds from dir, name"),
        (
            "tool: screenshot-diff\n    args: { baselinePath: shots/a.png }",
            'baselinePath is a relative path ("shots/a.png")',
        ),
        (
            "tool: screenshot-diff\n    args: { baselinePath: /work/a.jpg }",
            'baselinePath is a file that does not end in .png or .yaml ("/work/a.jpg")',
        ),
    ],
)
async def test_a_file_input_that_is_not_a_file_argument_stops_the_run(step: str, why: str) -> None:
    message = await rejected(f"steps:\n  - {step}\n")
    assert message.endswith(f" — a replay over a link sends only file arguments, and {why}")


async def test_a_refused_flow_member_stops_the_run() -> None:
    message = await rejected(
        "steps:\n  - when: { platform: ios }\n    steps:\n      - run: secret.yaml\n",
        member(
            "secret.yaml",
            None,
            state="refused",
            error="secret.yaml is outside every root this client serves (/work/proj)",
        ),
    )
    assert message.endswith(
        f"step 2 in {D}/main.yaml: run: secret.yaml — the client did not send the flow: secret.yaml is outside "
        "every root this client serves (/work/proj)"
    )


async def test_a_refused_nested_flow_stops_the_run() -> None:
    message = await rejected(
        "steps:\n  - tool: flow-execute\n    args: { name: n, project_root: /work/proj }\n",
        member("n.yaml", None, state="refused", error="EACCES: permission denied, open '/x'"),
    )
    assert message.endswith("— the client did not send the flow: EACCES: permission denied, open '/x'")


async def test_members_are_checked_to_the_depth_of_a_run_chain() -> None:
    chain = [member(f"f{i}.yaml", f"steps:\n  - run: f{i + 1}.yaml\n") for i in range(1, 19)]
    # f19 is level 20: checked; its target would be level 21: not reached
    chain.append(member("f19.yaml", "steps:\n  - script: deep.sh\n  - run: f20.yaml\n"))
    chain.append(member("f20.yaml", "steps:\n  - script: deeper.sh\n"))
    message = await rejected("steps:\n  - run: f1.yaml\n", *chain)
    assert "deep.sh" in message and "deeper.sh" not in message


# --------------------------------------------------------------------------------------------
# Older clients


UPDATE = "Update the argent CLI or MCP adapter on the client."


@pytest.mark.parametrize(
    ("step", "what"),
    [
        ("run: frag.yaml", "run: steps for a client that sends their fragments with the call"),
        ("snapshot: home", "snapshot: steps for a client that sends their baselines with the call"),
        (
            "tool: flow-execute\n    args: { name: n, project_root: /work/proj }",
            "tool: flow-execute steps that name a flow with name, for a client that sends those flows with the call",
        ),
        (
            "tool: screenshot-diff\n    args: { baselinePath: /work/a.png }",
            "tool: steps with file arguments for a client that sends them with the call",
        ),
    ],
)
async def test_a_client_that_sends_no_members_gets_the_sentence_of_each_row(step: str, what: str) -> None:
    message = await rejected(f"steps:\n  - echo: x\n  - {step}\n", sent=False)
    assert message.startswith(f"{HEADER}\nstep 2 in {D}/main.yaml: ")
    assert message.endswith(f"\nThis tool-server runs {what}. {UPDATE}")


async def test_several_kinds_name_each_once_in_one_sentence() -> None:
    message = await rejected("steps:\n  - run: a.yaml\n  - snapshot: s\n  - run: b.yaml\n", sent=False)
    assert message.count("\n") == 4
    assert message.endswith(
        "\nThis tool-server runs run: steps for a client that sends their fragments with the call, and snapshot: "
        f"steps for a client that sends their baselines with the call. {UPDATE}"
    )


async def test_a_flow_without_such_steps_runs_for_an_older_client() -> None:
    await check("steps:\n  - echo: x\n  - tool: note\n", sent=False)


def test_render_step_quotes_what_plain_yaml_cannot_hold() -> None:
    flow = parse_flow(
        'steps:\n  - script: "a: b.sh"\n  - tool: t\n    args: { x: "true", y: [1, "2"], z: null }\n  - run: ok.yaml\n'
    )
    assert [render_step(s) for s in flow.steps] == [
        'script: { path: "a: b.sh" }',
        'tool: t, args: { x: "true", y: [1, "2"], z: null }',
        "run: ok.yaml",
    ]
