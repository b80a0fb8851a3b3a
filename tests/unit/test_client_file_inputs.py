"""prepare_file_inputs: which arguments become wire wrappers, and what each wrapper carries."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from argent.client.calls import interpolate_path, prepare_file_inputs
from argent.limits import MAX_FILE_BYTES

FLOW_PATH = {
    "target": "flow_path",
    "path": "${flow_path}",
    "kind": "file",
    "optional": True,
    "unwrapWhenSet": "name",
}
FLOW_FILE = {
    "target": "flow_file",
    "path": "${project_root}/.argent/flows/${name}.yaml",
    "kind": "file",
    "skipWhenSet": "flow_path",
    "collect": "flow",
}


class FakeUploader:
    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, path: str) -> tuple[str, str]:
        self.paths.append(path)
        return f"upload-{len(self.paths)}", "ab" * 32


async def _never_upload(path: str) -> tuple[str, str]:
    raise AssertionError(f"no upload expected, got {path}")


def _file(tmp_path: Path, name: str = "f.yaml", data: bytes = b"steps: []\n") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _stat_fields(path: Path) -> dict[str, Any]:
    st = os.stat(path)
    return {"size": st.st_size, "mtimeMs": st.st_mtime_ns / 1_000_000}


async def test_no_specs_return_the_same_args_object() -> None:
    args = {"a": 1}
    assert await prepare_file_inputs([], args, linked=True) is args
    assert await prepare_file_inputs(None, args, linked=True) is args


async def test_args_that_are_not_an_object_pass_through() -> None:
    args = ["x"]
    assert await prepare_file_inputs([FLOW_PATH], args, linked=True) is args


async def test_a_local_file_gets_its_stat_and_no_content(tmp_path: Path) -> None:
    path = _file(tmp_path)
    args = {"flow_path": str(path)}
    out = await prepare_file_inputs([FLOW_PATH], args, linked=False)
    assert out["flow_path"] == {"__argentFileInput": True, "path": str(path), **_stat_fields(path)}
    assert isinstance(out["flow_path"]["mtimeMs"], float)
    assert args == {"flow_path": str(path)}  # the caller's dict is untouched
    assert out is not args


async def test_over_a_link_a_file_carries_its_content_as_base64(tmp_path: Path) -> None:
    data = bytes(range(256)) * 3
    path = _file(tmp_path, "bin.yaml", data)
    out = await prepare_file_inputs([FLOW_PATH], {"flow_path": str(path)}, linked=True)
    wire = out["flow_path"]
    assert base64.b64decode(wire["content"]) == data
    assert wire["size"] == len(data)
    assert "contentOmitted" not in wire


async def test_a_file_over_32_mib_is_omitted_with_its_stat_kept(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    out = await prepare_file_inputs([FLOW_PATH], {"flow_path": str(path)}, linked=True)
    wire = out["flow_path"]
    assert wire["contentOmitted"] == "size-limit"
    assert "content" not in wire
    assert wire["size"] == MAX_FILE_BYTES + 1
    assert wire["mtimeMs"] == _stat_fields(path)["mtimeMs"]


async def test_a_file_of_exactly_32_mib_is_sent(tmp_path: Path) -> None:
    path = tmp_path / "edge.yaml"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES)
    wire = (await prepare_file_inputs([FLOW_PATH], {"flow_path": str(path)}, linked=True))["flow_path"]
    assert "contentOmitted" not in wire
    assert len(base64.b64decode(wire["content"])) == MAX_FILE_BYTES


async def test_a_multi_param_template_derives_the_target(tmp_path: Path) -> None:
    path = _file(tmp_path, "proj/.argent/flows/login.yaml")
    args = {"project_root": str(tmp_path / "proj"), "name": "login"}
    out = await prepare_file_inputs([FLOW_PATH, FLOW_FILE], args, linked=False)
    assert out["flow_file"] == {"__argentFileInput": True, "path": str(path), **_stat_fields(path)}
    assert "flow_path" not in out
    assert "flow_file" not in args


@pytest.mark.parametrize(
    "args",
    [
        {"project_root": "/p"},
        {"name": "x"},
        {"project_root": "", "name": "x"},
        {"project_root": "/p", "name": 3},
    ],
)
async def test_absent_or_empty_params_leave_the_args_unchanged(args: dict[str, Any]) -> None:
    out = await prepare_file_inputs([FLOW_FILE], args, linked=True)
    assert out == args


@pytest.mark.parametrize("value", ["", None, "/x/f.yaml"])
async def test_skip_when_set_suppresses_the_derivation(tmp_path: Path, value: Any) -> None:
    _file(tmp_path, ".argent/flows/n.yaml")
    args = {"project_root": str(tmp_path), "name": "n", "flow_path": value}
    out = await prepare_file_inputs([FLOW_FILE], args, linked=True)
    assert "flow_file" not in out


async def test_an_explicit_derived_target_string_is_respected(tmp_path: Path) -> None:
    _file(tmp_path, ".argent/flows/n.yaml")
    args = {"project_root": str(tmp_path), "name": "n", "flow_file": "/server/side/flow.yaml"}
    out = await prepare_file_inputs([FLOW_FILE], args, linked=True)
    assert out["flow_file"] == "/server/side/flow.yaml"


async def test_a_target_equal_to_the_derived_path_is_wrapped(tmp_path: Path) -> None:
    path = _file(tmp_path, ".argent/flows/n.yaml")
    args = {"project_root": str(tmp_path), "name": "n", "flow_file": str(path)}
    out = await prepare_file_inputs([FLOW_FILE], args, linked=False)
    assert out["flow_file"]["__argentFileInput"] is True


async def test_a_non_string_target_is_left_as_the_caller_sent_it(tmp_path: Path) -> None:
    explicit = {"__argentFileInput": True, "path": "/already"}
    out = await prepare_file_inputs([FLOW_PATH], {"flow_path": explicit}, linked=True)
    assert out["flow_path"] is explicit


async def test_a_missing_file_gets_a_path_only_wrapper(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    out = await prepare_file_inputs([FLOW_PATH], {"flow_path": missing}, linked=True)
    assert out["flow_path"] == {"__argentFileInput": True, "path": missing}


async def test_a_directory_given_as_a_file_gets_a_path_only_wrapper(tmp_path: Path) -> None:
    out = await prepare_file_inputs([FLOW_PATH], {"flow_path": str(tmp_path)}, linked=True)
    assert out["flow_path"] == {"__argentFileInput": True, "path": str(tmp_path)}


async def test_an_unreadable_file_gets_a_path_only_wrapper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path)

    def denied(*_: Any, **__: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    # The stat succeeds, the read fails (as for a mode-000 file when not running as root).
    monkeypatch.setattr("argent.client.calls.open", denied, raising=False)
    out = await prepare_file_inputs([FLOW_PATH], {"flow_path": str(path)}, linked=True)
    assert out["flow_path"] == {"__argentFileInput": True, "path": str(path)}


@pytest.mark.parametrize("kind", ["directory", "probe"])
async def test_directory_and_probe_kinds_are_path_only_without_a_stat(tmp_path: Path, kind: str) -> None:
    spec = {"target": "root", "path": "${root}", "kind": kind}
    out = await prepare_file_inputs([spec], {"root": str(tmp_path)}, linked=True, uploader=_never_upload)
    assert out["root"] == {"__argentFileInput": True, "path": str(tmp_path)}


TAR_SPEC = {"target": "appPath", "path": "${appPath}", "kind": "tar-upload"}


@pytest.mark.parametrize("make_dir", [True, False])
async def test_tar_upload_over_a_link_uploads_and_records_the_id_and_hash(
    tmp_path: Path, make_dir: bool
) -> None:
    if make_dir:
        path = tmp_path / "MyApp.app"
        path.mkdir()
        (path / "Info.plist").write_text("x")
    else:
        path = _file(tmp_path, "app.apk", b"APK")
    uploader = FakeUploader()
    out = await prepare_file_inputs([TAR_SPEC], {"appPath": str(path)}, linked=True, uploader=uploader)
    assert uploader.paths == [str(path)]
    assert out["appPath"] == {
        "__argentFileInput": True,
        "path": str(path),
        **_stat_fields(path),
        "uploadId": "upload-1",
        "contentHash": "ab" * 32,
    }


async def test_tar_upload_co_located_is_stat_only(tmp_path: Path) -> None:
    path = _file(tmp_path, "app.apk", b"APK")
    out = await prepare_file_inputs([TAR_SPEC], {"appPath": str(path)}, linked=False, uploader=_never_upload)
    assert out["appPath"] == {"__argentFileInput": True, "path": str(path), **_stat_fields(path)}


async def test_tar_upload_of_a_path_that_is_not_local_sends_the_path_alone(tmp_path: Path) -> None:
    missing = str(tmp_path / "Gone.app")
    out = await prepare_file_inputs([TAR_SPEC], {"appPath": missing}, linked=True, uploader=_never_upload)
    assert out["appPath"] == {"__argentFileInput": True, "path": missing}


async def test_an_upload_failure_propagates(tmp_path: Path) -> None:
    path = _file(tmp_path, "app.apk")

    async def failing(_: str) -> tuple[str, str]:
        raise RuntimeError("Upload to http://x/upload failed: 500 Internal Server Error")

    with pytest.raises(RuntimeError, match="failed"):
        await prepare_file_inputs([TAR_SPEC], {"appPath": str(path)}, linked=True, uploader=failing)


async def test_specs_apply_in_declaration_order_and_skip_malformed_ones(tmp_path: Path) -> None:
    path = _file(tmp_path, "a.yaml")
    specs = [{"target": 5, "path": "${x}", "kind": "file"}, {"target": "x", "path": "${x}", "kind": "probe"}]
    out = await prepare_file_inputs(specs, {"x": str(path)}, linked=True)
    assert out["x"] == {"__argentFileInput": True, "path": str(path)}


def test_interpolate_path() -> None:
    assert interpolate_path("${a}/b/${c}.yaml", {"a": "/r", "c": "n"}) == "/r/b/n.yaml"
    assert interpolate_path("${a}/${c}", {"a": "/r"}) is None
    assert interpolate_path("${a}", {"a": ""}) is None
    assert interpolate_path("${a}", {"a": 1}) is None
    assert interpolate_path("plain", {}) == "plain"
