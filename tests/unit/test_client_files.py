"""Client-write directives in a result: only a recording tool's savedTo, only the call's own flow file,
never through a link, written atomically; everything else refused with a reason and nothing written."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from argent.client.client_files import (
    LINKED_DIRECTORY,
    LINKED_FILE,
    NO_RECORDING_FILE,
    NOT_A_RECORDING,
    NOT_REGULAR,
    NOT_SAVED_TO,
    NOT_TEXT,
    NOT_THIS_CALL,
    ClientFileCall,
    RefusedClientFile,
    apply_client_file_directives,
    text_directive_path_allowed,
)
from argent.link.rules import RECORDING_TOOLS


def _directive(path: str | Path, content: Any = "steps: []\n") -> dict[str, Any]:
    return {"__argentClientFile": True, "path": str(path), "content": content}


def _call(root: Path, name: str = "x", tool: str = "flow-start-recording") -> ClientFileCall:
    return ClientFileCall(tool, {"project_root": str(root), "name": name})


def _flow(root: Path, name: str = "x") -> Path:
    return root / ".argent" / "flows" / f"{name}.yaml"


def _files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("tool", sorted(RECORDING_TOOLS))
def test_a_recording_tools_own_flow_file_is_written_and_replaced_by_its_path(
    tmp_path: Path, tool: str
) -> None:
    project = tmp_path / "proj"
    target = _flow(project, "login")
    result = {"message": "ok", "savedTo": _directive(target, "name: login\n")}
    applied = apply_client_file_directives(result, _call(project, "login", tool))
    assert applied.result == {"message": "ok", "savedTo": str(target)}
    assert applied.written == (str(target),) and applied.refused == ()
    assert target.read_text() == "name: login\n"
    # The input is left as it was.
    assert result["savedTo"]["__argentClientFile"] is True


def test_a_directive_of_a_tool_that_does_not_record_is_refused(tmp_path: Path) -> None:
    target = _flow(tmp_path, "main")
    call = ClientFileCall("flow-execute", {"project_root": str(tmp_path), "name": "main"})
    applied = apply_client_file_directives({"savedTo": _directive(target)}, call)
    assert applied.result == {"savedTo": None}
    reason = NOT_A_RECORDING.format(tool="flow-execute", tools=", ".join(sorted(RECORDING_TOOLS)))
    assert applied.refused == (RefusedClientFile(str(target), reason),)
    assert applied.written == () and _files_under(tmp_path) == []


def test_directives_anywhere_but_the_top_level_saved_to_are_refused(tmp_path: Path) -> None:
    target = _flow(tmp_path)
    result = {
        "outer": [{"inner": {"savedTo": _directive(target, "a")}}, _directive(target, "b")],
        "n": 1,
        "savedTo": str(target),
    }
    applied = apply_client_file_directives(result, _call(tmp_path))
    assert applied.result == {"outer": [{"inner": {"savedTo": None}}, None], "n": 1, "savedTo": str(target)}
    reason = NOT_SAVED_TO.format(tool="flow-start-recording")
    assert applied.refused == (RefusedClientFile(str(target), reason),) * 2
    assert _files_under(tmp_path) == []


def test_a_result_that_is_itself_a_directive_is_refused(tmp_path: Path) -> None:
    applied = apply_client_file_directives(_directive(_flow(tmp_path)), _call(tmp_path))
    assert applied.result is None
    assert [r.reason for r in applied.refused] == [NOT_SAVED_TO.format(tool="flow-start-recording")]
    assert _files_under(tmp_path) == []


def test_text_is_written_as_utf8(tmp_path: Path) -> None:
    target = _flow(tmp_path, "u")
    apply_client_file_directives({"savedTo": _directive(target, "echo: héllo ✓\n")}, _call(tmp_path, "u"))
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
        "/ABS/.argent/flows/y.yaml",
        "/ABS/sub/../.argent/flows/x.yaml",
        "/elsewhere/.argent/flows/x.yaml",
    ],
)
def test_any_other_path_than_the_calls_own_flow_file_is_refused(tmp_path: Path, rel: str) -> None:
    path = rel.replace("/ABS", str(tmp_path)) if rel.startswith("/ABS") else rel
    applied = apply_client_file_directives({"savedTo": _directive(path)}, _call(tmp_path))
    assert applied.result == {"savedTo": None}
    assert applied.written == ()
    assert applied.refused == (RefusedClientFile(path, NOT_THIS_CALL.format(expected=_flow(tmp_path))),)
    assert _files_under(tmp_path) == []


def test_the_shape_of_a_directive_path() -> None:
    assert not text_directive_path_allowed("/p/..\\q/.argent/flows/x.yaml")
    assert not text_directive_path_allowed("relative/.argent/flows/x.yaml")
    assert text_directive_path_allowed("/p/q/.argent/flows/x.yaml")
    assert not text_directive_path_allowed("/p/q/elsewhere/x.yaml")  # a flow name, but not in .argent/flows
    assert not text_directive_path_allowed("/p/q/.argent/flows/x.sh")  # in .argent/flows, but no flow file


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"name": "x"},
        {"project_root": "/p"},
        {"project_root": "relative", "name": "x"},
        {"project_root": "/p/../q", "name": "x"},
        {"project_root": "/p", "name": "../x"},
        {"project_root": "/p", "name": "x\n"},
        {"project_root": "/p\0", "name": "x"},
        {"project_root": 5, "name": "x"},
    ],
)
def test_a_call_without_a_recording_file_writes_nothing(args: dict[str, Any]) -> None:
    call = ClientFileCall("flow-add-step", args)
    applied = apply_client_file_directives({"savedTo": _directive("/p/.argent/flows/x.yaml")}, call)
    assert applied.result == {"savedTo": None}
    assert [r.reason for r in applied.refused] == [NO_RECORDING_FILE.format(tool="flow-add-step")]


def test_a_directive_without_text_content_is_refused(tmp_path: Path) -> None:
    path = _flow(tmp_path)
    applied = apply_client_file_directives({"savedTo": _directive(path, 5)}, _call(tmp_path))
    assert applied.result == {"savedTo": None}
    assert [r.reason for r in applied.refused] == [NOT_TEXT]
    assert not path.exists()


def test_text_that_is_not_unicode_is_refused(tmp_path: Path) -> None:
    path = _flow(tmp_path)
    applied = apply_client_file_directives({"savedTo": _directive(path, "\ud800")}, _call(tmp_path))
    assert [r.reason for r in applied.refused] == [NOT_TEXT]
    assert not path.exists()


def test_a_directory_in_place_of_the_file_is_refused(tmp_path: Path) -> None:
    target = _flow(tmp_path)
    target.mkdir(parents=True)  # a directory where the file should go
    applied = apply_client_file_directives({"savedTo": _directive(target)}, _call(tmp_path))
    assert applied.result == {"savedTo": None}
    assert [r.reason for r in applied.refused] == [NOT_REGULAR.format(path=target)]
    assert applied.written == ()
    assert sorted(os.listdir(target.parent)) == ["x.yaml"]  # no temp file left behind


@pytest.mark.parametrize("linked", [".argent", ".argent/flows"])
def test_a_symlinked_directory_is_never_written_through(tmp_path: Path, linked: str) -> None:
    project = tmp_path / "proj"
    outside = tmp_path / "outside"
    (outside / "flows").mkdir(parents=True)
    link = project / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside if linked == ".argent" else outside / "flows", target_is_directory=True)
    target = _flow(project)
    applied = apply_client_file_directives({"savedTo": _directive(target)}, _call(project))
    assert applied.result == {"savedTo": None}
    assert [r.reason for r in applied.refused] == [LINKED_DIRECTORY.format(directory=link)]
    assert _files_under(outside) == []


def test_a_symlinked_flow_file_is_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    target = _flow(tmp_path / "proj")
    target.parent.mkdir(parents=True)
    target.symlink_to(victim)
    applied = apply_client_file_directives({"savedTo": _directive(target)}, _call(tmp_path / "proj"))
    assert [r.reason for r in applied.refused] == [LINKED_FILE.format(path=target)]
    assert victim.read_text() == "mine\n" and target.is_symlink()


def test_a_project_root_reached_through_a_link_of_the_callers_is_written_in_its_real_place(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    target = _flow(alias)
    applied = apply_client_file_directives({"savedTo": _directive(target, "a\n")}, _call(alias))
    assert applied.result == {"savedTo": str(target)}
    assert (real / ".argent" / "flows" / "x.yaml").read_text() == "a\n"


def test_redundant_slashes_still_name_the_calls_file(tmp_path: Path) -> None:
    spelled = f"{tmp_path}//.argent/flows/x.yaml"
    applied = apply_client_file_directives({"savedTo": _directive(spelled)}, _call(tmp_path))
    assert applied.written == (spelled,)
    assert _flow(tmp_path).read_text() == "steps: []\n"


def test_an_existing_file_is_replaced_and_keeps_its_mode(tmp_path: Path) -> None:
    target = _flow(tmp_path)
    target.parent.mkdir(parents=True)
    target.write_text("old\n")
    os.chmod(target, 0o640)
    inode = target.stat().st_ino
    apply_client_file_directives({"savedTo": _directive(target, "new\n")}, _call(tmp_path))
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # renamed into place, not rewritten in place
    assert sorted(os.listdir(target.parent)) == ["x.yaml"]


def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    target = _flow(tmp_path)
    mask = os.umask(0o022)
    os.umask(mask)
    apply_client_file_directives({"savedTo": _directive(target)}, _call(tmp_path))
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_base64_directives_are_left_untouched(tmp_path: Path) -> None:
    png = str(tmp_path / "__baselines__" / "k" / "shot__chromium-1000x800.png")
    directive = {"__argentClientFile": True, "path": png, "content": "iVBORw0KGgo=", "encoding": "base64"}
    applied = apply_client_file_directives({"baselineWrites": [directive]}, _call(tmp_path))
    assert applied.result == {"baselineWrites": [directive]}
    assert applied.written == () and applied.refused == ()
    assert _files_under(tmp_path) == []


def test_objects_that_are_not_directives_pass_through(tmp_path: Path) -> None:
    result = (
        {"__argentClientFile": False, "path": "/x"},
        {"__argentClientFile": True, "path": 3},
        "text",
        4,
        None,
    )
    applied = apply_client_file_directives(list(result), _call(tmp_path))
    assert applied.result == list(result) and applied.refused == ()
