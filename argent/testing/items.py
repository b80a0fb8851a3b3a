"""Flow files as pytest items: ``<path relative to rootdir>::<flow stem>``.

This module is imported by every pytest run that has argent installed: argent's own modules are
imported only once a flow directory is collected.

A flow directory is collected as ``argent flow run DIR -r`` selects its flows: ``*.yaml`` files with
a valid flow name, in every subdirectory but hidden ones, ``node_modules`` and ``__baselines__``,
less what pytest's own rules leave out (``--ignore``, ``--ignore-glob``, ``norecursedirs``); nothing
else in it (no Python tests, no conftest) is collected. A flow that does not pass fails its
item with the step lines as the CLI prints them; one that could not start fails with its error.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# pytest's own failure representation (not re-exported by ``pytest``): its ``reprcrash`` message
# is the short summary's text, and pytest-xdist carries it from the workers intact.
from _pytest._code.code import ReprEntry, ReprExceptionInfo, ReprFileLocation, ReprTraceback

from argent.testing.options import project_root

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr

    from argent.reports.model import FlowOutcome


def is_flow_file(path: Path) -> bool:
    from argent.flows.names import FLOW_NAME_RE

    return path.suffix == ".yaml" and bool(FLOW_NAME_RE.match(path.stem)) and path.is_file()


class FlowDirectory(pytest.Directory):
    """A directory of flows (or below one): its flow files and subdirectories, sorted."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        from argent.cli.targets import SKIPPED_DIRS

        for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
            path = Path(entry.path)
            if self.ihook.pytest_ignore_collect(collection_path=path, config=self.config):
                continue
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith(".") and entry.name not in SKIPPED_DIRS:
                    yield FlowDirectory.from_parent(self, path=path)
            elif is_flow_file(path) and os.access(path, os.R_OK):
                yield FlowFile.from_parent(self, path=path)


class FlowFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from argent.testing.options import platforms

        chosen = platforms(self.config)
        if len(chosen) > 1:  # a suite across engines: one item per platform
            for platform in chosen:
                yield FlowItem.from_parent(self, name=f"{self.path.stem}[{platform}]", platform=platform)
        else:
            yield FlowItem.from_parent(self, name=self.path.stem)


class FlowNotPassed(Exception):
    """A flow item's run that did not pass; ``outcome`` says how."""

    def __init__(self, outcome: FlowOutcome) -> None:
        super().__init__(outcome.problem or outcome.message or outcome.status)
        self.outcome = outcome


class FlowItem(pytest.Item):
    """One flow file (on one ``platform`` of several), run by one flow-execute call on this process's
    tool-server."""

    def __init__(self, *, platform: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.platform = platform

    def runtest(self) -> None:
        from argent.testing.runs import flow_session

        outcome = flow_session(self.config).run(str(self.path), self.platform)
        if outcome.status == "skipped":
            pytest.skip(outcome.message or "skipped")
        if outcome.status != "passed":
            raise FlowNotPassed(outcome)

    def repr_failure(self, excinfo: ExceptionInfo[BaseException], style: object = None) -> str | TerminalRepr:
        if not isinstance(excinfo.value, FlowNotPassed):
            return super().repr_failure(excinfo)
        from argent.cli.problems import SERVER_MESSAGE_INDENT
        from argent.reports.render import hang, one_line, terminal_safe

        outcome = excinfo.value.outcome
        if outcome.status == "error":
            message = outcome.message or "the flow could not start"
            # The tool-server's words: their later lines stay under "Error: ", as the CLI prints
            # them, so none can pose as pytest's own (a summary, another item's result).
            lines = hang(f"Error: {message}", SERVER_MESSAGE_INDENT).split("\n")
            headline = f"Error: {message.splitlines()[0] if message else ''}"
        else:
            flow = outcome.result.get("flow") if outcome.result is not None else None
            lines = [f'Flow "{one_line(flow) if isinstance(flow, str) else self.name}"', *outcome.lines]
            lines.insert(-1, "")  # a blank line before the summary, as `argent flow run` prints it
            headline = (outcome.problem or lines[-1]).strip()
        # A tool-server's words reach the terminal only as the CLI prints them: made terminal-safe.
        entry = ReprEntry([terminal_safe(line) for line in lines], None, None, None, "value")
        return ReprExceptionInfo(
            reprtraceback=ReprTraceback([entry], None, "value"),
            reprcrash=ReprFileLocation(str(self.path), 1, terminal_safe(headline)),
        )

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"flow {os.path.relpath(self.path, project_root(self.config))}"
