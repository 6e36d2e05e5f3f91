"""What ``agenthub run trainer=openrlhf`` checks before OpenRLHF starts: the machine, then the env and token limits.

OpenRLHF trains with DeepSpeed and generates with vLLM, both CUDA-only; its
launcher, started without them, stops in a traceback from a Ray actor. So the GPU
and the modules its trainer imports are checked first, all in one message; then
one task of the env is played with the model's tokenizer against ``max_len`` and
``max_tokens``.
"""

from __future__ import annotations

from agenthub.training import LaunchReport, TokenLimits, check_launch_with_model, gpu_framework_needs

from agenthub_trainer_openrlhf import prerequisites
from agenthub_trainer_openrlhf.config import OpenRlhfConfig
from agenthub_trainer_openrlhf.horizon import final_turns

WHY_GPU = "It trains with DeepSpeed and generates with vLLM, both CUDA-only."
NEEDS = gpu_framework_needs(prerequisites, trainer="openrlhf", framework="OpenRLHF 0.11", why_gpu=WHY_GPU)


def launch_checks(config: OpenRlhfConfig, *, dry_run: bool) -> LaunchReport:
    """One task of the env, measured with the model's tokenizer; a dry run skips a model not on disk yet."""
    limits = TokenLimits(max_tokens=config.max_tokens, max_context=config.max_len, max_context_key="max_len")
    max_turns = final_turns(config.horizon) if config.horizon is not None else None
    return check_launch_with_model(config, limits, dry_run=dry_run, max_turns=max_turns)
