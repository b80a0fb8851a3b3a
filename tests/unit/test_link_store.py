"""Seed "What the tool-server does with the members": the member store and MemberFlowFiles."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from argent.errors import FileInputError
from argent.limits import MAX_FILE_BYTES, MAX_FLOW_MEMBERS_BYTES
from argent.link.members import MemberStore
from argent.link.spelling import Spelling
from argent.runner.files import FlowFileError
from argent.runner.member_files import MemberFlowFiles
from argent.server.members import named_upload_ids, read_members

D = "/client/proj/.argent/flows"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def flow(target: str, data: bytes | None = b"steps: []\n", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": "flow",
        "key": f"{D}\0{target}",
        "path": f"{D}/{target}",
        "canonical": f"{D}/{target}",
        "spelling": {"state": "listed"},
    }
    if data is not None:
        out["content"] = b64(data)
        out["size"] = len(data)
    out.update(extra)
    return out


async def no_uploads(upload_id: str, content_hash: Any, path: str) -> bytes:
    raise AssertionError("no upload expected")


async def read(raw: Any, fetch: Any = no_uploads) -> MemberStore:
    return await read_members(raw, owner=f"{D}/main.yaml", fetch_upload=fetch)


async def test_members_with_bytes_keep_them() -> None:
    store = await read([flow("a.yaml")])
    member = store.flow(f"{D}\0a.yaml")
    assert member is not None and member.data == b"steps: []\n" and member.state is None


async def test_unknown_roles_and_repeated_keys_are_ignored() -> None:
    store = await read(
        [
            {"role": "mystery", "key": "/x", "content": "!!not base64!!"},
            flow("a.yaml", b"first"),
            flow("a.yaml", b"second"),
        ]
    )
    assert len(store) == 1
    assert store.flow(f"{D}\0a.yaml").data == b"first"  # type: ignore[union-attr]


async def test_bad_base64_fails_the_call_with_422() -> None:
    with pytest.raises(FileInputError) as info:
        await read([flow("a.yaml", None, content="###")])
    assert info.value.status == 422
    assert info.value.message == f'Member content for "{D}/a.yaml" is not valid base64.'


async def test_a_size_that_differs_from_the_bytes_fails_with_422() -> None:
    with pytest.raises(FileInputError) as info:
        await read([flow("a.yaml", b"abc", size=4)])
    assert info.value.message == (
        f'Member content for "{D}/a.yaml" is 3 bytes but the client recorded 4 — refusing a truncated or '
        "corrupted upload."
    )


async def test_a_member_over_32_mib_fails_with_422() -> None:
    with pytest.raises(FileInputError) as info:
        await read([flow("a.yaml", b"x" * (MAX_FILE_BYTES + 1))])
    assert "exceeds the 33554432-byte limit on one file" in info.value.message


async def test_flow_members_over_32_mib_in_total_fail_with_422() -> None:
    half = MAX_FLOW_MEMBERS_BYTES // 2
    with pytest.raises(FileInputError) as info:
        await read([flow("a.yaml", b"a" * half), flow("b.yaml", b"b" * half), flow("c.yaml", b"c")])
    assert info.value.message == (
        f"The flow members of this call add up to at least {MAX_FLOW_MEMBERS_BYTES + 1} bytes — over the "
        "33554432-byte limit on the flow files of one call."
    )


async def test_baselines_do_not_count_toward_the_flow_total() -> None:
    half = MAX_FLOW_MEMBERS_BYTES // 2
    big = {"role": "baseline", "key": f"{D}/__baselines__/m/a.png", "path": "x", "content": b64(b"p" * half)}
    store = await read([flow("a.yaml", b"a" * half), big])
    assert len(store) == 2


async def test_an_upload_the_server_does_not_have_fails_with_422() -> None:
    async def fetch(upload_id: str, content_hash: Any, path: str) -> bytes:
        raise FileInputError(f'Upload "{upload_id}" was not found')

    with pytest.raises(FileInputError):
        await read([flow("a.yaml", None, uploadId="u1", contentHash="h")], fetch)


async def test_members_without_bytes_keep_their_state_or_become_refused() -> None:
    store = await read(
        [
            flow("missing.yaml", None, state="missing"),
            flow("refused.yaml", None, state="refused", error="EACCES: permission denied, open '/x'"),
            flow("nothing.yaml", None),
            flow("listed.yaml", None, state="listed"),
            {"role": "baseline", "key": f"{D}/__baselines__/m/h.png", "path": "x", "state": "listed"},
        ]
    )
    states = {m.key.rsplit("\0", 1)[-1]: (m.state, m.error) for m in store}
    assert states["missing.yaml"] == ("missing", None)
    assert states["refused.yaml"] == ("refused", "EACCES: permission denied, open '/x'")
    assert states["nothing.yaml"] == (
        "refused",
        f"the client sent neither the bytes nor a state for {D}/nothing.yaml",
    )
    assert states["listed.yaml"][0] == "refused"  # only a baseline is sent by name
    assert states[f"{D}/__baselines__/m/h.png"] == ("listed", None)


@pytest.mark.parametrize(
    "canonical",
    ["relative/a.yaml", "/client/../etc/a.yaml", "/client/./a.yaml", "/client//a.yaml", "/a\0b", 7],
)
async def test_a_flow_member_with_an_invalid_canonical_is_refused(canonical: Any) -> None:
    store = await read([flow("a.yaml", canonical=canonical)])
    member = store.flow(f"{D}\0a.yaml")
    assert member is not None and member.state == "refused" and member.data is None
    assert member.error == f"the client sent an invalid canonical path for {D}/a.yaml"


@pytest.mark.parametrize(
    "spelling",
    [
        None,
        "listed",
        {"state": "folded"},
        {"state": "case_folded", "actual": "A.yaml"},
        {"state": "case_folded", "actual": "a/b", "addressable": True},
    ],
)
async def test_a_flow_member_with_an_invalid_spelling_is_refused(spelling: Any) -> None:
    store = await read([flow("a.yaml", spelling=spelling)])
    member = store.flow(f"{D}\0a.yaml")
    assert member is not None and member.state == "refused"
    assert member.error == f"the client sent an invalid spelling for {D}/a.yaml"


async def test_nul_games_in_keys_are_ignored() -> None:
    store = await read(
        [
            {"role": "flow", "key": f"{D}/a.yaml", "content": b64(b"x")},  # no NUL
            {"role": "flow", "key": f"{D}\0a\0b.yaml", "content": b64(b"x")},  # two
            {"role": "flow", "key": "relative\0a.yaml", "content": b64(b"x")},
            {"role": "tool", "key": "/a\0.png", "content": b64(b"x")},
            {"role": "tool", "key": "relative.png", "content": b64(b"x")},
        ]
    )
    assert len(store) == 0


async def test_malformed_members_fail_with_422() -> None:
    with pytest.raises(FileInputError):
        await read({"not": "a list"})
    with pytest.raises(FileInputError):
        await read(["a string"])
    with pytest.raises(FileInputError):
        await read([{"role": "flow"}])


def test_named_upload_ids_lists_each_id_once_whatever_the_member() -> None:
    raw = [{"uploadId": "a"}, {"uploadId": "a", "role": "nope"}, {"uploadId": 3}, "x", {"uploadId": "b"}]
    assert named_upload_ids(raw) == ["a", "b"]


# --------------------------------------------------------------------------------------------
# MemberFlowFiles


async def files_with(*members: dict[str, Any]) -> MemberFlowFiles:
    store = await read(list(members))
    return MemberFlowFiles.for_root(
        f"{D}/main.yaml", f"{D}/main.yaml", Spelling("listed"), b"steps: []\n", store
    )


async def test_fragments_are_found_by_key_beside_the_canonical_of_the_naming_file() -> None:
    files = await files_with(flow("a.yaml", b"steps:\n  - echo: a\n", canonical="/real/a.yaml"))
    root = await files.named_flow("/client/proj", "main")
    assert root == files.root
    frag = await files.fragment(root, "a.yaml")
    assert (frag.key, frag.canonical) == (f"{D}\0a.yaml", "/real/a.yaml")
    assert await files.read_text(frag) == "steps:\n  - echo: a\n"
    assert files.local_path(frag, ".") is None


async def test_a_missing_member_reads_as_enoent_on_its_canonical_path() -> None:
    files = await files_with(flow("gone.yaml", None, state="missing", canonical="/real/gone.yaml"))
    ref = await files.fragment(files.root, "gone.yaml")
    with pytest.raises(FlowFileError) as info:
        await files.read_text(ref)
    assert str(info.value) == "ENOENT: no such file or directory, open '/real/gone.yaml'"


async def test_no_member_for_a_key_fails_the_read() -> None:
    files = await files_with()
    ref = await files.fragment(files.root, "nope.yaml")
    with pytest.raises(FlowFileError) as info:
        await files.read_text(ref)
    assert str(info.value) == f"the client sent no file for {D}/nope.yaml with the call"


async def test_a_refused_member_fails_with_the_clients_reason() -> None:
    files = await files_with(flow("r.yaml", None, state="refused", error="nope"))
    ref = await files.fragment(files.root, "r.yaml")
    assert files.refusal(ref) == "nope"
    with pytest.raises(FlowFileError, match=r"^nope$"):
        await files.read_text(ref)


async def test_baselines_read_written_first_then_members_and_writes_say_whether_one_was_there() -> None:
    path = f"{D}/__baselines__/main/h__chromium-1x1.png"
    other = f"{D}/__baselines__/main/o__chromium-1x1.png"
    refused = f"{D}/__baselines__/main/r__chromium-1x1.png"
    files = await files_with(
        {"role": "baseline", "key": path, "path": path, "content": b64(b"old")},
        {"role": "baseline", "key": refused, "path": refused, "state": "refused", "error": "why"},
    )
    assert await files.read_baseline(path) == b"old"
    assert await files.read_baseline(other) is None
    assert await files.write_baseline(path, b"new") is True
    assert await files.read_baseline(path) == b"new"
    assert await files.write_baseline(other, b"1") is False
    assert await files.write_baseline(other, b"2") is True
    with pytest.raises(FlowFileError, match=r"^why$"):
        await files.read_baseline(refused)
    with pytest.raises(FlowFileError, match=r"^why$"):
        await files.write_baseline(refused, b"x")
    assert files.baseline_writes() == [
        {"__argentClientFile": True, "path": path, "content": b64(b"new"), "encoding": "base64"},
        {"__argentClientFile": True, "path": other, "content": b64(b"2"), "encoding": "base64"},
    ]
