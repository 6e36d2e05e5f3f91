"""What ``agenthub run trainer=verl`` checks before verl starts: the machine, then the env and token limits.

verl 0.9.1 has no CPU platform: started without a GPU it asks Ray for GPU
bundles and waits forever. So the GPU, verl's inference engine and every module
its trainer imports for the configuration this plugin writes are checked first,
all in one message; then one task of the env is played with the model's
tokenizer against ``prompt_length``, ``response_length`` and ``max_tokens``.
"""

from __future__ import annotations

from agenthub.training import (
    FrameworkNeeds,
    LaunchReport,
    TokenLimits,
    check_launch_with_model,
    most_turns,
)

from agenthub_trainer_verl.config import VerlConfig
from agenthub_trainer_verl.prerequisites import GPU_MODULES, TRAINER_MODULES

ENGINES = {"vllm": "vllm", "sglang": "sglang"}
"""The importable module of each ``rollout=`` engine."""


def framework_needs(config: VerlConfig) -> FrameworkNeeds:
    """A GPU, verl's trainer modules, and the GPU modules of the configured engine (not the other one)."""
    other = {module for name, module in ENGINES.items() if name != config.rollout}
    return FrameworkNeeds(
        trainer="verl",
        framework="verl 0.9",
        needs_gpu=True,
        modules=TRAINER_MODULES,
        gpu_modules={m: r for m, r in GPU_MODULES.items() if m.split(".")[0] not in other},
        why_gpu="verl 0.9.1 has no CPU platform: it would ask Ray for GPU bundles and wait forever.",
    )


def launch_checks(config: VerlConfig, *, dry_run: bool) -> LaunchReport:
    """One task of the env, measured with the model's tokenizer; a dry run skips a model not on disk yet."""
    limits = TokenLimits(
        max_tokens=config.max_tokens, max_prompt=config.prompt_length, max_response=config.response_length
    )
    return check_launch_with_model(
        config,
        limits,
        dry_run=dry_run,
        max_turns=most_turns(config.horizon, config.steps),
        system_prompt=config.system_prompt,
    )
