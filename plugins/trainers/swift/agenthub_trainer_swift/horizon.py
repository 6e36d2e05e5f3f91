"""The horizon schedule (ScalingInter-RL) in swift, read at swift's training step where swift gives one.

swift 4.6 passes its multi-turn scheduler no step: the scheduler is built with
``max_turns``, ``tokenizer`` and ``template`` only, and its hooks get the
requests. So the step comes from where it exists:

* ``swift rlhf`` (colocate mode: the scheduler runs in the training process):
  :class:`~agenthub_trainer_swift.step_callback.TrainingStepCallback`, a swift
  callback (``--callbacks agenthub_step``), records ``TrainerState.global_step``
  at the start of each step (and of training, so a resumed run starts at its
  checkpoint's step), and the scheduler reads it here;
* ``swift rollout`` (server mode: another process, which sees no trainer
  state): each rollout process counts the episodes it starts, ``episodes_per_step``
  per step (a step's episodes), and episode ``i`` is at step
  ``i // episodes_per_step``. This count is approximate with several rollout
  workers, and a resumed run counts from step 0 again.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from agenthub import HorizonSchedule, get_plugin_host
from agenthub.rollout import build_horizon
from agenthub.training import EpisodeSteps

HorizonConfig = int | Mapping[str, Any]

_trainer_step: int | None = None
_lock = threading.Lock()


def schedule(config: HorizonConfig) -> HorizonSchedule:
    """``N`` or ``{kind: stepwise, rounds: [...], every: K}`` (and plugins' kinds) as a schedule."""
    spec = config if isinstance(config, int) else dict(config)
    return build_horizon(spec, get_plugin_host().horizon)


def set_trainer_step(step: int) -> None:
    """What the training process's callback records: the 0-based step being trained (steps already done)."""
    global _trainer_step
    with _lock:
        _trainer_step = int(step)


def trainer_step() -> int | None:
    """The step recorded in this process, or None (no swift trainer here: ``swift rollout``)."""
    with _lock:
        return _trainer_step


class StepClock:
    """The step of each episode: swift's own in the training process, else counted from episodes started."""

    def __init__(self, episodes_per_step: int) -> None:
        self._counted = EpisodeSteps(episodes_per_step)

    def steps(self, episodes: int) -> Iterable[int]:
        """The steps of ``episodes`` episodes starting now, in order."""
        counted = [self._counted.next_episode() for _ in range(episodes)]
        step = trainer_step()
        return counted if step is None else [step] * episodes
