"""``agenthub eval`` on a multi-player env, run as a user runs it: win/draw/loss per seat."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agenthub import get_plugin_host
from agenthub.cli.eval_command import EvalConfig, _opponents, agent_aliases
from agenthub.errors import ConfigError


def agenthub(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenthub", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_oracle_against_random_wins_or_draws_every_game_and_the_report_says_so(tmp_path: Path) -> None:
    done = agenthub(
        "eval", "env=tictactoe", "agent=tictactoe-oracle", "opponent=random", "opponent.seed=4", "n=12",
        "run_id=r", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "win/draw/loss per seat" in done.stdout
    seats = json.loads((tmp_path / "runs" / "r" / "eval.json").read_text())["overall"]["seats"]
    oracle, random = seats["0"], seats["1"]
    assert oracle["games"] == 12 and oracle["loss"] == 0 and oracle["win"] + oracle["draw"] == 12
    assert (random["win"], random["loss"]) == (oracle["loss"], oracle["win"])
    stored = [json.loads(line) for line in (tmp_path / "runs" / "r" / "trajectories.jsonl").read_text().splitlines()]
    assert len(stored) == 24 and {t["provenance"]["opponent"] for t in stored} == {"random"}
    # Resuming a finished run plays nothing again: every episode's seats are stored.
    again = agenthub("eval", "--resume", str(tmp_path / "runs" / "r"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len((tmp_path / "runs" / "r" / "trajectories.jsonl").read_text().splitlines()) == 24


def test_self_play_reports_both_seats(tmp_path: Path) -> None:
    done = agenthub("eval", "env=tictactoe", "agent=random", "n=10", "run_id=s", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    seats = json.loads((tmp_path / "runs" / "s" / "eval.json").read_text())["overall"]["seats"]
    assert seats["0"]["games"] == seats["1"]["games"] == 10
    assert seats["0"]["win"] == seats["1"]["loss"] and seats["0"]["draw"] == seats["1"]["draw"]


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [
        ({"env": "guess", "opponent": "random"}, "env 'guess' is single-player; opponent= is for multi-player envs"),
        ({"env": "tictactoe", "opponent": "random", "seat": 2}, "has seats 0 to 1; seat=2 does not exist"),
        ({"env": "tictactoe", "seat": 1}, "seat= and opponent.KEY= go with opponent=NAME"),
    ],
)
def test_opponent_settings_that_do_not_fit_the_env_are_refused_in_words(settings: dict[str, Any], refusal: str) -> None:
    config = EvalConfig(**settings)
    with pytest.raises(ConfigError, match=re.escape(refusal)):
        _opponents(config, get_plugin_host().env(config.env))


def test_opponent_settings_have_their_own_shorthand() -> None:
    assert agent_aliases(["agent.seed=1", "opponent.seed=2", "seat=1"]) == [
        "agent_kwargs.seed=1",
        "opponent_kwargs.seed=2",
        "seat=1",
    ]
