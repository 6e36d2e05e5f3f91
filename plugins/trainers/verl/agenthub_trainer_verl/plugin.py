"""Registers the ``verl`` trainer: ``agenthub run trainer=verl``."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import TrainerSpec, hookimpl

from agenthub_trainer_verl import __version__


@hookimpl
def agenthub_register_trainers(register: Callable[[TrainerSpec], None]) -> None:
    register(
        TrainerSpec(
            name="verl",
            factory="agenthub_trainer_verl.trainer:VerlTrainer",
            description="verl 0.9 GRPO/PPO with the hub executor as its agent loop (GPUs, vLLM or SGLang).",
            version=__version__,
        )
    )
