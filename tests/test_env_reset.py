"""``agenthub.begin_reset``: the start of every env's reset (options, seed, the task a seed draws)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from agenthub import TaskSplit, begin_reset
from agenthub.builtin.guess import GuessNumberEnv
from agenthub.builtin.tictactoe import TicTacToeEnv
from agenthub.builtin.trail import TrailEnv


def test_a_seed_draws_the_same_train_task_every_time_and_a_named_task_is_kept() -> None:
    train = TaskSplit.range(1000, 2000)
    first = begin_reset("demo", task_id=None, seed=5, options=None, train=train)
    assert first.task_id == 1000 + random.Random(5).randrange(1000)  # the draw the envs made before
    assert begin_reset("demo", task_id=None, seed=5, options={}, train=train) == first
    assert begin_reset("demo", task_id=7, seed=5, options=None, train=train).task_id == 7


def test_an_id_list_or_sequence_draws_as_random_choice_did() -> None:
    ids = [3, 9, 27, 81]
    expected = random.Random(11).choice(ids)
    assert begin_reset("demo", task_id=None, seed=11, options=None, train=ids).task_id == expected
    assert begin_reset("demo", task_id=None, seed=11, options=None, train=TaskSplit.of(ids)).task_id == expected


def test_the_default_seed_stands_in_for_none() -> None:
    start = begin_reset("demo", task_id=None, seed=None, options=None, train=range(50), default_seed=0)
    assert start.seed == 0 and start.task_id == random.Random(0).randrange(50)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"options": {"hard": True}}, r"^demo takes no reset options, got \['hard'\]; leave options empty$"),
        ({"options": {"hard": 1}, "hint": "pass task_id instead"}, r"; pass task_id instead$"),
        ({"options": {"hard": 1}, "hint": None}, r"^demo takes no reset options, got \['hard'\]$"),
        (
            {"options": {"walk": True, "x": 1}, "known_options": ("walkthrough", "hints")},
            r"^unknown demo reset option\(s\) 'walk', 'x'; the options are walkthrough, hints$",
        ),
        ({"seed": "7"}, r"^seed must be an integer or None, got '7'$"),
        ({"seed": True}, r"^seed must be an integer or None, got True$"),
    ],
)
def test_refusals_say_what_was_wrong_and_what_to_do(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"task_id": None, "seed": None, "options": None, "train": range(10), **kwargs}
    with pytest.raises(ValueError, match=message):
        begin_reset("demo", **args)


def test_known_options_come_back_as_a_copy() -> None:
    given = {"hints": True}
    start = begin_reset("demo", task_id=1, seed=None, options=given, train=range(10), known_options=("hints",))
    assert start.options == given and start.options is not given


def test_the_built_in_envs_use_it() -> None:
    with pytest.raises(ValueError, match=r"^guess takes no reset options, got \['x'\]; leave options empty$"):
        GuessNumberEnv().reset(options={"x": 1})
    with pytest.raises(ValueError, match="seed must be an integer"):
        TicTacToeEnv().reset(seed=1.5)  # type: ignore[arg-type]
    trail = TrailEnv()
    by_seed = [trail.reset(seed=seed)[0] for seed in range(40)]
    by_task = [trail.reset(task_id=random.Random(seed).randrange(10_000))[0] for seed in range(40)]
    assert by_seed == by_task and len(set(by_seed)) == 2  # the seed draws the train task it always drew
