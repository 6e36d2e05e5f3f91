"""Registers the ``areal`` trainer: ``agenthub run trainer=areal``."""

from __future__ import annotations

from agenthub import trainer_hook

agenthub_register_trainers = trainer_hook(
    "areal",
    factory="agenthub_trainer_areal.trainer:ArealTrainer",
    description="AReaL asynchronous GRPO with the hub executor as its RolloutWorkflow (GPU, SGLang or vLLM).",
)
