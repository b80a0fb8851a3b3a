"""Building and safely extracting the gzipped tars of the link (argent.link.archive)."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import socket
import stat
import struct
import tarfile
import time
import zlib
from pathlib import Path

import pytest

import argent.link.archive as archive_module
from argent.limits import MAX_TAR_EXTENDED_HEADERS
from argent.link.archive import (
    ArchiveError,
    FileTooLargeError,
    NotOneFileError,
    build_tar_gz,
    build_tar_gz_bytes,
    read_single_file_tar_gz,
    safe_extract_tar_gz,
)

MIB = 1024 * 1024
GIB = 1024 * MIB


# ---------------------------------------------------------------------------------------------
# Helpers: hostile archives are written entry by entry with tarfile.


def entry(
    name: str,
    data: bytes = b"",
    *,
    type: bytes = tarfile.REGTYPE,
    linkname: str = "",
    mode: int = 0o644,
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = type
    info.mode = mode
    info.mtime = 1_700_000_000
    info.linkname = linkname
    info.size = len(data) if type in (tarfile.REGTYPE, tarfile.AREGTYPE) else 0
    return info, data


def tar_bytes(*entries: tuple[tarfile.TarInfo, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if info.size else None)
    return raw.getvalue()


def write_tgz(path: Path, *entries: tuple[tarfile.TarInfo, bytes]) -> str:
    path.write_bytes(gzip.compress(tar_bytes(*entries)))
    return str(path)


def write_gzip_with_zeros(path: Path, prefix: bytes, zero_mib: int, suffix: bytes = b"") -> str:
    """A valid single-member gzip of ``prefix + NUL * zero_mib MiB + suffix``, written in a blink.

    After a full flush a deflate stream no longer refers back, so the compressed form of one MiB
    of zeros is computed once and repeated.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(MIB)
    crc = zlib.crc32(prefix)
    with path.open("wb") as out:
        out.write(b"\x1f\x8b\x08\x00" + struct.pack("<I", 0) + b"\x00\x03")
        out.write(compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH))
        block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
        for _ in range(zero_mib):
            out.write(block)
            crc = zlib.crc32(zeros, crc)
        out.write(compressor.compress(suffix) + compressor.flush(zlib.Z_FINISH))
        crc = zlib.crc32(suffix, crc)
        size = len(prefix) + zero_mib * MIB + len(suffix)
        out.write(struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF))
    return str(path)


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    path = tmp_path / "dest"
    path.mkdir()
    return path


def extract(tar: str, dest: Path, expected: str = "X", **limits: int) -> str:
    return safe_extract_tar_gz(
        tar,
        str(dest),
        expected,
        max_total_bytes=limits.get("max_total_bytes", 64 * MIB),
        max_members=limits.get("max_members", 1000),
    )


def refused(tar: str, dest: Path, expected: str = "X", **limits: int) -> str:
    with pytest.raises(ArchiveError) as caught:
        extract(tar, dest, expected, **limits)
    assert os.listdir(dest) == [], "a refused archive leaves nothing in the destination"
    return caught.value.message


# ---------------------------------------------------------------------------------------------
# Building


def test_build_directory_has_one_top_member_and_returns_the_archive_sha256(
    tmp_path: Path, dest: Path
) -> None:
    app = tmp_path / "MyApp.app"
    (app / "Contents" / "MacOS").mkdir(parents=True)
    (app / "Contents" / "Info.plist").write_text("<plist/>")
    binary = app / "Contents" / "MacOS" / "MyApp"
    binary.write_bytes(b"\x7fELF" + os.urandom(5000))
    binary.chmod(0o755)
    (app / "Contents" / "Current").symlink_to("MacOS/MyApp")
    (app / "empty").mkdir()

    archive = tmp_path / "app.tar.gz"
    digest = build_tar_gz(str(app), str(archive))

    assert digest == hashlib.sha256(archive.read_bytes()).hexdigest()
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert {name.split("/")[0] for name in names} == {"MyApp.app"}
        link = tar.getmember("MyApp.app/Contents/Current")
        assert link.issym() and link.linkname == "MacOS/MyApp"
        assert all(not member.islnk() for member in tar.getmembers())

    out = Path(extract(str(archive), dest, "MyApp.app"))
    assert out == dest / "MyApp.app"
    assert (out / "Contents" / "Info.plist").read_text() == "<plist/>"
    assert (out / "Contents" / "MacOS" / "MyApp").read_bytes() == binary.read_bytes()
    assert os.stat(out / "Contents" / "MacOS" / "MyApp").st_mode & 0o111
    assert os.readlink(out / "Contents" / "Current") == "MacOS/MyApp"
    assert (out / "empty").is_dir()


def test_build_single_file_keeps_the_bytes(tmp_path: Path, dest: Path) -> None:
    apk = tmp_path / "app.apk"
    apk.write_bytes(os.urandom(70_000))
    archive = tmp_path / "a.tgz"
    build_tar_gz(str(apk), str(archive))
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["app.apk"]
    assert Path(extract(str(archive), dest, "app.apk")).read_bytes() == apk.read_bytes()


def test_build_follows_a_symlink_given_as_source_and_names_the_member_after_it(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text("steps: []\n")
    (tmp_path / "alias.yaml").symlink_to(real)
    archive = tmp_path / "a.tgz"
    build_tar_gz(str(tmp_path / "alias.yaml"), str(archive))
    with tarfile.open(archive) as tar:
        member = tar.getmember("alias.yaml")
        assert member.isreg()
        handle = tar.extractfile(member)
        assert handle is not None and handle.read() == b"steps: []\n"


def test_build_does_not_store_setuid_bits_or_hardlinks(tmp_path: Path) -> None:
    tree = tmp_path / "T"
    tree.mkdir()
    (tree / "a").write_text("same inode")
    os.link(tree / "a", tree / "b")
    (tree / "a").chmod(0o4755)
    archive = tmp_path / "t.tgz"
    build_tar_gz(str(tree), str(archive))
    with tarfile.open(archive) as tar:
        for name in ("T/a", "T/b"):
            member = tar.getmember(name)
            assert member.isreg() and member.size == len("same inode")
            assert member.mode & 0o7000 == 0


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside", "sub/../../x", "sub/../f"])
def test_build_refuses_a_symlink_it_cannot_send_and_removes_the_partial_archive(
    tmp_path: Path, target: str
) -> None:
    tree = tmp_path / "T"
    (tree / "sub").mkdir(parents=True)
    (tree / "f").write_text("x")
    (tree / "sub" / "link").symlink_to(target)
    archive = tmp_path / "t.tgz"
    with pytest.raises(ArchiveError, match="a symlink is sent only when its target is relative"):
        build_tar_gz(str(tree), str(archive))
    assert not archive.exists()


def test_build_refuses_a_fifo_and_removes_the_partial_archive(tmp_path: Path) -> None:
    tree = tmp_path / "T"
    tree.mkdir()
    (tree / "a").write_bytes(os.urandom(100_000))
    os.mkfifo(tree / "pipe")
    archive = tmp_path / "t.tgz"
    with pytest.raises(ArchiveError, match="not a regular file, a directory or a symlink"):
        build_tar_gz(str(tree), str(archive))
    assert not archive.exists()


def test_build_refuses_a_socket_that_tarfile_would_skip(tmp_path: Path) -> None:
    tree = tmp_path / "T"
    tree.mkdir()
    (tree / "a").write_text("x")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tree / "sock"))
        archive = tmp_path / "t.tgz"
        with pytest.raises(ArchiveError, match=f'Cannot archive "{tree}/sock": it is not a regular file'):
            build_tar_gz(str(tree), str(archive))
    assert not archive.exists()


def test_build_stores_no_owner_and_whole_second_times(tmp_path: Path) -> None:
    tree = tmp_path / "T"
    (tree / "d").mkdir(parents=True)
    (tree / "d" / "f").write_text("x")
    os.utime(tree / "d" / "f", (1_700_000_000.75, 1_700_000_000.75))
    archive = tmp_path / "t.tgz"
    build_tar_gz(str(tree), str(archive))
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == ["T", "T/d", "T/d/f"]
        assert all((m.uid, m.gid, m.uname, m.gname) == (0, 0, "", "") for m in members)
        assert tar.getmember("T/d/f").mtime == 1_700_000_000
        assert all(not m.pax_headers for m in members)


def test_build_leaves_out_the_archive_when_it_is_written_inside_the_tree(tmp_path: Path, dest: Path) -> None:
    tree = tmp_path / "T"
    tree.mkdir()
    (tree / "a").write_text("x")
    archive = tree / "self.tgz"
    build_tar_gz(str(tree), str(archive))
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["T", "T/a"]


def test_build_follows_a_directory_symlink_given_as_source(tmp_path: Path, dest: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a").write_text("x")
    (tmp_path / "alias").symlink_to(real)
    archive = tmp_path / "t.tgz"
    build_tar_gz(str(tmp_path / "alias"), str(archive))
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["alias", "alias/a"]


def test_build_refuses_a_file_swapped_for_a_symlink_after_it_was_examined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a tree walk has: the entry examined as a file is a symlink to a secret when it is read."""
    tree = tmp_path / "T"
    tree.mkdir()
    (tree / "a").write_text("public")
    secret = tmp_path / "secret"
    secret.write_text("secret")
    examine = archive_module._SourceTar.gettarinfo

    def swapping(self: tarfile.TarFile, name: str, arcname: str, fileobj: None = None) -> tarfile.TarInfo:
        info = examine(self, name, arcname)  # type: ignore[arg-type]
        if arcname == "T/a":
            os.unlink(name)
            os.symlink(secret, name)
        return info

    monkeypatch.setattr(archive_module._SourceTar, "gettarinfo", swapping)
    archive = tmp_path / "t.tgz"
    with pytest.raises(
        ArchiveError, match=f'Cannot archive "{tree}/a": it changed while it was being archived'
    ):
        build_tar_gz(str(tree), str(archive))
    assert not archive.exists()


def test_build_bytes_makes_one_member_that_extracts(tmp_path: Path, dest: Path) -> None:
    data = b"steps:\n  - tap: ok\n"
    archive = tmp_path / "m.tgz"
    archive.write_bytes(build_tar_gz_bytes("flow.yaml", data))
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["flow.yaml"]
    assert Path(extract(str(archive), dest, "flow.yaml")).read_bytes() == data


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "..\\x", "/abs"])
def test_build_bytes_refuses_a_name_that_is_not_one_file_name(name: str) -> None:
    with pytest.raises(ArchiveError, match="a member name is one file name"):
        build_tar_gz_bytes(name, b"x")


# ---------------------------------------------------------------------------------------------
# Names


@pytest.mark.parametrize(
    "name",
    ["../evil", "X/../../evil", "/etc/evil", "C:\\evil", "C:/evil", "..\\evil", "X\\..\\..\\evil", ".", "./"],
)
def test_unsafe_member_names_are_refused_before_anything_is_written(
    tmp_path: Path, dest: Path, name: str
) -> None:
    tar = write_tgz(tmp_path / "t.tgz", entry("X/ok", b"fine"), entry(name, b"evil"))
    message = refused(tar, dest)
    assert message == f'Archive contains an unsafe path "{name}" — refusing extraction.'
    assert not (tmp_path / "evil").exists()


def test_a_leading_dot_slash_is_stripped(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(tmp_path / "t.tgz", entry("./X", b"", type=tarfile.DIRTYPE), entry("./X/a", b"A"))
    out = extract(tar, dest)
    assert Path(out, "a").read_bytes() == b"A"


def test_a_member_beneath_a_symlink_member_is_refused(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(
        tmp_path / "t.tgz",
        entry("X/sub", type=tarfile.DIRTYPE),
        entry("X/l", type=tarfile.SYMTYPE, linkname="sub"),
        entry("X/l/evil", b"through the link"),
    )
    assert refused(tar, dest) == 'Archive contains an unsafe path "X/l/evil" — refusing extraction.'


def test_a_repeated_file_member_is_refused(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(tmp_path / "t.tgz", entry("X/a", b"one"), entry("X/a", b"two"))
    assert refused(tar, dest) == 'Archive contains an unsafe path "X/a" — refusing extraction.'


def test_a_repeated_directory_member_is_fine(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(
        tmp_path / "t.tgz",
        entry("X", type=tarfile.DIRTYPE),
        entry("X/a", b"A"),
        entry("X", type=tarfile.DIRTYPE),
    )
    assert Path(extract(tar, dest), "a").read_bytes() == b"A"


# ---------------------------------------------------------------------------------------------
# Types and symlinks


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside", "sub/../../x", "C:\\Windows", ""])
def test_symlinks_that_could_leave_the_destination_are_refused(
    tmp_path: Path, dest: Path, target: str
) -> None:
    tar = write_tgz(
        tmp_path / "t.tgz",
        entry("X", type=tarfile.DIRTYPE),
        entry("X/l", type=tarfile.SYMTYPE, linkname=target, mode=0o777),
    )
    message = refused(tar, dest)
    assert message == (
        "Archive contains a symlink whose target could not be confirmed safe: "
        f'"lrwxrwxrwx 0/0 0 2023-11-14 22:13 X/l -> {target}".'
    )


def test_a_symlink_inside_the_destination_is_extracted_as_a_symlink(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(
        tmp_path / "t.tgz",
        entry("X/sub/f", b"F"),
        entry("X/l", type=tarfile.SYMTYPE, linkname="sub/f"),
        entry("X/d", type=tarfile.SYMTYPE, linkname="sub"),
    )
    out = Path(extract(tar, dest))
    assert os.readlink(out / "l") == "sub/f"
    assert (out / "l").read_bytes() == b"F"
    assert (out / "d").is_symlink()


@pytest.mark.parametrize(
    ("member_type", "letter"),
    [
        (tarfile.LNKTYPE, "h"),
        (tarfile.CHRTYPE, "c"),
        (tarfile.BLKTYPE, "b"),
        (tarfile.FIFOTYPE, "p"),
    ],
)
def test_hardlinks_devices_and_fifos_are_refused(
    tmp_path: Path, dest: Path, member_type: bytes, letter: str
) -> None:
    odd = entry("X/odd", type=member_type, linkname="X/a" if member_type == tarfile.LNKTYPE else "")
    if member_type in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        odd[0].devmajor, odd[0].devminor = 1, 3
    tar = write_tgz(tmp_path / "t.tgz", entry("X/a", b"A"), odd)
    assert refused(tar, dest) == (
        f'Archive contains an unsupported member type "{letter}" (hardlink/device/…) — refusing extraction.'
    )


def test_setuid_setgid_sticky_and_world_write_bits_are_dropped(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(
        tmp_path / "t.tgz",
        entry("X", type=tarfile.DIRTYPE, mode=0o1777),
        entry("X/run", b"#!/bin/sh\n", mode=0o6777),
        entry("X/ro", b"r", mode=0o400),
    )
    out = Path(extract(tar, dest))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(out / "run").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(out / "ro").st_mode) == 0o600
    assert os.stat(out / "run").st_mtime == 1_700_000_000


def test_a_preexisting_symlink_in_the_destination_is_never_followed(tmp_path: Path, dest: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("untouched")
    (dest / "X").symlink_to(outside)
    (dest / "Y").symlink_to(outside / "victim")

    into_dir = write_tgz(tmp_path / "a.tgz", entry("X/evil", b"evil"))
    with pytest.raises(ArchiveError, match="exists and is not a directory"):
        extract(into_dir, dest)
    over_file = write_tgz(tmp_path / "b.tgz", entry("Y", b"evil"))
    with pytest.raises(ArchiveError, match='Could not extract "Y"'):
        extract(over_file, dest, "Y")

    assert sorted(os.listdir(outside)) == ["victim"]
    assert (outside / "victim").read_text() == "untouched"
    assert sorted(os.listdir(dest)) == ["X", "Y"], "only what the call wrote is removed"


# ---------------------------------------------------------------------------------------------
# Damaged archives and bombs


def test_a_gzip_bomb_declaring_a_huge_member_is_refused_fast(tmp_path: Path, dest: Path) -> None:
    header = entry("X")[0]
    header.size = GIB
    bomb = write_gzip_with_zeros(tmp_path / "bomb.tgz", header.tobuf(tarfile.GNU_FORMAT), 1024, bytes(1024))
    assert os.path.getsize(bomb) < 2 * MIB
    started = time.monotonic()
    message = refused(bomb, dest, max_total_bytes=8 * MIB)
    assert message == f"Archive expands beyond the {8 * MIB}-byte limit — refusing extraction."
    assert time.monotonic() - started < 5


def test_a_gzip_bomb_hidden_in_padding_is_refused_by_counting_while_streaming(
    tmp_path: Path, dest: Path
) -> None:
    small = tar_bytes(entry("X", b"tiny"))
    bomb = write_gzip_with_zeros(tmp_path / "bomb.tgz", small, 1024)
    started = time.monotonic()
    message = refused(bomb, dest, max_total_bytes=8 * MIB)
    assert message == f"Archive expands beyond the {8 * MIB}-byte limit — refusing extraction."
    assert time.monotonic() - started < 5


def test_zero_padding_within_the_limit_is_fine(tmp_path: Path, dest: Path) -> None:
    padded = write_gzip_with_zeros(tmp_path / "p.tgz", tar_bytes(entry("X", b"tiny")), 2)
    assert len(gzip.decompress(Path(padded).read_bytes())) > 2 * MIB
    assert Path(extract(padded, dest, max_total_bytes=8 * MIB)).read_bytes() == b"tiny"


def test_too_many_members_are_refused(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(tmp_path / "t.tgz", *(entry(f"X/{i}", b"x") for i in range(11)))
    assert refused(tar, dest, max_members=10) == "Archive has more than 10 members — refusing extraction."


def test_a_truncated_gzip_cannot_be_read(tmp_path: Path, dest: Path) -> None:
    whole = gzip.compress(tar_bytes(entry("X", os.urandom(100_000))))
    for cut in (len(whole) // 2, len(whole) - 4):
        path = tmp_path / f"cut{cut}.tgz"
        path.write_bytes(whole[:cut])
        message = refused(str(path), dest)
        assert message.startswith("Could not read archive: "), message


def test_corrupt_compressed_data_cannot_be_read(tmp_path: Path, dest: Path) -> None:
    data = bytearray(gzip.compress(tar_bytes(entry("X", b"hello" * 10_000))))
    for i in range(20, 40):
        data[i] ^= 0xFF
    path = tmp_path / "bad.tgz"
    path.write_bytes(bytes(data))
    assert refused(str(path), dest).startswith("Could not read archive: ")


def test_bytes_that_are_not_gzip_cannot_be_read(tmp_path: Path, dest: Path) -> None:
    path = tmp_path / "plain.tgz"
    path.write_bytes(b"this is not a gzipped tar at all")
    assert refused(str(path), dest).startswith("Could not read archive: Not a gzipped file")


def test_an_uncompressed_tar_cannot_be_read(tmp_path: Path, dest: Path) -> None:
    path = tmp_path / "plain.tar"
    path.write_bytes(tar_bytes(entry("X", b"x")))
    assert refused(str(path), dest).startswith("Could not read archive: ")


def test_garbage_after_the_last_member_cannot_be_read(tmp_path: Path, dest: Path) -> None:
    first = tar_bytes(entry("X", b"x"))
    body = first[:1024] + b"garbage, not a tar header".ljust(512, b"!") + bytes(1024)
    path = tmp_path / "g.tgz"
    path.write_bytes(gzip.compress(body))
    assert refused(str(path), dest) == (
        "Could not read archive: invalid or truncated tar header at offset 1024"
    )


def test_a_tar_cut_inside_a_member_cannot_be_read(tmp_path: Path, dest: Path) -> None:
    body = tar_bytes(entry("X/a", b"a"), entry("X/b", os.urandom(10_000)))
    path = tmp_path / "short.tgz"
    path.write_bytes(gzip.compress(body[:3000]))
    assert refused(str(path), dest).startswith("Could not read archive: ")


@pytest.mark.parametrize("payload", [b"", bytes(10240)], ids=["no-bytes", "end-blocks-only"])
def test_an_archive_without_members_is_empty(tmp_path: Path, dest: Path, payload: bytes) -> None:
    path = tmp_path / "e.tgz"
    path.write_bytes(gzip.compress(payload))
    assert refused(str(path), dest) == "Archive is empty."


def test_an_empty_tar_written_by_tarfile_is_empty(tmp_path: Path, dest: Path) -> None:
    assert refused(write_tgz(tmp_path / "e.tgz"), dest) == "Archive is empty."


# ---------------------------------------------------------------------------------------------
# Choosing the result


def test_the_expected_name_wins(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(tmp_path / "t.tgz", entry("A", b"a"), entry("MyApp.app/x", b"x"))
    assert extract(tar, dest, "MyApp.app") == str(dest / "MyApp.app")


def test_an_appledouble_file_beside_the_member_is_ignored(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(
        tmp_path / "t.tgz",
        entry("._MyApp.app", b"\x00\x05\x16\x07resource fork"),
        entry("MyApp.app/Info.plist", b"<plist/>"),
    )
    assert extract(tar, dest, "Renamed.app") == str(dest / "MyApp.app")


def test_two_candidates_and_no_expected_name_is_refused_and_cleaned(tmp_path: Path, dest: Path) -> None:
    tar = write_tgz(tmp_path / "t.tgz", entry("A/a", b"a"), entry("B", b"b"), entry("._B", b""))
    message = refused(tar, dest, "C")
    assert message == 'Could not identify the extracted member (expected "C", found 3 entries).'


@pytest.mark.parametrize(
    "hostile",
    [
        entry("../evil", b"x"),
        entry("X/l", type=tarfile.SYMTYPE, linkname="/etc"),
        entry("X/h", type=tarfile.LNKTYPE, linkname="X/a"),
        entry("X/a", b"again"),
    ],
    ids=["unsafe-name", "symlink-out", "hardlink", "duplicate"],
)
def test_every_member_is_checked_before_anything_is_written(
    tmp_path: Path, dest: Path, monkeypatch: pytest.MonkeyPatch, hostile: tuple[tarfile.TarInfo, bytes]
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the writing pass started for a hostile archive")

    monkeypatch.setattr(archive_module, "_write_members", never)
    tar = write_tgz(
        tmp_path / "t.tgz", entry("X/a", b"A"), *[entry(f"X/f{i}", b"f") for i in range(3)], hostile
    )
    refused(tar, dest)


# ---------------------------------------------------------------------------------------------
# Header bombs: what tarfile would read into memory (or recurse on) is refused at its header


def pax_header(records: bytes, type: bytes = tarfile.XHDTYPE) -> bytes:
    info = tarfile.TarInfo("././@PaxHeader")
    info.type = type
    info.size = len(records)
    return info.tobuf(tarfile.USTAR_FORMAT) + records + bytes(-len(records) % 512)


def pax_record(key: str, value: str) -> bytes:
    body = f" {key}={value}\n"
    length = len(body) + 1
    while len(str(length)) + len(body) != length:
        length += 1
    return f"{length}{body}".encode()


def test_a_chain_of_extended_headers_is_refused_not_a_crash(tmp_path: Path, dest: Path) -> None:
    # 3,000 pax headers in front of one file: tarfile recurses once per header (RecursionError).
    chain = pax_header(pax_record("comment", "x")) * 3000
    body = chain + tar_bytes(entry("X", b"x"))
    path = tmp_path / "chain.tgz"
    path.write_bytes(gzip.compress(body))
    assert refused(str(path), dest) == (
        "Archive has more than 8 extended headers in a row — refusing extraction."
    )


def test_many_global_headers_are_refused(tmp_path: Path, dest: Path) -> None:
    # Global pax headers pile up: every later member copies all of them.
    body = b"".join(
        pax_header(pax_record(f"k{i}", "v"), tarfile.XGLTYPE)
        + entry(f"X/{i}", b"")[0].tobuf(tarfile.USTAR_FORMAT)
        for i in range(20)
    )
    path = tmp_path / "globals.tgz"
    path.write_bytes(gzip.compress(body + bytes(1024)))
    assert refused(str(path), dest) == "Archive has more than 8 global headers — refusing extraction."


@pytest.mark.parametrize("kind", [tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGNAME])
def test_an_extended_header_bomb_is_refused_before_its_payload_is_read(
    tmp_path: Path, dest: Path, kind: bytes
) -> None:
    header = tarfile.TarInfo("././@LongLink" if kind == tarfile.GNUTYPE_LONGNAME else "././@PaxHeader")
    header.type = kind
    header.size = GIB
    # Only the first MiB of the 1 GiB payload is sent: refusing at the header never reads that far.
    bomb = write_gzip_with_zeros(tmp_path / "bomb.tgz", header.tobuf(tarfile.GNU_FORMAT), 1)
    started = time.monotonic()
    message = refused(bomb, dest, max_total_bytes=8 * GIB)
    assert message == (
        f"Archive has an extended header of {GIB} bytes — over the {MIB}-byte limit; refusing extraction."
    )
    assert time.monotonic() - started < 1


def test_gnu_sparse_members_are_refused_at_their_header(tmp_path: Path, dest: Path) -> None:
    sparse = entry("X", b"")[0]
    sparse.type = tarfile.GNUTYPE_SPARSE
    block = bytearray(sparse.tobuf(tarfile.GNU_FORMAT))
    block[482] = 1  # "isextended": tarfile would read extension blocks while this flag stays set
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    extension = bytes(504) + b"\x01" + bytes(7)
    path = tmp_path / "sparse.tgz"
    path.write_bytes(gzip.compress(bytes(block) + extension * 10_000))
    assert refused(str(path), dest) == (
        'Archive contains an unsupported member type "S" (hardlink/device/…) — refusing extraction.'
    )


def test_pax_sparse_members_are_refused(tmp_path: Path, dest: Path) -> None:
    records = pax_record("GNU.sparse.major", "1") + pax_record("GNU.sparse.minor", "0")
    records += pax_record("GNU.sparse.name", "X") + pax_record("GNU.sparse.realsize", "10")
    # A sparse map that claims a billion blocks: tarfile would read numbers until the stream ends.
    body = pax_header(records) + entry("GNUSparseFile.0/X", bytes(512))[0].tobuf(tarfile.USTAR_FORMAT)
    body += b"1000000000\n" + b"1\n" * 200_000
    path = tmp_path / "psparse.tgz"
    path.write_bytes(gzip.compress(body))
    assert refused(str(path), dest) == (
        'Archive contains an unsupported member type "S" (hardlink/device/…) — refusing extraction.'
    )


def test_the_expansion_limit_is_exact(tmp_path: Path, dest: Path) -> None:
    body = tar_bytes(entry("X", b"x"))
    over = tmp_path / "over.tgz"
    over.write_bytes(gzip.compress(body + bytes(1)))
    assert refused(str(over), dest, max_total_bytes=len(body)) == (
        f"Archive expands beyond the {len(body)}-byte limit — refusing extraction."
    )
    exact = tmp_path / "exact.tgz"
    exact.write_bytes(gzip.compress(body))
    assert Path(extract(str(exact), dest, max_total_bytes=len(body))).read_bytes() == b"x"


# ---------------------------------------------------------------------------------------------
# One member's file, read straight from the gzip stream into memory


MEMBER_LIMIT = 64 * 1024
OVERHEAD = 16 * 1024


def read_one(path: Path | str) -> bytes:
    return read_single_file_tar_gz(str(path), max_file_bytes=MEMBER_LIMIT, max_overhead_bytes=OVERHEAD)


def member_refused(path: Path | str) -> ArchiveError:
    started = time.monotonic()
    with pytest.raises(ArchiveError) as caught:
        read_one(path)
    assert time.monotonic() - started < 1, "a refused member archive is refused fast"
    return caught.value


def test_a_member_archive_gives_its_one_file_in_memory_and_writes_nothing(tmp_path: Path) -> None:
    data = b"steps:\n  - echo: hi\n"
    path = tmp_path / "m.tgz"
    path.write_bytes(build_tar_gz_bytes("a.yaml", data))
    assert read_one(path) == data
    assert os.listdir(tmp_path) == ["m.tgz"]


def test_a_member_file_with_a_long_name_travels_in_a_pax_header(tmp_path: Path) -> None:
    path = tmp_path / "m.tgz"
    path.write_bytes(build_tar_gz_bytes("n" * 200 + ".yaml", b"steps: []\n"))
    assert read_one(path) == b"steps: []\n"


def test_a_member_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    exact = tmp_path / "exact.tgz"
    exact.write_bytes(build_tar_gz_bytes("a.png", bytes(MEMBER_LIMIT)))
    assert read_one(exact) == bytes(MEMBER_LIMIT)
    over = tmp_path / "over.tgz"
    over.write_bytes(build_tar_gz_bytes("a.png", bytes(MEMBER_LIMIT + 1)))
    error = member_refused(over)
    assert isinstance(error, FileTooLargeError)
    assert (error.size, error.limit) == (MEMBER_LIMIT + 1, MEMBER_LIMIT)


def test_a_gzip_bomb_member_is_refused_at_its_header(tmp_path: Path) -> None:
    header = entry("a.yaml")[0]
    header.size = GIB
    # 1 GiB of zeros compressed, then cut short: reading any of the data would fail differently.
    bomb = tmp_path / "bomb.tgz"
    write_gzip_with_zeros(bomb, header.tobuf(tarfile.GNU_FORMAT), 1024)
    bomb.write_bytes(bomb.read_bytes()[: os.path.getsize(bomb) // 2])
    error = member_refused(bomb)
    assert isinstance(error, FileTooLargeError)
    assert error.size == GIB
    assert os.listdir(tmp_path) == ["bomb.tgz"]


def test_a_gzip_bomb_after_the_file_stops_at_the_first_byte_past_the_limit(tmp_path: Path) -> None:
    small = tar_bytes(entry("a.yaml", b"steps: []\n"))
    limit = MEMBER_LIMIT + OVERHEAD
    fits = tmp_path / "fits.tgz"
    fits.write_bytes(gzip.compress(small + bytes(limit - len(small))))
    assert read_one(fits) == b"steps: []\n"
    one_more = tmp_path / "one-more.tgz"
    one_more.write_bytes(gzip.compress(small + bytes(limit - len(small) + 1)))
    assert member_refused(one_more).message == (
        f"Archive expands beyond the {limit}-byte limit — refusing extraction."
    )
    bomb = write_gzip_with_zeros(tmp_path / "bomb.tgz", small, 1024)
    assert (
        member_refused(bomb).message
        == f"Archive expands beyond the {limit}-byte limit — refusing extraction."
    )


def test_a_many_entry_member_archive_is_refused_at_its_second_header(tmp_path: Path) -> None:
    headers = b"".join(entry(f"f{i}")[0].tobuf(tarfile.USTAR_FORMAT) for i in range(2000))
    # Garbage after the second header: reading on would fail with "Could not read archive".
    body = headers[:1024] + b"garbage".ljust(512, b"!") + headers[1024:]
    path = tmp_path / "many.tgz"
    path.write_bytes(gzip.compress(body)[:-8])
    error = member_refused(path)
    assert isinstance(error, NotOneFileError)
    assert error.found == "more than one entry"


@pytest.mark.parametrize(
    ("entries", "found"),
    [
        ([entry("a.yaml", b"a"), entry("b.yaml", b"b")], "more than one entry"),
        ([entry("a.yaml", b"a"), entry("._a.yaml", b"")], "more than one entry"),
        ([entry("d", type=tarfile.DIRTYPE)], 'a directory "d"'),
        ([entry("d", type=tarfile.DIRTYPE), entry("d/a.yaml", b"a")], 'a directory "d"'),
        ([entry("d/a.yaml", b"a")], 'a file below the top level "d/a.yaml"'),
        ([entry("l", type=tarfile.SYMTYPE, linkname="a.yaml")], 'a symlink "l"'),
        ([entry("h", type=tarfile.LNKTYPE, linkname="a.yaml")], 'a hardlink "h"'),
        ([entry("p", type=tarfile.FIFOTYPE)], 'a fifo "p"'),
        ([entry("c", type=tarfile.CHRTYPE)], 'a device "c"'),
    ],
    ids=[
        "two-files",
        "appledouble",
        "directory-only",
        "directory-and-file",
        "nested",
        "symlink",
        "hardlink",
        "fifo",
        "device",
    ],
)
def test_a_member_archive_must_hold_one_regular_file(
    tmp_path: Path, entries: list[tuple[tarfile.TarInfo, bytes]], found: str
) -> None:
    path = Path(write_tgz(tmp_path / "m.tgz", *entries))
    error = member_refused(path)
    assert isinstance(error, NotOneFileError)
    assert error.found == found
    assert error.message == f"Archive holds {found} — a member is one regular file."
    assert os.listdir(tmp_path) == ["m.tgz"]


@pytest.mark.parametrize("name", ["../a.yaml", "/etc/a.yaml", "C:\\a.yaml", "."])
def test_an_unsafe_member_name_is_refused(tmp_path: Path, name: str) -> None:
    path = Path(write_tgz(tmp_path / "m.tgz", entry(name, b"a")))
    assert member_refused(path).message == f'Archive contains an unsafe path "{name}" — refusing extraction.'


def test_a_damaged_member_archive_cannot_be_read(tmp_path: Path) -> None:
    whole = build_tar_gz_bytes("a.yaml", os.urandom(20_000))
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(whole[: len(whole) // 2])
    assert member_refused(cut).message.startswith("Could not read archive: ")
    plain = tmp_path / "plain.tgz"
    plain.write_bytes(b"not gzip")
    assert member_refused(plain).message.startswith("Could not read archive: Not a gzipped file")
    garbage = tmp_path / "garbage.tgz"
    first = tar_bytes(entry("a.yaml", b"x"))
    garbage.write_bytes(gzip.compress(first[:1024] + b"junk".ljust(512, b"!") + bytes(1024)))
    assert member_refused(garbage).message == (
        "Could not read archive: invalid or truncated tar header at offset 1024"
    )


@pytest.mark.parametrize("payload", [b"", bytes(10240)], ids=["no-bytes", "end-blocks-only"])
def test_an_empty_member_archive_is_empty(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "e.tgz"
    path.write_bytes(gzip.compress(payload))
    error = member_refused(path)
    assert isinstance(error, NotOneFileError)
    assert error.message == "Archive holds no entry — a member is one regular file."


def test_exactly_the_most_global_headers_are_accepted(tmp_path: Path, dest: Path) -> None:
    """The edge of the refusal above: MAX_TAR_EXTENDED_HEADERS global headers extract."""
    body = entry("X", type=tarfile.DIRTYPE, mode=0o755)[0].tobuf(tarfile.USTAR_FORMAT) + b"".join(
        pax_header(pax_record(f"k{i}", "v"), tarfile.XGLTYPE)
        + entry(f"X/{i}", b"")[0].tobuf(tarfile.USTAR_FORMAT)
        for i in range(MAX_TAR_EXTENDED_HEADERS)
    )
    path = tmp_path / "globals.tgz"
    path.write_bytes(gzip.compress(body + bytes(1024)))
    out = Path(extract(str(path), dest))
    assert sorted(os.listdir(out)) == sorted(str(i) for i in range(MAX_TAR_EXTENDED_HEADERS))
