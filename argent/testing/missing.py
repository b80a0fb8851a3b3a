"""The fixtures' stand-ins when pytest-aiohttp is not installed: they say what to install."""

from __future__ import annotations

from typing import NoReturn

import pytest

NEEDS = "{name} needs pytest-aiohttp and pytest-asyncio: pip install 'argent[pytest]'"


@pytest.fixture
def argent_server() -> NoReturn:
    pytest.fail(NEEDS.format(name="argent_server"), pytrace=False)


@pytest.fixture
def argent_run_flow() -> NoReturn:
    pytest.fail(NEEDS.format(name="argent_run_flow"), pytrace=False)
