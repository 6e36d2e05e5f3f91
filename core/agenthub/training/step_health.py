"""A warning for a training step whose episodes mostly taught nothing.

An episode that ended ``truncated`` (turn or context limit) or in an infra
outcome (never trained on) carries little or no signal. When most of a step's
episodes end that way the run is "training" on nothing, silently; the warning
says which end dominated and the setting that usually causes it.
"""

from __future__ import annotations

import sys
from collections import Counter
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


class StepWarnings:
    """:func:`step_warning` for a run: said when a cause first dominates, then every ``every`` steps it lasts.

    A run that starts from a random model may spend its first steps mostly truncated; the line says so
    once and again only if it persists, so the step lines stay readable.
    """

    def __init__(self, *, every: int = 10, max_context_key: str = "max_context") -> None:
        self.every = every
        self.max_context_key = max_context_key
        self._cause: str | None = None
        self._since = 0
        self._said_at = 0

    def check(self, step: int, trajectories: Sequence[Trajectory]) -> str | None:
        cause = dominant_cause(trajectories)
        if cause is None:
            self._cause = None
            return None
        if cause == self._cause and step - self._said_at < self.every:
            return None
        if cause != self._cause:
            self._cause, self._since = cause, step
        self._said_at = step
        warning = step_warning(step, trajectories, max_context_key=self.max_context_key)
        if warning is not None and self._since != step:
            warning += f" (so since step {self._since})"
        return warning


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
