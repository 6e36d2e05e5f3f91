"""Horizon schedules: values, resume-correctness, config errors, and plugins adding their own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from agenthub import PluginHost, UnknownNameError, get_plugin_host, hookimpl
from agenthub.errors import ConfigError
from agenthub.rollout.horizon import FixedHorizon, LinearHorizon, StepwiseHorizon, build_horizon
from agenthub.specs import HorizonSpec


def test_stepwise_is_scaling_inter_rl() -> None:
    schedule = StepwiseHorizon(rounds=[10, 20, 30], every=100)
    assert [schedule.max_turns(s) for s in (0, 99, 100, 199, 200, 250, 10**6)] == [10, 10, 20, 20, 30, 30, 30]


def test_linear_and_fixed() -> None:
    linear = LinearHorizon(start=5, end=30, steps=100)
    assert [linear.max_turns(s) for s in (0, 50, 100, 1000)] == [5, 17, 30, 30]
    assert FixedHorizon(turns=7).max_turns(12345) == 7


def test_a_schedule_rebuilt_after_a_restart_gives_what_the_uninterrupted_run_had() -> None:
    config = {"kind": "stepwise", "rounds": [10, 20, 30], "every": 100}
    uninterrupted = build_horizon(config, get_plugin_host().horizon)
    values = [uninterrupted.max_turns(step) for step in range(400)]
    restarted = build_horizon(dict(config), get_plugin_host().horizon)  # as after a crash at step 150
    assert [restarted.max_turns(step) for step in range(150, 400)] == values[150:]


def test_config_errors_say_what_to_write() -> None:
    lookup = get_plugin_host().horizon
    assert build_horizon(30, lookup).max_turns(0) == 30
    with pytest.raises(ConfigError, match="horizon needs a kind"):
        build_horizon({"rounds": [1]}, lookup)
    with pytest.raises(UnknownNameError, match="did you mean 'stepwise'"):
        build_horizon({"kind": "stepwize"}, lookup)
    with pytest.raises(ConfigError, match="rejected its settings"):
        build_horizon({"kind": "stepwise", "rounds": [], "every": 100}, lookup)


@dataclass(frozen=True)
class DoublingHorizon:
    start: int
    every: int

    def max_turns(self, step: int) -> int:
        return self.start * 2 ** (step // self.every)


class DoublingPlugin:
    @hookimpl
    def agenthub_register_horizons(self, register: Callable[[HorizonSpec], None]) -> None:
        register(HorizonSpec("doubling", DoublingHorizon, "doubles every N steps"))


def test_plugins_register_horizons_through_the_hook() -> None:
    host = PluginHost(load_entry_points=False, extra_plugins=[DoublingPlugin()])
    schedule = build_horizon({"kind": "doubling", "start": 4, "every": 10}, host.horizon)
    assert [schedule.max_turns(s) for s in (0, 10, 25)] == [4, 8, 16]
    assert host.records["DoublingPlugin"].registered == {"horizon": ["doubling"]}
    assert {"fixed", "stepwise", "linear"} <= {spec.name for spec in host.horizons}
