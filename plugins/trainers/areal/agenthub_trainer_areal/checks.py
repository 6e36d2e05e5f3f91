"""What ``agenthub run trainer=areal`` checks before AReaL starts: the machine, then the env and token limits.

AReaL's scheduler starts SGLang (or vLLM) servers and FSDP workers on GPUs; on a
machine without one it fails inside a worker. So the GPU and the modules AReaL
imports are checked first, all in one message; then one task of the env is
played with the model's tokenizer against ``max_context`` and ``max_tokens``.
"""

from __future__ import annotations

from agenthub.training import FrameworkNeeds, LaunchReport, TokenLimits, check_launch_over_horizon, gpu_framework_needs

from agenthub_trainer_areal import prerequisites
from agenthub_trainer_areal.config import ArealConfig

WHY_GPU = "Its scheduler starts SGLang or vLLM servers and FSDP workers, which need CUDA."


def framework_needs(config: ArealConfig) -> FrameworkNeeds:
    """A GPU, AReaL's modules, and the GPU modules of the configured engine (not the other one)."""
    engine = config.rollout_backend.split(":", 1)[0]  # sglang:d4t2 -> sglang
    return gpu_framework_needs(prerequisites, trainer="areal", framework="AReaL 1.0", why_gpu=WHY_GPU, engine=engine)


def launch_checks(config: ArealConfig, *, dry_run: bool) -> LaunchReport:
    """One task of the env, measured with the model's tokenizer; a dry run skips a model not on disk yet."""
    limits = TokenLimits(max_tokens=config.max_tokens, max_context=config.max_context)
    return check_launch_over_horizon(config, limits, dry_run=dry_run, seed=config.seed, tiny_model=config.tiny_model)
