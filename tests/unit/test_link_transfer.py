"""Seed "Members" (transfer) and the flow-files log: inline until 256 KiB, uploads, log lines."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import tarfile

import pytest

from argent.client.base import ToolCallError
from argent.client.collect import Collection
from argent.client.members import (
    archive_name,
    flow_files_log_enabled,
    log_line,
    plan_transfer,
    send_members,
)
from argent.client.transport import UploadRefusedByProxy
from argent.limits import INLINE_MEMBERS_BUDGET
from argent.link.codec import to_wire
from argent.link.members import Member
from argent.link.spelling import Spelling


def flow(name: str, size: int, *, random: bool = False) -> Member:
    data = os.urandom(size) if random else b"x" * size
    return Member(
        role="flow",
        key=f"/p/.argent/flows\0{name}",
        path=f"/p/.argent/flows/{name}",
        canonical=f"/p/.argent/flows/{name}",
        spelling=Spelling("listed"),
        data=data,
        size=size,
        mtime_ms=1791300000000.5,
    )


def test_members_ride_inline_up_to_exactly_256_kib_in_total() -> None:
    plan = plan_transfer([flow("a.yaml", INLINE_MEMBERS_BUDGET - 10), flow("b.yaml", 10)])
    assert [how for _, how in plan] == ["inline", "inline"]


def test_a_member_over_the_budget_goes_to_upload_and_smaller_ones_still_ride_inline() -> None:
    plan = plan_transfer(
        [
            flow("a.yaml", INLINE_MEMBERS_BUDGET - 10),
            flow("b.yaml", 11),
            flow("c.yaml", 10),
            flow("d.yaml", 1),
        ]
    )
    assert [how for _, how in plan] == ["inline", "upload", "inline", "upload"]


def test_members_without_bytes_are_neither() -> None:
    missing = Member(role="flow", key="/p\0x.yaml", path="/p/x.yaml", canonical="/p/x.yaml", state="missing")
    assert plan_transfer([missing]) == [(missing, None)]


def test_log_lines_name_flows_by_canonical_and_others_by_key() -> None:
    assert log_line(flow("a.yaml", 33), "inline") == "[flow-files] flow /p/.argent/flows/a.yaml: inline 33"
    assert (
        log_line(flow("a.yaml", 300000), "upload")
        == "[flow-files] flow /p/.argent/flows/a.yaml: upload 300000"
    )
    missing = Member(
        role="flow", key="/p\0x.yaml", path="/p/x.yaml", canonical="/real/x.yaml", state="missing"
    )
    assert log_line(missing, None) == "[flow-files] flow /real/x.yaml: missing"
    refused = Member(role="tool", key="/p/a.png", path="/p/a.png", state="refused", error="EISDIR: x")
    assert log_line(refused, None) == "[flow-files] tool /p/a.png: refused (EISDIR: x)"
    listed = Member(role="baseline", key="/p/b/h.png", path="/p/b/h.png", state="listed")
    assert log_line(listed, None) == "[flow-files] baseline /p/b/h.png: listed"


def test_the_log_is_on_only_for_exactly_1() -> None:
    assert flow_files_log_enabled({"ARGENT_FLOW_FILES_LOG": "1"})
    assert not flow_files_log_enabled({"ARGENT_FLOW_FILES_LOG": "true"})
    assert not flow_files_log_enabled({})


def test_archive_names_are_safe_basenames() -> None:
    assert archive_name("/p/home__chromium-1x1.png") == "home__chromium-1x1.png"
    assert archive_name("/p/we ird\\name.yaml") == "we_ird_name.yaml"
    assert archive_name("/p/..") == "member"


async def test_send_members_inlines_uploads_and_logs_without_content() -> None:
    big = flow("big.yaml", INLINE_MEMBERS_BUDGET + 1)
    small = flow("small.yaml", 5)
    posted: list[tuple[bytes, str]] = []
    lines: list[str] = []

    async def post(archive: bytes, path: str) -> str:
        posted.append((archive, path))
        return "upload-1"

    sent = await send_members(
        Collection("/p/m.yaml", Spelling("listed"), (big, small)), post=post, log=lines.append
    )
    wire = [to_wire(member) for member in sent]
    assert lines == [
        f"[flow-files] flow /p/.argent/flows/big.yaml: upload {INLINE_MEMBERS_BUDGET + 1}",
        "[flow-files] flow /p/.argent/flows/small.yaml: inline 5",
    ]
    archive, path = posted[0]
    assert path == "/p/.argent/flows/big.yaml"
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(archive))) as tar:
        (info,) = tar.getmembers()
        assert info.name == "big.yaml"
        handle = tar.extractfile(info)
        assert handle is not None and handle.read() == big.data
    assert wire[0] == {
        "role": "flow",
        "key": big.key,
        "path": big.path,
        "canonical": big.canonical,
        "spelling": {"state": "listed"},
        "size": big.size,
        "mtimeMs": big.mtime_ms,
        "uploadId": "upload-1",
        "contentHash": hashlib.sha256(archive).hexdigest(),
    }
    assert wire[1]["content"] == base64.b64encode(b"xxxxx").decode()
    assert "uploadId" not in wire[1]


async def test_a_proxy_413_sends_no_call_and_names_the_body_size_to_accept() -> None:
    members = (
        flow("a.yaml", INLINE_MEMBERS_BUDGET),
        flow("b.yaml", 2000),
        flow("c.yaml", 300000, random=True),
    )

    async def post(archive: bytes, path: str) -> str:
        raise UploadRefusedByProxy(
            "x", url="http://t", reason="Request Entity Too Large", size=len(archive), path=path
        )

    with pytest.raises(ToolCallError) as info:
        await send_members(Collection("/p/m.yaml", Spelling("listed"), members), post=post, log=None)
    message = info.value.message
    assert info.value.status == 413
    assert message.startswith("Upload to http://t/upload failed: 413 Request Entity Too Large — a proxy")
    assert "on POST /upload" in message and "client_max_body_size in nginx" in message
    assert message.endswith("The call was not sent.")
    # the size to accept is the largest archive of the call, not only the first refused one
    refused = int(message.split("refused the ")[1].split("-byte")[0])
    needed = int(message.split("at least ")[1].split(" bytes")[0])
    assert refused < 2000 < 300000 < needed
    assert "archive of /p/.argent/flows/b.yaml" in message
