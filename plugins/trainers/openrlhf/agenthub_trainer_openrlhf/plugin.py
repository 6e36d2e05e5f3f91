"""Registers the ``openrlhf`` trainer: ``agenthub run trainer=openrlhf``."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import TrainerSpec, hookimpl

from agenthub_trainer_openrlhf import __version__


@hookimpl
def agenthub_register_trainers(register: Callable[[TrainerSpec], None]) -> None:
    register(
        TrainerSpec(
            name="openrlhf",
            factory="agenthub_trainer_openrlhf.trainer:OpenRlhfTrainer",
            description="OpenRLHF 0.11 PPO/GRPO (Ray, vLLM, DeepSpeed; GPUs) with the hub executor as its agent.",
            version=__version__,
        )
    )
