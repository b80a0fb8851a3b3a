"""Counts of the paths a flow run takes through the code (issue 26), not timings.

    .venv/bin/python bench/measure_paths.py

1. ``client_imports``: the argent modules ``import argent.client.session`` loads (the HTTP client);
   ``client_imports_runner`` / ``client_imports_parser`` / ``client_imports_watcher``: whether the
   runner, the flow parser or the inotify watcher are among them.
2. ``flow_run_modules``: the argent modules whose code runs during one ``argent flow run`` of a saved
   flow with one ``run:`` fragment, co-located (embedded tool-server, in this process), from the
   command to the parser (a second run: the first imports every module); ``flow_run_modules_linked_client``: the same run over a link, the client's
   side only (the tool-server in another process).
3. ``root_walks_per_call`` / ``root_resolutions_per_call``: on a tool-server, how many times one
   flow-execute call walks the steps of its root flow looking for references (``walk_steps`` of the
   root's steps, and the leading-launch walk when it reads files, not the run's graph), and how many
   times it resolves the root flow
   (``resolve_source`` of the call's own request), over a link and co-located under a policy;
   ``fragment_resolutions_per_call`` / ``fragment_reads_per_call``: how many times it resolves the
   root's one ``run:`` reference (``FlowFiles.fragment``) and reads that fragment (``read_text``),
   the run's own resolution and read included.

Prints one JSON object.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "argent"


def client_imports() -> dict[str, Any]:
    code = (
        "import sys, json; import argent.client.session\n"
        "mods = sorted(m for m in sys.modules if m == 'argent' or m.startswith('argent.'))\n"
        "print(json.dumps(mods))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    mods: list[str] = json.loads(out.stdout)
    return {
        "client_imports": len(mods),
        "client_imports_runner": any(m.startswith("argent.runner") for m in mods),
        "client_imports_parser": "argent.flows.parse" in mods,
        "client_imports_watcher": "argent.utils.watch" in mods,
    }


def _project(tmp: Path) -> Path:
    flows = tmp / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "main.yaml").write_text("steps:\n  - echo: hello\n  - run: frag.yaml\n")
    (flows / "frag.yaml").write_text("steps:\n  - echo: from the fragment\n")
    return flows.parent.parent


@contextlib.contextmanager
def _modules_run(into: set[str]) -> Iterator[None]:
    prefix = str(PACKAGE) + os.sep

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith(prefix):
                into.add(os.path.relpath(name, ROOT))

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def _run_cli(cli: Any, seen: set[str]) -> None:
    """One warm run (every module imported), then one run whose modules are counted."""
    with contextlib.suppress(SystemExit):
        cli(["flow", "run", "main"], prog_name="argent", standalone_mode=False)
    with _modules_run(seen), contextlib.suppress(SystemExit):
        cli(["flow", "run", "main"], prog_name="argent", standalone_mode=False)


def flow_run_modules() -> int:
    from argent.cli.main import cli

    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp))
        seen: set[str] = set()
        old = os.getcwd()
        os.chdir(root)
        saved = {key: os.environ.pop(key, None) for key in ("ARGENT_TOOLS_URL", "ARGENT_AUTH_TOKEN", "HOME")}
        os.environ["HOME"] = tmp  # no link.json: an embedded tool-server
        try:
            _run_cli(cli, seen)
        finally:
            os.chdir(old)
            for key, value in saved.items():
                if value is not None:
                    os.environ[key] = value
    return len(seen)


def linked_client_modules() -> int:
    """The client's side of ``argent flow run`` over a link to a tool-server in another process."""
    sys.path.insert(0, str(ROOT / "bench"))
    from common import start_argent_no_auth

    from argent.cli.main import cli

    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp))
        proc, url = start_argent_no_auth(tmp, None)
        seen: set[str] = set()
        old = os.getcwd()
        os.chdir(root)
        os.environ["ARGENT_TOOLS_URL"] = url
        try:
            _run_cli(cli, seen)
        finally:
            os.chdir(old)
            os.environ.pop("ARGENT_TOOLS_URL", None)
            proc.terminate()
            proc.wait(timeout=30)
    return len(seen)


#: ``FlowFiles`` that only wrap another (a memo): their calls are not resolutions of their own.
_WRAPPERS = frozenset({"ScanFiles", "GraphLookup", "FilesLookup"})


class _Counts:
    def __init__(self) -> None:
        self.root_steps: Any = None
        self.walks = 0
        self.resolutions = 0
        self.walkers: list[str] = []
        self.fragment_resolutions = 0
        self.fragment_reads = 0


def _counting(counts: _Counts, root_name: str) -> Any:
    def hook(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if not code.co_filename.startswith(str(PACKAGE)):
            return
        name = code.co_name
        if event == "return" and name == "load_root_flow" and counts.root_steps is None and arg is not None:
            counts.root_steps = arg.steps
        if event != "call":
            return
        wrapper = type(frame.f_locals.get("self")).__name__ in _WRAPPERS
        if name == "fragment" and frame.f_locals.get("target") == "frag.yaml" and not wrapper:
            counts.fragment_resolutions += 1
        elif name == "read_text" and not wrapper:
            if str(getattr(frame.f_locals.get("ref"), "path", "")).endswith("/frag.yaml"):
                counts.fragment_reads += 1
        elif name == "resolve_source":
            req = frame.f_locals.get("req")
            if getattr(req, "name", None) == root_name:
                counts.resolutions += 1
        elif name == "walk_steps" and counts.root_steps is not None:
            if frame.f_locals.get("steps") is counts.root_steps:
                counts.walks += 1
                caller = frame.f_back
                counts.walkers.append(caller.f_code.co_qualname if caller is not None else "?")
        elif name == "leading_launch" and counts.root_steps is not None:
            flow = frame.f_locals.get("flow")
            # A leading-launch walk over the run's graph (a GraphLookup) reads no file: not a walk.
            reads = type(frame.f_locals.get("lookup")).__name__ != "GraphLookup"
            if getattr(flow, "steps", None) is counts.root_steps and reads:
                counts.walks += 1
                counts.walkers.append("leading_launch")

    return hook


async def _one_call(linked: bool, scripts_off: bool, root: Path) -> _Counts:
    from argent.client.session import ToolServerClient
    from argent.server.config import ServerConfig
    from argent.server.policy import ServerPolicy
    from argent.server.serve import start_server

    config = ServerConfig(host="127.0.0.1", port=0, token="t", policy=ServerPolicy(scripts=not scripts_off))
    server = await start_server(config, None)
    counts = _Counts()
    try:
        async with ToolServerClient(server.url, "t", linked=linked) as client:
            await client.call("flow-execute", {"project_root": str(root), "name": "main"})  # warm
            counts = _Counts()
            hook = _counting(counts, "main")
            threading.setprofile(hook)
            sys.setprofile(hook)
            try:
                await client.call("flow-execute", {"project_root": str(root), "name": "main"})
            finally:
                sys.setprofile(None)
                threading.setprofile(None)  # type: ignore[arg-type]
    finally:
        await server.stop()
    return counts


def server_walks() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp))
        for label, linked, scripts_off in (
            ("linked", True, False),
            ("colocated", False, False),
            ("colocated_scripts_off", False, True),
        ):
            counts = asyncio.run(_one_call(linked, scripts_off, root))
            out[f"root_walks_per_call_{label}"] = counts.walks
            out[f"root_resolutions_per_call_{label}"] = counts.resolutions
            out[f"root_walkers_{label}"] = counts.walkers
            out[f"fragment_resolutions_per_call_{label}"] = counts.fragment_resolutions
            out[f"fragment_reads_per_call_{label}"] = counts.fragment_reads
    return out


def main() -> None:
    results: dict[str, Any] = {}
    results.update(client_imports())
    results["flow_run_modules"] = flow_run_modules()
    results["flow_run_modules_linked_client"] = linked_client_modules()
    results.update(server_walks())
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
