"""What ``agenthub run trainer=areal`` checks before AReaL starts: the machine, then the env and token limits.

AReaL's scheduler starts SGLang (or vLLM) servers and FSDP workers on GPUs; on a
machine without one it fails inside a worker. So the GPU and the modules AReaL
imports are checked first, all in one message; then one task of the env is
played with the model's tokenizer against ``max_context`` and ``max_tokens``.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from typing import Any

from agenthub import ConfigError, get_plugin_host
from agenthub.rollout import build_horizon
from agenthub.training import FrameworkNeeds, LaunchReport, TokenLimits, check_launch

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


@contextlib.contextmanager
def policy_tokenizer(config: ArealConfig, *, offline: bool) -> Iterator[Any]:
    """The tokenizer of the model the run trains (the tiny one is built in a temporary directory)."""
    from transformers import AutoTokenizer

    if config.model is not None:
        yield AutoTokenizer.from_pretrained(config.model, local_files_only=offline)
        return
    from agenthub.testing import build_tiny_model

    with tempfile.TemporaryDirectory(prefix="agenthub-areal-check-") as scratch:
        try:
            path = build_tiny_model(scratch, **{"seed": config.seed, **config.tiny_model})
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"tiny_model settings {config.tiny_model} were rejected: {exc}") from None
        yield AutoTokenizer.from_pretrained(path)


def horizon_limit(config: ArealConfig) -> int | None:
    if config.horizon is None:
        return None
    schedule = build_horizon(config.horizon, get_plugin_host().horizon)
    return max(schedule.max_turns(step) for step in range(config.steps))


def launch_checks(config: ArealConfig, *, dry_run: bool) -> LaunchReport:
    """One task of the env, measured with the model's tokenizer; a dry run skips a model not on disk yet."""
    limits = TokenLimits(max_tokens=config.max_tokens, max_context=config.max_context)
    try:
        with policy_tokenizer(config, offline=dry_run) as tokenizer:
            return check_launch(
                config.env,
                tokenizer,
                limits,
                split=config.split,
                urls=config.urls,
                token=config.token,
                max_turns=horizon_limit(config),
                dry_run=dry_run,
            )
    except OSError as exc:
        if not dry_run:
            raise ConfigError(f"cannot load the tokenizer of model={config.model!r}: {exc}") from None
        return LaunchReport(env=config.env, skipped=f"the tokenizer of {config.model!r} is not on this machine yet")
