"""A live line for long runs: episodes done, success rate, episodes/s. Silent when not a terminal."""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agenthub.rollout.store import episode_key
from agenthub.types import Outcome, Trajectory


@dataclass
class RunSummary:
    """Running totals over the episodes of one run."""

    started: float = field(default_factory=time.monotonic)
    episodes: int = 0
    reward_sum: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    resumed: int = 0
    """Episodes found finished in the store and not run again."""
    single_player: int = 0
    """Trajectories of single-player episodes (one an episode)."""
    opponent_trajectories: int = 0
    """Trajectories of an opponent's seats: they count in ``games``, never in the agent's totals."""
    seated_games: set[str] = field(default_factory=set)
    """Keys of the multi-player episodes that gave a seat's trajectory (one trajectory per seat)."""

    def add(self, trajectory: Trajectory) -> None:
        if trajectory.seat is not None and trajectory.key is not None:
            self.seated_games.add(episode_key(trajectory.key))
        else:
            self.single_player += 1
        if trajectory.provenance.get("role") == "opponent":  # stored, but not the agent's to score
            self.opponent_trajectories += 1
            return
        self.episodes += 1
        self.reward_sum += trajectory.reward
        self.outcomes[trajectory.outcome.value] += 1

    @property
    def games(self) -> int:
        """Episodes played to their end, a multi-player game once however many seats it gave
        (``episodes`` counts trajectories: one per seat there)."""
        return self.single_player + len(self.seated_games)

    @property
    def success_rate(self) -> float:
        return self.outcomes[Outcome.SUCCESS.value] / self.episodes if self.episodes else 0.0

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    @property
    def episodes_per_s(self) -> float:
        return self.episodes / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "resumed": self.resumed,
            "success_rate": round(self.success_rate, 6),
            "mean_reward": round(self.reward_sum / self.episodes, 6) if self.episodes else 0.0,
            "outcomes": dict(self.outcomes),
            "elapsed_s": round(self.elapsed_s, 3),
            "episodes_per_s": round(self.episodes_per_s, 3),
            # against an opponent: the agent's trajectories are scored, the opponent's only stored
            **(
                {"scored_trajectories": self.episodes, "opponent_trajectories": self.opponent_trajectories}
                if self.opponent_trajectories
                else {}
            ),
        }


class ProgressDisplay:
    """``with ProgressDisplay(total) as show: show.update(summary)``; a no-op off a terminal."""

    def __init__(self, total: int, *, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        stream = stream or sys.stderr
        self.enabled = stream.isatty() if enabled is None else enabled
        self._progress: Progress | None = None
        self._task: Any = None
        if self.enabled:
            self._progress = Progress(
                TextColumn("[bold]episodes"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("success {task.fields[success]:.1%}  {task.fields[rate]:.2f} ep/s"),
                TimeElapsedColumn(),
                console=Console(file=stream),
                transient=False,
            )
            self._task = self._progress.add_task("run", total=total, success=0.0, rate=0.0)

    def update(self, summary: RunSummary) -> None:
        if self._progress is not None:
            self._progress.update(
                self._task,
                completed=summary.games + summary.resumed,
                success=summary.success_rate,
                rate=summary.episodes_per_s,
            )

    def __enter__(self) -> ProgressDisplay:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
