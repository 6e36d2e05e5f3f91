"""Registers the ``swift`` trainer (also reachable as ``ms-swift``): ``agenthub run trainer=swift``."""

from __future__ import annotations

from agenthub import trainer_hook

agenthub_register_trainers = trainer_hook(
    "swift",
    "ms-swift",
    factory="agenthub_trainer_swift.trainer:SwiftTrainer",
    description="ms-swift 4 GRPO (swift rlhf) with agenthub env sessions in its multi-turn scheduler.",
    trains_on_cpu=True,
)
