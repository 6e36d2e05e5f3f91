"""``agenthub eval`` on a multi-player env, run as a user runs it: only the agent's seats are scored (the
opponent's are stored and reported apart), win/draw/loss per seat, and the viewer says the same."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agenthub import get_plugin_host
from agenthub.cli.eval_command import EvalConfig, _opponents
from agenthub.errors import ConfigError
from agenthub.option_checks import option_aliases
from agenthub.viewer.api import create_app


def agenthub(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenthub", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def stored(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "trajectories.jsonl").read_text().splitlines()]


def overall(run_dir: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((run_dir / "eval.json").read_text())["overall"]
    return result


def test_random_against_the_oracle_scores_the_agent_alone_everywhere_and_after_a_resume(tmp_path: Path) -> None:
    # The command a new user runs: the oracle never loses, so the random agent wins nothing.
    done = agenthub("eval", "env=tictactoe", "agent=random", "opponent=oracle", "n=10", "run_id=r", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "runs" / "r"
    score = overall(run_dir)
    assert (score["samples"], score["pass_at_k"], score["pass@1"], score["success_rate"]) == (10, 0.0, 0.0, 0.0)
    assert score["outcomes"] == {"failure": 10} and score["opponent_trajectories_not_scored"] == 10
    agent, opponent = score["seats"], score["opponent_seats"]
    assert set(agent) == {"0"} and set(opponent) == {"1"} and agent["0"]["win"] == 0
    assert (opponent["1"]["win"], opponent["1"]["draw"]) == (agent["0"]["loss"], agent["0"]["draw"])
    assert re.search(r"│ overall │ 10 │ +│ -?\d\.\d{3} │  0\.000 │  0\.000 │", done.stdout), done.stdout
    assert "pass@1 0.000 over 10 scored samples" in done.stdout
    assert "the opponent's 10 trajectories are stored" in done.stdout and "opponent oracle (not scored)" in done.stdout
    run_json = json.loads((run_dir / "run.json").read_text())["summary"]
    assert (run_json["success_rate"], run_json["scored_trajectories"], run_json["opponent_trajectories"]) == (0, 10, 10)
    # Each seat's trajectory says who played it: the opponent's carries the opponent's name, not the agent's.
    trajectories = stored(run_dir)
    assert len(trajectories) == 20
    for t in trajectories:
        who = (t["provenance"]["role"], t["provenance"]["agent"])
        assert who == (("agent", "random") if t["seat"] == 0 else ("opponent", "tictactoe-oracle"))
    # The viewer's summary agrees with the console: 0% over the agent's 10, the opponent named and apart.
    with TestClient(create_app(tmp_path / "runs")) as client:
        run = client.get("/api/runs/r").json()
        tasks = client.get("/api/runs/r/tasks").json()["tasks"]
    assert (run["overall"]["success_rate"], run["overall"]["episodes"], run["overall"]["scored"]) == (0.0, 10, 10)
    assert run["overall"]["opponent_episodes"] == 10 and run["overall"]["self_play"] is False
    assert run["overall"]["seats"] == {"agent": agent, "opponent": opponent}
    assert run["config"]["opponent"] == "oracle" and {t["episodes"] for t in tasks} == {1}
    # A kill that lost the last game and one seat of the one before: resume replays them, same accounting.
    lines = (run_dir / "trajectories.jsonl").read_text().splitlines(keepends=True)
    kept = [line for line in lines if not re.search(r'"key":"(9/0/seat\d|8/0/seat1)"', line)]
    assert len(kept) == 17
    (run_dir / "trajectories.jsonl").write_text("".join(kept))
    again = agenthub("eval", "--resume", str(run_dir), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    resumed = overall(run_dir)
    assert (resumed["samples"], resumed["success_rate"], resumed["opponent_trajectories_not_scored"]) == (10, 0.0, 10)
    assert resumed["seats"]["0"]["win"] == 0 and resumed["seats"]["0"]["games"] == 10
    assert Counter((t["seat"], t["provenance"]["role"]) for t in stored(run_dir)) == {
        (0, "agent"): 10,
        (1, "opponent"): 10,
    }


def test_the_oracle_as_the_agent_against_random_is_scored_by_its_own_wins(tmp_path: Path) -> None:
    done = agenthub(
        "eval", "env=tictactoe", "agent=tictactoe-oracle", "opponent=random", "opponent.seed=4", "n=12",
        "run_id=r", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "win/draw/loss per seat: the agent's seats (scored)" in done.stdout
    run_dir = tmp_path / "runs" / "r"
    score = overall(run_dir)
    oracle, random = score["seats"]["0"], score["opponent_seats"]["1"]
    assert oracle["games"] == 12 and oracle["loss"] == 0 and oracle["win"] + oracle["draw"] == 12
    assert oracle["win"] > 0 and (random["win"], random["loss"]) == (oracle["loss"], oracle["win"])
    assert score["samples"] == 12 and score["success_rate"] == round(oracle["win"] / 12, 6)
    assert score["pass_at_k"] == score["success_rate"]  # one sample a task: Pass@1 is the share of games won
    trajectories = stored(run_dir)
    assert len(trajectories) == 24 and {t["provenance"]["opponent"] for t in trajectories} == {"random"}
    opponents = [t["provenance"] for t in trajectories if t["seat"] == 1]
    assert {(p["role"], p["agent"], json.dumps(p["agent_kwargs"])) for p in opponents} == {
        ("opponent", "random", '{"seed": 4}')
    }


def test_self_play_scores_both_seats(tmp_path: Path) -> None:
    done = agenthub("eval", "env=tictactoe", "agent=random", "n=10", "run_id=s", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "self-play: both seats are the agent's" in done.stdout
    score = overall(tmp_path / "runs" / "s")
    seats = score["seats"]
    assert seats["0"]["games"] == seats["1"]["games"] == 10 and score["self_play"] is True
    assert seats["0"]["win"] == seats["1"]["loss"] and seats["0"]["draw"] == seats["1"]["draw"]
    assert "opponent_seats" not in score and score["samples"] == 20
    assert score["success_rate"] == round((seats["0"]["win"] + seats["1"]["win"]) / 20, 6)
    assert {t["provenance"]["role"] for t in stored(tmp_path / "runs" / "s")} == {"agent"}


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
    assert option_aliases(["agent.seed=1", "opponent.seed=2", "seat=1"]) == [
        "agent_kwargs.seed=1",
        "opponent_kwargs.seed=2",
        "seat=1",
    ]
