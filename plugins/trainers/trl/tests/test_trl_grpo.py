"""GRPO through `agenthub run trainer=trl`: real TRL, a tiny model built here, the real `trail` env server.

The tensors checked are the ones TRL's ``compute_loss`` receives, captured by wrapping it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import torch
from agenthub import ConfigError, Outcome, Trajectory
from agenthub.rollout import RunStore
from agenthub.testing import one_node_ray, ray_cpus_back
from agenthub.testing import run_cli as main

from agenthub_trainer_trl.config import TrlConfig
from agenthub_trainer_trl.grpo import run_grpo

SMALL = {
    "tasks_per_step": 2,
    "num_generations": 2,
    "max_tokens": 4,
    "concurrency": 8,
    "learning_rate": 1e-2,
    "test_episodes": 4,
}


class LossInputs:
    """Wraps ``trainer.compute_loss`` and keeps a copy of every batch it is given."""

    def __init__(self) -> None:
        self.batches: list[dict[str, Any]] = []

    def __call__(self, trainer: Any) -> None:
        original = trainer.compute_loss

        def compute_loss(model: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            self.batches.append({k: v.detach().clone() if torch.is_tensor(v) else v for k, v in inputs.items()})
            return original(model, inputs, *args, **kwargs)

        trainer.compute_loss = compute_loss


def rows(batch: dict[str, Any]) -> list[tuple[tuple[int, ...], tuple[int, ...], list[int], float]]:
    """(prompt ids, completion ids, loss mask, advantage) of each row, with padding removed."""
    out = []
    for i in range(batch["completion_ids"].shape[0]):
        prompt = batch["prompt_ids"][i][batch["prompt_mask"][i].bool()].tolist()
        length = int(batch["completion_mask"][i].sum())
        completion = batch["completion_ids"][i][:length].tolist()
        mask = (batch["completion_mask"][i] * batch["tool_mask"][i])[:length].tolist()
        out.append((tuple(prompt), tuple(completion), mask, float(batch["advantages"][i])))
    return out


def trajectories(run_dir: Path) -> list[Trajectory]:
    return list(RunStore.existing(run_dir).trajectories())


def group_of(trajectory: Trajectory, size: int) -> tuple[str, int]:
    """Episode keys are ``step/rollout/index``; a GRPO group is ``size`` consecutive indices of one rollout."""
    assert trajectory.key is not None
    rollout, index = trajectory.key.split("@")[0].rsplit("/", 1)
    return rollout, int(index) // size


def test_grpo_steps_train_on_sampled_tokens_only_with_the_env_rewards(tmp_path: Path) -> None:
    captured = LossInputs()
    config = TrlConfig.model_validate(
        {"steps": 2, "save_steps": 1, "runs_dir": str(tmp_path), "run_id": "run", **SMALL}
    )
    assert run_grpo(config, on_trainer=captured) == 0
    run_dir = tmp_path / "run"

    episodes = trajectories(run_dir)
    assert len(episodes) == 2 * 4 and all(t.tokens is not None for t in episodes)
    by_tokens = {(tuple(t.tokens.prompt_ids), tuple(t.tokens.response_ids)): t for t in episodes if t.tokens}

    assert len(captured.batches) == 2
    env_tokens_seen = 0
    for batch in captured.batches:
        for prompt, completion, mask, _ in rows(batch):
            episode = by_tokens[(prompt, completion)]  # the trainer got exactly the tokens the episode sampled
            assert episode.tokens is not None
            assert mask == episode.tokens.response_mask  # env and template tokens are out of the loss
            env_tokens_seen += mask.count(0)
            assert episode.outcome in (Outcome.SUCCESS, Outcome.FAILURE, Outcome.TRUNCATED)
    assert env_tokens_seen > 0

    # rewards reach the trainer: its logged mean reward per step is the env's mean reward of that step
    metrics = [m for m in RunStore.existing(run_dir).metrics() if "reward" in m]
    rewards: dict[int, list[float]] = defaultdict(list)
    for t in episodes:
        assert t.key is not None
        rewards[int(t.key.split("/")[0])].append(t.reward)
    assert [m["step"] for m in metrics] == [1, 2]
    for record in metrics:
        step_rewards = rewards[record["step"] - 1]
        assert record["reward"] == pytest.approx(sum(step_rewards) / len(step_rewards), abs=1e-5)
        assert {"success", "turns", "kl", "loss", "max_turns"} <= set(record)

    assert (run_dir / "checkpoints" / "checkpoint-2").is_dir()
    assert (run_dir / "model" / "config.json").is_file() and (run_dir / "tiny-model" / "config.json").is_file()
    assert (run_dir / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run_dir / "metrics.csv").read_text().splitlines()[0].startswith("step,success,reward")
    assert list((run_dir / "tensorboard").glob("events.out.tfevents.*"))
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "finished" and meta["summary"]["rollouts"] == 2


def test_advantages_follow_the_env_reward_within_each_group(tmp_path: Path) -> None:
    captured = LossInputs()
    config = TrlConfig.model_validate(
        {"steps": 3, "runs_dir": str(tmp_path), "run_id": "adv", **SMALL, "num_generations": 4}
    )
    assert run_grpo(config, on_trainer=captured) == 0
    episodes = trajectories(tmp_path / "adv")
    by_tokens = {(tuple(t.tokens.prompt_ids), tuple(t.tokens.response_ids)): t for t in episodes if t.tokens}
    groups: dict[tuple[str, int], list[float]] = defaultdict(list)
    for t in episodes:
        groups[group_of(t, 4)].append(t.reward)
    checked = 0
    for batch in captured.batches:
        for prompt, completion, _, advantage in rows(batch):
            episode = by_tokens[(prompt, completion)]
            rewards = groups[group_of(episode, 4)]
            mean = sum(rewards) / len(rewards)
            # scale_rewards=none (the default): the advantage is the reward minus its group's mean
            assert advantage == pytest.approx(episode.reward - mean, abs=1e-5)
            checked += 1
    assert checked == 3 * 8 and len(groups) == 3 * 2


def test_resume_continues_from_the_checkpoint_and_the_horizon_stage(tmp_path: Path) -> None:
    horizon = "horizon={kind: stepwise, rounds: [1, 2], every: 2}"
    common = [f"{k}={v}" for k, v in SMALL.items()]
    args = ["run", "trainer=trl", "steps=2", "save_steps=2", f"runs_dir={tmp_path}", "run_id=h", horizon, *common]
    assert main(args) == 0
    run_dir = tmp_path / "h"
    first = trajectories(run_dir)
    assert {t.task.max_turns for t in first} == {1}  # steps 0-1: the first stage of the curriculum
    assert (run_dir / "checkpoints" / "checkpoint-2").is_dir()

    assert main(["run", "--resume", str(run_dir), "steps=4"]) == 0
    resumed = [t for t in trajectories(run_dir) if t.key and t.key.endswith("@r1")]
    assert len(resumed) == 2 * 4
    assert {int(t.key.split("/")[0]) for t in resumed if t.key} == {2, 3}  # not restarted at step 0
    assert {t.task.max_turns for t in resumed} == {2}  # the horizon went on to its second stage
    assert (run_dir / "checkpoints" / "checkpoint-4").is_dir()
    steps = [m["step"] for m in RunStore.existing(run_dir).metrics() if "reward" in m]
    assert steps == [1, 2, 3, 4]
    with pytest.raises(ConfigError, match=r"beta: 0\.0 -> 0\.5.*may change on resume"):
        run_grpo(TrlConfig.model_validate({**RunStore.existing(run_dir).config(), "resume": str(run_dir), "beta": 0.5}))


def test_a_resumed_run_writes_each_step_once_and_loads_its_tied_weights(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Stopped after step 3 was logged but before its checkpoint (checkpoint-2 is the last), the run resumes
    from step 3: what the stopped run wrote for it is dropped, so metrics and episodes hold each step once."""
    import shutil

    common = [f"{k}={v}" for k, v in {**SMALL, "test_episodes": 0}.items()]
    assert main(["run", "trainer=trl", "steps=3", "save_steps=2", f"runs_dir={tmp_path}", "run_id=s", *common]) == 0
    run_dir = tmp_path / "s"
    shutil.rmtree(run_dir / "checkpoints" / "checkpoint-3", ignore_errors=True)  # the stop came before it
    capfd.readouterr()
    caplog.clear()

    assert main(["run", "--resume", str(run_dir), "steps=4"]) == 0
    said = capfd.readouterr().err + caplog.text  # transformers warns through logging
    assert "missing keys" not in said  # lm_head.weight is the embedding: not missing
    steps = [m["step"] for m in RunStore.existing(run_dir).metrics() if "reward" in m]
    assert steps == [1, 2, 3, 4]
    csv_steps = [line.split(",")[0] for line in (run_dir / "metrics.csv").read_text().splitlines()[1:]]
    assert csv_steps == ["1", "2", "3", "4"]
    played = defaultdict(list)
    for t in trajectories(run_dir):
        played[int((t.key or "").split("/")[0])].append(t.key)
    assert {step: len(keys) for step, keys in played.items()} == {0: 4, 1: 4, 2: 4, 3: 4}  # 2 tasks x 2 each
    assert all(key.endswith("@r1") for step in (2, 3) for key in played[step])  # played after resuming


def test_the_tiny_model_trains_with_an_entropy_bonus_and_a_given_model_with_trl_s_default(tmp_path: Path) -> None:
    from agenthub_trainer_trl.config import MODEL_ENTROPY_COEF, TINY_MODEL_ENTROPY_COEF
    from agenthub_trainer_trl.grpo import grpo_settings

    tiny = TrlConfig.model_validate({})
    assert tiny.entropy_coef == TINY_MODEL_ENTROPY_COEF > 0  # what keeps a collapsed run from staying collapsed
    assert grpo_settings(tiny, tmp_path)["entropy_coef"] == TINY_MODEL_ENTROPY_COEF
    assert TrlConfig.model_validate({"model": "org/model"}).entropy_coef == MODEL_ENTROPY_COEF == 0.0
    assert grpo_settings(TrlConfig.model_validate({"entropy_coef": 0}), tmp_path)["entropy_coef"] == 0


def test_a_run_from_before_a_new_setting_resumes_with_its_default(tmp_path: Path) -> None:
    """A stored config without a setting added since (here entropy_coef) resumes; a real change is refused."""
    from agenthub.training import resumption

    from agenthub_trainer_trl.runs import open_run

    old = resumption.saved_config(TrlConfig.model_validate({"runs_dir": str(tmp_path), "run_id": "old"}))
    del old["entropy_coef"]
    RunStore.create(old, root=tmp_path, run_id="old").finish()
    store, suffix = open_run(TrlConfig.model_validate({**old, "resume": str(tmp_path / "old"), "steps": 90}))
    assert store.path == tmp_path / "old" and suffix == "@r1"
    with pytest.raises(ConfigError, match=r"entropy_coef: 0\.01 -> 0\.5"):
        open_run(TrlConfig.model_validate({**old, "resume": str(tmp_path / "old"), "entropy_coef": 0.5}))


def test_backend_ray_plays_the_steps_episodes_on_env_servers_that_ray_placed(tmp_path: Path) -> None:
    """The policy stays in this process; `backend=ray` sends only the env servers out, to a one-node
    Ray started here (a cluster's nodes are tested in the root suite, tests/rollout/test_ray_cluster.py)."""
    pools: list[Any] = []

    def remember_pool(trainer: Any) -> None:  # the pool the run's rollout plays through
        pools.append(trainer.rollout_func.pool)

    with one_node_ray() as ray:
        settings = {**SMALL, "steps": 1, "runs_dir": str(tmp_path), "run_id": "ray", "backend": "ray"}
        assert run_grpo(TrlConfig.model_validate(settings), on_trainer=remember_pool) == 0
        released = ray_cpus_back(ray)
    stored = trajectories(tmp_path / "ray")
    assert len(stored) == 2 * 2 and all(t.outcome is not Outcome.ENV_ERROR for t in stored)
    [pool] = pools
    assert len(pool.endpoints) == 1 and pool.endpoints[0].client.token  # one node's server, behind a token
    assert pool.actors == [] and released == 1.0  # stopped at the run's end: its CPU back to Ray
    assert RunStore.existing(tmp_path / "ray").config()["backend"] == "ray"
