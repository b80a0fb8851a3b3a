"""Client-write directives in a result: allowed flow files are written atomically, the rest refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from argent.client.client_files import apply_client_file_directives, text_directive_path_allowed


def _directive(path: str, content: str = "steps: []\n") -> dict[str, Any]:
    return {"__argentClientFile": True, "path": path, "content": content}


def _files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_an_allowed_flow_file_is_written_and_replaced_by_its_path(tmp_path: Path) -> None:
    target = tmp_path / "proj" / ".argent" / "flows" / "login.yaml"
    result = {"savedTo": _directive(str(target), "name: login\n")}
    applied = apply_client_file_directives(result)
    assert applied.result == {"savedTo": str(target)}
    assert applied.written == (str(target),)
    assert target.read_text() == "name: login\n"
    # The input is left as it was.
    assert result["savedTo"]["__argentClientFile"] is True


def test_directives_are_found_at_any_depth(tmp_path: Path) -> None:
    a = tmp_path / ".argent" / "flows" / "a.yaml"
    b = tmp_path / ".argent" / "flows" / "b_2-x.yaml"
    result = {"outer": [{"inner": {"file": _directive(str(a), "a")}}, _directive(str(b), "b")], "n": 1}
    applied = apply_client_file_directives(result)
    assert applied.result == {"outer": [{"inner": {"file": str(a)}}, str(b)], "n": 1}
    assert set(applied.written) == {str(a), str(b)}
    assert a.read_text() == "a" and b.read_text() == "b"


def test_text_is_written_as_utf8(tmp_path: Path) -> None:
    target = tmp_path / ".argent" / "flows" / "u.yaml"
    apply_client_file_directives(_directive(str(target), "echo: héllo ✓\n"))
    assert target.read_bytes() == "echo: héllo ✓\n".encode()


@pytest.mark.parametrize(
    "rel",
    [
        "relative/.argent/flows/x.yaml",
        "/ABS/other/x.yaml",
        "/ABS/.argent/x.yaml",
        "/ABS/flows/x.yaml",
        "/ABS/.argent/flows/../flows/x.yaml",
        "/ABS/.argent/flows/sub/x.yaml",
        "/ABS/.argent/flows/x.yml",
        "/ABS/.argent/flows/x.YAML",
        "/ABS/.argent/flows/bad name.yaml",
        "/ABS/.argent/flows/.yaml",
        "/ABS/.argent/flows/x.yaml.png",
        "/ABS/.argent/flows\\..\\x.yaml",
    ],
)
def test_refused_paths_become_null_and_write_nothing(tmp_path: Path, rel: str) -> None:
    path = rel.replace("/ABS", str(tmp_path)) if rel.startswith("/ABS") else rel
    applied = apply_client_file_directives({"savedTo": _directive(path)})
    assert applied.result == {"savedTo": None}
    assert applied.written == ()
    assert _files_under(tmp_path) == []
    assert not text_directive_path_allowed(path)


def test_a_backslash_dotdot_segment_is_refused() -> None:
    assert not text_directive_path_allowed("/p/..\\q/.argent/flows/x.yaml")
    assert text_directive_path_allowed("/p/q/.argent/flows/x.yaml")


def test_a_directive_without_text_content_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / ".argent" / "flows" / "x.yaml")
    applied = apply_client_file_directives({"__argentClientFile": True, "path": path, "content": 5})
    assert applied.result is None
    assert not os.path.exists(path)


def test_a_failed_write_becomes_null(tmp_path: Path) -> None:
    target = tmp_path / ".argent" / "flows" / "x.yaml"
    target.mkdir(parents=True)  # a directory where the file should go
    applied = apply_client_file_directives([_directive(str(target))])
    assert applied.result == [None]
    assert applied.written == ()
    assert sorted(os.listdir(target.parent)) == ["x.yaml"]  # no temp file left behind


def test_an_existing_file_is_replaced_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / ".argent" / "flows" / "x.yaml"
    target.parent.mkdir(parents=True)
    target.write_text("old\n")
    os.chmod(target, 0o640)
    inode = target.stat().st_ino
    apply_client_file_directives(_directive(str(target), "new\n"))
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # renamed into place, not rewritten in place
    assert sorted(os.listdir(target.parent)) == ["x.yaml"]


def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    target = tmp_path / ".argent" / "flows" / "x.yaml"
    mask = os.umask(0o022)
    os.umask(mask)
    apply_client_file_directives(_directive(str(target)))
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_base64_directives_are_left_untouched_for_now(tmp_path: Path) -> None:
    png = str(tmp_path / "__baselines__" / "k" / "shot__chromium-1000x800.png")
    directive = {"__argentClientFile": True, "path": png, "content": "iVBORw0KGgo=", "encoding": "base64"}
    applied = apply_client_file_directives({"baselineWrites": [directive]})
    assert applied.result == {"baselineWrites": [directive]}
    assert applied.written == ()
    assert _files_under(tmp_path) == []


def test_objects_that_are_not_directives_pass_through(tmp_path: Path) -> None:
    result = (
        {"__argentClientFile": False, "path": "/x"},
        {"__argentClientFile": True, "path": 3},
        "text",
        4,
        None,
    )
    assert apply_client_file_directives(list(result)).result == list(result)
