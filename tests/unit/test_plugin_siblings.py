"""Whether a flow item's refused browser may be freed by another pytest-xdist worker: only over a
shared link, and only with more than one worker."""

from __future__ import annotations

import pytest

from argent.driver import BrowserRoom
from argent.testing.options import shares_a_link


@pytest.mark.parametrize(
    ("workers", "linked", "shares"),
    [
        ("2", True, True),
        ("8", True, True),
        ("1", True, False),  # one worker: nobody else holds the token's browsers for this run
        (None, True, False),  # not under xdist
        ("", True, False),
        ("two", True, False),
        ("2", False, False),  # no link: each worker has its own tool-server and token
    ],
)
def test_siblings_share_only_a_link_of_several_workers(
    monkeypatch: pytest.MonkeyPatch, workers: str | None, linked: bool, shares: bool
) -> None:
    if workers is None:
        monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    else:
        monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", workers)
    assert shares_a_link(linked) is shares


def test_a_room_with_siblings_may_always_free_a_browser() -> None:
    # Nothing of this process runs or ended: alone, the refusal is final; with siblings it may lift.
    assert BrowserRoom().may_free(0) is False
    assert BrowserRoom(siblings=True).may_free(0) is True
