"""What ``agenthub run trainer=trl`` checks before TRL starts: its prerequisites, then the env and token limits.

The launch checks (``agenthub.training.check_launch``) play one task of the env
with its oracle and measure it with the tokenizer of the model to be trained:
the built-in tiny model is built in a temporary directory for that, so a dry run
writes nothing.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from typing import Any

from agenthub import ConfigError, get_plugin_host
from agenthub.rollout import build_horizon
from agenthub.training import FrameworkNeeds, LaunchReport, TokenLimits, check_launch

from agenthub_trainer_trl.config import TINY_MODEL_DEFAULTS, TrlConfig


def framework_needs(config: TrlConfig) -> FrameworkNeeds:
    """TRL trains on a CPU; its vLLM generation (``use_vllm=true``) needs a GPU and vLLM."""
    return FrameworkNeeds(
        trainer="trl",
        framework="TRL with vLLM generation (use_vllm=true)" if config.use_vllm else "TRL",
        needs_gpu=config.use_vllm,
        modules={"trl": "trl>=1.16,<1.17", "transformers": "transformers>=5.2,<6", "datasets": "datasets>=3"},
        gpu_modules={"vllm": "vllm"} if config.use_vllm else {},
        why_gpu="Drop use_vllm=true to generate with transformers, which runs on a CPU.",
    )


@contextlib.contextmanager
def policy_tokenizer(config: TrlConfig, *, offline: bool) -> Iterator[Any]:
    """The tokenizer of the model the run trains; ``offline``: only what is on this machine already."""
    from transformers import AutoTokenizer

    if config.model is not None:
        yield AutoTokenizer.from_pretrained(config.model, local_files_only=offline)
        return
    from agenthub.testing import build_tiny_model

    with tempfile.TemporaryDirectory(prefix="agenthub-trl-check-") as scratch:
        try:
            path = build_tiny_model(scratch, **{"seed": config.seed, **TINY_MODEL_DEFAULTS, **config.tiny_model})
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"tiny_model settings {config.tiny_model} were rejected: {exc}") from None
        yield AutoTokenizer.from_pretrained(path)


def horizon_limit(config: TrlConfig) -> int | None:
    """The most turns the horizon schedule allows over the run; None: the env's own limit."""
    if config.horizon is None:
        return None
    schedule = build_horizon(config.horizon, get_plugin_host().horizon)
    return max(schedule.max_turns(step) for step in range(config.steps))


def launch_checks(config: TrlConfig, *, dry_run: bool) -> LaunchReport:
    """Play one task of the env with the run's settings; a dry run skips (and says so) a model not on disk."""
    urls = [config.url] if isinstance(config.url, str) else list(config.url or [])
    limits = TokenLimits(max_tokens=config.turn_tokens, max_context=config.max_context)
    try:
        with policy_tokenizer(config, offline=dry_run) as tokenizer:
            return check_launch(
                config.env,
                tokenizer,
                limits,
                split=config.split,
                urls=urls,
                token=config.token,
                max_turns=horizon_limit(config),
                dry_run=dry_run,
            )
    except OSError as exc:
        if not dry_run:
            raise ConfigError(f"cannot load the tokenizer of model={config.model!r}: {exc}") from None
        return LaunchReport(env=config.env, skipped=f"the tokenizer of {config.model!r} is not on this machine yet")
