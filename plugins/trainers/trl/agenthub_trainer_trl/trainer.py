"""The ``trl`` trainer that ``agenthub run trainer=trl`` builds: validates, then runs GRPO or SFT."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from agenthub.config import validate_config

from agenthub_trainer_trl.config import TrlConfig


def plan(config: TrlConfig) -> str:
    """What a run with ``config`` would do, in a few lines."""
    model = config.model or f"a tiny random model built in the run directory ({config.tiny_model or 'defaults'})"
    where = f"resume {config.resume}" if config.resume else f"{config.runs_dir}/{config.run_id or '<new run id>'}"
    if config.mode == "sft":
        return f"SFT of {model} on {config.dataset} for {config.epochs:g} epochs; run directory: {where}"
    horizon = "the env's turn limit" if config.horizon is None else f"horizon {config.horizon}"
    return (
        f"GRPO of {model} on env {config.env!r} (split {config.split}): {config.steps} steps of "
        f"{config.tasks_per_step} tasks x {config.num_generations} episodes, {horizon}, "
        f"{'vLLM' if config.use_vllm else 'transformers'} generation; run directory: {where}"
    )


class TrlTrainer:
    """``run(config, dry_run)`` as the ``Trainer`` protocol asks."""

    def run(self, config: Mapping[str, Any], *, dry_run: bool = False) -> int:
        settings = validate_config(TrlConfig, config)
        if dry_run:
            print(yaml.safe_dump(settings.model_dump(mode="json"), sort_keys=False).rstrip())
            print(f"# would run: {plan(settings)}")
            return 0
        if settings.mode == "sft":
            from agenthub_trainer_trl.sft import run_sft

            return run_sft(settings)
        from agenthub_trainer_trl.grpo import run_grpo

        return run_grpo(settings)
