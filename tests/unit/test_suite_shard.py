"""``--shard I/N``: the spec, and the selection (sorted by path relative to the project root,
``p % N == I - 1``, disjoint and covering)."""

from __future__ import annotations

import random

import pytest

from argent.cli.suite import Shard, parse_shard, select_shard
from argent.cli.targets import FlowTarget

ROOT = "/p"


@pytest.mark.parametrize(
    ("spec", "shard"), [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)), (" 4/4 ", Shard(4, 4))]
)
def test_good_specs(spec: str, shard: Shard) -> None:
    assert parse_shard(spec) == shard


@pytest.mark.parametrize(
    "spec",
    [
        "0/4",
        "5/4",
        "1/0",
        "0/0",
        "-1/4",
        "1/-4",
        "a/b",
        "1",
        "1/",
        "/4",
        "1/4/2",
        "1.0/4",
        "",
        "１/４",
        "2 /4x",
    ],
)
def test_bad_specs_say_what_is_expected(spec: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_shard(spec)
    assert str(err.value) == f"--shard takes I/N with whole numbers 1 <= I <= N (e.g. 2/4), not {spec!r}"


def test_shards_sort_by_path_relative_to_the_project_root() -> None:
    targets = [
        FlowTarget(f"{ROOT}/{rel}") for rel in ("b/x.yaml", "a.yaml", "c.yaml", "b/a.yaml", "a-z.yaml")
    ]
    ordered = ["a-z.yaml", "a.yaml", "b/a.yaml", "b/x.yaml", "c.yaml"]
    assert [t.path for t in select_shard(targets, ROOT, Shard(1, 1))] == [f"{ROOT}/{r}" for r in ordered]
    assert [t.path for t in select_shard(targets, ROOT, Shard(1, 2))] == [
        f"{ROOT}/{r}" for r in ordered[0::2]
    ]
    assert [t.path for t in select_shard(targets, ROOT, Shard(2, 2))] == [
        f"{ROOT}/{r}" for r in ordered[1::2]
    ]


@pytest.mark.parametrize("seed", range(5))
def test_the_n_shards_are_disjoint_and_cover_every_flow(seed: int) -> None:
    rng = random.Random(seed)
    names = {f"{ROOT}/{rng.choice('abc')}/{rng.randrange(10_000)}.yaml" for _ in range(rng.randrange(0, 60))}
    targets = [FlowTarget(path) for path in names]
    rng.shuffle(targets)
    for n in range(1, 9):
        shards = [select_shard(targets, ROOT, Shard(i, n)) for i in range(1, n + 1)]
        seen = [t.path for shard in shards for t in shard]
        assert sorted(seen) == sorted(names)  # covering, and no flow twice
        sizes = [len(s) for s in shards]
        assert max(sizes, default=0) - min(sizes, default=0) <= 1  # balanced


def test_more_shards_than_flows_leaves_some_empty() -> None:
    targets = [FlowTarget(f"{ROOT}/a.yaml"), FlowTarget(f"{ROOT}/b.yaml")]
    assert [len(select_shard(targets, ROOT, Shard(i, 3))) for i in (1, 2, 3)] == [1, 1, 0]


@pytest.mark.parametrize("spec", ["1/" + "9" * 5000, "9" * 5000 + "/1"])
def test_a_spec_of_thousands_of_digits_gets_the_same_message_shortened(spec: str) -> None:
    """Python refuses to read an int of over 4300 digits; the user still gets the spec's message,
    not Python's, and not 5000 characters of it."""
    with pytest.raises(ValueError) as err:
        parse_shard(spec)
    assert str(err.value) == (
        f"--shard takes I/N with whole numbers 1 <= I <= N (e.g. 2/4), not {spec[:40]!r}… (5002 characters)"
    )


def test_a_huge_but_readable_total_is_a_good_spec() -> None:
    assert parse_shard("1/" + "9" * 100) == Shard(1, int("9" * 100))
