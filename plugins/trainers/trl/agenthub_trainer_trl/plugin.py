"""Registers the ``trl`` trainer: ``agenthub run trainer=trl``."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import TrainerSpec, hookimpl

from agenthub_trainer_trl import __version__


@hookimpl
def agenthub_register_trainers(register: Callable[[TrainerSpec], None]) -> None:
    register(
        TrainerSpec(
            name="trl",
            factory="agenthub_trainer_trl.trainer:TrlTrainer",
            description="TRL GRPO (or SFT) with the hub executor as its rollout; runs on a CPU with a tiny model.",
            version=__version__,
        )
    )
