"""`upload:` below the browser: its grammar and spelling, the files it names in the graph, the members
the client sends for it (with the client policy's refusals), the server's store and copies, the files
on this host under a policy, and the check before the first step. The browser's part is
``tests/e2e/test_upload_chromium.py``."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from argent.client.collect import collect_flow_members
from argent.client.members import log_line, plan_transfer
from argent.errors import FlowError, FlowParseError
from argent.flows.model import UploadStep
from argent.flows.parse import parse_flow
from argent.flows.references import UploadFile
from argent.flows.values import Selector
from argent.flows.write import flow_to_yaml, summarize_step
from argent.link.codec import to_wire
from argent.link.spelling import Spelling
from argent.runner.execute import FlowRequest, prepare_run
from argent.runner.files import DiskFlowFiles, FlowFileError
from argent.runner.member_files import MemberFlowFiles
from argent.runner.uploads import HEADER, check_upload_files
from argent.server.members import read_members
from argent.tools.call_policy import CallPolicy
from argent.tools.link_preflight import check_linked_flow
from tests.flow_files import flows, new_project, write

# --------------------------------------------------------------------------------------------
# The directive


def one(text: str) -> Any:
    return parse_flow("steps:\n  - " + text + "\n").steps[0]


def refused(text: str) -> str:
    with pytest.raises(FlowParseError) as info:
        parse_flow("steps:\n  - " + text + "\n")
    return info.value.message


def test_upload_names_its_input_and_files_and_writes_itself_back() -> None:
    step = one("upload: { into: { id: photo }, files: [fixtures/a.png, ../shared/b.pdf] }")
    assert step == UploadStep(
        into=Selector(identifier="photo"), files=("fixtures/a.png", "../shared/b.pdf"), line=2
    )
    assert step.label() == "into id=photo"
    assert summarize_step(1, step).endswith('upload: {"id":"photo"} ← ["fixtures/a.png","../shared/b.pdf"]')
    text = flow_to_yaml(parse_flow("steps:\n  - " + "upload: { into: Photo, files: [a.png] }" + "\n"))
    assert parse_flow(text).steps[0] == one("upload: { into: Photo, files: [a.png] }")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("upload: a.png", "upload needs { into, files }"),
        ("upload: { into: Photo }", "upload needs { into, files }"),
        ("upload: { into: Photo, files: a.png }", "upload.files must be a list of file paths"),
        ("upload: { into: Photo, files: [] }", "upload.files names no file"),
        ("upload: { into: Photo, files: [/etc/passwd] }", "an upload path must be relative"),
        ("upload: { into: Photo, files: ['a\\\\b.png'] }", "an upload path uses forward slashes"),
        ("upload: { into: Photo, files: [fixtures/] }", "an upload path names a file, not a directory"),
        ("upload: { into: Photo, files: [a.png], multiple: true }", "multiple"),
    ],
)
def test_what_upload_refuses_it_says(text: str, message: str) -> None:
    assert message in refused(text)


# --------------------------------------------------------------------------------------------
# The client's members


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return new_project(tmp_path)


def collect(proj: Path) -> Any:
    main = flows(proj) / "main.yaml"
    return collect_flow_members(str(main), main.read_bytes(), {"project_root": str(proj), "name": "main"}, [])


def test_each_file_to_upload_is_a_member_beside_the_file_that_names_it(proj: Path) -> None:
    write(
        flows(proj) / "main.yaml", "upload: { into: Photo, files: [pics/a.png, doc.pdf] }", "run: sub/f.yaml"
    )
    write(flows(proj) / "sub" / "f.yaml", "upload: { into: Photo, files: [../doc.pdf] }")
    (flows(proj) / "pics").mkdir()
    (flows(proj) / "pics" / "a.png").write_bytes(b"\x89PNG a")
    (flows(proj) / "doc.pdf").write_bytes(b"%PDF")
    d = str(flows(proj))
    members = collect(proj).members
    assert [(m.role, m.key, m.path, m.canonical, m.data, m.state) for m in members] == [
        ("flow", f"{d}\0sub/f.yaml", f"{d}/sub/f.yaml", f"{d}/sub/f.yaml", members[0].data, None),
        ("upload", f"{d}\0pics/a.png", f"{d}/pics/a.png", f"{d}/pics/a.png", b"\x89PNG a", None),
        ("upload", f"{d}\0doc.pdf", f"{d}/doc.pdf", f"{d}/doc.pdf", b"%PDF", None),
        ("upload", f"{d}/sub\0../doc.pdf", f"{d}/sub/../doc.pdf", f"{d}/doc.pdf", b"%PDF", None),
    ]
    assert log_line(members[1], "inline") == f"[flow-files] upload {d}/pics/a.png: inline 6"
    wire = to_wire(members[1].wire(content="x"))
    assert (wire["role"], wire["key"], wire["size"]) == ("upload", f"{d}\0pics/a.png", 6)


def test_the_client_policy_refuses_files_to_upload_as_it_refuses_every_member(
    proj: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("secret")
    (flows(proj) / "out.txt").symlink_to(secret)
    (flows(proj) / "dir").mkdir()
    with (flows(proj) / "huge.bin").open("wb") as handle:
        handle.truncate(33 * 1024 * 1024)
    write(
        flows(proj) / "main.yaml",
        "upload: { into: Photo, files: [../../../elsewhere/secret.txt, out.txt, dir, huge.bin, gone.txt] }",
    )
    d, roots = str(flows(proj)), f"({proj}, {flows(proj)})"
    assert [(m.key.split("\0")[1], m.state, m.error, m.data) for m in collect(proj).members] == [
        (
            "../../../elsewhere/secret.txt",
            "refused",
            f"../../../elsewhere/secret.txt is outside every root this client serves {roots}",
            None,
        ),
        ("out.txt", "refused", f"out.txt is outside every root this client serves {roots}", None),
        ("dir", "refused", "EISDIR: illegal operation on a directory, read", None),
        (
            "huge.bin",
            "refused",
            f"{d}/huge.bin is larger than the 32 MiB cap on a file sent to the tool-server",
            None,
        ),
        ("gone.txt", "missing", None, None),
    ]


def test_a_large_file_to_upload_goes_to_post_upload_like_any_member(proj: Path) -> None:
    (flows(proj) / "big.bin").write_bytes(os.urandom(300 * 1024))
    write(flows(proj) / "main.yaml", "upload: { into: Photo, files: [big.bin] }")
    ((member, how),) = plan_transfer(collect(proj).members)
    assert (member.role, how) == ("upload", "upload")


# --------------------------------------------------------------------------------------------
# The tool-server: the store, the copies, this host's files


async def no_uploads(upload_id: str, content_hash: Any, path: str) -> bytes:
    raise AssertionError


def upload_wire(key: str, data: bytes | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "upload", "key": key, "path": key.replace("\0", "/"), **extra}
    if data is not None:
        out["content"] = base64.b64encode(data).decode()
    return out


async def member_files(*members: dict[str, Any]) -> MemberFlowFiles:
    store = await read_members(list(members), owner="/c/p/main.yaml", fetch_upload=no_uploads)
    return MemberFlowFiles.for_root(
        "/c/p/main.yaml", "/c/p/main.yaml", Spelling("listed"), b"steps: []", store
    )


async def test_the_server_copies_a_sent_file_once_under_its_own_name_and_removes_it(tmp_path: Path) -> None:
    files = await member_files(upload_wire("/c/p\0pics/a photo.png", b"bytes"))
    files.upload_dirs = lambda: str(tmp_path / "uploads") if (tmp_path / "uploads").mkdir() is None else ""
    path = await files.local_file(files.root, "pics/a photo.png")
    assert os.path.basename(path) == "a photo.png" and Path(path).read_bytes() == b"bytes"
    assert await files.local_file(files.root, "pics/a photo.png") == path
    await files.close()
    assert not (tmp_path / "uploads").exists()


async def test_a_file_the_client_did_not_send_refused_or_lacked_says_so() -> None:
    files = await member_files(
        upload_wire("/c/p\0no.txt", state="refused", error="no.txt is outside every root this client serves"),
        upload_wire("/c/p\0gone.txt", state="missing", canonical="/c/p/gone.txt"),
    )
    reasons = []
    for path in ("no.txt", "gone.txt", "other.txt"):
        with pytest.raises(FlowFileError) as info:
            await files.local_file(files.root, path)
        reasons.append(str(info.value))
    assert reasons == [
        "no.txt is outside every root this client serves",
        "ENOENT: no such file or directory, open '/c/p/gone.txt'",
        "the client sent no file for /c/p/other.txt with the call",
    ]


async def test_this_hosts_files_are_the_real_files_under_the_calls_policy(proj: Path, tmp_path: Path) -> None:
    main = write(flows(proj) / "main.yaml", "echo: hi")
    (flows(proj) / "a.txt").write_text("a")
    (tmp_path / "outside.txt").write_text("o")
    files = DiskFlowFiles()
    ref = await files.locate(str(main))
    assert await files.local_file(ref, "a.txt") == str(flows(proj) / "a.txt")
    with pytest.raises(FlowFileError) as gone:
        await files.local_file(ref, "gone.txt")
    assert str(gone.value) == f"ENOENT: no such file or directory, open '{flows(proj)}/gone.txt'"
    with pytest.raises(FlowFileError) as directory:
        await files.local_file(ref, ".")
    assert str(directory.value) == "EISDIR: illegal operation on a directory, read"
    policy = CallPolicy(project_roots=(str(proj),)).disk_files()
    with pytest.raises(FlowFileError) as outside:
        await policy.local_file(await policy.locate(str(main)), "../../../outside.txt")
    assert str(outside.value).startswith(f'The tool-server does not read "{tmp_path}/outside.txt": ')


# --------------------------------------------------------------------------------------------
# Before the first step


async def test_files_a_run_will_upload_are_checked_before_its_first_step(proj: Path) -> None:
    write(
        flows(proj) / "main.yaml",
        "upload: { into: Photo, files: [here.txt, gone.txt] }",
        "run: frag.yaml",
        "when: { platform: ios }\n    steps:\n      - upload: { into: Photo, files: [maybe.txt] }\n      - run: cond.yaml",
    )
    write(flows(proj) / "frag.yaml", "upload: { into: Photo, files: [also-gone.txt] }")
    write(flows(proj) / "cond.yaml", "upload: { into: Photo, files: [never.txt] }")
    (flows(proj) / "here.txt").write_text("here")
    files = DiskFlowFiles()
    run = await prepare_run(FlowRequest(name="main", project_root=str(proj)), files)
    assert [e.ref for f in run.graph for e in f.edges if isinstance(e.ref, UploadFile)] == [
        UploadFile("here.txt"),
        UploadFile("gone.txt"),
        UploadFile("maybe.txt"),
        UploadFile("also-gone.txt"),
        UploadFile("never.txt"),
    ]
    with pytest.raises(FlowError) as info:
        await check_upload_files(run.graph, files)
    d = flows(proj)
    assert info.value.message.splitlines() == [
        HEADER,
        f"step 1 in {d}/main.yaml: upload: {{ into: Photo, files: [here.txt, gone.txt] }} — "
        f"ENOENT: no such file or directory, open '{d}/gone.txt'",
        f"step 1 in {d}/frag.yaml: upload: {{ into: Photo, files: [also-gone.txt] }} — "
        f"ENOENT: no such file or directory, open '{d}/also-gone.txt'",
    ]


async def test_an_older_client_that_sent_no_files_is_told_so() -> None:
    files = MemberFlowFiles.for_root("/c/p/main.yaml", "/c/p/main.yaml", Spelling("listed"), b"", None)
    text = "steps:\n  - upload: { into: Photo, files: [a.png] }\n"
    with pytest.raises(FlowError) as info:
        await check_linked_flow(parse_flow(text), files.root, files, lambda tool: None)
    assert info.value.message.splitlines()[1:] == [
        "step 1 in /c/p/main.yaml: upload: { into: Photo, files: [a.png] } — the client sent no files to "
        "upload with the call",
        "This tool-server runs upload: steps for a client that sends their files with the call. Update the "
        "argent CLI or MCP adapter on the client.",
    ]
