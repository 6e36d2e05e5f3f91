"""The task-id scheme: every id is one game, splits and seeds are disjoint, and ids name their game."""

from __future__ import annotations

import pytest

from agenthub_env_textworld.tasks import (
    FAMILIES,
    LEVELS_PER_FAMILY,
    SPLITS,
    TEST,
    TRAIN,
    game_spec,
    task_id,
)


def test_splits_are_disjoint_ranges_of_the_documented_size() -> None:
    assert (TRAIN.start, TRAIN.stop, TRAIN.count) == (0, 15_000, 15_000)
    assert (TEST.start, TEST.stop, TEST.count) == (100_000, 101_500, 1_500)
    assert list(SPLITS) == ["train", "test"]


@pytest.mark.parametrize("split", ["train", "test"])
def test_every_id_round_trips_and_names_a_distinct_game(split: str) -> None:
    tasks = SPLITS[split]
    assert tasks.start is not None and tasks.stop is not None
    names, seeds = set(), set()
    for tid in range(tasks.start, tasks.stop):
        spec = game_spec(tid)
        assert spec.split == split
        assert task_id(split, spec.family, spec.level, spec.index) == tid
        names.add(spec.name)
        seeds.add(spec.seed)
    assert len(names) == len(seeds) == tasks.count


def test_seeds_never_repeat_across_splits() -> None:
    train = {game_spec(t).seed for t in range(0, 15_000)}
    test = {game_spec(t).seed for t in range(100_000, 101_500)}
    assert not train & test


def test_ids_are_blocks_of_family_and_level_in_the_documented_order() -> None:
    assert [(game_spec(t).family, game_spec(t).level) for t in (0, 999, 1000, 4999, 5000, 9999, 10_000, 14_999)] == [
        ("cooking", 1),
        ("cooking", 1),
        ("cooking", 2),
        ("cooking", 5),
        ("treasure_hunter", 1),
        ("treasure_hunter", 5),
        ("coin_collector", 1),
        ("coin_collector", 5),
    ]
    assert (game_spec(100_742).family, game_spec(100_742).level, game_spec(100_742).index) == ("treasure_hunter", 3, 42)
    assert game_spec(2042).name == "cooking-level3-seed2042"


def test_cooking_games_use_textworlds_own_food_split() -> None:
    assert game_spec(task_id("train", "cooking", 4, 0)).settings["split"] == "train"
    assert game_spec(task_id("test", "cooking", 4, 0)).settings["split"] == "test"


def test_levels_get_harder_within_each_family() -> None:
    for family in FAMILIES:
        settings = [game_spec(task_id("train", family, level, 0)).settings for level in range(1, LEVELS_PER_FAMILY + 1)]
        if family == "cooking":
            sizes = [(s["recipe"], s["go"], sum(bool(s.get(k)) for k in ("open", "cut", "cook"))) for s in settings]
            assert sizes == sorted(sizes) and len(set(sizes)) == LEVELS_PER_FAMILY
        else:
            levels = [s["level"] for s in settings]
            assert levels == sorted(levels) and len(set(levels)) == LEVELS_PER_FAMILY


@pytest.mark.parametrize("bad", [-1, 15_000, 99_999, 101_500, "3", 2.0, True, None])
def test_unknown_ids_say_which_ids_exist(bad: object) -> None:
    with pytest.raises(ValueError, match=r"0 to 14999 \(train\) or 100000 to 101499 \(test\)"):
        game_spec(bad)


@pytest.mark.parametrize(
    "args, message",
    [
        (("valid", "cooking", 1, 0), "unknown split 'valid'"),
        (("train", "zork", 1, 0), "unknown game 'zork'"),
        (("train", "cooking", 6, 0), "level must be 1 to 5"),
        (("test", "cooking", 1, 100), "index must be 0 to 99"),
    ],
)
def test_task_id_rejects_what_does_not_exist(args: tuple[str, str, int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        task_id(*args)
