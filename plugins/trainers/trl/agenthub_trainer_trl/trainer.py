"""The ``trl`` trainer that ``agenthub run trainer=trl`` builds: validates, then runs GRPO or SFT."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from agenthub import ConfigError, get_plugin_host
from agenthub.config import redact_secrets, validate_config
from agenthub.training import preflight, print_dry_run_checks, print_framework_problems, seating

from agenthub_trainer_trl.checks import framework_needs, launch_checks
from agenthub_trainer_trl.config import TrlConfig
from agenthub_trainer_trl.runs import CHECKPOINTS_DIR, quiet_framework


def plan(config: TrlConfig) -> str:
    """What a run with ``config`` would do, in a few lines."""
    model = config.model or f"a tiny random model built in the run directory ({config.tiny_model or 'defaults'})"
    where = f"resume {config.resume}" if config.resume else f"{config.runs_dir}/{config.run_id or '<new run id>'}"
    if config.mode == "sft":
        return f"SFT of {model} on {config.dataset} for {config.epochs:g} epochs; run directory: {where}"
    horizon = "the env's turn limit" if config.horizon is None else f"horizon {config.horizon}"
    seats = ""
    if config.seat is not None or config.opponent is not None:
        seats = f", seat {config.seat if config.seat is not None else 0} against {config.opponent or 'itself'}"
    return (
        f"GRPO of {model} on env {config.env!r} (split {config.split}{seats}): {config.steps} steps of "
        f"{config.tasks_per_step} tasks x {config.num_generations} episodes, {horizon}, "
        f"{'vLLM' if config.use_vllm else 'transformers'} generation{_scored(config)}; run directory: {where}"
    )


def _scored(config: TrlConfig) -> str:
    return f", then the model scored on {config.test_episodes} test-split tasks" if config.test_episodes else ""


def framework_settings(config: TrlConfig) -> dict[str, Any]:
    """What TRL's ``GRPOConfig`` (or ``SFTConfig``) would be given, with the run directory as a placeholder."""
    if config.mode == "sft":
        from agenthub_trainer_trl.sft import sft_settings

        return sft_settings(config, Path("<run dir>") / CHECKPOINTS_DIR)
    from agenthub_trainer_trl.grpo import grpo_settings

    return grpo_settings(config, Path("<run dir>") / CHECKPOINTS_DIR)


def print_dry_run(config: TrlConfig) -> int:
    """Print the resolved settings, TRL's configuration and the plan; run the checks; write nothing."""
    print(yaml.safe_dump(redact_secrets(config.model_dump(mode="json")), sort_keys=False).rstrip())
    trl_class = "SFTConfig" if config.mode == "sft" else "GRPOConfig"
    print(f"# TRL's {trl_class} would be given:")
    for line in yaml.safe_dump(framework_settings(config), sort_keys=False).splitlines():
        print(f"#   {line}")  # commented: the output stays one YAML document, the settings
    print(f"# would run: {plan(config)}")
    if config.mode == "sft":  # no env to check: SFT reads a dataset
        print_framework_problems(framework_needs(config))
        return 0
    print_dry_run_checks(framework_needs(config), lambda: launch_checks(config, dry_run=True)).raise_if_refused()
    return 0


def check_seats(config: TrlConfig) -> None:
    """``seat=``/``opponent=`` that do not fit the env are refused before anything runs (a dry run too)."""
    if config.mode == "sft":
        if config.seat is not None or config.opponent is not None or config.opponent_kwargs:
            raise ConfigError("seat= and opponent= apply to mode=grpo (who plays a multi-player env); drop them")
        return
    if config.url is None:  # with url=, the servers' env is checked when the run opens them
        info = get_plugin_host().env(config.env).info()
        seating(config, info, make_opponent=False).require_one_trajectory("TRL's GRPO")


class TrlTrainer:
    """``run(config, dry_run)`` as the ``Trainer`` protocol asks."""

    def run(self, config: Mapping[str, Any], *, dry_run: bool = False) -> int:
        settings = validate_config(TrlConfig, config)
        check_seats(settings)
        if dry_run:
            return print_dry_run(settings)
        checks = (lambda: launch_checks(settings, dry_run=False)) if settings.mode == "grpo" else None
        preflight(framework_needs(settings), checks, file=sys.stderr)  # stdout: TRL's own log
        quiet_framework()
        if settings.mode == "sft":
            from agenthub_trainer_trl.sft import run_sft

            return run_sft(settings)
        from agenthub_trainer_trl.grpo import run_grpo

        return run_grpo(settings)
