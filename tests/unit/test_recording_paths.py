"""Portable recordings (issue 27): a file under the project root that a recorded step names is
written relative to the flow file; one outside it keeps its path, with a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from argent.flows.model import ChromiumApp, LaunchStep
from argent.tools.recording_paths import (
    OUTSIDE_PROJECT,
    Portable,
    portable_launch,
    portable_path,
    portable_upload,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".argent" / "flows").mkdir(parents=True)
    (root / "pages").mkdir()
    (root / "pages" / "sign in.html").write_text("<p>hi</p>")
    return root


def flow_of(root: Path) -> str:
    return str(root / ".argent" / "flows" / "signin.yaml")


def test_a_page_under_the_project_is_written_relative_to_the_flow_file(project: Path) -> None:
    page = project / "pages" / "sign in.html"
    for target in (str(page), page.as_uri(), f"file://localhost{page.as_uri()[7:]}"):
        made = portable_path(target, project_root=str(project), flow_file=flow_of(project), on_host=True)
        assert made == Portable("../../pages/sign in.html")
    beside = portable_path(
        str(project / ".argent" / "flows" / "x.html"),
        project_root=str(project),
        flow_file=flow_of(project),
        on_host=True,
    )
    assert beside == Portable("x.html")


def test_a_project_reached_through_a_link_counts_on_the_host(project: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(project)
    page = str(project / "pages" / "sign in.html")
    made = portable_path(page, project_root=str(link), flow_file=flow_of(link), on_host=True)
    assert made == Portable("../../pages/sign in.html")


def test_a_file_outside_the_project_keeps_its_path_and_says_why(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.html"
    made = portable_path(str(outside), project_root=str(project), flow_file=flow_of(project), on_host=True)
    assert made == Portable(str(outside), OUTSIDE_PROJECT.format(path=outside, root=project))
    # a sibling directory whose name starts like the project's is outside too
    twin = tmp_path / "proj2" / "a.html"
    assert portable_path(
        str(twin), project_root=str(project), flow_file=flow_of(project), on_host=True
    ).warning


@pytest.mark.parametrize(
    "target",
    [
        "https://shop.test/a.html",
        "data:text/html,<p>x</p>",
        "pages/a.html",
        "file:///p/a.html?x=1",
        "file:///p/a.html#top",
        "file://host/p/a.html",
    ],
)
def test_what_names_no_local_file_is_kept_as_it_is(project: Path, target: str) -> None:
    assert portable_path(
        target, project_root=str(project), flow_file=flow_of(project), on_host=True
    ) == Portable(target)


def test_a_recording_kept_on_the_client_compares_its_paths_as_spelled() -> None:
    where = {
        "project_root": "/client/proj",
        "flow_file": "/client/proj/.argent/flows/f.yaml",
        "on_host": False,
    }
    assert portable_path("/client/proj/site/index.html", **where) == Portable("../../site/index.html")  # type: ignore[arg-type]
    assert portable_path("/client/other/x.html", **where).warning  # type: ignore[arg-type]


def test_a_launch_keeps_its_args_and_its_other_platforms(project: Path) -> None:
    page = str(project / "pages" / "sign in.html")
    where = {"project_root": str(project), "flow_file": flow_of(project), "on_host": True}
    step, warning = portable_launch(LaunchStep(chromium=ChromiumApp(page, ("--lang=fr",))), **where)  # type: ignore[arg-type]
    assert (step.chromium, warning) == (ChromiumApp("../../pages/sign in.html", ("--lang=fr",)), None)
    bare, _ = portable_launch(LaunchStep(app=page), **where)  # type: ignore[arg-type]
    assert bare.app == "../../pages/sign in.html"
    app, _ = portable_launch(LaunchStep(app="com.shop.app"), **where)  # type: ignore[arg-type]
    assert app == LaunchStep(app="com.shop.app")


def test_an_upload_names_its_files_relative_to_the_flow_file(project: Path, tmp_path: Path) -> None:
    where = {"project_root": str(project), "flow_file": flow_of(project), "on_host": True}
    photo = project / "fixtures" / "me.png"
    value = {"into": {"id": "avatar"}, "files": [str(photo), photo.as_uri(), "fixtures/b.png", 7]}
    made = portable_upload(value, **where)  # type: ignore[arg-type]
    assert made == {
        "into": {"id": "avatar"},
        "files": [
            "../../fixtures/me.png",
            "../../fixtures/me.png",
            "fixtures/b.png",
            7,
        ],  # the parser judges 7
    }
    assert value["files"][0] == str(photo)  # the value given is left as it was
    with pytest.raises(
        ValueError, match=r"is outside the project root .*: an upload names its files relative"
    ):
        portable_upload({"into": "x", "files": [str(tmp_path / "secret.png")]}, **where)  # type: ignore[arg-type]
    for other in ("x", {"into": "x"}, {"files": "a.png"}):
        assert portable_upload(other, **where) == other  # type: ignore[arg-type]
