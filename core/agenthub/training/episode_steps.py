"""The training step of each episode, counted from the episodes started, where the framework does not say.

A framework that draws ``episodes_per_step`` episodes per optimizer step, in order, starts step N's episodes
after step N-1's: the step of the k-th episode started (from 0) is ``k // episodes_per_step``. Horizon
schedules (turn limits that grow with the step) read it in the rollout process.
"""

from __future__ import annotations

import itertools


class EpisodeSteps:
    """The 0-based training step of each episode this process starts, counted from the episodes started."""

    def __init__(self, episodes_per_step: int) -> None:
        if episodes_per_step < 1:
            raise ValueError(f"episodes_per_step={episodes_per_step} must be at least 1")
        self.episodes_per_step = episodes_per_step
        self._started = itertools.count()

    def next_episode(self) -> int:
        """The step of the episode starting now."""
        return next(self._started) // self.episodes_per_step
