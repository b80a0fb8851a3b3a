"""Seed "Baselines in the result": what the client writes, where, and what it refuses."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from argent.client.baselines import (
    CONTROL_CHARACTERS,
    NOT_PNG_CONTENT,
    BaselineWriteScope,
    apply_baseline_writes,
)
from argent.client.collect import collect_flow_members

PNG = b"\x89PNG\r\n\x1a\nnew bytes"


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    flows = root / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "main.yaml").write_text(
        f"steps:\n  - snapshot: home\n  - tool: flow-execute\n    args: {{ name: other, project_root: {root} }}\n"
    )
    (flows / "other.yaml").write_text("steps:\n  - snapshot: x\n")
    return root


def scope_for(proj: Path, update: bool = True) -> BaselineWriteScope:
    path = f"{proj}/.argent/flows/main.yaml"
    args = {"project_root": str(proj), "name": "main", "updateBaselines": update}
    scope = BaselineWriteScope()
    scope.add(collect_flow_members(path, Path(path).read_bytes(), args, []))
    return scope


def directive(path: str | Path, data: bytes = PNG, **extra: Any) -> dict[str, Any]:
    return {
        "__argentClientFile": True,
        "path": str(path),
        "content": base64.b64encode(data).decode(),
        "encoding": "base64",
        **extra,
    }


def base(proj: Path, key: str = "main") -> Path:
    return proj / ".argent" / "flows" / "__baselines__" / key


def apply(proj: Path, *directives: dict[str, Any], update: bool = True) -> Any:
    return apply_baseline_writes({"ok": True, "baselineWrites": list(directives)}, scope_for(proj, update))


def test_a_baseline_of_an_updating_run_is_written_and_replaced_by_its_path(proj: Path) -> None:
    target = base(proj) / "home__chromium-1x1.png"
    nested = base(proj, "other") / "x__chromium-1x1.png"
    out = apply(proj, directive(target), directive(nested, PNG + b"nested"))
    assert out.result["baselineWrites"] == [str(target), str(nested)]
    assert out.written == (str(target), str(nested)) and out.failed == ()
    assert target.read_bytes() == PNG and nested.read_bytes() == PNG + b"nested"


def test_an_existing_baseline_is_replaced_in_one_rename_keeping_its_mode(proj: Path) -> None:
    target = base(proj) / "home__chromium-1x1.png"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"old")
    target.chmod(0o600)
    inode = os.stat(target).st_ino
    apply(proj, directive(target))
    assert target.read_bytes() == PNG and (os.stat(target).st_mode & 0o777) == 0o600
    assert os.stat(target).st_ino != inode  # a new file renamed over the old one
    assert sorted(os.listdir(target.parent)) == ["home__chromium-1x1.png"]


def test_nothing_is_written_for_a_call_that_does_not_update_baselines(proj: Path) -> None:
    target = base(proj) / "home__chromium-1x1.png"
    out = apply(proj, directive(target), update=False)
    (entry,) = out.result["baselineWrites"]
    assert entry == {
        "path": str(target),
        "error": f"{target} is not a .png file directly in the baseline directory of a run of this call that "
        "updates baselines",
    }
    assert not target.exists()


@pytest.mark.parametrize(
    "path",
    [
        "{base}/home.txt",
        "{base}/sub/home__chromium-1x1.png",
        "{base}/../main/home__chromium-1x1.png",
        "{flows}/home__chromium-1x1.png",
        "{flows}/__baselines__/elsewhere/home__chromium-1x1.png",
        "/etc/home__chromium-1x1.png",
        "relative/home.png",
    ],
)
def test_paths_outside_the_baseline_directory_are_refused(proj: Path, path: str) -> None:
    flows = proj / ".argent" / "flows"
    resolved = path.format(base=base(proj), flows=flows)
    before = sorted(str(p) for p in proj.rglob("*"))
    out = apply(proj, directive(resolved))
    assert out.written == () and out.failed[0][0] == resolved
    assert "directly in the baseline directory" in out.failed[0][1]
    assert sorted(str(p) for p in proj.rglob("*")) == before  # nothing written anywhere


def test_links_are_refused_as_the_seed_lists(proj: Path, tmp_path: Path) -> None:
    d = base(proj)
    d.mkdir(parents=True)
    (tmp_path / "outside.png").write_bytes(b"outside")
    (d / "notes.txt").write_text("t")
    (d / "sub").mkdir()
    (d / "a.png").symlink_to(d / "nowhere.png")
    (d / "b.png").symlink_to(tmp_path / "outside.png")
    (d / "c.png").symlink_to(d / "notes.txt")
    (d / "d.png").mkdir()
    (d / "inside.png").write_bytes(b"i")
    (d / "e.png").symlink_to(d / "inside.png")
    os.mkfifo(d / "f.png")
    out = apply(proj, *(directive(d / f"{name}.png") for name in "abcdef"))
    assert dict(out.failed) == {
        f"{d}/a.png": f"{d}/a.png is a link to nothing",
        f"{d}/b.png": f"{d}/b.png links out of its baseline directory",
        f"{d}/c.png": f"{d}/c.png links to a file that is not a PNG file",
        f"{d}/d.png": f"{d}/d.png is not a regular file",
        f"{d}/f.png": f"{d}/f.png is not a regular file",
    }
    assert out.written == (f"{d}/e.png",)
    assert (tmp_path / "outside.png").read_bytes() == b"outside"
    assert (d / "inside.png").read_bytes() == PNG and os.path.islink(d / "e.png")


def test_a_baseline_directory_that_links_out_of_the_roots_is_refused(proj: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (proj / ".argent" / "flows" / "__baselines__").mkdir()
    base(proj).symlink_to(elsewhere)
    out = apply(proj, directive(base(proj) / "home__chromium-1x1.png"))
    # the collection already left the directory out: nothing is written there
    assert out.written == () and os.listdir(elsewhere) == []


def test_bad_content_is_refused(proj: Path) -> None:
    out = apply(proj, {**directive(base(proj) / "h.png"), "content": "###"})
    assert out.failed == ((f"{base(proj)}/h.png", f"the content for {base(proj)}/h.png is not valid base64"),)


def test_a_result_without_baseline_writes_is_left_alone(proj: Path) -> None:
    result = {"ok": True, "steps": []}
    assert apply_baseline_writes(result, scope_for(proj)).result is result


def test_the_mcp_report_adds_a_line_for_each_baseline_not_written(proj: Path) -> None:
    # Seed "Baselines in the result": the MCP server adds the line
    # ✗ baseline not written: <path>: <reason> to the report.
    from argent.mcp.server import render_report

    written = base(proj) / "home__chromium-1x1.png"
    escape = proj / "escape.png"
    out = apply(proj, directive(written), directive(escape))
    report = {
        "flow": "main",
        "device": "chromium-cdp-1",
        "ok": True,
        "passed": 1,
        "failed": 0,
        "skipped": 0,
        "errored": 0,
        "steps": [{"index": 0, "kind": "snapshot", "status": "pass", "flow": "main", "durationMs": 1}],
        "baselineWrites": out.result["baselineWrites"],
    }
    text = render_report(report).split("\n")
    reason = (
        f"{escape} is not a .png file directly in the baseline directory of a run of this call that updates "
        "baselines"
    )
    assert [line for line in text if "baseline" in line] == [f"✗ baseline not written: {escape}: {reason}"]
    assert text[-2] == f"✗ baseline not written: {escape}: {reason}"


@pytest.mark.parametrize("char", ["\0", "\x1b", "\n", "\x07", "\x7f", "\x85", "\x9b", "\ud800"])
def test_a_name_with_control_characters_is_refused_without_a_crash(proj: Path, char: str) -> None:
    path = f"{base(proj)}/ho{char}me__chromium-1x1.png"
    out = apply(proj, directive(path))
    assert out.failed == ((path, CONTROL_CHARACTERS.format(path=path)),)
    assert out.written == () and not base(proj).exists()


@pytest.mark.parametrize("data", [b"", b"GIF89a", b"\x89PNG\r\n", b"#!/bin/sh\nrm -rf ~\n", b"<svg/>"])
def test_bytes_that_are_not_a_png_are_refused(proj: Path, data: bytes) -> None:
    target = base(proj) / "home__chromium-1x1.png"
    out = apply(proj, directive(target, data))
    assert out.failed == ((str(target), NOT_PNG_CONTENT.format(path=target)),)
    assert not base(proj).exists()
