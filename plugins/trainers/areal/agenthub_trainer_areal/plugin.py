"""Registers the ``areal`` trainer: ``agenthub run trainer=areal``."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import TrainerSpec, hookimpl

from agenthub_trainer_areal import __version__


@hookimpl
def agenthub_register_trainers(register: Callable[[TrainerSpec], None]) -> None:
    register(
        TrainerSpec(
            name="areal",
            factory="agenthub_trainer_areal.trainer:ArealTrainer",
            description="AReaL asynchronous GRPO with the hub executor as its RolloutWorkflow (GPU, SGLang or vLLM).",
            version=__version__,
        )
    )
