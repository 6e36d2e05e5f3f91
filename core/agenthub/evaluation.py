"""Evaluation metrics over trajectories: Avg@k, Pass@k as AgentGym-RL reports them, and unbiased pass@k.

Per task with ``n`` valid samples of which ``c`` succeeded:

* **Avg@k** — the mean reward over the samples (AgentGym-RL's "Avg@k").
* **Pass@k** — 1 if any of the samples succeeded (AgentGym-RL's "Pass@k" with n = k).
* **pass@j (unbiased)** — ``1 - C(n-c, j) / C(n, j)`` (Chen et al., 2021), the chance
  that j samples drawn from the n include a success; defined for j <= n.

Samples that ended in an infrastructure failure (``env_error``, ``timeout``) say
nothing about the policy: they are left out and counted. ``agent_error`` (for
example a reply no parser could read) is the policy's fault and counts as a failure.

On a multi-player env each episode gives one trajectory per seat, and the report adds
**win/draw/loss per seat**: the rates over the games the env ended (a seat wins with the
single highest return, draws when it shares the highest, loses otherwise), and how many
of that seat's games did not end (truncated, or an infra or agent failure).

Only the agent's trajectories are scored: against ``opponent=`` the opponent's seats are stored
(``provenance["role"] == "opponent"``) and reported apart, with their own win/draw/loss, but no
metric above counts them. In self-play every seat is the agent's, so every seat is scored.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthub.types import Outcome, TaskId, Trajectory

EXCLUDED = frozenset({Outcome.ENV_ERROR, Outcome.TIMEOUT})
ENV_ERROR_WARN_SHARE = 0.05
"""Above this share of episodes in env_error, ``agenthub eval`` warns: unscored episodes could hide an
agent's failures (an agent that crashes its env is never scored as failing)."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c successes (numerically stable product form)."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n} c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got k={k} n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@dataclass
class TaskScore:
    task_id: TaskId | None
    rewards: list[float] = field(default_factory=list)
    successes: int = 0
    excluded: int = 0

    @property
    def n(self) -> int:
        return len(self.rewards)

    @property
    def avg(self) -> float:
        return sum(self.rewards) / self.n if self.n else 0.0

    @property
    def passed(self) -> bool:
        return self.successes > 0


RESULTS = ("win", "draw", "loss")


@dataclass
class SeatScore:
    """One seat's games: how many it won, drew and lost, and how many did not end."""

    seat: int
    win: int = 0
    draw: int = 0
    loss: int = 0
    unfinished: int = 0

    @property
    def finished(self) -> int:
        return self.win + self.draw + self.loss

    def as_dict(self) -> dict[str, Any]:
        finished = self.finished
        rates = {f"{name}_rate": round(getattr(self, name) / finished, 6) if finished else 0.0 for name in RESULTS}
        return {
            "games": finished + self.unfinished,
            **{n: getattr(self, n) for n in RESULTS},
            **rates,
            "unfinished": self.unfinished,
        }


@dataclass
class EvalReport:
    """Scores per task and overall; ``ks`` are the j of the unbiased pass@j columns."""

    tasks: list[TaskScore]
    ks: list[int]
    outcomes: dict[str, int]
    seats: dict[int, SeatScore] = field(default_factory=dict)
    """Multi-player envs: win/draw/loss by seat the agent played; empty for a single-player env."""
    opponent_seats: dict[int, SeatScore] = field(default_factory=dict)
    """Win/draw/loss by seat the opponent played (not scored); empty in self-play."""
    opponent_trajectories: int = 0
    """Trajectories of the opponent's seats: stored, left out of every score."""

    @property
    def self_play(self) -> bool:
        """A multi-player run where the agent played every seat, so every seat is scored."""
        return bool(self.seats) and not self.opponent_seats and not self.opponent_trajectories

    @property
    def scored(self) -> list[TaskScore]:
        return [t for t in self.tasks if t.n > 0]

    def overall(self) -> dict[str, Any]:
        scored = self.scored
        episodes = sum(self.outcomes.values())
        env_errors = self.outcomes.get(Outcome.ENV_ERROR.value, 0)
        result: dict[str, Any] = {
            "tasks": len(self.tasks),
            "tasks_scored": len(scored),
            "episodes": episodes,
            "samples": sum(t.n for t in scored),
            "excluded_infra_failures": sum(t.excluded for t in self.tasks),
            "env_errors": env_errors,
            "env_error_share": round(env_errors / episodes, 6) if episodes else 0.0,
            "avg_at_k": _mean([t.avg for t in scored]),
            "pass_at_k": _mean([1.0 if t.passed else 0.0 for t in scored]),
            "success_rate": _mean([t.successes / t.n for t in scored]),
            "outcomes": dict(self.outcomes),
        }
        for k in self.ks:
            eligible = [t for t in scored if t.n >= k]
            result[f"pass@{k}"] = _mean([pass_at_k(t.n, t.successes, k) for t in eligible])
        if self.seats:
            result["seats"] = {str(s): self.seats[s].as_dict() for s in sorted(self.seats)}
            result["self_play"] = self.self_play
        if self.opponent_seats or self.opponent_trajectories:
            result["opponent_seats"] = {str(s): self.opponent_seats[s].as_dict() for s in sorted(self.opponent_seats)}
            result["opponent_trajectories_not_scored"] = self.opponent_trajectories
        return result

    def warnings(self) -> list[str]:
        """What a reader of the score must know: too many episodes left out of it as env_error."""
        episodes = sum(self.outcomes.values())
        env_errors = self.outcomes.get(Outcome.ENV_ERROR.value, 0)
        if not episodes or env_errors / episodes <= ENV_ERROR_WARN_SHARE:
            return []
        return [
            f"{env_errors} of {episodes} episodes ({env_errors / episodes:.1%}) ended in env_error and are not "
            f"scored (more than {ENV_ERROR_WARN_SHARE:.0%}): the score covers only the rest, and an agent that "
            "makes its env fail is never scored as failing; see the outcome and error of each episode in "
            "trajectories.jsonl (agenthub view RUN_DIR, outcome=env_error) and check the env server's log"
        ]

    def per_task(self) -> list[dict[str, Any]]:
        rows = []
        for t in self.tasks:
            row: dict[str, Any] = {
                "task_id": t.task_id,
                "n": t.n,
                "successes": t.successes,
                "avg": round(t.avg, 6),
                "pass": t.passed,
                "excluded": t.excluded,
            }
            for k in self.ks:
                row[f"pass@{k}"] = round(pass_at_k(t.n, t.successes, k), 6) if t.n >= k else None
            rows.append(row)
        return rows


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 6) if values else 0.0


def default_ks(k: int) -> list[int]:
    """1, 2, 4, ... up to k, and k itself."""
    ks = [1]
    while ks[-1] * 2 < k:
        ks.append(ks[-1] * 2)
    if k > 1:
        ks.append(k)
    return ks


def evaluate(trajectories: Iterable[Trajectory], *, k: int) -> EvalReport:
    """Group trajectories by task id and score them."""
    by_task: dict[Any, TaskScore] = {}
    order: dict[Any, tuple[int, str]] = {}
    outcomes: dict[str, int] = defaultdict(int)
    seats: dict[int, SeatScore] = {}
    opponent_seats: dict[int, SeatScore] = {}
    opponent_trajectories = 0
    for trajectory in trajectories:
        opponent = trajectory.provenance.get("role") == "opponent"
        if trajectory.seat is not None:
            table = opponent_seats if opponent else seats
            seat = table.setdefault(trajectory.seat, SeatScore(trajectory.seat))
            if trajectory.seat_result is None:
                seat.unfinished += 1
            else:
                setattr(seat, trajectory.seat_result, getattr(seat, trajectory.seat_result) + 1)
        if opponent:  # stored for trainers and the viewer; the score is the agent's alone
            opponent_trajectories += 1
            continue
        # Rows in the order the tasks were asked for (keys are "<task index>/<sample>").
        index = (trajectory.key or "").partition("/")[0]
        order.setdefault(repr(trajectory.task.task_id), (int(index) if index.isdigit() else 1 << 62, repr(index)))
        task_id = trajectory.task.task_id
        score = by_task.setdefault(repr(task_id), TaskScore(task_id))
        outcomes[trajectory.outcome.value] += 1
        if trajectory.outcome in EXCLUDED:
            score.excluded += 1
            continue
        score.rewards.append(trajectory.reward)
        score.successes += trajectory.outcome is Outcome.SUCCESS
    ranked = sorted(by_task, key=lambda name: order[name])
    tasks = [by_task[name] for name in ranked]
    return EvalReport(tasks, default_ks(k), dict(outcomes), seats, opponent_seats, opponent_trajectories)
