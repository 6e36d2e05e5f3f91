"""What ``agenthub run trainer=verl`` writes and starts.

The run directory gets ``train.parquet`` (and ``val.parquet``), one row per
task (:mod:`.rows`), and ``agent_loop.yaml``, verl's agent-loop config: a
list with one entry, ``name: agenthub``, ``_target_`` the importable
:class:`~agenthub_trainer_verl.agent_loop.AgenthubAgentLoop`, and the loop's
settings as the other keys (hydra passes them to its constructor). Then
``python -m verl.trainer.main_ppo`` runs with hydra overrides that point verl at
both; ``command.sh`` holds that exact command.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from agenthub.config import write_private_text

from agenthub_trainer_verl.config import VerlConfig
from agenthub_trainer_verl.loop_settings import AGENT_NAME, LOOP_TARGET

if TYPE_CHECKING:
    from agenthub.training import ServerUrls

TRAIN_FILE = "train.parquet"
VAL_FILE = "val.parquet"
LOOP_FILE = "agent_loop.yaml"
COMMAND_FILE = "command.sh"


@dataclass(frozen=True)
class LaunchPlan:
    """The files a run writes and the command that starts verl."""

    run_dir: Path
    command: list[str]
    agent_loop: list[dict[str, Any]]

    def path(self, name: str) -> Path:
        """One of the run directory's files: ``TRAIN_FILE``, ``VAL_FILE``, ``LOOP_FILE`` or ``COMMAND_FILE``."""
        return self.run_dir / name

    @property
    def train_file(self) -> Path:
        return self.path(TRAIN_FILE)

    @property
    def loop_file(self) -> Path:
        return self.path(LOOP_FILE)

    def shell(self) -> str:
        """The command as one shell line per override."""
        head = " ".join(shlex.quote(part) for part in self.command[:3])
        return " \\\n    ".join([head, *(shlex.quote(part) for part in self.command[3:])])


def agent_loop_config(config: VerlConfig, servers: ServerUrls | None = None) -> list[dict[str, Any]]:
    """The agent-loop YAML's content: verl registers each entry under its ``name``; ``servers``: env servers
    started for the run (``backend=ray``), which every worker plays on."""
    if servers is not None:
        loop = config.loop_settings(urls=list(servers), token=servers.token)
    else:
        loop = config.loop_settings()
    settings = loop.model_dump(mode="json", exclude_defaults=True)
    settings["env"] = config.env
    return [{"name": AGENT_NAME, "_target_": LOOP_TARGET, **settings}]


def visible_gpus() -> int:
    """The CUDA GPUs torch sees here, at least 1 (a dry run on a machine without one shows 1)."""
    try:
        import torch
    except ImportError:
        return 1
    return max(1, int(torch.cuda.device_count()))


def _value(value: Any) -> str:
    """A hydra override's value: JSON for lists and dicts, plain text otherwise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return "null" if value is None else str(value)


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``verl.a.b=1`` arrives nested (``{"a": {"b": 1}}``); hydra wants ``a.b=1``."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def hydra_overrides(config: VerlConfig, run_dir: Path, *, validate: bool) -> list[str]:
    """verl's settings for this run; ``config.verl`` entries override or extend them."""
    run_dir = run_dir.resolve()
    train = str(run_dir / TRAIN_FILE)
    val = str(run_dir / VAL_FILE) if validate else train
    settings: dict[str, Any] = {
        "algorithm.adv_estimator": config.adv_estimator,
        "algorithm.use_kl_in_reward": False,
        "critic.enable": config.adv_estimator == "gae",  # GRPO and the like need no critic
        "data.train_files": train,
        "data.val_files": val,
        "data.train_batch_size": config.tasks_per_step,
        "data.max_prompt_length": config.prompt_length,
        "data.max_response_length": config.response_length,
        "data.filter_overlong_prompts": False,
        "actor_rollout_ref.model.path": config.model,
        "actor_rollout_ref.actor.optim.lr": config.learning_rate,
        "actor_rollout_ref.actor.ppo_mini_batch_size": config.tasks_per_step,
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": config.micro_batch_size_per_gpu,
        "actor_rollout_ref.actor.use_kl_loss": False,
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": config.micro_batch_size_per_gpu,
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": config.micro_batch_size_per_gpu,
        "actor_rollout_ref.rollout.name": config.rollout,
        "actor_rollout_ref.rollout.mode": "async",
        "actor_rollout_ref.rollout.n": config.n,
        "actor_rollout_ref.rollout.temperature": config.temperature,
        "actor_rollout_ref.rollout.top_p": config.top_p,
        "actor_rollout_ref.rollout.calculate_log_probs": True,
        # The sampler's logprobs correct the gap between the inference engine and the trained policy (and
        # stale weights): verl's decoupled truncated importance sampling (RolloutCorrectionConfig.decoupled_*_is).
        "algorithm.rollout_correction.rollout_is": config.rollout_is,
        "algorithm.rollout_correction.rollout_is_threshold": config.rollout_is_threshold,
        "actor_rollout_ref.rollout.multi_turn.enable": True,
        "actor_rollout_ref.rollout.agent.num_workers": config.agent_workers,
        "actor_rollout_ref.rollout.agent.default_agent_loop": AGENT_NAME,
        "actor_rollout_ref.rollout.agent.agent_loop_config_path": str(run_dir / LOOP_FILE),
        "trainer.total_training_steps": config.steps,
        "trainer.total_epochs": 1_000_000,  # steps decide the length; epochs only wrap the dataset
        "trainer.nnodes": config.nnodes,
        "trainer.n_gpus_per_node": config.gpus_per_node or visible_gpus(),
        "trainer.project_name": "agenthub",
        "trainer.experiment_name": run_dir.name,
        "trainer.default_local_dir": str(run_dir / "checkpoints"),
        # A resumed run (same run directory, so the same default_local_dir) loads verl's latest checkpoint there.
        "trainer.resume_mode": "auto" if config.resume is not None else "disable",
        "trainer.save_freq": config.save_freq,
        "trainer.test_freq": 10 if validate else -1,
        "trainer.val_before_train": validate,
        "trainer.logger": ["console"],
    }
    overrides = []
    for key, value in {**settings, **flatten(config.verl)}.items():
        overrides.append(f"{key}={_value(value)}" if key in settings else f"++{key}={_value(value)}")
    return overrides


def plan(config: VerlConfig, run_dir: Path, servers: ServerUrls | None = None) -> LaunchPlan:
    python = config.python or sys.executable
    overrides = hydra_overrides(config, run_dir, validate=config.val_split is not None)
    command = [python, "-m", "verl.trainer.main_ppo", *overrides]
    return LaunchPlan(run_dir=run_dir, command=command, agent_loop=agent_loop_config(config, servers))


def write_files(launch: LaunchPlan, rows: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """The parquet files, the agent-loop YAML and ``command.sh``; returns what was written."""
    from agenthub_trainer_verl.rows import write_parquet

    launch.run_dir.mkdir(parents=True, exist_ok=True)
    written = [write_parquet(split_rows, launch.path(name)) for name, split_rows in rows.items()]
    return [*written, *write_launch_files(launch)]


def write_launch_files(launch: LaunchPlan) -> list[Path]:
    """The agent-loop YAML and ``command.sh`` (a resumed run keeps its parquet files); returns what was written."""
    # the agent-loop settings hold the run's env token
    write_private_text(launch.loop_file, yaml.safe_dump(launch.agent_loop, sort_keys=False))
    command = launch.path(COMMAND_FILE)
    command.write_text(f"#!/usr/bin/env bash\nset -euo pipefail\n{launch.shell()}\n")
    command.chmod(0o755)
    return [launch.loop_file, command]
