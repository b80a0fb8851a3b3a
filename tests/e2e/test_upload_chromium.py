"""`upload:` on a real headless Chromium, through a real tool-server on a socket: co-located (the
tool-server reads the files beside the flow) and over a link (the client sends them as members, the
project is moved away before the tool-server reads a byte). The page sees each file's name and bytes,
and its `input` and `change` events; what is not a file input, too many files, and files a run cannot
have are refused with words, before the browser is touched where the flow tells."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from argent.client.base import ToolCallError
from argent.client.session import ToolServerClient
from argent.devices.chromium import ChromiumDevice, ChromiumDeviceProvider
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.tools.flow_tools import flow_tools
from argent.tools.registry import ToolRegistry
from tests.e2e.conftest import chromium_marks, pages_app, serve

pytestmark = [*chromium_marks(), pytest.mark.asyncio(loop_scope="module")]

TOKEN = "upload-token"
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Upload</title></head><body>
<label for="photo">Photo</label>
<input id="photo" type="file">
<p><label>Attachments <input id="many" type="file" multiple></label></p>
<button id="plain">Plain button</button>
<p><label>Disabled <input id="off" type="file" disabled></label></p>
<picker-box id="box"></picker-box>
<div id="log"></div>
<script>
  customElements.define("picker-box", class extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({ mode: "open" }).innerHTML = '<label>Shadow pick <input id="shadow" type="file"></label>';
    }
  });
  const log = (text) => {
    const line = document.createElement("p");
    line.textContent = text;
    document.getElementById("log").append(line);
  };
  const inputs = [...document.querySelectorAll("input[type=file]"), document.getElementById("box").shadowRoot.querySelector("input")];
  for (const input of inputs) {
    input.addEventListener("input", () => log(`input ${input.id}`));
    input.addEventListener("change", async () => {
      const parts = [];
      for (const file of input.files) parts.push(`${file.name}=${await file.text()}`);
      log(`change ${input.id}: ${parts.join(", ")}`);
    });
  }
</script>
</body></html>
"""


class Moved:
    """The project directory, moved away when a call reaches the tool-server (over a link it must
    read nothing from the client's paths), and back for the next test."""

    def __init__(self) -> None:
        self.project: Path | None = None

    def away(self) -> None:
        if self.project is not None and self.project.exists():
            self.project.rename(self.project.with_name(self.project.name + ".away"))

    def back(self) -> None:
        if self.project is not None and not self.project.exists():
            self.project.with_name(self.project.name + ".away").rename(self.project)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def pages() -> AsyncIterator[str]:
    async with serve(pages_app({"/upload.html": PAGE})) as url:
        yield url


@pytest.fixture
def uploads_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "server-uploads"
    directory.mkdir()
    return directory


@pytest.fixture
def made(uploads_dir: Path) -> list[str]:
    """The directories the tool-server made for the files of `upload:` steps (and its tool steps)."""
    return []


@pytest_asyncio.fixture(loop_scope="module")
async def server(
    provider: ChromiumDeviceProvider, tmp_path: Path, uploads_dir: Path, made: list[str]
) -> AsyncIterator[tuple[str, Moved]]:
    def upload_dir() -> str:
        made.append(tempfile.mkdtemp(dir=uploads_dir))
        return made[-1]

    registry = ToolRegistry()
    for spec in flow_tools(registry, provider, file_input_dirs=upload_dir):
        registry.register(spec)
    server_tmp = tmp_path / "server-tmp"
    server_tmp.mkdir()
    app = create_app(ServerConfig(token=TOKEN, tmp_dir=str(server_tmp)), registry)
    moved = Moved()

    @web.middleware
    async def linked_calls_read_no_client_path(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == "/tools/flow-execute" and request.headers.get("x-argent-linked") == "1":
            await request.read()  # the whole call, members and all, has arrived
            moved.away()
        return await handler(request)

    app.middlewares.insert(0, linked_calls_read_no_client_path)
    async with serve(app) as url:
        try:
            yield url, moved
        finally:
            moved.back()


def project(tmp_path: Path, pages: str, *steps: str) -> Path:
    root = tmp_path / "proj"
    flows = root / ".argent" / "flows"
    (flows / "fixtures").mkdir(parents=True)
    (flows / "fixtures" / "a.txt").write_text("alpha")
    (flows / "fixtures" / "b.txt").write_text("beta")
    lines = [f"launch: {{ chromium: '{pages}/upload.html' }}", *steps]
    (flows / "main.yaml").write_text("steps:\n" + "".join(f"  - {line}\n" for line in lines))
    return root


async def run(
    url: str, root: Path, device: ChromiumDevice, *, linked: bool, moved: Moved | None = None
) -> Any:
    if moved is not None:
        moved.project = root
    try:
        async with ToolServerClient(url, TOKEN, linked=linked, notice=lambda _: None) as client:
            return await client.call(
                "flow-execute", {"project_root": str(root), "name": "main", "device": device.id}
            )
    finally:
        if moved is not None:
            moved.back()


def lines(result: Any) -> list[tuple[str, str, str | None]]:
    return [(step["kind"], step["status"], step.get("reason")) for step in result["steps"]]


UPLOADS = (
    "upload: { into: { id: photo }, files: [fixtures/a.txt] }",
    'await: { visible: "change photo: a.txt=alpha" }',
    'assert: { visible: "input photo" }',
    "upload: { into: Attachments, files: [fixtures/a.txt, fixtures/b.txt] }",
    'await: { visible: "change many: a.txt=alpha, b.txt=beta" }',
    "upload: { into: Shadow pick, files: [fixtures/b.txt] }",
    'await: { visible: "change shadow: b.txt=beta" }',
)


@pytest.mark.parametrize("linked", [False, True], ids=["co-located", "over a link"])
async def test_the_page_sees_the_names_and_bytes_of_the_files(
    server: tuple[str, Moved],
    pages: str,
    device: ChromiumDevice,
    tmp_path: Path,
    uploads_dir: Path,
    made: list[str],
    linked: bool,
) -> None:
    url, moved = server
    root = project(tmp_path, pages, *UPLOADS)
    result = await run(url, root, device, linked=linked, moved=moved if linked else None)
    assert lines(result) == [
        ("launch", "pass", None),
        ("upload", "pass", None),
        ("await", "pass", None),
        ("assert", "pass", None),
        ("upload", "pass", None),
        ("await", "pass", None),
        ("upload", "pass", None),
        ("await", "pass", None),
    ]
    # Over a link the tool-server held copies for the run, gone with it; co-located, the files themselves.
    assert len(made) == (1 if linked else 0)
    assert list(uploads_dir.iterdir()) == []


async def test_what_is_not_a_file_input_takes_one_file_or_is_disabled_is_an_error_that_says_so(
    server: tuple[str, Moved], pages: str, device: ChromiumDevice, tmp_path: Path
) -> None:
    url, _ = server
    root = project(tmp_path, pages, "upload: { into: Plain button, files: [fixtures/a.txt] }")
    (step,) = [s for s in lines(await run(url, root, device, linked=False)) if s[0] == "upload"]
    assert step == (
        "upload",
        "error",
        "the element there, <button>, is not a file input — name an <input type=file>, the <label> of one, "
        "or an element that holds just one",
    )
    (root / ".argent" / "flows" / "main.yaml").write_text(
        f"steps:\n  - launch: {{ chromium: '{pages}/upload.html' }}\n"
        "  - upload: { into: { id: photo }, files: [fixtures/a.txt, fixtures/b.txt] }\n"
    )
    (step,) = [s for s in lines(await run(url, root, device, linked=False)) if s[0] == "upload"]
    assert step == (
        "upload",
        "error",
        "the file input takes one file (it has no multiple attribute), and this step sets 2",
    )
    (root / ".argent" / "flows" / "main.yaml").write_text(
        f"steps:\n  - launch: {{ chromium: '{pages}/upload.html' }}\n"
        "  - upload: { into: Disabled, files: [fixtures/a.txt] }\n"
    )
    (step,) = [s for s in lines(await run(url, root, device, linked=False)) if s[0] == "upload"]
    assert step == ("upload", "error", "the file input is disabled")


@pytest.mark.parametrize("linked", [False, True], ids=["co-located", "over a link"])
async def test_a_missing_file_stops_the_run_before_its_first_step(
    server: tuple[str, Moved], pages: str, device: ChromiumDevice, tmp_path: Path, linked: bool
) -> None:
    url, moved = server
    root = project(
        tmp_path,
        pages,
        "upload: { into: { id: photo }, files: [fixtures/gone.txt] }",
        "when: { platform: ios }\n    steps:\n      - upload: { into: { id: photo }, files: [maybe.txt] }",
    )
    flows = root / ".argent" / "flows"
    with pytest.raises(ToolCallError) as refused:
        await run(url, root, device, linked=linked, moved=moved if linked else None)
    assert refused.value.error_code == "FLOW_FILE_INVALID"
    assert refused.value.message.splitlines() == [
        "This flow uploads files that cannot be had, so no step ran:",
        f"step 2 in {flows}/main.yaml: upload: {{ into: {{ id: photo }}, files: [fixtures/gone.txt] }} — "
        f"ENOENT: no such file or directory, open '{flows}/fixtures/gone.txt'",
    ]


# --------------------------------------------------------------------------------------------
# Hostile: files the client does not send


def _huge(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(33 * 1024 * 1024)  # sparse: no disk used


@pytest.mark.parametrize("case", ["outside the roots", "a symlink out", "over the cap"])
async def test_files_the_client_refuses_are_named_with_its_reason(
    server: tuple[str, Moved], pages: str, device: ChromiumDevice, tmp_path: Path, case: str
) -> None:
    url, moved = server
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("not for the page")
    written = {
        "outside the roots": "../../../elsewhere/secret.txt",
        "a symlink out": "fixtures/link.txt",
        "over the cap": "fixtures/huge.bin",
    }[case]
    root = project(tmp_path, pages, f"upload: {{ into: {{ id: photo }}, files: [{written}] }}")
    flows = root / ".argent" / "flows"
    if case == "a symlink out":
        os.symlink(secret, flows / "fixtures" / "link.txt")
    if case == "over the cap":
        _huge(flows / "fixtures" / "huge.bin")
    reason = {
        "outside the roots": f"{written} is outside every root this client serves ({root}, {flows})",
        "a symlink out": f"{written} is outside every root this client serves ({root}, {flows})",
        "over the cap": f"{flows}/fixtures/huge.bin is larger than the 32 MiB cap on a file sent to the tool-server",
    }[case]
    with pytest.raises(ToolCallError) as refused:
        await run(url, root, device, linked=True, moved=moved)
    assert refused.value.message.splitlines()[1:] == [
        f"step 2 in {flows}/main.yaml: upload: {{ into: {{ id: photo }}, files: [{written}] }} — {reason}"
    ]
