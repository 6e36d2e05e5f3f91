"""OpenRLHF's launch for a run: the ``train_ppo_ray`` command line and the files it reads.

* ``prompts.jsonl``: one row ``{"input": <task JSON>}`` per env task id; OpenRLHF hands each
  row's ``input`` to the agent executor as its prompt (``--data.input_key input``, no chat template);
* ``agent.json``: :class:`~agenthub_trainer_openrlhf.settings.AgentSettings`, named by
  ``AGENTHUB_OPENRLHF_SETTINGS`` in the command's environment;
* the command: ``python -m openrlhf.cli.train_ppo_ray`` with ``--train.agent_func_path`` set to
  :mod:`agenthub_trainer_openrlhf.agent_func` (an installed file, never generated source), and
  ``--algo.dynamic_filtering_enable`` so that groups with an infra failure are dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from agenthub import ConfigError, Task, TaskId
from agenthub.config import write_private_text
from agenthub.training import worker_settings

from agenthub_trainer_openrlhf.config import OpenRlhfConfig
from agenthub_trainer_openrlhf.settings import SETTINGS_ENV, AgentSettings

PROMPTS_FILE = "prompts.jsonl"
AGENT_SETTINGS_FILE = "agent.json"
INPUT_KEY = "input"

FlagValue = str | int | float | bool | list[Any] | None


def agent_func_path() -> str:
    """The installed ``agent_func.py``: OpenRLHF loads the agent by file path, in every vLLM actor."""
    return str(Path(__file__).resolve().with_name("agent_func.py"))  # not imported here: it imports OpenRLHF


def flag_text(value: Any) -> str:
    """A number as argparse reads it back: ``-1000000000`` rather than ``-1e+09``, which argparse takes for a flag."""
    if isinstance(value, float):
        return format(Decimal(repr(value)), "f")
    return str(value)


def flatten(options: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"ds": {"zero_stage": 3}}`` -> ``{"ds.zero_stage": 3}`` (train_ppo_ray's dotted flag names)."""
    flat: dict[str, Any] = {}
    for key, value in options.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def render_flags(flags: Mapping[str, FlagValue]) -> list[str]:
    """argv for ``flags``: True a bare flag, False or None none, a list its values."""
    argv: list[str] = []
    for name, value in flags.items():
        if value is None or value is False:
            continue
        argv.append(f"--{name}")
        if value is True:
            continue
        values = value if isinstance(value, list | tuple) else [value]
        argv.extend(flag_text(v) for v in values)
    return argv


def train_flags(config: OpenRlhfConfig, run_dir: Path) -> dict[str, FlagValue]:
    """train_ppo_ray's flags for ``config``, with ``openrlhf.*`` applied last."""
    flags: dict[str, FlagValue] = {
        "actor.model_name_or_path": config.model,
        "train.agent_func_path": agent_func_path(),
        "data.prompt_dataset": str(run_dir / PROMPTS_FILE),
        "data.input_key": INPUT_KEY,
        "data.max_len": config.max_len,
        "rollout.max_new_tokens": config.max_tokens,
        "rollout.n_samples_per_prompt": config.n_samples_per_prompt,
        "rollout.batch_size": config.rollout_batch_size,
        "rollout.micro_batch_size": config.micro_rollout_batch_size,
        "rollout.temperature": config.temperature,
        "rollout.top_p": config.top_p,
        "train.batch_size": config.train_batch_size or config.samples_per_rollout,
        "train.micro_batch_size": config.micro_train_batch_size,
        "train.num_episodes": config.episodes,
        "train.seed": config.seed,
        "algo.advantage.estimator": config.estimator,
        "algo.kl.init_coef": config.kl_coef,
        # vLLM's logprobs (which the agent returns) correct the gap between vLLM and the DeepSpeed actor:
        # OpenRLHF's importance-sampling correction, with its own mode (mask) and bounds (0.5, 5.0).
        "algo.advantage.is_correction_level": config.is_correction,
        # Required to drop infra failures: their NaN score fails the range check (see response.py).
        "algo.dynamic_filtering_enable": True,
        "algo.dynamic_filtering_range": list(config.filter_range),
        "actor.adam.lr": config.learning_rate,
        "actor.num_nodes": config.nodes,
        "actor.num_gpus_per_node": config.gpus_per_node,
        "ref.num_nodes": config.nodes,
        "ref.num_gpus_per_node": config.gpus_per_node,
        "vllm.num_engines": config.engines,
        "vllm.tensor_parallel_size": config.vllm_tensor_parallel_size,
        "vllm.gpu_memory_utilization": config.vllm_gpu_memory_utilization,
        "train.colocate_all": config.colocate,
        "vllm.enable_sleep": config.colocate,
        "ds.enable_sleep": config.colocate,
        "actor.gradient_checkpointing_enable": True,
        "ckpt.path": str(run_dir / "checkpoints"),
        "ckpt.output_dir": str(run_dir / "model"),
        "ckpt.save_steps": config.save_steps,
        "ckpt.load_enable": config.resume is not None,
        "logger.tensorboard_dir": str(run_dir / "tensorboard"),
    }
    flags.update(flatten(config.openrlhf))
    if flags.get("algo.dynamic_filtering_enable") is not True:
        raise ConfigError(
            "openrlhf.algo.dynamic_filtering_enable must stay on: it is how episodes that failed for infrastructure "
            "reasons are dropped with their group instead of being trained on; widen filter_range instead"
        )
    if flags.get("data.apply_chat_template") or flags.get("data.input_key") != INPUT_KEY:
        raise ConfigError(
            "the prompts are agenthub tasks (JSON) that the agent renders with the model's chat template itself; "
            "leave openrlhf.data.apply_chat_template and openrlhf.data.input_key unset"
        )
    return flags


def train_command(config: OpenRlhfConfig, run_dir: Path, settings: AgentSettings) -> list[str]:
    """The command that starts training: local, or ``ray job submit`` with the settings inline."""
    command = [config.python, "-m", "openrlhf.cli.train_ppo_ray", *render_flags(train_flags(config, run_dir))]
    if config.ray_address is None:
        return command
    runtime_env = {"env_vars": {SETTINGS_ENV: settings.model_dump_json()}}
    return [
        "ray",
        "job",
        "submit",
        "--address",
        config.ray_address,
        "--runtime-env-json",
        json.dumps(runtime_env),
        "--",
        *command,
    ]


def prompt_rows(env: str, split: str, task_ids: Sequence[TaskId], max_turns: int | None) -> list[dict[str, str]]:
    """The prompt data: one task per row, its turn limit in the task."""
    return [
        {INPUT_KEY: Task(env=env, task_id=i, split=split, max_turns=max_turns).model_dump_json(exclude_defaults=True)}
        for i in task_ids
    ]


@dataclass(frozen=True)
class Launch:
    """Everything a run writes and starts."""

    command: list[str]
    environment: dict[str, str]
    settings: AgentSettings
    prompts: list[dict[str, str]]
    run_dir: Path

    def write_files(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(row) + "\n" for row in self.prompts)
        (self.run_dir / PROMPTS_FILE).write_text(lines, encoding="utf-8")
        # the agent's settings hold the run's env token
        write_private_text(self.run_dir / AGENT_SETTINGS_FILE, self.settings.model_dump_json(indent=2) + "\n")

    def describe(self, *, shown_rows: int = 3) -> str:
        """What ``--dry-run`` prints: the command, its environment, and the files' contents."""
        from shlex import join

        rows = "".join(json.dumps(r) + "\n" for r in self.prompts[:shown_rows])
        more = len(self.prompts) - shown_rows
        env = " ".join(f"{k}={v}" for k, v in self.environment.items())
        return (
            f"# {self.run_dir / AGENT_SETTINGS_FILE}\n{self.settings.model_dump_json(indent=2)}\n"
            f"# {self.run_dir / PROMPTS_FILE} ({len(self.prompts)} rows)\n{rows}"
            + (f"# ... {more} more rows\n" if more > 0 else "")
            + f"# command\n{env} {join(self.command)}"
        )


def build_launch(
    config: OpenRlhfConfig,
    run_dir: Path,
    *,
    urls: Sequence[str],
    task_ids: Sequence[TaskId],
    run_id: str,
    token: str | None = None,
) -> Launch:
    """``token``: the env servers' (default: ``config.token``; ``backend=ray`` servers have their own)."""
    settings = worker_settings(
        config,
        AgentSettings,
        urls=list(urls),
        token=token if token is not None else config.token,
        capacity=max(8, config.samples_per_rollout),
        store=str(run_dir),
        episodes_per_step=max(1, config.samples_per_rollout // config.engines),
        provenance={"run_id": run_id, "model": config.model},
    )
    environment = {SETTINGS_ENV: str(run_dir / AGENT_SETTINGS_FILE)}
    fixed_turns = config.horizon if isinstance(config.horizon, int) else None
    return Launch(
        command=train_command(config, run_dir, settings),
        environment=environment if config.ray_address is None else {},
        settings=settings,
        # A fixed limit also rides in each task; a schedule is read by the agent at its step.
        prompts=prompt_rows(config.env, config.split, task_ids, fixed_turns),
        run_dir=run_dir,
    )
