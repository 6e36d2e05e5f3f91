"""Run a set of episodes into a store, with progress and resume: what ``agenthub eval`` runs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Container, Iterable, Sequence
from typing import Protocol

from agenthub.rollout.executor import EpisodeRequest
from agenthub.rollout.progress import ProgressDisplay, RunSummary
from agenthub.rollout.store import RunStore
from agenthub.types import Trajectory


class EpisodeSource(Protocol):
    """What runs the episodes: an :class:`~agenthub.rollout.executor.Executor`, or a
    :class:`~agenthub.rollout.ray.RayRollout` spread over a cluster."""

    def stream(self, requests: Iterable[EpisodeRequest], *, skip: Container[str] = ()) -> AsyncIterator[Trajectory]:
        """Run ``requests`` except keys in ``skip``; yield each trajectory as its episode ends."""
        ...


async def collect(
    executor: EpisodeSource,
    requests: Sequence[EpisodeRequest],
    *,
    store: RunStore | None = None,
    progress: bool | None = None,
    on_trajectory: Callable[[Trajectory], None] | None = None,
) -> RunSummary:
    """Run every request not already finished in ``store``, writing each trajectory as it ends.

    ``progress=None`` shows a live line only when stderr is a terminal.
    """
    done = store.completed_keys() if store is not None else set()
    summary = RunSummary(resumed=sum(1 for r in requests if r.key in done))
    with ProgressDisplay(len(requests), enabled=progress) as display:
        display.update(summary)
        async for trajectory in executor.stream(requests, skip=done):
            if store is not None:
                store.write(trajectory)
            summary.add(trajectory)
            if on_trajectory is not None:
                on_trajectory(trajectory)
            display.update(summary)
    return summary
