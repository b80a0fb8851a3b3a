"""The archive readers check a named SHA-256 in the read that checks the archive (argent.link.archive).

A file whose digest differs is refused in place of any other result, before anything is written,
and the digest covers every byte of the file: also the ones the gzip reader skips or never reaches.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from argent.link.archive import (
    ArchiveError,
    DigestMismatchError,
    FileTooLargeError,
    NotOneFileError,
    build_tar_gz_bytes,
    read_single_file_tar_gz,
    safe_extract_tar_gz,
)
from tests.archives import tgz

LIMITS = {"max_total_bytes": 1 << 20, "max_members": 100}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def saved(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "upload.tar.gz"
    path.write_bytes(data)
    return str(path)


def test_a_mismatch_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    data = tgz(("app/a", b"a"), ("app/b", b"b"))
    # Not a directory: any attempt to write would fail with a write error, not a mismatch.
    dest = tmp_path / "not-a-directory"
    dest.write_bytes(b"")
    with pytest.raises(DigestMismatchError):
        safe_extract_tar_gz(saved(tmp_path, data), str(dest), "app", sha256=sha(b"other"), **LIMITS)


def test_the_named_digest_in_any_case_extracts(tmp_path: Path) -> None:
    data = tgz(("app/a", b"a"))
    dest = tmp_path / "out"
    dest.mkdir()
    path = safe_extract_tar_gz(saved(tmp_path, data), str(dest), "app", sha256=sha(data).upper(), **LIMITS)
    assert (Path(path) / "a").read_bytes() == b"a"


def test_a_mismatch_wins_over_a_broken_rule_and_the_rule_holds_without_one(tmp_path: Path) -> None:
    data = tgz(("../evil", b"x"))
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(DigestMismatchError):
        safe_extract_tar_gz(saved(tmp_path, data), str(dest), "x", sha256="00" * 32, **LIMITS)
    with pytest.raises(ArchiveError) as caught:
        safe_extract_tar_gz(saved(tmp_path, data), str(dest), "x", sha256=sha(data), **LIMITS)
    assert caught.value.message == 'Archive contains an unsafe path "../evil" — refusing extraction.'
    assert list(dest.iterdir()) == []


def test_bytes_the_gzip_reader_skips_count(tmp_path: Path) -> None:
    data = build_tar_gz_bytes("a.yaml", b"steps: []\n")
    padded = saved(tmp_path, data + bytes(100_000))  # gzip reads past NUL padding as nothing
    with pytest.raises(DigestMismatchError):
        read_single_file_tar_gz(padded, max_file_bytes=1024, max_overhead_bytes=1 << 20, sha256=sha(data))
    assert (
        read_single_file_tar_gz(
            padded, max_file_bytes=1024, max_overhead_bytes=1 << 20, sha256=sha(data + bytes(100_000))
        )
        == b"steps: []\n"
    )


@pytest.mark.parametrize(
    ("data", "own_error"),
    [
        (tgz(("a.yaml", bytes(4096))), FileTooLargeError),  # refused at its header, the rest unread
        (tgz(("a.yaml", b"a"), ("b.yaml", b"b")), NotOneFileError),
    ],
    ids=["too-large", "two-entries"],
)
def test_a_member_read_stopped_early_still_digests_the_whole_file(
    tmp_path: Path, data: bytes, own_error: type[Exception]
) -> None:
    path = saved(tmp_path, data)
    with pytest.raises(DigestMismatchError):
        read_single_file_tar_gz(path, max_file_bytes=1024, max_overhead_bytes=1 << 20, sha256="ab" * 32)
    with pytest.raises(own_error):
        read_single_file_tar_gz(path, max_file_bytes=1024, max_overhead_bytes=1 << 20, sha256=sha(data))
