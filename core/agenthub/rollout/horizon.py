"""Horizon schedules: the most turns an episode may take at a given training step.

A schedule is a pure function of the step, so a run restarted at step N gets
exactly the horizon an uninterrupted run would have had (resume-correct by
construction: there is no state to save). ScalingInter-RL's curriculum is
``StepwiseHorizon(rounds=[10, 20, 30], every=100)``.

More schedules come from plugins through ``agenthub_register_horizons``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agenthub.errors import ConfigError
from agenthub.protocols import HorizonSchedule
from agenthub.specs import HorizonSpec


class _Schedule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def max_turns(self, step: int) -> int:
        raise NotImplementedError


class FixedHorizon(_Schedule):
    """The same limit at every step."""

    turns: int = Field(ge=1)

    def max_turns(self, step: int) -> int:
        return self.turns


class StepwiseHorizon(_Schedule):
    """ScalingInter-RL: ``rounds[k]`` turns from step ``k * every``, the last round thereafter."""

    rounds: list[int] = Field(min_length=1)
    every: int = Field(ge=1)

    @model_validator(mode="after")
    def _positive(self) -> StepwiseHorizon:
        if any(r < 1 for r in self.rounds):
            raise ValueError(f"every round must allow at least 1 turn, got {self.rounds}")
        return self

    def max_turns(self, step: int) -> int:
        return self.rounds[min(max(step, 0) // self.every, len(self.rounds) - 1)]


class LinearHorizon(_Schedule):
    """From ``start`` turns at step 0 to ``end`` at step ``steps``, rounded down, then ``end``."""

    start: int = Field(ge=1)
    end: int = Field(ge=1)
    steps: int = Field(ge=1)

    def max_turns(self, step: int) -> int:
        fraction = min(max(step, 0), self.steps) / self.steps
        return int(self.start + (self.end - self.start) * fraction)


def build_horizon(config: Mapping[str, Any] | int, lookup: Callable[[str], HorizonSpec]) -> HorizonSchedule:
    """A schedule from config: an int (fixed) or ``{"kind": NAME, ...keyword arguments}``."""
    if isinstance(config, int):
        return FixedHorizon(turns=config)
    params = dict(config)
    kind = params.pop("kind", None)
    if not isinstance(kind, str):
        raise ConfigError(
            "horizon needs a kind, e.g. horizon.kind=stepwise horizon.rounds=[10,20,30] horizon.every=100 "
            "(or horizon=30 for a fixed limit)"
        )
    try:
        return lookup(kind).make(**params)
    except (ValidationError, TypeError) as exc:
        raise ConfigError(f"horizon kind {kind!r} rejected its settings {params}: {exc}") from exc
