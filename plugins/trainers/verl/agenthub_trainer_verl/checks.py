"""What ``agenthub run trainer=verl`` checks before verl starts: the machine, then the env and token limits.

verl 0.9.1 has no CPU platform: started without a GPU it asks Ray for GPU
bundles and waits forever. So the GPU, verl's inference engine and every module
its trainer imports for the configuration this plugin writes are checked first,
all in one message; then one task of the env is played with the model's
tokenizer against ``prompt_length``, ``response_length`` and ``max_tokens``.
"""

from __future__ import annotations

from agenthub.training import FrameworkNeeds, LaunchReport, TokenLimits, check_launch_over_horizon, gpu_framework_needs

from agenthub_trainer_verl import prerequisites
from agenthub_trainer_verl.config import VerlConfig

WHY_GPU = "verl 0.9.1 has no CPU platform: it would ask Ray for GPU bundles and wait forever."


def framework_needs(config: VerlConfig) -> FrameworkNeeds:
    """A GPU, verl's trainer modules, and the GPU modules of the configured engine (not the other one)."""
    return gpu_framework_needs(
        prerequisites, trainer="verl", framework="verl 0.9", why_gpu=WHY_GPU, engine=config.rollout
    )


def launch_checks(config: VerlConfig, *, dry_run: bool) -> LaunchReport:
    """One task of the env, measured with the model's tokenizer; a dry run skips a model not on disk yet."""
    limits = TokenLimits(
        max_tokens=config.max_tokens, max_prompt=config.prompt_length, max_response=config.response_length
    )
    return check_launch_over_horizon(config, limits, dry_run=dry_run, system_prompt=config.system_prompt)
