"""What a GPU-only framework needs, read from its plugin's ``prerequisites`` module.

AReaL, verl and OpenRLHF train only on a GPU. Each plugin's ``prerequisites`` module lists the modules
its trainer imports (``TRAINER_MODULES``) and those of its GPU install variant (``GPU_MODULES``); see
:mod:`agenthub.training.prerequisite_tests`. AReaL and verl generate with SGLang or vLLM, and a run
imports only the engine it is configured with, so the other one is not required.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

from agenthub.training.prerequisites import FrameworkNeeds

ENGINES = ("sglang", "vllm")
"""The inference engines a GPU framework may generate with; each is also its importable package."""


def engine_modules(gpu_modules: Mapping[str, str], engine: str) -> dict[str, str]:
    """``gpu_modules`` less the packages of the engines other than ``engine`` (its own submodules stay)."""
    others = {other for other in ENGINES if other != engine}
    return {module: need for module, need in gpu_modules.items() if module.split(".")[0] not in others}


def gpu_framework_needs(
    prerequisites: ModuleType, *, trainer: str, framework: str, why_gpu: str, engine: str | None = None
) -> FrameworkNeeds:
    """A GPU and the modules ``prerequisites`` lists; ``engine``: only that engine's GPU modules."""
    gpu_modules: dict[str, str] = dict(prerequisites.GPU_MODULES)
    return FrameworkNeeds(
        trainer=trainer,
        framework=framework,
        needs_gpu=True,
        modules=dict(prerequisites.TRAINER_MODULES),
        gpu_modules=gpu_modules if engine is None else engine_modules(gpu_modules, engine),
        why_gpu=why_gpu,
    )
