"""Registers the ``verl`` trainer: ``agenthub run trainer=verl``."""

from __future__ import annotations

from agenthub import trainer_hook

agenthub_register_trainers = trainer_hook(
    "verl",
    factory="agenthub_trainer_verl.trainer:VerlTrainer",
    description="verl 0.9 GRPO/PPO with the hub executor as its agent loop (GPUs, vLLM or SGLang).",
)
