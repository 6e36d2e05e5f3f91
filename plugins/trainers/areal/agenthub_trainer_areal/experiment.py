"""AReaL's launch files for a run: its experiment YAML, the entry script, and the command that starts them.

AReaL 1.0 runs in single-controller mode: ``python train.py --config
areal.yaml`` is the controller, and its scheduler (``scheduler.type``:
``local``, ``ray`` or ``slurm``) starts the SGLang/vLLM servers and the FSDP
workers. The YAML is a complete ``GRPOConfig`` (AReaL's own parser reads it)
plus an ``agenthub:`` section for the env side; the entry script is the same
for every run and only calls :func:`agenthub_trainer_areal.entry.main`.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from agenthub.config import deep_merge, write_private_text
from agenthub.training import worker_settings

from agenthub_trainer_areal.config import ArealConfig, HubSection

if TYPE_CHECKING:
    from agenthub.training import ServerUrls

EXPERIMENT_FILE = "areal.yaml"
ENTRY_FILE = "train.py"
RESUME_OVERRIDE = "recover.mode=auto"
"""The AReaL CLI override (``KEY=VALUE`` after ``--config``) that continues from the last recovery checkpoint."""
AREAL_DIR = "areal"
"""AReaL's fileroot inside the run directory: its logs, checkpoints and name records."""

ENTRY_SCRIPT = '''"""AReaL entry script written by `agenthub run trainer=areal`; the same for every run.

    python train.py --config areal.yaml [KEY=VALUE ...]

It builds the env's task list, then runs AReaL's PPOTrainer (GRPO) with
agenthub_trainer_areal.workflow.HubWorkflow as the rollout workflow.
"""

import sys

from agenthub_trainer_areal.entry import main

if __name__ == "__main__":
    main(sys.argv[1:])
'''


@dataclass(frozen=True)
class LaunchPlan:
    """The files a run writes and the command that starts AReaL on them."""

    run_dir: Path
    experiment: dict[str, Any]
    command: list[str]

    @property
    def experiment_path(self) -> Path:
        return self.run_dir / EXPERIMENT_FILE

    @property
    def entry_path(self) -> Path:
        return self.run_dir / ENTRY_FILE

    def files(self) -> dict[Path, str]:
        return {self.experiment_path: experiment_yaml(self.experiment), self.entry_path: ENTRY_SCRIPT}

    def write(self) -> None:
        for path, text in self.files().items():
            write_private_text(path, text)  # the experiment holds the run's env token

    def shell_command(self) -> str:
        return shlex.join(self.command)


def experiment_yaml(experiment: dict[str, Any]) -> str:
    return yaml.safe_dump(experiment, sort_keys=False, default_flow_style=False)


def hub_section(config: ArealConfig, run_dir: Path, servers: ServerUrls | None = None) -> HubSection:
    """``servers``: env servers started for the run (``backend=ray``), in place of ``url=`` and ``token=``."""
    return worker_settings(
        config,
        HubSection,
        url=list(servers) if servers is not None else config.url or [],
        token=servers.token if servers is not None else config.token,
        capacity=config.env_capacity,
        run_dir=str(run_dir),
    )


def experiment_config(
    config: ArealConfig, run_dir: Path, model_path: str, servers: ServerUrls | None = None
) -> dict[str, Any]:
    """AReaL's ``GRPOConfig`` for this run, as YAML data (``${...}`` are AReaL's own interpolations)."""
    run_dir = run_dir.absolute()
    fileroot = str(run_dir / AREAL_DIR)
    names = {"experiment_name": "${experiment_name}", "trial_name": "${trial_name}"}
    files = {**names, "fileroot": "${cluster.fileroot}"}
    experiment: dict[str, Any] = {
        "experiment_name": f"agenthub-{config.env}",
        "trial_name": run_dir.name,
        "seed": config.seed,
        # The entry script raises the epochs so that total_train_steps are reached with the env's task count.
        "total_train_epochs": 1,
        "total_train_steps": config.steps,
        "tokenizer_path": "${actor.path}",
        "cluster": {
            "n_nodes": config.nodes,
            "n_gpus_per_node": config.gpus_per_node,
            "fileroot": fileroot,
            "name_resolve": {"type": "nfs", "nfs_record_root": f"{fileroot}/name_resolve"},
        },
        "scheduler": {"type": config.scheduler},
        "rollout": {
            **files,
            "backend": config.rollout_backend,
            "max_concurrent_rollouts": config.concurrency,
            "consumer_batch_size": "${train_dataset.batch_size}",
            "max_head_offpolicyness": config.max_head_offpolicyness,
            "tokenizer_path": "${tokenizer_path}",
            "check_trajectory_format": True,
            # AReaL's dump reads the completion as one block after the prompt; the run's
            # trajectories.jsonl keeps every multi-turn episode instead.
            "dump_to_file": False,
        },
        "gconfig": {
            "n_samples": config.num_generations,
            "max_new_tokens": config.max_tokens,
            "max_tokens": config.max_context,
            "min_new_tokens": 0,
            "greedy": False,
            "temperature": config.temperature,
            "top_p": config.top_p,
        },
        "actor": {
            **names,
            "backend": config.actor_backend,
            "path": model_path,
            "init_from_scratch": False,
            "disable_dropout": True,
            "gradient_checkpointing": True,
            "dtype": "bfloat16",
            "mb_spec": {"max_tokens_per_mb": max(config.max_context, 10240)},
            "optimizer": {
                "type": "adam",
                "lr": config.learning_rate,
                "weight_decay": 0.017,
                "lr_scheduler_type": "constant",
                "gradient_clipping": 1.0,
                "warmup_steps_proportion": 0.001,
            },
            "eps_clip": 0.4,
            "kl_ctl": 0.0,
            "ppo_n_minibatches": 1,
            "recompute_logprob": True,
            "use_decoupled_loss": True,
            # Mask tokens whose behaviour importance weight exceeds 5 (AReaL's former default cap).
            "rejection_sampling": {"level": "token", "action": "mask", "metric": "ratio", "upper": 5.0},
            "reward_norm": {"mean_level": "group", "std_level": "group", "group_size": "${gconfig.n_samples}"},
            "adv_norm": {"mean_level": "batch", "std_level": "batch"},
            "max_new_tokens": "${gconfig.max_new_tokens}",
        },
        "sglang": {
            "model_path": "${actor.path}",
            "random_seed": "${seed}",
            "skip_tokenizer_init": True,
            "dtype": "${actor.dtype}",
            "context_length": config.max_context,
            "mem_fraction_static": 0.8,
        },
        "vllm": {
            "model": "${actor.path}",
            "seed": "${seed}",
            "skip_tokenizer_init": False,
            "dtype": "${actor.dtype}",
            "max_model_len": config.max_context,
            "gpu_memory_utilization": 0.8,
        },
        "train_dataset": {
            # Informational: the entry script lists the env's tasks instead of loading a dataset.
            "path": f"agenthub://{config.env}/{config.split}",
            "type": "rl",
            "batch_size": config.tasks_per_step,
            "shuffle": True,
            "drop_last": True,
        },
        "saver": {**files, "freq_epochs": 1, "freq_steps": config.save_steps, "freq_secs": None},
        # Recovery checkpoints are written every recover_steps; `agenthub run --resume` adds recover.mode=auto.
        "recover": {**files, "mode": "disabled", "freq_steps": config.recover_steps},
        "evaluator": {**files, "freq_epochs": None, "freq_steps": None, "freq_secs": None},
        "stats_logger": {**files, "wandb": {"mode": "disabled"}},
        "agenthub": hub_section(config, run_dir, servers).model_dump(mode="json"),
    }
    return deep_merge(experiment, config.areal)


def launch_plan(config: ArealConfig, run_dir: Path, model_path: str, servers: ServerUrls | None = None) -> LaunchPlan:
    experiment = experiment_config(config, run_dir, model_path, servers)
    run_dir = run_dir.absolute()
    python = config.python or sys.executable
    command = [python, str(run_dir / ENTRY_FILE), "--config", str(run_dir / EXPERIMENT_FILE)]
    if config.resume is not None:
        # AReaL's own recovery: the same fileroot, experiment and trial name, so it finds its recover info there.
        command.append(RESUME_OVERRIDE)
    return LaunchPlan(run_dir=run_dir, experiment=experiment, command=command)
