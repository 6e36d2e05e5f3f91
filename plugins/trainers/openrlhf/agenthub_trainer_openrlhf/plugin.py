"""Registers the ``openrlhf`` trainer: ``agenthub run trainer=openrlhf``."""

from __future__ import annotations

from agenthub import trainer_hook

agenthub_register_trainers = trainer_hook(
    "openrlhf",
    factory="agenthub_trainer_openrlhf.trainer:OpenRlhfTrainer",
    description="OpenRLHF 0.11 PPO/GRPO (Ray, vLLM, DeepSpeed; GPUs) with the hub executor as its agent.",
)
