"""What a command imports (`python -X importtime`): nothing heavy that it does not use.

`argent --help` imports none of its subcommands; listing flows or links needs no HTTP client; an
echo-only flow on the embedded tool-server never loads numpy, Pillow (pixel compare), MCP or anyio.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e

_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$")


def imported(cli: Cli, *args: str) -> set[str]:
    """The top-level packages ``argent <args>`` imports (it must exit 0)."""
    done = cli.run(*args, PYTHONPROFILEIMPORTTIME="1")
    assert done.returncode == 0, done.stderr[-2000:]
    modules = {m.group(1) for line in done.stderr.splitlines() if (m := _IMPORTED.match(line))}
    assert "argent" in modules  # the profile is there
    return {name.split(".")[0] for name in modules}


HEAVY = {"numpy", "PIL", "aiohttp", "mcp", "mcp_types", "anyio", "ruamel", "cattrs", "yarl"}


def test_help_imports_no_subcommand_and_nothing_heavy(cli: Cli) -> None:
    packages = imported(cli, "--help")
    assert not packages & HEAVY
    modules = cli.run("--help", PYTHONPROFILEIMPORTTIME="1").stderr
    assert "argent.cli.flow" not in modules and "argent.server" not in modules


@pytest.mark.parametrize("args", [("flow", "--help"), ("flow", "list"), ("link", "--show"), ("unlink",)])
def test_commands_that_make_no_call_import_no_http_client(cli: Cli, args: tuple[str, ...]) -> None:
    # cattrs is the wire models' codec (argent.link.codec), which renders results and problems.
    assert not imported(cli, *args) & (HEAVY - {"cattrs"})


def test_an_echo_flow_on_the_embedded_server_loads_no_pixel_compare_or_mcp(cli: Cli, project: Path) -> None:
    (project / ".argent" / "flows" / "hello.yaml").write_text("steps:\n  - echo: hello\n")
    packages = imported(cli, "flow", "run", "hello")
    assert "aiohttp" in packages  # the embedded tool-server and its client
    assert not packages & {"numpy", "PIL", "mcp", "mcp_types", "anyio"}
