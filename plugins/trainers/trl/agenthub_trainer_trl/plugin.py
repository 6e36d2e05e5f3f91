"""Registers the ``trl`` trainer: ``agenthub run trainer=trl``."""

from __future__ import annotations

from agenthub import trainer_hook

agenthub_register_trainers = trainer_hook(
    "trl",
    factory="agenthub_trainer_trl.trainer:TrlTrainer",
    description="TRL GRPO (or SFT) with the hub executor as its rollout; runs on a CPU with a tiny model.",
    trains_on_cpu=True,
)
