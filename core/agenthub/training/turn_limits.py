"""The most turns a run's horizon schedule allows over all its steps: what the launch checks play against."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenthub.plugins import get_plugin_host
from agenthub.rollout.horizon import build_horizon


def most_turns(horizon: int | Mapping[str, Any] | None, steps: int) -> int | None:
    """The largest turn limit ``horizon`` (a trainer's ``horizon=`` setting) sets over ``steps`` steps;
    None: no schedule, the env's own limit holds."""
    if horizon is None:
        return None
    schedule = build_horizon(horizon, get_plugin_host().horizon)
    return max(schedule.max_turns(step) for step in range(max(steps, 1)))
