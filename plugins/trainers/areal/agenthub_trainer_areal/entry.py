"""What the entry script runs: AReaL's ``PPOTrainer`` (GRPO) with :class:`HubWorkflow` as its rollout.

``python train.py --config areal.yaml [KEY=VALUE ...]`` (AReaL's own CLI
parser: ``KEY=VALUE`` overrides any YAML setting). This process is AReaL's
controller; the workflow is named by its import path and built on each
rollout worker from :func:`workflow_kwargs`, as AReaL's examples do.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Any

from agenthub import ConfigError, Task
from agenthub.rollout import EnvPool
from agenthub.training import split_task_ids
from areal.api.cli_args import GRPOConfig, load_expr_config, parse_cli_args, to_structured_cfg
from pydantic import ValidationError

from agenthub_trainer_areal.config import HubSection
from agenthub_trainer_areal.workflow import task_row

WORKFLOW = "agenthub_trainer_areal.workflow.HubWorkflow"


@dataclass
class HubGRPOConfig(GRPOConfig):  # type: ignore[misc]  # AReaL is untyped
    """AReaL's ``GRPOConfig`` with the ``agenthub:`` section (see :class:`HubSection`)."""

    agenthub: dict[str, Any] = field(default_factory=dict)


def parse_experiment(argv: list[str]) -> Any:
    """``--config FILE [KEY=VALUE ...]`` read by AReaL's own parser into a :class:`HubGRPOConfig`, nothing saved."""
    from omegaconf import OmegaConf

    raw, _ = parse_cli_args(argv)
    return OmegaConf.to_object(to_structured_cfg(raw, config_cls=HubGRPOConfig))


def hub_section(config: Any) -> HubSection:
    try:
        return HubSection.model_validate(config.agenthub)
    except ValidationError as exc:
        raise ConfigError(f"the agenthub section of the experiment YAML is invalid: {exc}") from None


def load_config(argv: list[str]) -> tuple[Any, HubSection]:
    """As AReaL's scripts start: ``load_expr_config`` (which also saves the config to its log dir)."""
    config, _ = load_expr_config(argv, HubGRPOConfig)
    return config, hub_section(config)


async def task_rows(hub: HubSection) -> list[dict[str, Any]]:
    """One dataset row per task of the split, listed by the env itself (a local server is started briefly)."""
    if hub.url:
        pool = EnvPool.from_urls(hub.url, token=hub.token)
    else:
        pool = await EnvPool.launch(hub.env, processes=1, overrides={"token": hub.token} if hub.token else None)
    try:
        info = await pool.info()
        if hub.split not in info.splits:
            raise ConfigError(f"env {info.name!r} has no split {hub.split!r}; it has: {', '.join(info.splits)}")
        ids = split_task_ids(await pool.endpoints[0].client.tasks(hub.split))
    finally:
        await pool.close()
    return [task_row(Task(env=info.name, task_id=i, split=hub.split)) for i in ids]


def workflow_kwargs(config: Any, hub: HubSection) -> dict[str, Any]:
    """``HubWorkflow``'s arguments, sent to every rollout worker (plain data and AReaL's gconfig)."""
    return {
        "env": hub.env,
        "tokenizer": config.tokenizer_path,
        "gconfig": config.gconfig,
        "max_context": hub.max_context,
        "horizon": hub.horizon,
        "url": hub.url or None,
        "token": hub.token,
        "processes": hub.processes,
        "capacity": hub.capacity,
        "max_attempts": hub.max_attempts,
        "resamples": hub.resamples,
        "episode_timeout_s": hub.episode_timeout_s,
        "system_prompt": hub.system_prompt,
        "run_dir": hub.run_dir,
        "seat": hub.seat,
        "opponent": hub.opponent,
        "opponent_kwargs": hub.opponent_kwargs,
    }


def epochs_for(config: Any, tasks: int) -> int:
    """Passes over the tasks that reach ``total_train_steps`` (AReaL stops at whichever comes first)."""
    batch = int(config.train_dataset.batch_size)
    steps_per_epoch = tasks // batch
    if steps_per_epoch < 1:
        raise ConfigError(
            f"the split has {tasks} tasks, fewer than tasks_per_step={batch} (train_dataset.batch_size); "
            "lower tasks_per_step or use a larger split"
        )
    if config.total_train_steps is None:
        return int(config.total_train_epochs)
    return max(int(config.total_train_epochs), math.ceil(int(config.total_train_steps) / steps_per_epoch))


def main(argv: list[str]) -> None:
    from areal import PPOTrainer

    config, hub = load_config(argv)
    rows = asyncio.run(task_rows(hub))
    config.total_train_epochs = epochs_for(config, len(rows))
    with PPOTrainer(config, train_dataset=rows) as trainer:
        trainer.train(workflow=WORKFLOW, workflow_kwargs=workflow_kwargs(config, hub))
