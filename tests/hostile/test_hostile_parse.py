"""Hostile flow files sent over a link to a real `argent server start` (issue 10, items 2 and 5).

Each flow rides inline in the flow-execute call, as the client sends it: the root flow as the
``flow_file`` input's content and its fragments as members. The server must refuse what no
flow needs before it costs everyone else (``/healthz`` answers within a second throughout) and
answer ``FLOW_FILE_INVALID`` with a clear message where Python's own errors leaked before.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable
from typing import Any

from argent import limits
from tests.hostile.conftest import Probe

ROOT = "/nowhere/proj"
FLOWS = f"{ROOT}/.argent/flows"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def flow_call(main: bytes, members: dict[str, bytes] | None = None) -> dict[str, Any]:
    """flow-execute args as a linked client sends them: the flow and its `run:` fragments inline."""
    wire = [
        {
            "role": "flow",
            "key": f"{FLOWS}\0{target}",
            "path": f"{FLOWS}/{target}",
            "canonical": f"{FLOWS}/{target}",
            "spelling": {"state": "listed"},
            "content": b64(data),
        }
        for target, data in (members or {}).items()
    ]
    flow_file = {
        "__argentFileInput": True,
        "path": f"{FLOWS}/main.yaml",
        "canonical": f"{FLOWS}/main.yaml",
        "spelling": {"state": "listed"},
        "content": b64(main),
        "members": wire,
    }
    return {"project_root": ROOT, "name": "main", "flow_file": flow_file, "prerequisiteAcknowledged": True}


def call_while_probing(probe: Probe, args: dict[str, Any]) -> tuple[int, Any, float, list[float]]:
    """Run one call in a thread and time `/healthz` until it ends: (status, body, seconds, probes)."""
    outcome: list[tuple[int, Any]] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: outcome.append(probe.call("flow-execute", args, timeout=120)))
    worker.start()
    probes: list[float] = []
    while True:  # at least one probe, however fast the call
        probes.append(probe.healthz_seconds())
        if not worker.is_alive():
            break
    worker.join()
    elapsed = time.monotonic() - started
    status, body = outcome[0]
    return status, body, elapsed, probes


def assert_probes_fast(probes: list[float]) -> None:
    slow = [round(p, 2) for p in probes if p >= 1.0]
    assert not slow, f"/healthz took {slow}s while the call ran"


def test_a_flow_of_100k_top_level_keys_is_refused_quickly_and_never_stalls_the_server(
    hostile_server: Probe,
) -> None:
    text = "steps:\n  - echo: hi\n" + "".join(f"k{i:07d}: {i:08d}\n" for i in range(100_000))
    assert len(text) > 1_900_000
    status, body, elapsed, probes = call_while_probing(hostile_server, flow_call(text.encode()))
    assert (status, body["error_code"]) == (500, "FLOW_FILE_INVALID")
    assert body["error"] == (
        f"Invalid flow file: a mapping with more than {limits.MAX_YAML_MAPPING_KEYS} keys at line 1, column 1 — "
        "far more than any flow needs; check that this is the flow file you meant"
    )
    assert elapsed < 5.0
    assert_probes_fast(probes)
    hostile_server.assert_still_fine()


def test_a_fragment_of_100k_items_fails_its_step_quickly(hostile_server: Probe) -> None:
    fragment = ("steps:\n" + "  - 1\n" * 400_000).encode()
    args = flow_call(b"steps:\n  - echo: before\n  - run: big.yaml\n", {"big.yaml": fragment})
    status, body, elapsed, probes = call_while_probing(hostile_server, args)
    assert status == 200
    steps = body["data"]["steps"]
    assert [(s["kind"], s["status"]) for s in steps] == [("echo", "pass"), ("run", "error")]
    assert steps[1]["reason"] == (
        f'could not load fragment "big.yaml": Invalid flow file: a list with more than '
        f"{limits.MAX_YAML_SEQUENCE_ITEMS} items at line 2, column 3 — far more than any flow needs; split a "
        "long flow into `run:` fragments"
    )
    assert elapsed < 5.0
    assert_probes_fast(probes)
    hostile_server.assert_still_fine()


def test_a_large_flow_parses_off_the_event_loop(hostile_server: Probe) -> None:
    """A big flow within every limit costs seconds to read; others are served meanwhile."""
    n = 1_500
    steps = "".join(f"  - tool: t\n    args: {{ x: {i}, y: [1, 2, 3], z: {{ a: b }} }}\n" for i in range(n))
    args = flow_call(f"steps:\n{steps}  - bogus: x\n".encode())
    status, body, _, probes = call_while_probing(hostile_server, args)
    assert (status, body["error_code"]) == (500, "FLOW_ENTRY_UNRECOGNIZED")
    assert body["error"].endswith(f"(step {n + 1}, line {2 * n + 2})")
    assert_probes_fast(probes)
    hostile_server.assert_still_fine()


def not_utf8(path: str, what: str) -> str:
    return (
        f"Invalid flow file: {path} is not UTF-8 text ({what}) at line 1, column 1 — a flow file is YAML text in "
        "UTF-8; save it as UTF-8"
    )


def test_flow_files_that_are_not_utf8_text_are_flow_file_invalid(hostile_server: Probe) -> None:
    main = f"{FLOWS}/main.yaml"
    cases: list[tuple[bytes, str]] = [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "invalid byte 0x89"),
        ("steps:\n  - echo: a\n".encode("utf-16"), "a UTF-16 byte order mark"),
        (b"\xff" * 64, "invalid byte 0xff"),
    ]
    for data, what in cases:
        status, body = hostile_server.call("flow-execute", flow_call(data))
        assert (status, body["error_code"], body["error"]) == (500, "FLOW_FILE_INVALID", not_utf8(main, what))
    args = flow_call(
        b"steps:\n  - echo: first\n  - run: frag.yaml\n", {"frag.yaml": "steps: []\n".encode("utf-16")}
    )
    status, body = hostile_server.call("flow-execute", args)
    assert status == 200
    steps = body["data"]["steps"]
    assert [(s["kind"], s["status"]) for s in steps] == [("echo", "pass"), ("run", "error")]
    frag = not_utf8(f"{FLOWS}/frag.yaml", "a UTF-16 byte order mark")
    assert steps[1]["reason"] == f'could not load fragment "frag.yaml": {frag}'
    hostile_server.assert_still_fine()


def test_unknown_tags_and_huge_integers_are_flow_file_invalid_before_the_first_step(
    hostile_server: Probe,
) -> None:
    expect: list[tuple[str, Callable[[str], bool]]] = [
        (
            "steps:\n  - echo: first\n  - echo: !foo bar\n",
            lambda error: error.startswith(
                "Invalid flow file: unsupported YAML tag `!foo` on a scalar at line 3, column 11 — "
            ),
        ),
        (
            "steps:\n  - echo: first\n  - wait: " + "9" * 5000 + "\n",
            lambda error: error.startswith(
                "Invalid flow file: an integer of 5000 digits at line 3, column 11 (step 2) — "
            ),
        ),
    ]
    for text, matches in expect:
        status, body = hostile_server.call("flow-execute", flow_call(text.encode()))
        assert (status, body["error_code"]) == (500, "FLOW_FILE_INVALID"), body
        assert matches(body["error"]), body["error"]
        assert "Exceeds the limit" not in body["error"]
    hostile_server.assert_still_fine()
