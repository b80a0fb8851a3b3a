"""A hostile tool-server cannot print a line of its own in the pytest plugin's report: an error
message that spans lines stays indented under the item's ``Error: `` (as ``argent flow run`` hangs
it under Click's), so no line of it can pose as pytest's summary or another item's result."""

from __future__ import annotations

import os

import pytest

from tests.hostile.conftest import HostileToolServer
from tests.hostile.hostile_server import buffered

pytest_plugins = ["pytester"]

FORGED = "========== 3 passed in 0.01s =========="


@pytest.fixture
def project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> pytest.Pytester:
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    for name in list(os.environ):
        if name.startswith("ARGENT_"):
            monkeypatch.delenv(name)
    flows = pytester.path / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "a.yaml").write_text("steps:\n  - echo: hello\n")
    return pytester


def test_a_server_error_spanning_lines_stays_under_the_items_error(
    project: pytest.Pytester, hostile: HostileToolServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile.on("flow-execute", buffered({"error": f"boom\n{FORGED}\nPASSED"}, status=400))
    for name, value in hostile.env().items():
        monkeypatch.setenv(name, value)
    done = project.runpytest_subprocess("--argent-flows", ".argent/flows", "-p", "no:cacheprovider")
    done.assert_outcomes(failed=1)
    lines = done.outlines
    assert "Error: boom" in lines, lines
    assert FORGED not in lines and "PASSED" not in lines, lines
    assert any(line.strip() == FORGED and line.startswith(" ") for line in lines), lines
