"""The Ray backend on a cluster of several raylets started here: a whole node lost, and the CLI.

A head node with no CPU (so it runs no env server, like a head kept for the
driver) and three worker nodes of one CPU each, every one its own raylet
process on this machine. Losing a node is its raylet SIGKILLed, which takes the
node's workers, actors and env servers with it, as a machine that drops off the
network does. The head checks its nodes' health every 200 ms, so the loss is
noticed in about a second rather than Ray's default 15.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import ray
from ray.cluster_utils import Cluster

from agenthub import AgentReply, EnvInfo, Observation, Outcome, Task
from agenthub.builtin.agents import GuessOracleEpisode
from agenthub.rollout.executor import EpisodeRequest, Executor, episode_requests
from agenthub.rollout.ray import RayBackendError, RayRollout, connect, launch_on_ray
from agenthub.rollout.store import RunStore

pytestmark = [pytest.mark.anyio, pytest.mark.ray_cluster]

NODE_OBJECT_STORE = 80 * 1024**2
WORKER_NODES = 3
FAST_HEALTH_CHECKS = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 200,
    "health_check_timeout_ms": 200,
    "health_check_failure_threshold": 3,
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    wait_longer_for_raylets()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 0,
            "object_store_memory": NODE_OBJECT_STORE,
            "include_dashboard": False,
            "_system_config": FAST_HEALTH_CHECKS,
        },
    )
    try:
        for _ in range(WORKER_NODES):
            add_node(cluster)
        ray.init(address=cluster.address, log_to_driver=False)
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # SlowOracle, for the workers
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def wait_longer_for_raylets(timeout_s: float = 240.0) -> None:
    """Let a new raylet take up to ``timeout_s`` to register, not Ray's fixed 30 s.

    On a loaded machine (many processes on few cores) a raylet can take longer than that, and
    ``Cluster.add_node`` then fails while the raylet it started lives on. Ray reads the node's
    registration through ``services.get_node``, retried here.
    """
    from ray._private import services

    original = services.get_node
    if getattr(original, "patient", False):
        return

    def get_node(*args: Any, **kwargs: Any) -> Any:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return original(*args, **kwargs)
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    get_node.patient = True  # type: ignore[attr-defined]
    services.get_node = get_node


def add_node(cluster: Cluster) -> None:
    """One more raylet of one CPU."""
    wait_longer_for_raylets()
    cluster.add_node(num_cpus=1, object_store_memory=NODE_OBJECT_STORE)
    cluster.wait_for_nodes()


class SlowOracle:
    """The guess oracle, taking ``delay_s`` a turn: a model's latency, so episodes are in flight at a loss."""

    def __init__(self, delay_s: float = 0.05) -> None:
        self.delay_s = delay_s

    def start_episode(self, task: Task, env: EnvInfo) -> SlowEpisode:
        return SlowEpisode(self.delay_s)


class SlowEpisode(GuessOracleEpisode):
    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

    async def act(self, observation: Observation) -> AgentReply:
        await asyncio.sleep(self.delay_s)
        return await super().act(observation)


def raylet_pid(cluster: Cluster, node_id: str) -> int:
    [node] = [n for n in cluster.worker_nodes if n.node_id == node_id]
    return int(node.all_processes["raylet"][0].process.pid)


def gone(pids: list[int], timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids):
            return True
        time.sleep(0.1)
    return False


def guess_requests(n: int) -> list[EpisodeRequest]:
    return episode_requests([Task(env="guess", task_id=i % 16, seed=i) for i in range(n)])


async def test_losing_a_whole_node_mid_run_loses_and_duplicates_no_episode(cluster: Cluster, tmp_path: Path) -> None:
    requests = guess_requests(60)
    store = RunStore.create({"env": "guess", "backend": "ray"}, root=tmp_path, run_id="node-loss")
    killed: dict[str, Any] = {}

    async with RayRollout("guess", SlowOracle, concurrency_per_node=4, batch_size=2, start_timeout_s=30) as rollout:
        plans = {row["node_id"]: row for row in rollout.stats()}
        victim = next(t for t in plans if t != cluster.head_node.node_id)

        def kill_when_busy(trajectory: Any) -> None:
            if not killed and sum(1 for _ in store.trajectories()) >= 12:  # every node has episodes in flight
                killed["pid"] = raylet_pid(cluster, victim)
                os.kill(killed["pid"], signal.SIGKILL)

        summary = await rollout.collect(requests, store=store, on_trajectory=kill_when_busy)
        stats = {row["node_id"]: row for row in rollout.stats()}
    store.close()
    stored = list(store.trajectories())

    assert killed, "the run ended before a node could be killed"
    assert sorted(plans) == sorted(n.node_id for n in cluster.worker_nodes)  # the CPU-less head runs no servers
    keys = Counter(t.key for t in stored)
    assert sorted(keys) == sorted(r.key for r in requests) and set(keys.values()) == {1}  # none lost, none twice
    assert summary.episodes == 60 and all(t.outcome is Outcome.SUCCESS for t in stored)
    rerun = [t for t in stored if t.provenance.get("ray_worker_losses")]
    assert rerun and all(t.provenance["ray_node_id"] != victim for t in rerun)  # in flight on it, run elsewhere
    assert stats[victim]["state"] == "dead" and stats[victim]["deaths"] == 1
    assert stats[victim]["last_error"] and "Actor" in stats[victim]["last_error"]  # the infra failure, recorded
    assert all(row["state"] == "ready" for node, row in stats.items() if node != victim)
    assert sum(row["episodes"] for row in stats.values()) == 60
    assert gone([plans[victim]["pid"], *plans[victim]["server_pids"]])  # its worker and servers ended with it
    cluster.remove_node(next(n for n in cluster.worker_nodes if n.node_id == victim), allow_graceful=False)
    add_node(cluster)  # the next tests have three nodes again


async def test_env_servers_on_every_node_serve_an_executor_that_runs_here(cluster: Cluster) -> None:
    """What a trainer does: its policy stays in its process, the env servers go out to the nodes."""
    async with await launch_on_ray("guess", processes_per_node=1, capacity=8) as pool:
        urls = [endpoint.url for endpoint in pool.endpoints]
        executor = Executor(pool, SlowOracle(0.0), concurrency=12)
        trajectories = [t async for t in executor.stream(guess_requests(24))]
        token = pool.endpoints[0].client.token
    assert len(urls) == WORKER_NODES and all(url.startswith("http://") and ":" in url[7:] for url in urls)
    assert sorted(t.key for t in trajectories) == sorted(r.key for r in guess_requests(24))
    assert all(t.outcome is Outcome.SUCCESS for t in trajectories)
    assert token  # servers reachable from other machines are never left open
    for url in urls:  # closing the pool stopped every node's servers
        host, port = url.removeprefix("http://").rsplit(":", 1)
        with pytest.raises(OSError):
            socket.create_connection((host, int(port)), timeout=5).close()


async def test_a_pool_that_connected_to_ray_itself_disconnects_when_closed(cluster: Cluster) -> None:
    """A trainer that never touched Ray (TRL with backend=ray) leaves no connection behind its run."""
    ray.shutdown()  # this driver as a trainer's process sees it: not connected
    try:
        async with await launch_on_ray("guess", address=cluster.address, capacity=4) as pool:
            assert pool.owns_ray and ray.is_initialized()
            assert len(pool.endpoints) == WORKER_NODES
        assert not ray.is_initialized()
    finally:
        if not ray.is_initialized():
            ray.init(address=cluster.address, log_to_driver=False)
            ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def agenthub_eval(*args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenthub", "eval", *args], capture_output=True, text=True, timeout=timeout_s
    )


def test_the_cli_runs_on_the_cluster_and_resumes_an_interrupted_run(cluster: Cluster, tmp_path: Path) -> None:
    settings = ["env=guess", "agent=oracle", "n=16", "k=40", "backend=ray", f"address={cluster.address}"]
    run_dir = tmp_path / "cli"
    stored = run_dir / "trajectories.jsonl"
    command = [sys.executable, "-m", "agenthub", "eval", *settings, f"runs_dir={tmp_path}", "run_id=cli"]
    with subprocess.Popen([*command, "progress=false"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as first:
        deadline = time.monotonic() + 90
        while not (stored.exists() and len(stored.read_text().splitlines()) >= 40):
            assert first.poll() is None, f"the first run ended early: {first.communicate()[1]!r}"
            assert time.monotonic() < deadline, "no trajectories within 90 s"
            time.sleep(0.05)
        first.kill()  # as an out-of-memory kill or a lost login would stop it: nothing gets to clean up
        first.communicate(timeout=30)
    before = {line for line in stored.read_text().splitlines() if line.strip()}
    assert 40 <= len(before) < 640

    resumed = agenthub_eval("--resume", str(run_dir), "progress=false")

    assert resumed.returncode == 0, resumed.stderr
    trajectories = list(RunStore.existing(run_dir).trajectories())
    keys = Counter(t.key for t in trajectories)
    assert len(keys) == 640 and set(keys.values()) == {1}  # every sample once: the stored ones were skipped
    assert all(t.outcome is Outcome.SUCCESS for t in trajectories)
    assert len({t.provenance["ray_node_id"] for t in trajectories}) == WORKER_NODES  # spread over every node
    assert f"run saved in {run_dir}" in resumed.stdout and "640" in resumed.stdout
    assert '"ray_nodes"' in (run_dir / "eval.json").read_text()


def test_the_cli_plays_a_multi_player_env_against_an_opponent_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    ran = agenthub_eval(
        "env=tictactoe", "agent=random", "opponent=oracle", "seat=1", "n=6", "k=2", "backend=ray",
        f"address={cluster.address}", f"runs_dir={tmp_path}", "run_id=seats", "progress=false",
    )  # fmt: skip

    assert ran.returncode == 0, ran.stderr
    trajectories = list(RunStore.existing(tmp_path / "seats").trajectories())
    assert Counter(t.seat for t in trajectories) == {0: 12, 1: 12}  # every seat of 12 games is stored and scored
    assert all(t.provenance["opponent"] == "oracle" and t.provenance["agent_seat"] == 1 for t in trajectories)
    assert all(t.reward >= 0 for t in trajectories if t.seat == 0)  # seat 0 is the nodes' oracle: it never loses
    assert "ray_node_id" in trajectories[0].provenance


def test_backend_settings_that_do_not_fit_are_refused_with_what_to_do(tmp_path: Path) -> None:
    with_url = agenthub_eval("env=guess", "backend=ray", "url=http://127.0.0.1:1", f"runs_dir={tmp_path}")
    assert with_url.returncode != 0 and "backend=ray starts env servers on every Ray node itself" in with_url.stderr
    local = agenthub_eval("env=guess", "address=auto", f"runs_dir={tmp_path}")
    assert local.returncode != 0 and "add backend=ray to run on it" in local.stderr
    typo = agenthub_eval("env=guess", "backend=rya", f"runs_dir={tmp_path}")
    assert typo.returncode != 0 and "backend" in typo.stderr and "'local' or 'ray'" in typo.stderr


def test_an_unreachable_address_is_said_in_seconds_with_what_to_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as a fresh driver sees it
    with pytest.raises(RayBackendError, match=r"cannot reach the Ray cluster at address='127\.0\.0\.1:1' .*ray status"):
        connect("127.0.0.1:1")
    with pytest.raises(RayBackendError, match=r"cannot reach the Ray cluster at address='ray://127\.0\.0\.1:1'"):
        connect("ray://127.0.0.1:1")
    with pytest.raises(RayBackendError, match=r"'nonsense' is not a Ray address; use auto, HOST:PORT"):
        connect("nonsense")
