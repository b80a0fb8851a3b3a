"""The recorder keeps each recording as a document: an append parses the new step only, a hand
edit is still read from the file (and parsed once), and a client-kept recording never re-reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from argent.flows import write
from argent.flows.model import EchoStep
from argent.flows.write import append_step
from tests.unit.test_recording import Env, make_env


@pytest.fixture
def env(tmp_path: Path) -> Env:
    root = tmp_path / "proj"
    root.mkdir()
    return make_env(root)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every text the recording document parses."""
    seen: list[int] = []
    real = write.parse_flow_counted

    def counting(text: str) -> Any:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(write, "parse_flow_counted", counting)
    return seen


async def test_a_host_recording_parses_only_each_new_step(env: Env, parsed: list[int]) -> None:
    await env.start()
    for i in range(60):
        out = await env.echo(f"step {i}")
    assert out["stepCount"] == 60
    text = env.flow("checkout").read_text()
    assert text.count("- echo: step ") == 60
    assert sum(parsed) < 3 * len(text)


async def test_a_hand_edit_between_spliced_appends_is_kept(env: Env) -> None:
    await env.start(executionPrerequisite="home")
    for i in range(4):
        await env.echo(f"e{i}")
    path = env.flow("checkout")
    edited = path.read_text().replace("  - echo: e1\n", "  - echo: e1  # checked by hand\n  - wait: 5\n")
    path.write_text(edited)
    out = await env.echo("after")
    assert out["stepCount"] == 6
    assert path.read_text() == append_step(edited, EchoStep("after"))
    out = await env.echo("later")
    assert path.read_text() == append_step(append_step(edited, EchoStep("after")), EchoStep("later"))


async def test_a_client_kept_recording_lives_in_its_document(
    env: Env, tmp_path: Path, parsed: list[int]
) -> None:
    elsewhere = tmp_path / "not-on-this-host"
    await env.start(root=elsewhere)
    for i in range(40):
        out = await env.echo(f"step {i}", root=elsewhere)
    saved = out["savedTo"]
    assert saved["__argentClientFile"] is True and saved["content"].count("- echo: step ") == 40
    assert not elsewhere.exists()
    assert sum(parsed) < 3 * len(saved["content"])
