"""The ``swift`` launch that ``agenthub run trainer=swift`` writes: files and command lines.

A :class:`LaunchPlan` is pure data (no process started, no swift imported):

* ``dataset.jsonl``: one row per task played, ``{"messages": [...], "agenthub_task": "<Task JSON>"}``;
* ``agenthub_swift.json``: the scheduler's :class:`SchedulerSettings`, found through ``AGENTHUB_SWIFT_CONFIG``;
* the commands: ``swift rlhf --rlhf_type grpo ...`` and, in server mode, ``swift rollout ...`` before it.
"""

from __future__ import annotations

import json
import random
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthub.config import write_private_text
from agenthub.training import worker_settings

import agenthub_trainer_swift
from agenthub_trainer_swift.config import SwiftConfig
from agenthub_trainer_swift.settings import SETTINGS_ENV_VAR, SETTINGS_FILE, SchedulerSettings

DATASET_FILE = "dataset.jsonl"
SWIFT_OUTPUT_DIR = "swift"
TINY_MODEL_DIR = "tiny-model"
SCHEDULER = "agenthub"
REWARD = "agenthub_env_reward"
STEP_CALLBACK = "agenthub_step"  # agenthub_trainer_swift.step_callback.CALLBACK_NAME (that module imports swift)
TASK_COLUMN = "agenthub_task"  # the scheduler reads it (agenthub_trainer_swift.scheduler.TASK_COLUMN)


def plugin_file() -> Path:
    """The ``--external_plugins`` file (it imports swift, so it is located, never imported, here)."""
    return Path(agenthub_trainer_swift.__file__).resolve().parent / "swift_plugin.py"


@dataclass
class Command:
    argv: list[str]
    background: bool = False
    """A server (``swift rollout``) that runs while the next command trains, and is stopped after."""

    def shell(self, env: dict[str, str]) -> str:
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        return f"{prefix} {shlex.join(self.argv)}{' &' if self.background else ''}"


@dataclass
class LaunchPlan:
    run_dir: Path
    settings: SchedulerSettings
    dataset: list[dict[str, Any]]
    commands: list[Command]
    env: dict[str, str] = field(default_factory=dict)

    def files(self) -> dict[Path, str]:
        rows = "".join(json.dumps(row) + "\n" for row in self.dataset)
        return {
            self.run_dir / DATASET_FILE: rows,
            self.run_dir / SETTINGS_FILE: self.settings.model_dump_json(indent=2, exclude_none=True) + "\n",
        }

    def write(self) -> None:
        for path, text in self.files().items():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_private_text(path, text)  # the settings hold the run's env token

    def describe(self, *, dataset_rows: int = 3) -> str:
        """What ``--dry-run`` prints: every file (the dataset's first rows) and every command."""
        lines = []
        for path, text in self.files().items():
            body = text.splitlines()
            shown = body[:dataset_rows] if path.name == DATASET_FILE else body
            more = len(body) - len(shown)
            lines += [f"# file {path} ({len(body)} lines)", *shown]
            if more:
                lines.append(f"# ... {more} more rows")
        lines.append("# commands")
        lines += [c.shell(self.env) for c in self.commands]
        return "\n".join(lines)


def dataset_rows(config: SwiftConfig, task_ids: list[Any]) -> list[dict[str, Any]]:
    """``steps x tasks_per_step`` rows from a seeded shuffle of the split's ids (repeated if too few)."""
    if not task_ids:
        raise ValueError(f"env {config.env!r} has no tasks in split {config.split!r}; choose another split")
    order = list(task_ids)
    random.Random(config.seed).shuffle(order)
    count = config.steps * config.tasks_per_step
    rows = []
    for i in range(count):
        task_id = order[i % len(order)]
        task = {"env": config.env, "task_id": task_id, "split": config.split}
        if config.max_turns is not None:
            task["max_turns"] = config.max_turns
        rows.append(
            {
                "messages": [{"role": "user", "content": f"{config.env} task {task_id}"}],
                TASK_COLUMN: json.dumps(task),
            }
        )
    return rows


def flag_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def flags(settings: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in settings.items():
        if value is None:
            continue
        if isinstance(value, list) and value and not isinstance(value[0], (dict, list)):
            out += [f"--{key}", *(flag_value(v) for v in value)]
        else:
            out += [f"--{key}", flag_value(value)]
    return out


OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
"""With the model on this machine nothing need come from a hub: the switches transformers, huggingface_hub and
datasets honour. (ms-swift's own check that a local model matches its hub copy is ``--check_model false``.)"""


def local_model(config: SwiftConfig) -> bool:
    """The tiny model (built in the run directory) or a model directory on this machine, not a hub id."""
    return config.model is None or Path(config.model).expanduser().exists()


def model_flags(config: SwiftConfig, run_dir: Path) -> dict[str, Any]:
    if config.model is None:  # the tiny model: a Qwen2 with a ChatML template, built in the run directory
        return {
            "model": str(run_dir / TINY_MODEL_DIR),
            "model_type": config.model_type or "qwen2",
            "template": config.template or "chatml",
        }
    return {"model": config.model, "model_type": config.model_type, "template": config.template}


def scheduler_settings(config: SwiftConfig, run_dir: Path, urls: list[str], max_turns: int) -> SchedulerSettings:
    """What the multi-turn scheduler in swift's processes reads from the settings file."""
    # a horizon schedule sets each task's limit instead of max_turns
    fixed_turns = max_turns if config.horizon is None else None
    return worker_settings(
        config,
        SchedulerSettings,
        urls=urls,
        max_turns=fixed_turns,
        store=str(run_dir),
        episodes_per_step=config.episodes_per_step,
    )


def build_plan(
    config: SwiftConfig,
    *,
    run_dir: Path,
    urls: list[str],
    task_ids: list[Any],
    max_turns: int,
    on_cpu: bool,
    checkpoint: Path | None = None,
) -> LaunchPlan:
    """``checkpoint``: on resume, the checkpoint ``swift rlhf`` continues from (its ``--resume_from_checkpoint``)."""
    plugin = str(plugin_file())
    model = model_flags(config, run_dir)
    episodes = config.episodes_per_step
    train: dict[str, Any] = {
        "rlhf_type": "grpo",
        **model,
        "tuner_type": "full",
        "dataset": str(run_dir / DATASET_FILE),
        "external_plugins": plugin,
        "multi_turn_scheduler": SCHEDULER,
        "max_turns": max_turns,
        "reward_funcs": [REWARD],
        "num_generations": config.num_generations,
        "per_device_train_batch_size": episodes,
        "generation_batch_size": episodes,
        "gradient_accumulation_steps": 1,
        "max_completion_length": config.max_tokens,
        "max_length": config.max_context,
        "max_steps": config.steps,
        "learning_rate": config.learning_rate,
        "beta": config.beta,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "seed": config.seed,
        "logging_steps": 1,
        "output_dir": str(run_dir / SWIFT_OUTPUT_DIR),
        "add_version": False,
        "report_to": "none",
        "save_strategy": "no" if on_cpu else "steps",
        "dataset_num_proc": 1,
        "dataloader_num_workers": 0,
        # the training step, for the horizon schedule (agenthub_trainer_swift.horizon)
        "callbacks": [STEP_CALLBACK],
    }
    if checkpoint is not None:
        # swift restores the weights, optimizer, scheduler, RNG and global step and skips the rows already trained on
        train["resume_from_checkpoint"] = str(checkpoint)
    offline = local_model(config)
    if offline:
        # else swift asks the ModelScope hub whether the local files are its latest (3 tries, on every run)
        train["check_model"] = False
    if on_cpu:
        train["torch_dtype"] = "float32"  # bf16 is emulated on a CPU: slower, and no memory to save
    commands: list[Command] = []
    if config.mode == "server":
        rollout: dict[str, Any] = {
            **model,
            "external_plugins": plugin,
            "multi_turn_scheduler": SCHEDULER,
            "max_turns": max_turns,
            "vllm_use_async_engine": True,
            "host": config.rollout_host,
            "port": config.rollout_port,
            **config.rollout,
        }
        commands.append(Command(["swift", "rollout", *flags(rollout)], background=True))
        train.update(
            use_vllm=True,
            vllm_mode="server",
            vllm_server_host=[config.rollout_host],
            vllm_server_port=[config.rollout_port],
        )
    elif config.use_vllm:
        train.update(use_vllm=True, vllm_mode="colocate")
    train.update(config.swift)
    commands.append(Command(["swift", "rlhf", *flags(train)]))
    return LaunchPlan(
        run_dir=run_dir,
        settings=scheduler_settings(config, run_dir, urls, max_turns),
        dataset=dataset_rows(config, task_ids),
        commands=commands,
        env={SETTINGS_ENV_VAR: str(run_dir / SETTINGS_FILE), **(OFFLINE_ENV if offline else {})},
    )
