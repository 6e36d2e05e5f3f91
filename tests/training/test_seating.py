"""``seat=``, ``opponent=``, ``opponent.KEY=`` (agenthub.config.MultiPlayerConfig) as every trainer reads them
(agenthub.training.seating): the executor's opponents and kept seats, or a refusal in words."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agenthub import ConfigError, get_plugin_host
from agenthub.builtin.agents import RandomAgent
from agenthub.builtin.tictactoe import TicTacToeOracle
from agenthub.config import MultiPlayerConfig, validate_config
from agenthub.training import Seating, seating
from agenthub.types import EnvInfo


def info(env: str) -> EnvInfo:
    return get_plugin_host().env(env).info()


def seated(env: str = "tictactoe", **settings: Any) -> Seating:
    return seating(validate_config(MultiPlayerConfig, settings), info(env))


def test_self_play_by_default_trains_on_seat_0_and_the_policy_plays_every_seat() -> None:
    plan = seated()
    assert plan.seats == frozenset({0}) and plan.opponents == {} and plan.opponent is None
    assert plan.trajectories_per_episode == 1
    assert plan.provenance() == {"trained_seats": [0], "opponent": "self-play"}
    assert "self-play" in plan.describe()


def test_an_opponent_plays_every_seat_but_the_trained_one() -> None:
    plan = seated(seat=1, opponent="random", opponent_kwargs={"seed": 3})
    assert plan.seats == frozenset({1}) and list(plan.opponents) == [0]
    assert isinstance(plan.opponents[0], RandomAgent) and plan.opponents[0].seed == 3
    assert plan.provenance() == {"trained_seats": [1], "opponent": "random"}
    oracle = seated(seat=0, opponent="oracle")
    assert oracle.opponent == "tictactoe-oracle" and isinstance(oracle.opponents[1], TicTacToeOracle)


def test_without_make_opponent_only_the_name_is_checked() -> None:
    plan = seating(MultiPlayerConfig(seat=1, opponent="random"), info("tictactoe"), make_opponent=False)
    assert plan.opponent == "random" and plan.opponents == {}


def test_a_single_player_env_plays_as_before_and_keeps_every_trajectory() -> None:
    plan = seated("guess")
    assert plan.seats is None and plan.trajectories_per_episode == 1 and plan.provenance() == {}


def test_more_than_one_trained_seat_is_refused_where_one_trajectory_per_prompt_is_taken() -> None:
    plan = seated(seat=[0, 1])
    assert plan.trajectories_per_episode == 2
    with pytest.raises(ConfigError, match=r"seat=\[0, 1\] trains on 2 seats .* trl takes one trajectory per prompt"):
        plan.require_one_trajectory("trl")
    seated(seat=[1]).require_one_trajectory("trl")


@pytest.mark.parametrize(
    ("env", "settings", "refusal"),
    [
        ("guess", {"opponent": "random"}, "env 'guess' is single-player; opponent= is for multi-player envs"),
        ("guess", {"seat": 1, "opponent": "random"}, "seat= and opponent= are for multi-player envs"),
        ("tictactoe", {"seat": 2}, "env 'tictactoe' has seats 0 to 1; seat=2 does not exist (seats: 0=X, 1=O)"),
        ("tictactoe", {"opponent_kwargs": {"seed": 1}}, "opponent.KEY= settings go with opponent=NAME"),
        ("tictactoe", {"seat": [0, 1], "opponent": "random"}, "leaving none for opponent=random"),
        ("tictactoe", {"opponent": "randon"}, "unknown agent 'randon'; did you mean 'random'?"),
        ("tictactoe", {"opponent": "guess-oracle"}, "opponent=guess-oracle plays env 'guess' only"),
        ("tictactoe", {"opponent": "random", "opponent_kwargs": {"speed": 1}}, "does not take the settings"),
    ],
)
def test_settings_that_do_not_fit_are_refused_in_words(env: str, settings: dict[str, Any], refusal: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(refusal)):
        seated(env, **settings)


def test_an_unknown_opponent_names_how_to_install_more() -> None:
    with pytest.raises(ConfigError, match=r"agenthub install NAME"):
        seated(opponent="no-such-agent")


@pytest.mark.parametrize(("seat", "refusal"), [(-1, "numbered from 0"), ([1, 1], "name each seat once"), ([], "once")])
def test_seat_values_are_checked_when_the_config_is_read(seat: Any, refusal: str) -> None:
    with pytest.raises(ConfigError, match=refusal):
        validate_config(MultiPlayerConfig, {"seat": seat})
    assert MultiPlayerConfig(seat=1).seats == [1] and MultiPlayerConfig(seat=[0, 1]).seats == [0, 1]
    assert MultiPlayerConfig().seats is None
