"""GRPO on a multi-player env (issue 20): the tiny model plays one seat of ``tictactoe`` against an
opponent (or itself) and learns from that seat's trajectories only. Real TRL, the real env server."""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from agenthub import ConfigError, Outcome, Task, Trajectory
from agenthub.config import validate_config
from agenthub.rollout import EnvPool, FixedHorizon, RunStore, SamplingParams
from agenthub.testing import build_tokenizer
from agenthub.training import seating

from agenthub_trainer_trl.config import TrlConfig
from agenthub_trainer_trl.grpo import run_grpo
from agenthub_trainer_trl.rollout import HubRollout, request_key, task_prompt

SMALL = {
    "tasks_per_step": 2,
    "num_generations": 2,
    "max_tokens": 1,
    "max_context": 4096,
    "concurrency": 8,
    "test_episodes": 2,
}


class Rewards:
    """Wraps ``trainer.compute_loss`` and keeps the advantages of every batch it is given."""

    def __init__(self) -> None:
        self.advantages: list[list[float]] = []

    def __call__(self, trainer: Any) -> None:
        original = trainer.compute_loss

        def compute_loss(model: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            self.advantages.append([float(a) for a in inputs["advantages"]])
            return original(model, inputs, *args, **kwargs)

        trainer.compute_loss = compute_loss


@pytest.mark.parametrize("opponent", ["random", "oracle"])
def test_grpo_on_seat_1_against_an_opponent_trains_on_seat_1s_trajectories(tmp_path: Path, opponent: str) -> None:
    captured = Rewards()
    config = TrlConfig.model_validate(
        {"env": "tictactoe", "seat": 1, "opponent": opponent, "steps": 2, "runs_dir": str(tmp_path)}
        | {"run_id": "ttt", "save_steps": 2, "kl_metric": False, **SMALL}
    )
    assert run_grpo(config, on_trainer=captured) == 0
    run_dir = tmp_path / "ttt"
    stored = list(RunStore.existing(run_dir).trajectories())
    assert len(stored) == 2 * 4  # one trajectory per episode: seat 1's, the opponent's seat is not stored
    assert {t.seat for t in stored} == {1}
    assert all(t.key is not None and t.key.endswith("/seat1") for t in stored)
    name = "tictactoe-oracle" if opponent == "oracle" else "random"
    assert {t.provenance["opponent"] for t in stored} == {name}
    assert {tuple(t.provenance["trained_seats"]) for t in stored} == {(1,)}
    # seat 1 moves second: its first observation is the board after the opponent's first move
    assert all("X" in t.first_observation for t in stored)
    # the trainer's reward is seat 1's own return: per step, the mean of the stored seat-1 rewards
    rewards: dict[int, list[float]] = defaultdict(list)
    for t in stored:
        assert t.reward == pytest.approx(sum(turn.reward for turn in t.turns))
        rewards[int(request_key(t).split("/")[0])].append(t.reward)
    metrics = [m for m in RunStore.existing(run_dir).metrics() if "reward" in m]
    assert [m["step"] for m in metrics] == [1, 2]
    for record in metrics:
        step = rewards[record["step"] - 1]
        assert record["reward"] == pytest.approx(sum(step) / len(step), abs=1e-5)
    assert len(captured.advantages) == 2 and all(len(a) == 4 for a in captured.advantages)


def test_self_play_trains_on_seat_0_by_default(tmp_path: Path) -> None:
    config = TrlConfig.model_validate(
        {"env": "tictactoe", "steps": 1, "runs_dir": str(tmp_path), "run_id": "self", "kl_metric": False, **SMALL}
    )
    assert run_grpo(config) == 0
    stored: list[Trajectory] = list(RunStore.existing(tmp_path / "self").trajectories())
    assert len(stored) == 4 and {t.seat for t in stored} == {0}
    assert {t.provenance["opponent"] for t in stored} == {"self-play"}
    assert {t.provenance["policy"] for t in stored} == {"trl"}


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [
        ({"env": "tictactoe", "seat": [0, 1]}, "seat=[0, 1] trains on 2 seats of each 'tictactoe' episode, but TRL's"),
        ({"env": "tictactoe", "seat": 2}, "env 'tictactoe' has seats 0 to 1; seat=2 does not exist"),
        ({"env": "trail", "opponent": "random"}, "env 'trail' is single-player; opponent= is for multi-player envs"),
        ({"env": "tictactoe", "opponent": "randum"}, "did you mean 'random'?"),
    ],
)
def test_seat_settings_that_do_not_fit_are_refused_before_a_run_is_made(
    tmp_path: Path, settings: dict[str, Any], refusal: str
) -> None:
    config = validate_config(TrlConfig, {**settings, "runs_dir": str(tmp_path)})
    with pytest.raises(ConfigError, match=re.escape(refusal)):
        run_grpo(config)
    assert not list(tmp_path.iterdir())


def first_free_cell(tokenizer: Any) -> Any:
    """A scripted model: it reads the last board in its prompt and places its mark in the first free cell."""

    def generate(prompt_ids: list[int], sampling: SamplingParams) -> tuple[list[int], list[float], str]:
        text = tokenizer.decode(prompt_ids)
        board = text[text.rindex("The board:") :]
        cell = re.search(r"[1-9]", board.replace("\n", " ").split("Your move")[0].replace("The board:", ""))
        assert cell is not None
        ids = [*tokenizer.encode(f"place {cell.group()}"), tokenizer.eos_token_id]
        return ids, [-0.5] * len(ids), "stop"

    return generate


def test_the_rollout_answers_the_trained_seats_rewards_not_the_opponents(tmp_path: Path) -> None:
    """Seat 1 (O) played by a naive scripted model against the oracle (X, never loses): TRL's rewards are
    seat 1's returns (-1 for a loss), one row per prompt, and only seat 1's trajectories are stored."""
    tokenizer = build_tokenizer()
    store = RunStore.create({"env": "tictactoe"}, root=tmp_path, run_id="r")

    async def opened() -> EnvPool:
        return await EnvPool.launch("tictactoe", processes=1)

    with asyncio.Runner() as runner:
        pool = runner.run(opened())
        try:
            info = runner.run(pool.info())
            seated = seating(TrlConfig(env="tictactoe", seat=1, opponent="oracle"), info)
            rollout = HubRollout(
                runner=runner,
                pool=pool,
                tokenizer=tokenizer,
                make_generate=lambda trainer: first_free_cell(tokenizer),
                horizon=FixedHorizon(turns=info.default_max_turns),
                sampling=SamplingParams(max_tokens=8),
                max_context=4096,
                system_prompt=None,
                store=store,
                provenance=seated.provenance(),
                opponents=seated.opponents,
                seats=seated.seats,
            )
            prompts = [task_prompt(Task(env="tictactoe", task_id=i, split="train")) for i in (0, 0, 1, 1)]
            batch = rollout(prompts, SimpleNamespace(state=SimpleNamespace(global_step=0)))
        finally:
            runner.run(pool.close())
            store.finish()
    stored = list(store.trajectories())
    assert len(stored) == len(batch["env_reward"]) == 4 and {t.seat for t in stored} == {1}
    assert all(t.outcome is Outcome.FAILURE and t.seat_result == "loss" for t in stored)
    assert batch["env_reward"] == [-1.0] * 4  # seat 1's return; seat 0 (the oracle) won +1
    assert all(t.provenance["seat_returns"] == {"0": 1.0, "1": -1.0} for t in stored)
    assert batch["success"] == [0.0] * 4
    assert all(1 in mask for mask in batch["env_mask"])  # seat 1's sampled moves are trained on


def test_a_dry_run_refuses_seats_the_env_does_not_have_and_shows_the_seating(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from agenthub.testing import run_cli

    assert run_cli(["run", "trainer=trl", "env=tictactoe", "seat=2", "--dry-run"]) != 0
    assert "env 'tictactoe' has seats 0 to 1; seat=2 does not exist" in capsys.readouterr().err
    args = ["run", "trainer=trl", "env=tictactoe", "seat=1", "opponent=random", "max_tokens=8", "--dry-run"]
    assert run_cli(args) == 0  # max_tokens=8: the launch checks measure "place 9" at 7 tokens
    assert "(split train, seat 1 against random)" in capsys.readouterr().out
