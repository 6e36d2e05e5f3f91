"""Registers the ``swift`` trainer (also reachable as ``ms-swift``): ``agenthub run trainer=swift``."""

from __future__ import annotations

from collections.abc import Callable

from agenthub import TrainerSpec, hookimpl

from agenthub_trainer_swift import __version__

NAMES = ("swift", "ms-swift")


@hookimpl
def agenthub_register_trainers(register: Callable[[TrainerSpec], None]) -> None:
    for name in NAMES:
        register(
            TrainerSpec(
                name=name,
                factory="agenthub_trainer_swift.trainer:SwiftTrainer",
                description="ms-swift 4 GRPO (swift rlhf) with agenthub env sessions in its multi-turn scheduler.",
                version=__version__,
            )
        )
