"""What ``agenthub run trainer=trl`` checks before TRL starts: its prerequisites, then the env and token limits.

The launch checks (``agenthub.training.check_launch``) play one task of the env
with its oracle and measure it with the tokenizer of the model to be trained:
the built-in tiny model is built in a temporary directory for that, so a dry run
writes nothing.
"""

from __future__ import annotations

from agenthub.training import FrameworkNeeds, LaunchReport, TokenLimits, check_launch_over_horizon

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


def launch_checks(config: TrlConfig, *, dry_run: bool) -> LaunchReport:
    """Play one task of the env with the run's settings; a dry run skips (and says so) a model not on disk."""
    limits = TokenLimits(max_tokens=config.turn_tokens, max_context=config.max_context)
    tiny_model = {**TINY_MODEL_DEFAULTS, **config.tiny_model}
    return check_launch_over_horizon(config, limits, dry_run=dry_run, seed=config.seed, tiny_model=tiny_model)
