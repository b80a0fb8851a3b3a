"""Seed "Client policy": the roots of a call and each refusal, on real files and real symlinks."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from argent.client.client_policy import (
    ClientPolicy,
    canonical_path,
    read_client_file,
)
from argent.limits import MAX_FILE_BYTES
from argent.utils.oserrors import os_error_text
from tests.flow_files import flows, new_project


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return new_project(tmp_path)


def test_roots_are_project_root_its_flows_dir_the_flow_dirs_and_the_project_of_the_flow(
    proj: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    (vault / ".argent" / "flows").mkdir(parents=True)
    real = vault / ".argent" / "flows" / "real.yaml"
    real.write_text("steps: []\n")
    link = flows(proj) / "main.yaml"
    link.symlink_to(real)
    policy = ClientPolicy.for_call(str(proj), str(link))
    assert policy.roots == (
        str(proj),
        str(flows(proj)),
        str(vault / ".argent" / "flows"),
        str(vault),
    )


def test_roots_are_compared_by_their_real_location(proj: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere-flows"
    elsewhere.mkdir()
    os.rmdir(flows(proj))
    flows(proj).symlink_to(elsewhere)
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    assert str(elsewhere) in policy.roots
    assert policy.allows(str(elsewhere / "frag.yaml"))


def test_outside_every_root_is_refused_with_the_directories(proj: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("steps: []\n")
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, str(secret), target="../../../secret.yaml", kind="yaml")
    assert found.state == "refused"
    assert found.error == (
        f"../../../secret.yaml is outside every root this client serves ({proj}, {flows(proj)})"
    )


def test_the_directory_check_comes_first_a_missing_file_outside_is_refused(
    proj: Path, tmp_path: Path
) -> None:
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, str(tmp_path / "nope.yaml"), target="x", kind="yaml")
    assert found.state == "refused"
    inside = read_client_file(policy, str(flows(proj) / "nope.yaml"), target="nope.yaml", kind="yaml")
    assert inside.state == "missing" and inside.error is None


def test_a_symlink_out_of_the_roots_is_refused_by_its_real_path(proj: Path, tmp_path: Path) -> None:
    outside = tmp_path / "out.yaml"
    outside.write_text("steps: []\n")
    (flows(proj) / "frag.yaml").symlink_to(outside)
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(
        policy, canonical_path(str(flows(proj) / "frag.yaml")), target="frag.yaml", kind="yaml"
    )
    assert found.state == "refused" and found.error is not None
    assert found.error.startswith("frag.yaml is outside every root this client serves (")


def test_a_yaml_name_linking_to_a_file_that_is_not_yaml_is_refused(proj: Path) -> None:
    (proj / "notes.txt").write_text("hello")
    (flows(proj) / "frag.yaml").symlink_to(proj / "notes.txt")
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(
        policy, canonical_path(str(flows(proj) / "frag.yaml")), target="frag.yaml", kind="yaml"
    )
    assert (found.state, found.error) == ("refused", "frag.yaml links to a file that is not a YAML file")


def test_png_and_tool_kinds_name_their_own_types(proj: Path) -> None:
    (proj / "notes.txt").write_text("hello")
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    png = read_client_file(policy, str(proj / "notes.txt"), target="/p/a.png", kind="png")
    tool = read_client_file(policy, str(proj / "notes.txt"), target="/p/a.png", kind="tool")
    assert png.error == "/p/a.png links to a file that is not a PNG file"
    assert tool.error == "/p/a.png links to a file that is not one of .png, .yaml"


def test_a_directory_is_refused_with_eisdir(proj: Path) -> None:
    (flows(proj) / "dir.yaml").mkdir()
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, str(flows(proj) / "dir.yaml"), target="dir.yaml", kind="yaml")
    assert (found.state, found.error) == ("refused", "EISDIR: illegal operation on a directory, read")


def test_a_file_over_32_mib_is_refused(proj: Path) -> None:
    big = flows(proj) / "big.yaml"
    with open(big, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, str(big), target="big.yaml", kind="yaml")
    assert (found.state, found.error) == (
        "refused",
        f"{big} is larger than the 32 MiB cap on a file sent to the tool-server",
    )


def test_a_file_of_exactly_32_mib_is_sent(proj: Path) -> None:
    edge = flows(proj) / "edge.yaml"
    with open(edge, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES)
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, str(edge), target="edge.yaml", kind="yaml")
    assert found.state is None and found.size == MAX_FILE_BYTES and found.data is not None


def test_a_symlink_loop_is_refused_with_eloop(proj: Path) -> None:
    (flows(proj) / "a.yaml").symlink_to(flows(proj) / "b.yaml")
    (flows(proj) / "b.yaml").symlink_to(flows(proj) / "a.yaml")
    canonical = canonical_path(str(flows(proj) / "a.yaml"))
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, canonical, target="a.yaml", kind="yaml")
    assert found.state == "refused"
    assert found.error == f"ELOOP: too many symbolic links encountered, open '{canonical}'"


def test_a_fifo_is_refused_without_blocking(proj: Path) -> None:
    fifo = flows(proj) / "pipe.yaml"
    os.mkfifo(fifo)
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, str(fifo), target="pipe.yaml", kind="yaml")
    assert (found.state, found.error) == ("refused", f"{fifo} is not a regular file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file; the FIFO test covers unreadable")
def test_an_unreadable_file_is_refused_with_eacces(proj: Path) -> None:
    locked = flows(proj) / "locked.yaml"
    locked.write_text("steps: []\n")
    locked.chmod(0)
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, str(locked), target="locked.yaml", kind="yaml")
    assert found.error == f"EACCES: permission denied, open '{locked}'"


def test_a_link_to_nothing_is_missing_and_marked_dangling(proj: Path) -> None:
    (flows(proj) / "gone.yaml").symlink_to(flows(proj) / "nowhere.yaml")
    canonical = canonical_path(str(flows(proj) / "gone.yaml"))
    policy = ClientPolicy.for_call(str(proj), str(flows(proj) / "main.yaml"))
    found = read_client_file(policy, canonical, target="gone.yaml", kind="yaml")
    assert found.state == "missing" and found.dangling


def test_canonical_of_a_missing_file_is_the_nearest_real_directory_plus_the_rest(
    proj: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real-flows"
    real.mkdir()
    (flows(proj) / "lib").symlink_to(real)
    assert canonical_path(str(flows(proj) / "lib" / "sub" / "x.yaml")) == str(real / "sub" / "x.yaml")


def test_os_error_text_reads_like_the_operating_system() -> None:
    assert os_error_text(OSError(errno.EACCES, "Permission denied"), "/x") == (
        "EACCES: permission denied, open '/x'"
    )
    assert os_error_text(OSError(errno.EXDEV, "Invalid cross-device link"), "/x", "read") == (
        "EXDEV: invalid cross-device link, read '/x'"
    )
