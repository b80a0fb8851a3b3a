"""The quick reference scan of the client: whatever it accepts, it reads as the parser does."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from argent.client.scan import FlowRefs, quick_refs, refs_of_flow, refs_of_text
from argent.errors import FlowError
from argent.flows.parse import parse_flow

ITEMS = [
    "echo: hello there",
    'echo: "quoted: with a colon"',
    "echo: 'single ''quoted'''",
    "tap: { id: button-1 }",
    'tap: { text: "Save", within: { role: list } }',
    "tap: Save",
    'await: { visible: "Row 1", timeout: 5000 }',
    "wait: 500",
    "run: frag.yaml",
    "run: ../shared/login.yaml",
    "run: sub/deep/x.yaml # a comment",
    "snapshot: home",
    "snapshot: cart_2",
    "script: ./seed.sh",
    "assert: { exists: { id: total } }",
    "scroll-to: Footer",
    "type: { into: { id: email }, text: a@b.c }",
]


def full(text: str) -> FlowRefs | None:
    try:
        return refs_of_flow(parse_flow(text))
    except FlowError:
        return None


def generated(seed: int) -> str:
    rng = random.Random(seed)
    indent = " " * rng.choice([0, 2, 4])
    lines = ["steps:"]
    for _ in range(rng.randint(1, 8)):
        if rng.random() < 0.2:
            inner = " " * rng.choice([0, 2, 4])
            lines.append(f"{indent}- when: {{ platform: ios }}")
            lines.append(f"{indent}  steps:")
            for _ in range(rng.randint(1, 3)):
                lines.append(f"{indent}  {inner}- {rng.choice(ITEMS)}")
        else:
            lines.append(f"{indent}- {rng.choice(ITEMS)}")
        if rng.random() < 0.1:
            lines.append(f"{indent}# a comment")
        if rng.random() < 0.1:
            lines.append("")
    if rng.random() < 0.3:
        lines.append("executionPrerequisite: signed in")
    newline = "\r\n" if rng.random() < 0.2 else "\n"
    return newline.join(lines) + (newline if rng.random() < 0.8 else "")


@pytest.mark.parametrize("seed", range(400))
def test_a_file_the_scan_accepts_has_the_references_the_parser_finds(seed: int) -> None:
    text = generated(seed)
    quick = quick_refs(text)
    parsed = full(text)
    if quick is not None and parsed is not None:
        assert quick == parsed, text
    if parsed is not None:
        assert refs_of_text(text) == parsed


def test_most_generated_files_take_the_quick_path() -> None:
    accepted = sum(quick_refs(generated(seed)) is not None for seed in range(400))
    assert accepted > 300


def test_the_example_flows_read_the_same_either_way() -> None:
    for path in Path(__file__).resolve().parents[2].joinpath("examples").rglob("*.yaml"):
        text = path.read_text()
        parsed = full(text)
        assert refs_of_text(text) == parsed, path


@pytest.mark.parametrize(
    "text",
    [
        "steps:\n  - echo: |\n      - run: evil.yaml\n",
        "steps:\n  - echo: >\n      - run: evil.yaml\n",
        'steps:\n  - echo: "start\n  - run: evil.yaml\n  - echo: end"\n',
        "steps:\n  - echo: 'start\n  - run: evil.yaml\n  - echo: end'\n",
        "steps:\n  - tap: { id: x,\n  - run: evil.yaml }\n",
        "steps:\n  - echo: hello\n    - run: evil.yaml\n",
        "steps:\n  - tool: screenshot-diff\n    args: { baselinePath: /a.png }\n",
        "steps:\n  - &a { run: a.yaml }\n  - *a\n",
        "steps:\n\t- run: a.yaml\n",
        "steps: [ { run: a.yaml } ]\n",
        "steps:\n  - run: login\n",
        "steps:\n  - run: 'quoted.yaml'\n",
        "steps:\n  - snapshot: true\n",
        "steps:\n  - snapshot: 123\n",
        "steps:\n  - when: { platform: ios }\n  - run: a.yaml\n",
        "steps:\n  - when: { platform: ios }\n    steps:\n",
        "name: x\nsteps:\n  - run: a.yaml\n",
        "steps:\n  - run: a.yaml\nsteps:\n  - run: b.yaml\n",
        "steps:\n  - unknown: a.yaml\n",
        "\ufeffsteps:\n  - run: a.yaml\n",
    ],
)
def test_anything_outside_the_subset_goes_to_the_parser(text: str) -> None:
    assert quick_refs(text) is None


def test_block_scalars_are_read_by_the_parser_not_the_scan() -> None:
    assert refs_of_text("steps:\n  - echo: |\n      - run: evil.yaml\n") == FlowRefs()


def test_tool_steps_come_from_the_parser_with_their_args() -> None:
    refs = refs_of_text("steps:\n  - tool: screenshot-diff\n    args: { baselinePath: /a.png }\n")
    assert refs == FlowRefs(tool_steps=(("screenshot-diff", {"baselinePath": "/a.png"}),))
