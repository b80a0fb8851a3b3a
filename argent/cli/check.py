"""`argent flow check`: every problem a run would meet in the selected flows, found without a device.

One line per problem, ``<path>:<line>: <what is wrong>. <what to do>.`` (the path relative to the
working directory when the file lies under it), then one closing line; ``--json`` prints one object.
A problem of a file several flows reach is said once. A configured link is checked for as a run over
it would go (a page path, a `script:`), unless ``--local``. Exit 0: every flow valid; 1: a problem;
2: usage (``argent.cli.problems``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from argent.cli.targets import FlowTarget
from argent.client.routing import resolve_route
from argent.reports.render import echo, json_text

EXIT_OK, EXIT_PROBLEMS = 0, 1


def link_note(local: bool) -> tuple[bool, str | None]:
    """Whether a run would go over a link (and the note that says where), as the route stands."""
    if local:
        return False, None
    route = resolve_route()
    if not route.linked:
        return False, None
    return True, (
        f"Checked as a run over the link to {route.url} goes ({route.source}); pass --local to check a local run."
    )


def check_command(targets: list[FlowTarget], root: Path, *, as_json: bool, local: bool) -> int:
    """Check ``targets`` and print what was found; the exit code."""
    from argent.runner.check import check_flow, problem_lines  # the runner only once a flow is checked

    over_link, note = link_note(local)
    if note is not None:
        echo(json_text({"warning": note}, indent=None) if as_json else note, err=True)

    async def check_all() -> list[list[Any]]:
        found = []
        for target in targets:
            found.append(
                await check_flow(
                    target.path, str(root), name=target.name, over_link=over_link, baselines=True
                )
            )
        return found

    per_flow = asyncio.run(check_all())
    seen: set[str] = set()
    flows: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    lines: list[str] = []
    for target, found in zip(targets, per_flow, strict=True):
        flows.append({"path": target.path, "ok": not found, "problems": len(found)})
        for problem, line in zip(found, problem_lines(found), strict=True):
            if line in seen:
                continue
            seen.add(line)
            lines.append(line)
            problems.append(
                {
                    "path": problem.path,
                    "line": problem.line,
                    "what": problem.what,
                    "todo": problem.todo,
                    "text": line,
                }
            )
    bad = sum(1 for flow in flows if not flow["ok"])
    if as_json:
        echo(json_text({"ok": not problems, "flows": flows, "problems": problems}))
    else:
        for line in lines:
            echo(line)
        echo(_closing(len(targets), bad, len(problems)), report=True)
    return EXIT_OK if not problems else EXIT_PROBLEMS


def _closing(total: int, bad: int, count: int) -> str:
    flows = f"{total} flow{'s' if total != 1 else ''}"
    if not count:
        return f"✓ {flows} checked: no problem found"
    return f"✗ {count} problem{'s' if count != 1 else ''} in {bad} of {flows}"
