"""The launch checks of a run with a horizon schedule: played at the longest turn limit it sets.

A trainer with ``horizon=`` (a turn limit per step) must fit its token limits at the schedule's longest
limit over the run's steps, not only at the first step's; see :func:`~agenthub.training.most_turns`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from agenthub.training.launch_checks import LaunchReport, TokenLimits
from agenthub.training.tokenizers import LaunchSettings, check_launch_with_model
from agenthub.training.turn_limits import most_turns


class ScheduledSettings(LaunchSettings, Protocol):
    """A trainer config with a horizon schedule (``horizon=``) over ``steps`` training steps."""

    @property
    def horizon(self) -> int | Mapping[str, Any] | None: ...
    @property
    def steps(self) -> int: ...


def check_launch_over_horizon(
    config: ScheduledSettings,
    limits: TokenLimits,
    *,
    dry_run: bool,
    system_prompt: str | None = None,
    seed: int = 0,
    tiny_model: Mapping[str, Any] | None = None,
) -> LaunchReport:
    """:func:`~agenthub.training.check_launch_with_model`, playing up to the most turns ``config.horizon``
    allows over ``config.steps`` steps (the env's own limit without a schedule)."""
    return check_launch_with_model(
        config,
        limits,
        dry_run=dry_run,
        max_turns=most_turns(config.horizon, config.steps),
        system_prompt=system_prompt,
        seed=seed,
        tiny_model=tiny_model,
    )
