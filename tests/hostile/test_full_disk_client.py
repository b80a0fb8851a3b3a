"""A careless host on the client's side of the link: the reports, images, baselines and link config
the real CLI writes land on a full or read-only file system (a real tmpfs of 2 MiB).

Each write either lands whole or leaves the older good file as it was; the CLI says, in an
``Error:``/``✗`` line that names the path and what to do, what it could not write, never a
traceback; and the run's result is still printed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from argent.link.png import PNG_SIGNATURE
from tests.e2e.conftest import Cli
from tests.hostile.hostile_server import (
    HostileToolServer,
    baseline_directive,
    buffered,
    hostile_tool_server,
    report,
    result_line,
    step,
    streamed,
    text_directive,
)
from tests.hostile.small_fs import fill, read_only, small_fs

MAIN = "steps:\n  - echo: hello\n"


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs outside the project, for the reports."""
    with small_fs(tmp_path / "disk") as mounted:
        yield mounted


@pytest.fixture
def main_flow(project: Path) -> Path:
    flow = project / ".argent" / "flows" / "main.yaml"
    flow.write_text(MAIN)
    return flow


# --------------------------------------------------------------------------------------------
# --junit-xml


def test_a_junit_report_on_a_full_disk_keeps_the_old_report_and_says_what_to_do(
    cli: Cli, main_flow: Path, disk: Path
) -> None:
    junit = disk / "junit.xml"
    first = cli.run("flow", "run", "main", "--junit-xml", str(junit))
    assert first.returncode == 0, first.stderr
    old = junit.read_bytes()
    fill(disk)
    done = cli.run("flow", "run", "main", "--junit-xml", str(junit))
    no_traceback(done)
    assert done.returncode == 1
    assert junit.read_bytes() == old
    assert sorted(p.name for p in disk.iterdir()) == [".filler", "junit.xml"]
    assert "✓" in done.stdout or "passed" in done.stdout, done.stdout
    assert (
        f"Error: could not write the JUnit report {junit}: No space left on device. Free some space there "
        "or pass another --junit-xml path; the flows' results are above."
    ) in done.stderr.splitlines()


def test_a_junit_report_on_a_read_only_disk_is_refused_before_the_run(
    cli: Cli, main_flow: Path, disk: Path
) -> None:
    junit = disk / "junit.xml"
    junit.write_text("<testsuites/>\n")
    read_only(disk)
    done = cli.run("flow", "run", "main", "--junit-xml", str(junit))
    no_traceback(done)
    assert done.returncode == 2
    assert junit.read_text() == "<testsuites/>\n"
    assert (
        f"Error: --junit-xml cannot write {junit}: Read-only file system. Remount that file system read-write "
        "or pass another --junit-xml path."
    ) in done.stderr.splitlines()


# --------------------------------------------------------------------------------------------
# --html


def test_an_html_report_on_a_full_disk_keeps_the_old_page_and_says_what_to_do(
    cli: Cli, main_flow: Path, disk: Path
) -> None:
    html = disk / "report"
    first = cli.run("flow", "run", "main", "--html", str(html))
    assert first.returncode == 0, first.stderr
    old = (html / "index.html").read_bytes()
    fill(disk)
    done = cli.run("flow", "run", "main", "--html", str(html))
    no_traceback(done)
    assert done.returncode == 1
    assert (html / "index.html").read_bytes() == old
    assert not [p.name for p in html.iterdir() if p.name.endswith(".tmp")]
    assert (
        f"Error: could not write the HTML report in {html}: No space left on device. Free some space there "
        "or pass another --html directory; the flows' results are above."
    ) in done.stderr.splitlines()


def test_an_html_report_on_a_read_only_disk_is_refused_before_the_run(
    cli: Cli, main_flow: Path, disk: Path
) -> None:
    html = disk / "report"
    first = cli.run("flow", "run", "main", "--html", str(html))
    assert first.returncode == 0, first.stderr
    old = (html / "index.html").read_bytes()
    read_only(disk)
    done = cli.run("flow", "run", "main", "--html", str(html))
    no_traceback(done)
    assert done.returncode == 2
    assert (html / "index.html").read_bytes() == old
    assert (
        f"Error: --html cannot use {html}: Read-only file system. Remount that file system read-write or pass "
        "another --html directory."
    ) in done.stderr.splitlines()


# --------------------------------------------------------------------------------------------
# Baselines the tool-server sends (--update-baselines over a link)


@pytest.fixture
def baselines(project: Path) -> Iterator[Path]:
    """The project's ``__baselines__`` directory, a 2 MiB tmpfs; the flow snapshots ``home``."""
    flows = project / ".argent" / "flows"
    (flows / "main.yaml").write_text("steps:\n  - snapshot: home\n")
    with small_fs(flows / "__baselines__") as mounted:
        yield mounted


def _baseline_run(
    cli: Cli, hostile: HostileToolServer, target: Path, data: bytes
) -> subprocess.CompletedProcess[str]:
    directive = baseline_directive(target, data)
    hostile.on("flow-execute", streamed(result_line(report(step(), baselineWrites=[directive]))))
    return cli.run("flow", "run", "main", "--update-baselines", **hostile.env())


def test_a_baseline_on_a_full_disk_keeps_the_old_image(
    cli: Cli, baselines: Path, hostile: HostileToolServer
) -> None:
    target = baselines / "main" / "home__chromium-1x1.png"
    target.parent.mkdir()
    old = PNG_SIGNATURE + b"old"
    target.write_bytes(old)
    fill(baselines)
    done = _baseline_run(cli, hostile, target, PNG_SIGNATURE + bytes(256 * 1024))
    no_traceback(done)
    assert done.returncode == 1
    assert target.read_bytes() == old
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]
    assert (
        f"✗ baseline not written: {target}: ENOSPC: no space left on device, write '{target}'. Free some space "
        "there and run with --update-baselines again; an older baseline there is unchanged."
    ) in done.stderr.splitlines(), done.stderr


def test_a_baseline_on_a_read_only_disk_keeps_the_old_image(
    cli: Cli, baselines: Path, hostile: HostileToolServer
) -> None:
    target = baselines / "main" / "home__chromium-1x1.png"
    target.parent.mkdir()
    old = PNG_SIGNATURE + b"old"
    target.write_bytes(old)
    read_only(baselines)
    done = _baseline_run(cli, hostile, target, PNG_SIGNATURE + b"new")
    no_traceback(done)
    assert done.returncode == 1
    assert target.read_bytes() == old
    assert (
        f"✗ baseline not written: {target}: EROFS: read-only file system, write '{target}'. Remount that file "
        "system read-write and run with --update-baselines again; an older baseline there is unchanged."
    ) in done.stderr.splitlines(), done.stderr


# --------------------------------------------------------------------------------------------
# The client's own state: ~/.argent/link.json


def test_a_link_on_a_read_only_home_says_what_to_do(cli: Cli, disk: Path) -> None:
    cli.home = disk
    first = cli.run("link", "--no-verify", "argent://tok@127.0.0.1:3001")
    assert first.returncode == 0, first.stderr
    old = (disk / ".argent" / "link.json").read_bytes()
    read_only(disk)
    done = cli.run("link", "--no-verify", "argent://other@127.0.0.1:3002")
    no_traceback(done)
    assert done.returncode == 1
    link = disk / ".argent" / "link.json"
    assert link.read_bytes() == old
    assert done.stderr.splitlines() == [
        f"Error: Could not write {link}: Read-only file system. Remount that file system read-write and run "
        "the command again; the link stays as it was. Meanwhile ARGENT_TOOLS_URL (and ARGENT_AUTH_TOKEN) route "
        "calls without the file."
    ]
    unlinked = cli.run("unlink")
    no_traceback(unlinked)
    assert unlinked.returncode == 1
    assert f"Error: Could not remove {link}: Read-only file system." in unlinked.stderr
    assert link.read_bytes() == old


def test_a_link_on_a_full_home_keeps_the_old_link(cli: Cli, disk: Path) -> None:
    cli.home = disk
    first = cli.run("link", "--no-verify", "argent://tok@127.0.0.1:3001")
    assert first.returncode == 0, first.stderr
    old = (disk / ".argent" / "link.json").read_bytes()
    fill(disk)
    done = cli.run("link", "--no-verify", "argent://other@127.0.0.1:3002")
    no_traceback(done)
    assert done.returncode == 1
    link = disk / ".argent" / "link.json"
    assert link.read_bytes() == old
    assert sorted(p.name for p in (disk / ".argent").iterdir()) == ["link.json"]
    assert done.stderr.startswith(
        f"Error: Could not write {link}: No space left on device. Free some space there and run the command "
        "again; the link stays as it was."
    )


def test_a_flow_runs_with_a_read_only_home(cli: Cli, main_flow: Path, disk: Path) -> None:
    """Nothing of the client's own state is needed to run a flow (the fs cache lives in memory)."""
    cli.home = disk
    read_only(disk)
    done = cli.run("flow", "run", "main")
    no_traceback(done)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------------------------
# --output: the images of failed snapshots


def _failed_snapshot(tmp_path: Path) -> tuple[dict[str, object], Path]:
    """A flow-execute result whose snapshot step failed, with its image in a scratch directory."""
    scratch = tmp_path / "argent-flow-diff-abc123"
    scratch.mkdir()
    image = scratch / "home-current.png"
    image.write_bytes(PNG_SIGNATURE + bytes(512 * 1024))
    failed = step(0, kind="snapshot", status="fail", snapshotKey="home", artifacts={"current": str(image)})
    return report(failed, ok=False, passed=0, failed=1), image


def test_an_output_dir_on_a_full_disk_leaves_no_part_and_is_used_once_space_is_back(
    cli: Cli, main_flow: Path, disk: Path, tmp_path: Path, hostile: HostileToolServer
) -> None:
    result, image = _failed_snapshot(tmp_path)
    hostile.on("flow-execute", streamed(result_line(result)))
    out = disk / "out"
    filler = fill(disk)
    done = cli.run("flow", "run", "main", "--output", str(out), **hostile.env())
    no_traceback(done)
    assert done.returncode == 1  # the flow failed; the export's trouble is told, not hidden
    assert [p for p in out.rglob("*") if p.is_file()] == []
    lines = done.stderr.splitlines()
    assert (
        f"warning: could not export the artifacts of main to {out / 'main'}: No space left on device. Free some "
        "space there and run again, or pass another --output directory."
    ) in lines, done.stderr
    assert not any("so neither set is overwritten" in line for line in lines), done.stderr
    filler.unlink()
    again = cli.run("flow", "run", "main", "--output", str(out), **hostile.env())
    assert again.returncode == 1, again.stderr
    assert (out / "main" / "home-current.png").read_bytes() == image.read_bytes()
    assert "warning" not in again.stderr, again.stderr


def test_an_output_dir_made_read_only_keeps_the_old_images(
    cli: Cli, main_flow: Path, disk: Path, tmp_path: Path, hostile: HostileToolServer
) -> None:
    result, image = _failed_snapshot(tmp_path)
    hostile.on("flow-execute", streamed(result_line(result)))
    out = disk / "out"
    first = cli.run("flow", "run", "main", "--output", str(out), **hostile.env())
    assert first.returncode == 1, first.stderr
    exported = out / "main" / "home-current.png"
    assert exported.read_bytes() == image.read_bytes()
    image.write_bytes(PNG_SIGNATURE + b"newer")
    read_only(disk)
    done = cli.run("flow", "run", "main", "--output", str(out), **hostile.env())
    no_traceback(done)
    assert done.returncode == 1
    assert exported.read_bytes() != image.read_bytes()
    assert exported.stat().st_size == 8 + 512 * 1024
    assert (
        f"warning: could not export {image} to {exported}: Read-only file system. Remount that file system "
        "read-write and run again, or pass another --output directory."
    ) in done.stderr.splitlines(), done.stderr
    assert "✗" in done.stdout or "fail" in done.stdout.lower(), done.stdout


def test_an_export_on_a_full_disk_keeps_the_old_image_whole(
    cli: Cli, main_flow: Path, disk: Path, tmp_path: Path, hostile: HostileToolServer
) -> None:
    result, image = _failed_snapshot(tmp_path)
    hostile.on("flow-execute", streamed(result_line(result)))
    out = disk / "out"
    first = cli.run("flow", "run", "main", "--output", str(out), **hostile.env())
    assert first.returncode == 1, first.stderr
    exported = out / "main" / "home-current.png"
    old = exported.read_bytes()
    image.write_bytes(PNG_SIGNATURE + os.urandom(768 * 1024))
    fill(disk)
    done = cli.run("flow", "run", "main", "--output", str(out), **hostile.env())
    no_traceback(done)
    assert done.returncode == 1
    assert exported.read_bytes() == old
    assert sorted(p.name for p in exported.parent.iterdir()) == [".argent-flow-source", exported.name]
    assert (
        f"warning: could not export {image} to {exported}: No space left on device. Free some space there and "
        "run again, or pass another --output directory."
    ) in done.stderr.splitlines(), done.stderr


# --------------------------------------------------------------------------------------------
# The client's own temp dir: where it packs a tar-upload


INSTALL_TOOL = {
    "name": "install",
    "inputSchema": {"type": "object", "properties": {"appPath": {"type": "string"}}},
    "fileInputs": [{"target": "appPath", "path": "${appPath}", "kind": "tar-upload"}],
}


@pytest.mark.parametrize("how", ["full", "read-only"])
def test_a_tar_upload_is_packed_elsewhere_when_the_temp_dir_is_full_or_read_only(
    cli: Cli, project: Path, disk: Path, how: str
) -> None:
    """Python's ``tempfile`` tries a file in TMPDIR before it uses it and moves on to the next
    candidate (/tmp, ...) when it cannot: the upload is packed there, sent, and removed."""
    app = project / "app"
    app.mkdir()
    (app / "bundle.js").write_bytes(os.urandom(256 * 1024))
    if how == "full":
        fill(disk)
    else:
        read_only(disk)
    before = sorted(p.name for p in disk.iterdir())
    with hostile_tool_server([INSTALL_TOOL]) as server:
        done = cli.run("run", "install", "--appPath", str(app), TMPDIR=str(disk), **server.env())
        assert len(server.uploads) == 1 and len(server.calls) == 1
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in disk.iterdir()) == before


def test_a_flow_runs_with_a_full_temp_dir(cli: Cli, main_flow: Path, disk: Path) -> None:
    """The embedded tool-server needs no byte of its temp dir to run a flow that boots no browser."""
    fill(disk)
    done = cli.run("flow", "run", "main", TMPDIR=str(disk))
    no_traceback(done)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------------------------
# A client-kept recording (the tool-server sends the text, the client writes it)


@pytest.mark.parametrize("how", ["full", "read-only"])
def test_a_client_kept_recording_on_a_full_or_read_only_disk_keeps_the_old_file(
    cli: Cli, project: Path, hostile: HostileToolServer, how: str
) -> None:
    with small_fs(project / ".argent") as argent:
        flows = argent / "flows"
        flows.mkdir()
        target = flows / "rec.yaml"
        target.write_text("steps: []\n")
        text = "steps:\n" + "  - echo: recorded\n" * 4096
        hostile.on(
            "flow-start-recording",
            buffered({"data": {"message": "started", "savedTo": text_directive(target, text)}}),
        )
        if how == "full":
            fill(argent)
        else:
            read_only(argent)
        done = cli.run(
            "run", "flow-start-recording", "--name", "rec", "--project-root", str(project), **hostile.env()
        )
        no_traceback(done)
        assert done.returncode == 1
        assert target.read_text() == "steps: []\n"
        assert sorted(p.name for p in flows.iterdir()) == ["rec.yaml"]
        code, reason = (
            ("ENOSPC", "no space left on device") if how == "full" else ("EROFS", "read-only file system")
        )
        remedy = "Free some space there" if how == "full" else "Remount that file system read-write"
        assert (
            f"✗ client file not written: {target}: {code}: {reason}, write '{target}'. {remedy} and record again; "
            "an older file there is unchanged."
        ) in done.stderr.splitlines(), done.stderr


def test_an_html_report_on_a_full_disk_leaves_no_cut_image(
    cli: Cli, main_flow: Path, disk: Path, tmp_path: Path, hostile: HostileToolServer
) -> None:
    result, image = _failed_snapshot(tmp_path)
    hostile.on("flow-execute", streamed(result_line(result)))
    html = disk / "report"
    first = cli.run("flow", "run", "main", "--html", str(html), **hostile.env())
    assert first.returncode == 1, first.stderr
    assert (html / "images" / "1" / "1-current.png").is_file()
    image.write_bytes(PNG_SIGNATURE + os.urandom(1024 * 1024))  # more than the old image frees
    fill(disk)
    done = cli.run("flow", "run", "main", "--html", str(html), **hostile.env())
    no_traceback(done)
    assert done.returncode == 1
    images = [p for p in (html / "images").rglob("*") if p.is_file()]
    assert images == [], images
    # The old image made room for the page, not for the new image: the page says which is missing.
    assert done.stderr.splitlines() == [
        f"Error: the HTML report in {html} lacks 1 image: No space left on device. Free some space there or pass "
        "another --html directory; the flows' results are above."
    ]
