"""``--callbacks agenthub_step``: tells the horizon schedule swift's training step (see :mod:`.horizon`)."""

from __future__ import annotations

from typing import Any

from swift.callbacks.base import TrainerCallback

from agenthub_trainer_swift.horizon import set_trainer_step

CALLBACK_NAME = "agenthub_step"


class TrainingStepCallback(TrainerCallback):  # type: ignore[misc]  # swift is untyped
    """Records ``TrainerState.global_step`` before each step's rollout, in the training process."""

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        set_trainer_step(state.global_step)  # a resumed run: its checkpoint's step

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        set_trainer_step(state.global_step)
