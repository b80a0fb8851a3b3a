"""Boundaries that keep users safe, each at its exact edge: the mutants that survived the sample of
issue 24 (an archive limit, the project roots, an id selector, the snapshot's pixel threshold, the
report's escaping) each named a test that was missing; these are those tests."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import pytest

from argent.errors import PolicyRefusal
from argent.flows.model import Selector
from argent.link.archive import ArchiveError, safe_extract_tar_gz
from argent.runner import pixels as P
from argent.runner.selectors import matches_for_condition
from argent.server.policy import load_policy
from tests.unit.test_archive import entry, tar_bytes
from tests.unit.test_reports_html import outcome, write_report
from tests.unit.test_reports_junit import report, step
from tests.unit.test_selectors import labels, n, screen

# --------------------------------------------------------------------------------------------
# Archives: exactly at both limits is accepted, one over is not


def test_an_archive_of_exactly_max_members_and_exactly_the_byte_limit_is_extracted(tmp_path: Path) -> None:
    members = [entry("X/", type=b"5"), *(entry(f"X/{i}", b"x" * (i + 1)) for i in range(9))]
    body = tar_bytes(*members)
    exact = tmp_path / "exact.tgz"
    exact.write_bytes(gzip.compress(body))
    dest = tmp_path / "dest"
    dest.mkdir()
    root = safe_extract_tar_gz(
        str(exact), str(dest), "X", max_total_bytes=len(body), max_members=len(members)
    )
    assert sorted(os.listdir(root)) == sorted(str(i) for i in range(9))
    assert Path(root, "8").read_bytes() == b"x" * 9
    for limits in ({"max_total_bytes": len(body) - 1}, {"max_members": len(members) - 1}):
        again = tmp_path / f"dest-{len(limits)}-{next(iter(limits))}"
        again.mkdir()
        with pytest.raises(ArchiveError):
            safe_extract_tar_gz(
                str(exact),
                str(again),
                "X",
                **{"max_total_bytes": len(body), "max_members": len(members), **limits},
            )


# --------------------------------------------------------------------------------------------
# Project roots: a root named through a symlink is its real directory


def test_project_roots_naming_a_symlink_hold_the_projects_under_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "disk" / "projects"
    (real / "shop").mkdir(parents=True)
    link = tmp_path / "projects-link"
    link.symlink_to(real)
    config = tmp_path / "team.yaml"
    config.write_text(f"project_roots: [{link}]\n")
    policy = load_policy(str(config), {})
    assert policy.project_roots == (str(real.resolve()),)
    calls = policy.for_token(None)
    calls.check_workspace_sync(str(real / "shop"))  # accepted: under the root's real path
    calls.check_workspace_sync(str(link / "shop"))  # and through the link itself
    with pytest.raises(PolicyRefusal):
        calls.check_workspace_sync(str(tmp_path / "disk"))


# --------------------------------------------------------------------------------------------
# Selectors: an id matches the unqualified Android resource id, never a longer one


def test_an_id_selector_does_not_match_a_resource_id_that_only_ends_with_it() -> None:
    s = screen(
        n("button", 0, 0, 0.1, 0.1, identifier="com.app:id/autosave"),
        n("button", 0, 0.2, 0.1, 0.1, identifier="com.app:id/save"),
        n("button", 0, 0.4, 0.1, 0.1, identifier="autosave"),
    )
    assert labels(matches_for_condition(Selector(identifier="save"), s)[1]) == ["com.app:id/save"]


# --------------------------------------------------------------------------------------------
# Snapshots: a change the idle wait sees is not a snapshot difference until it passes 0.1


def image(rgb: tuple[int, int, int], size: int = 100) -> np.ndarray:
    out = np.zeros((size, size, 4), dtype=np.uint8)
    out[..., :3] = rgb
    out[..., 3] = 255
    return out


def test_a_change_over_the_idle_threshold_but_under_the_diff_threshold_is_no_snapshot_difference() -> None:
    baseline = image((100, 100, 100))
    faint = baseline.copy()
    faint[50:, :, :3] = 113  # 13 per channel: a distance of 0.051, over idle's 0.03, under the diff's 0.1
    assert P.idle_state(baseline, faint) == "moving"
    diff = P.diff_images(baseline, faint, full_screen=False)
    assert (diff.changed, diff.mismatch) == (0, 0.0)
    plain = baseline.copy()
    plain[50:, :, :3] = 130  # 30 per channel: a distance of 0.118, over the diff's threshold
    assert P.diff_images(baseline, plain, full_screen=False).changed == 50 * 100


# --------------------------------------------------------------------------------------------
# The HTML report: a tool-server's path in the "not copied" caption is text, never markup


async def test_the_not_copied_caption_escapes_the_tool_servers_path(tmp_path: Path) -> None:
    far = '/elsewhere/argent-flow-diff-z/<img src=x onerror="alert(1)">.png'
    outcomes = [outcome(0, "a.yaml", result=report(step(0, "snapshot", "fail", artifacts={"current": far})))]
    page, links = await write_report(tmp_path / "report", outcomes)
    shown = "/elsewhere/argent-flow-diff-z/&lt;img src=x onerror=&quot;alert(1)&quot;&gt;.png"
    assert f"not copied into the report (the tool-server's path: {shown})" in page
    assert "<img src=x" not in page and "img" not in links.tags
