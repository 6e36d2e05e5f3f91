"""The Ray backend on a real Ray cluster of two nodes (two raylets) on this machine.

Both nodes run on one machine, so the crash tests can share a marker file
between them; everything else (placement, env servers per node, streaming,
restarts) is what a cluster of machines does.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import ray
from ray.cluster_utils import Cluster

from agenthub import AgentReply, EnvInfo, Observation, Outcome, Task
from agenthub.builtin.agents import GuessOracle, GuessOracleEpisode
from agenthub.errors import AgenthubError
from agenthub.rollout.executor import EpisodeRequest, episode_requests
from agenthub.rollout.ray import RayBackendError, RayNotInstalledError, RayRollout, collect_on_ray, import_ray
from agenthub.rollout.store import RunStore

pytestmark = pytest.mark.anyio

NODE_OBJECT_STORE = 80 * 1024**2
CONFIG = {"env": "guess", "agent": "guess-oracle", "backend": "ray"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[str]]:
    """A head node and one more node, one CPU each; yields their Ray node ids."""
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": NODE_OBJECT_STORE, "include_dashboard": False},
    )
    try:
        cluster.add_node(num_cpus=1, object_store_memory=NODE_OBJECT_STORE)
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        # The crash tests' agents live in this module, which the workers cannot import by name.
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        yield sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
    finally:
        ray.shutdown()
        cluster.shutdown()


def guess_requests(n: int) -> list[EpisodeRequest]:
    return episode_requests([Task(env="guess", task_id=i % 16, seed=i) for i in range(n)])


class CrashingOracle:
    """The guess oracle, whose process dies (as from a segfault) on the task with seed ``crash_on``
    (on every task if None). With ``marker``, only the first time: the file says it has happened.
    """

    def __init__(self, crash_on: int | None, marker: Path | None = None) -> None:
        self.crash_on = crash_on
        self.marker = marker

    def start_episode(self, task: Task, env: EnvInfo) -> CrashingEpisode:
        return CrashingEpisode(self, task)


class CrashingEpisode(GuessOracleEpisode):
    def __init__(self, agent: CrashingOracle, task: Task) -> None:
        super().__init__()
        self.agent, self.task = agent, task

    async def act(self, observation: Observation) -> AgentReply:
        await asyncio.sleep(0.02)  # so that other episodes are in flight when it dies
        if self.agent.crash_on in (None, self.task.seed):
            marker = self.agent.marker
            if marker is None or not marker.exists():
                if marker is not None:
                    marker.touch()
                os._exit(1)
        return await super().act(observation)


def gone(pids: list[int], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids):
            return True
        time.sleep(0.1)
    return False


async def test_episodes_spread_over_both_nodes_into_one_store_and_resume_skips_finished(
    cluster: list[str], tmp_path: Path
) -> None:
    requests = guess_requests(40)
    store = RunStore.create(CONFIG, root=tmp_path, run_id="r")
    options = {"provenance": {"model": "oracle"}}
    async with RayRollout(
        "guess", "guess-oracle", concurrency_per_node=4, batch_size=4, executor_options=options
    ) as rollout:
        first = await rollout.collect(requests[:16], store=store)
        store.close()  # as if the run had stopped here
        store = RunStore.resume(store.path, CONFIG)
        second = await rollout.collect(requests, store=store)
        store.close()
        async with contextlib.aclosing(rollout.stream(guess_requests(40))) as stopped_early:
            async for _ in stopped_early:
                break  # a consumer that wants no more; the next stream must still get the nodes
        after = [t async for t in rollout.stream(guess_requests(8))]
        stats = rollout.stats()
    servers = [pid for row in stats for pid in row["server_pids"]]

    assert (first.episodes, first.resumed) == (16, 0)
    assert (second.episodes, second.resumed) == (24, 16)  # the first 16 were not run again
    trajectories = list(store.trajectories())
    assert sorted(t.key for t in trajectories) == sorted(r.key for r in requests)  # each key exactly once
    assert all(t.outcome is Outcome.SUCCESS for t in trajectories)
    served = Counter(t.provenance["ray_node_id"] for t in trajectories)
    assert sorted(served) == cluster  # both nodes served episodes
    assert all(t.provenance["model"] == "oracle" and t.provenance["env"] == "guess" for t in trajectories)
    assert len(after) == 8 and all(t.outcome is Outcome.SUCCESS for t in after)  # the nodes took new work
    assert sorted(row["node_id"] for row in stats) == cluster and all(row["deaths"] == 0 for row in stats)
    assert len(servers) == 2 and gone(servers)  # each node's env server stopped with the rollout


async def test_a_crashed_worker_is_restarted_and_its_episodes_run_again(cluster: list[str], tmp_path: Path) -> None:
    agent = functools.partial(CrashingOracle, crash_on=13, marker=tmp_path / "crashed")
    async with RayRollout("guess", agent, concurrency_per_node=4, batch_size=2) as rollout:
        before = {row["node_id"]: row["server_pids"] for row in rollout.stats()}
        trajectories = [t async for t in rollout.stream(guess_requests(40))]
        stats = {row["node_id"]: row for row in rollout.stats()}

    assert (tmp_path / "crashed").exists()
    assert sorted(t.key for t in trajectories) == sorted(r.key for r in guess_requests(40))
    assert all(t.outcome is Outcome.SUCCESS for t in trajectories)  # nothing was lost with the worker
    rerun = {t.key: t.provenance["ray_worker_losses"] for t in trajectories if "ray_worker_losses" in t.provenance}
    assert rerun["13/0"] == 1  # in flight when its worker died, then run again
    [crashed] = [row for row in stats.values() if row["deaths"]]
    assert crashed["deaths"] == 1 and crashed["state"] == "ready"  # Ray restarted it; it served again
    assert crashed["server_pids"] != before[crashed["node_id"]]  # with fresh env servers
    assert gone(before[crashed["node_id"]])  # the dead worker's servers did not outlive it


async def test_a_task_that_kills_its_worker_is_stored_as_env_error_and_the_rest_run_on(
    cluster: list[str], tmp_path: Path
) -> None:
    requests = guess_requests(24)
    store = RunStore.create(CONFIG, root=tmp_path, run_id="poison")
    agent = functools.partial(CrashingOracle, crash_on=5)  # every time it is played
    async with RayRollout(
        "guess", agent, concurrency_per_node=2, batch_size=1, max_worker_losses=1, max_worker_restarts=0
    ) as rollout:
        summary = await rollout.collect(requests, store=store)
        stats = {row["state"]: row for row in rollout.stats()}
    store.close()
    trajectories = {t.key: t for t in store.trajectories()}

    assert sorted(trajectories) == sorted(r.key for r in requests) and summary.episodes == 24
    poison = trajectories["5/0"]
    assert poison.outcome is Outcome.ENV_ERROR and not poison.trainable and poison.turns == []
    assert (
        poison.error is not None
        and "node worker running this episode died (losses: 1, max_worker_losses=1)" in poison.error
    )
    lost = [t for t in trajectories.values() if t.outcome is not Outcome.SUCCESS]
    # Episodes in flight beside it (at most concurrency + batch - 1) went down with it, marked the same way.
    assert len(lost) <= 3 and all(t.outcome is Outcome.ENV_ERROR for t in lost)
    assert {t.provenance["ray_node_id"] for t in lost} == {stats["dead"]["node_id"]}
    assert stats["dead"]["deaths"] == 1 and "ActorDiedError" in stats["dead"]["last_error"]
    assert stats["ready"]["episodes"] == 24 - len(lost) - stats["dead"]["episodes"]  # the other node ran on


async def test_when_every_worker_is_gone_the_run_stops_and_says_how_to_finish_it(
    cluster: list[str], tmp_path: Path
) -> None:
    store = RunStore.create(CONFIG, root=tmp_path, run_id="doomed")
    agent = functools.partial(CrashingOracle, crash_on=None)
    with pytest.raises(RayBackendError, match=r"every node worker died and \d+ episodes were not run .*resume the run"):
        await collect_on_ray(
            "guess",
            agent,
            guess_requests(40),
            store=store,
            concurrency_per_node=2,
            batch_size=1,
            max_worker_losses=1,
            max_worker_restarts=0,
        )
    store.close()
    stored = list(store.trajectories())
    assert stored and all(t.outcome is Outcome.ENV_ERROR for t in stored)  # the ones lost with the workers
    assert len(stored) < 40 and len({t.key for t in stored}) == len(stored)
    assert {t.provenance["ray_node_id"] for t in stored} == set(cluster)


async def test_a_misspelt_agent_is_reported_from_the_nodes(cluster: list[str]) -> None:
    with pytest.raises(RayBackendError, match=r"could not start") as failure:
        await RayRollout("guess", "guess-oracel").start()
    message = str(failure.value)
    assert all(f"node {node_id}: UnknownNameError: unknown agent 'guess-oracel'" in message for node_id in cluster)
    assert "did you mean 'guess-oracle'?" in message
    with pytest.raises(RayBackendError, match=r"these Ray nodes are not alive: \['f00d'\]; alive nodes: \['"):
        await RayRollout("guess", "guess-oracle", nodes=["f00d"]).start()
    assert ray.is_initialized()  # the test's own connection to the cluster is left as it was


def test_options_are_checked_before_any_node_is_touched() -> None:
    with pytest.raises(AgenthubError, match=r"may not set \['on_turn'\]"):
        RayRollout("guess", GuessOracle, executor_options={"on_turn": print})
    with pytest.raises(AgenthubError, match=r"unknown executor_options \['max_atempts'\]; accepted: .*'max_attempts'"):
        RayRollout("guess", GuessOracle, executor_options={"max_atempts": 3})
    with pytest.raises(AgenthubError, match=r"agent_kwargs go with an agent name; .*functools.partial"):
        RayRollout("guess", GuessOracle, agent_kwargs={"seed": 1})
    with pytest.raises(AgenthubError, match="concurrency_per_node must be >= 1"):
        RayRollout("guess", GuessOracle, concurrency_per_node=0)


def test_without_ray_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees when it is not installed
    with pytest.raises(RayNotInstalledError, match=r"pip install 'agenthub\[ray\]'"):
        import_ray()


def test_importing_agenthub_never_imports_ray() -> None:
    code = (
        "import sys, agenthub, agenthub.rollout.collect, agenthub.rollout.executor, agenthub.rollout.ray; "
        "assert 'ray' not in sys.modules, 'ray was imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
