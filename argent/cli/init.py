"""`argent init [DIR]`: a starter project whose flow passes at once (INTERFACE.md section 12).

It writes ``.argent/flows/example.yaml`` and the page it opens, ``.argent/flows/example.html``, beside
it (a launch path is relative to the flow file), and never overwrites a file: when one exists it
names it and exits 2, having written nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from argent.cli.problems import UsageProblem

FLOW = """\
# The starter flow of `argent init`: run it with `argent flow run example`.
# Each step is one line of the report; docs/flows.md has the whole grammar.
steps:
  - echo: Opening the starter page
  - launch: example.html                 # a path relative to this file, or an http(s):// URL
  - assert: { visible: Welcome to argent }
  - type: { into: Your name, text: Ada }  # the field whose placeholder reads "Your name"
  - tap: Say hello
  - assert: { text: { in: { id: greeting }, equals: "Hello, Ada!" } }
"""

PAGE = """\
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>argent starter</title>
<style>body { font-family: sans-serif; margin: 24px; } input, button { font: inherit; padding: 4px 8px; }</style>
</head>
<body>
  <h1>Welcome to argent</h1>
  <form onsubmit="event.preventDefault(); say()">
    <input id="name" placeholder="Your name" autocomplete="off">
    <button type="button" onclick="say()">Say hello</button>
  </form>
  <p id="greeting"></p>
  <script>
    function say() {
      document.getElementById("greeting").textContent = "Hello, " + document.getElementById("name").value + "!";
    }
  </script>
</body>
</html>
"""

#: What ``argent init`` writes, relative to the project directory.
STARTER: tuple[tuple[str, str], ...] = (
    (".argent/flows/example.yaml", FLOW),
    (".argent/flows/example.html", PAGE),
)


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Create a starter project: a flow and the page it opens.

    In DIRECTORY (default: the current one); an existing file is never overwritten."""
    root = directory.resolve()
    taken = [rel for rel, _ in STARTER if os.path.lexists(root / rel)]
    if taken:
        raise UsageProblem(
            f"{root / taken[0]} already exists; argent init never overwrites a file. Run it in an empty "
            "directory, or move that file away."
        )
    for rel, text in STARTER:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            _write_new(path, text)
        except FileExistsError:
            raise UsageProblem(f"{path} already exists; argent init never overwrites a file.") from None
        except OSError as exc:
            raise UsageProblem(f"Could not write {path}: {exc.strerror or exc}") from None
        click.echo(f"created {path}")
    where = "" if root == Path.cwd().resolve() else f"cd {directory} && "
    click.echo(f"\nNext: {where}argent flow run example")


def _write_new(path: Path, text: str) -> None:
    """Create ``path`` with ``text`` (never replacing a file, nor one a link names); a failed write
    leaves no part of it."""
    with open(path, "x", encoding="utf-8") as fh:
        try:
            fh.write(text)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
