"""A warning for a training step whose episodes mostly taught nothing.

An episode that ended ``truncated`` (turn or context limit) or in an infra
outcome (never trained on) carries little or no signal. When most of a step's
episodes end that way the run is "training" on nothing, silently; the warning
says which end dominated and the setting that usually causes it.
"""

from __future__ import annotations

import sys
from collections import Counter, deque
from collections.abc import Callable, Sequence

from agenthub.types import Outcome, Trajectory

SHARE = 0.5
"""Warn when more than this share of a step's episodes ended truncated or in an infra outcome."""


def _cause(trajectory: Trajectory) -> str:
    if trajectory.outcome.is_infra_failure:
        return trajectory.outcome.value
    limit = trajectory.task.max_turns or trajectory.provenance.get("max_turns")
    if not trajectory.turns:
        return "context"  # the prompt alone left no room for a model turn
    if limit is not None and len(trajectory.turns) >= int(limit):
        return "turns"
    if trajectory.turns[-1].truncated:
        return "env"
    return "context"


_ADVICE = {
    "context": "the context filled up: the first prompt plus the model's turns did not fit; raise {max_context}",
    "turns": "they hit the turn limit; raise the horizon, or check that the model's replies are valid actions",
    "env": "the env truncated them (its own limit)",
    "env_error": "env servers failed (env_error); see the env server logs",
    "agent_error": "the policy failed (agent_error); see the trajectories' error field",
    "timeout": "episodes timed out (timeout); raise episode_timeout_s or look for a stuck env",
}


def _ended(trajectories: Sequence[Trajectory]) -> list[Trajectory]:
    return [t for t in trajectories if t.outcome is Outcome.TRUNCATED or t.outcome.is_infra_failure]


def dominant_cause(trajectories: Sequence[Trajectory]) -> str | None:
    """The commonest cause when most episodes ended truncated or failed; None otherwise."""
    ended = _ended(trajectories)
    if not trajectories or len(ended) <= SHARE * len(trajectories):
        return None
    return Counter(_cause(t) for t in ended).most_common(1)[0][0]


def step_warning(step: int, trajectories: Sequence[Trajectory], *, max_context_key: str = "max_context") -> str | None:
    """The warning for ``step``, or None when most of its episodes ended normally."""
    if dominant_cause(trajectories) is None:
        return None
    ended = _ended(trajectories)
    causes = Counter(_cause(t) for t in ended)
    parts = [f"{n} {_ADVICE[c].format(max_context=max_context_key)}" for c, n in causes.most_common()]
    errors = [t.error for t in ended if t.error]
    example = f"; e.g. {errors[0]}" if errors else ""
    return (
        f"warning: step {step}: {len(ended)} of {len(trajectories)} episodes ended truncated or failed, so they "
        f"carry little or no training signal: {'; '.join(parts)}{example}"
    )


TRUNCATION_CAUSES = frozenset({"context", "turns", "env"})
"""Causes a learning policy grows out of (a random model's replies are rarely valid moves); infra causes are not."""


def mean_reward(trajectories: Sequence[Trajectory]) -> float | None:
    """Mean reward of the episodes a trainer learns from; None when there are none."""
    rewards = [t.reward for t in trajectories if t.trainable]
    return sum(rewards) / len(rewards) if rewards else None


class StepWarnings:
    """:func:`step_warning` for a run: said when a cause first dominates, then every ``every`` steps it lasts.

    With ``patience`` above 1, a truncation cause (not an infra one) is said only once it persists and the
    run is not outgrowing it: it dominated each of the last ``patience`` steps, and their mean reward is no
    higher than that of the ``patience`` steps before them (so never in the first ``2 * patience - 1``
    steps). A run that starts from a random model spends its first steps mostly truncated (on ``trail``,
    35-43 of 64 episodes in steps 1-6, and again 36 at step 18 while success rose from 0.27 to 0.95 in ten
    steps) while it learns to reply with valid moves; a run whose settings cut every episode short (too
    short a horizon, too small a context) stays truncated with its reward flat, and is told at step
    ``2 * patience``. With ``patience=1`` (the default) every dominant step counts, as adapters that see
    episodes one at a time (:class:`StepOutcomeLog`) use it.
    """

    def __init__(self, *, every: int = 10, patience: int = 1, max_context_key: str = "max_context") -> None:
        if patience < 1:
            raise ValueError(f"patience must be at least 1 step, got {patience}")
        self.every = every
        self.patience = patience
        self.max_context_key = max_context_key
        self._recent: deque[tuple[str | None, float | None]] = deque(maxlen=2 * patience)
        self._cause: str | None = None
        self._since = 0
        self._said_at: int | None = None

    def check(self, step: int, trajectories: Sequence[Trajectory]) -> str | None:
        cause = dominant_cause(trajectories)
        self._recent.append((cause, mean_reward(trajectories)))
        if cause != self._cause:
            self._cause, self._since, self._said_at = cause, step, None
        if cause is None or not self._persists(cause):
            return None
        if self._said_at is not None and step - self._said_at < self.every:
            return None
        self._said_at = step
        warning = step_warning(step, trajectories, max_context_key=self.max_context_key)
        if warning is not None and self._since != step:
            stalled = f"; the reward has not risen over the last {self.patience} steps" if self.patience > 1 else ""
            warning += f" (so since step {self._since}{stalled})"
        return warning

    def _persists(self, cause: str) -> bool:
        """Whether ``cause`` is worth saying now (see the class's rule)."""
        if self.patience == 1 or cause not in TRUNCATION_CAUSES:
            return True
        if len(self._recent) < 2 * self.patience:
            return False
        before, last = list(self._recent)[: self.patience], list(self._recent)[self.patience :]
        if any(c != cause for c, _ in last):
            return False
        return _mean([r for _, r in last]) <= _mean([r for _, r in before])


def _mean(values: Sequence[float | None]) -> float:
    """The mean of the known values; a window with none (every episode an infra failure) counts as 0."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else 0.0


class StepOutcomeLog:
    """:class:`StepWarnings` for adapters that see one episode at a time, inside the framework's workers.

    With ``step`` (verl's ``global_steps``, AReaL's weight version) a step is checked when the first
    episode of a later step arrives: this process has seen all of its share by then. Without one,
    consecutive ``window`` episodes count as a step. Warnings go to ``emit`` (stderr by default; the
    frameworks forward their workers' output to the driver's console).
    """

    def __init__(
        self,
        *,
        window: int = 64,
        every: int = 10,
        max_context_key: str = "max_context",
        emit: Callable[[str], None] | None = None,
    ) -> None:
        self.window = window
        self.warnings = StepWarnings(every=every, max_context_key=max_context_key)
        self.emit = emit or _to_stderr
        self._step: int | None = None
        self._episodes: list[Trajectory] = []
        self._counted = 0

    def add(self, trajectory: Trajectory, *, step: int | None = None) -> str | None:
        """Record one finished episode; returns (and emits) the warning of a step it completed, if any."""
        if step is None:
            self._counted += 1
            step = (self._counted - 1) // self.window + 1
        warning = None
        if self._step is not None and step != self._step:
            warning = self.warnings.check(self._step, self._episodes)
            self._episodes = []
        self._step = step
        self._episodes.append(trajectory)
        if warning is not None:
            self.emit(warning)
        return warning


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
