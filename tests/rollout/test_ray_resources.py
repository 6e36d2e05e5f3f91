"""How much of an env a Ray node holds: its servers and sessions from the env's footprint and the node's resources."""

from __future__ import annotations

import pytest

from agenthub.errors import AgenthubError
from agenthub.rollout.ray import EnvResources, env_resources, plan_node

GIB = 1024**3
SCIWORLD_LIKE = EnvResources(cpus_per_server=1.0, memory_mib_per_server=273.0, memory_mib_per_session=96.0, source="t")


def test_a_big_node_gets_what_was_asked_and_reserves_it() -> None:
    plan = plan_node("n", {"CPU": 16.0, "memory": 64 * GIB}, SCIWORLD_LIKE, processes=4, concurrency=32)
    assert plan is not None and (plan.processes, plan.concurrency, plan.num_cpus) == (4, 32, 4.0)
    assert plan.memory_bytes == (4 * 273 + 32 * 96) * 1024**2  # servers plus sessions, reserved from Ray


def test_a_small_node_gets_fewer_servers_and_sessions() -> None:
    plan = plan_node("n", {"CPU": 2.0, "memory": 1 * GIB}, SCIWORLD_LIKE, processes=4, concurrency=32)
    assert plan is not None and plan.processes == 2  # two CPUs
    assert plan.concurrency == (1024 - 2 * 273) // 96  # what the memory left after the servers holds


def test_a_node_with_no_cpu_or_too_little_memory_runs_no_server() -> None:
    assert plan_node("head", {"CPU": 0.0, "memory": 64 * GIB}, SCIWORLD_LIKE, processes=1, concurrency=8) is None
    assert plan_node("tiny", {"CPU": 4.0, "memory": 300 * 1024**2}, SCIWORLD_LIKE, processes=1, concurrency=8) is None


def test_an_env_footprint_comes_from_its_measurement_and_can_be_overridden() -> None:
    guess = env_resources("guess")
    assert guess.cpus_per_server == 1.0 and guess.memory_mib_per_session < 1 and "env_plugins.json" in guess.source
    custom = env_resources("guess", cpus_per_server=0.5, memory_mib_per_session=12)
    assert (custom.cpus_per_server, custom.memory_mib_per_session) == (0.5, 12)
    with pytest.raises(AgenthubError, match="env resources must be >= 0"):
        EnvResources(cpus_per_server=-1, memory_mib_per_server=1, memory_mib_per_session=1, source="t")
