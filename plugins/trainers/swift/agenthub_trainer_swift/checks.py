"""What ``agenthub run trainer=swift`` checks before ms-swift starts: the machine, then the env and token limits.

ms-swift trains on a CPU with transformers generation (``mode=colocate``);
``use_vllm=true`` and ``mode=server`` (a ``swift rollout`` vLLM server) need a GPU
and vLLM. Then one task of the env is played with the model's tokenizer against
``max_context`` and ``max_tokens`` (the tiny default model is built in a
temporary directory for that, so a dry run writes nothing).
"""

from __future__ import annotations

from agenthub.training import FrameworkNeeds, LaunchReport, TokenLimits, check_launch_with_model

from agenthub_trainer_swift.config import SwiftConfig
from agenthub_trainer_swift.prerequisites import GPU_MODULES, TRAINER_MODULES


def framework_needs(config: SwiftConfig) -> FrameworkNeeds:
    """ms-swift's modules; a GPU and vLLM only when it is asked to generate with vLLM."""
    with_vllm = config.use_vllm or config.mode == "server"
    return FrameworkNeeds(
        trainer="swift",
        framework="ms-swift with vLLM (use_vllm=true or mode=server)" if with_vllm else "ms-swift",
        needs_gpu=with_vllm,
        modules=TRAINER_MODULES,
        gpu_modules=GPU_MODULES if with_vllm else {},
        why_gpu="Use mode=colocate without use_vllm to generate with transformers, which runs on a CPU.",
    )


def launch_checks(config: SwiftConfig, *, dry_run: bool) -> LaunchReport:
    """One task of the env, measured with the model's tokenizer; a dry run skips a model not on disk yet."""
    limits = TokenLimits(max_tokens=config.max_tokens, max_context=config.max_context)
    return check_launch_with_model(config, limits, dry_run=dry_run, max_turns=config.max_turns, seed=config.seed)
