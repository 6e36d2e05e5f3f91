"""What ``agenthub run trainer=areal`` checks before AReaL starts: the machine, then the env and token limits.

AReaL's scheduler starts SGLang (or vLLM) servers and FSDP workers on GPUs; on a
machine without one it fails inside a worker. So the GPU and the modules AReaL
imports are checked first, all in one message; then one task of the env is
played with the model's tokenizer against ``max_context`` and ``max_tokens``.
"""

from __future__ import annotations

from agenthub.training import (
    FrameworkNeeds,
    LaunchReport,
    TokenLimits,
    check_launch_with_model,
    most_turns,
)

from agenthub_trainer_areal.config import ArealConfig
from agenthub_trainer_areal.prerequisites import GPU_MODULES, TRAINER_MODULES

ENGINES = {"sglang": "sglang", "vllm": "vllm"}
"""The importable module of each ``rollout_backend`` engine."""


def framework_needs(config: ArealConfig) -> FrameworkNeeds:
    """A GPU, AReaL's modules, and the GPU modules of the configured engine (not the other one)."""
    engine = config.rollout_backend.split(":", 1)[0]
    other = {module for name, module in ENGINES.items() if name != engine}
    return FrameworkNeeds(
        trainer="areal",
        framework="AReaL 1.0",
        needs_gpu=True,
        modules=TRAINER_MODULES,
        gpu_modules={m: r for m, r in GPU_MODULES.items() if m.split(".")[0] not in other},
        why_gpu="Its scheduler starts SGLang or vLLM servers and FSDP workers, which need CUDA.",
    )


def launch_checks(config: ArealConfig, *, dry_run: bool) -> LaunchReport:
    """One task of the env, measured with the model's tokenizer; a dry run skips a model not on disk yet."""
    limits = TokenLimits(max_tokens=config.max_tokens, max_context=config.max_context)
    return check_launch_with_model(
        config,
        limits,
        dry_run=dry_run,
        max_turns=most_turns(config.horizon, config.steps),
        seed=config.seed,
        tiny_model=config.tiny_model,
    )
