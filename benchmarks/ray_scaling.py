"""The Ray backend's scaling: episodes/s against the number of raylets (nodes) on this machine.

A real Ray cluster is started here: a head node with no CPU (it runs no env server, as a head kept
for the driver) and worker nodes of one CPU each, each its own raylet process, added one at a time
(1, 2, 3, 4). At each size a :class:`~agenthub.rollout.ray.RayRollout` places one node worker per
node, each starting its own ``agenthub serve`` env server and agent, and the same episodes run over
the nodes. Two agents:

- ``oracle``: the env's own oracle, which answers in microseconds: every node's CPU goes to the
  env server, the executor and Ray, so this shows what the machine's cores allow;
- ``latency``: the oracle behind a fixed latency a turn (``--latency-ms``, 50 by default), as a
  model served elsewhere; each node runs ``--concurrency`` episodes at once, so a node adds capacity
  even where the cores are few.

Reported per agent and size: episodes/s (the stream's wall time, after the workers started), the
speed-up over one node measured in the same run, the time to start the workers, the episodes each
node ran, and the load average. On a machine with fewer cores than raylets every node competes for
the same cores: read the ratios, not the rates.

    pip install -e '.[bench,ray]'
    python benchmarks/ray_scaling.py                 # ~5 minutes on 2 cores
    python benchmarks/ray_scaling.py --quick         # smoke run (1 and 2 raylets); writes to a temp dir

Writes benchmarks/results/ray_scaling.json (through ``provenance.write_result``: the commit, when it ran,
the settings and the code measured) and ray_scaling.png (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenthub import AgentReply, EnvInfo, Observation, Outcome, Task
from agenthub.builtin.agents import GuessOracleEpisode
from agenthub.rollout.executor import episode_requests
from agenthub.rollout.ray import RayRollout

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import write_result  # a sibling module of this script

if TYPE_CHECKING:
    from ray.cluster_utils import Cluster

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
NODE_OBJECT_STORE = 80 * 1024**2


class LatencyOracle:
    """The guess oracle behind a fixed latency a turn: a model served elsewhere, for the cost of a sleep."""

    def __init__(self, latency_ms: float) -> None:
        self.latency_s = latency_ms / 1000

    def start_episode(self, task: Task, env: EnvInfo) -> LatencyEpisode:
        return LatencyEpisode(self.latency_s)


class LatencyEpisode(GuessOracleEpisode):
    def __init__(self, latency_s: float) -> None:
        super().__init__()
        self.latency_s = latency_s

    async def act(self, observation: Observation) -> AgentReply:
        await asyncio.sleep(self.latency_s)
        return await super().act(observation)


async def measure(agent: Any, episodes: int, concurrency: int, nodes: int) -> dict[str, Any]:
    tasks = [Task(env="guess", task_id=i % 16, seed=i) for i in range(episodes)]
    started = time.monotonic()
    async with RayRollout("guess", agent, concurrency_per_node=concurrency, batch_size=4) as rollout:
        ready = time.monotonic()
        warm_up = [Task(env="guess", task_id=i % 16, seed=-1 - i) for i in range(4 * nodes)]
        [_ async for _ in rollout.stream(episode_requests(warm_up))]  # every node's first episodes, untimed
        stats_before = {row["node_id"]: row["episodes"] for row in rollout.stats()}
        load_before = os.getloadavg()[0]
        timed = time.monotonic()
        trajectories = [t async for t in rollout.stream(episode_requests(tasks))]
        elapsed = time.monotonic() - timed
        stats = [{**row, "episodes": row["episodes"] - stats_before[row["node_id"]]} for row in rollout.stats()]
    outcomes = Counter(t.outcome.value for t in trajectories)
    turns = sum(len(t.turns) for t in trajectories)
    assert len(stats) == nodes, f"expected {nodes} node workers, got {len(stats)}"
    assert outcomes[Outcome.SUCCESS.value] == episodes, f"not every episode was won: {dict(outcomes)}"
    return {
        "raylets": nodes,
        "episodes": episodes,
        "turns": turns,
        "episodes_per_s": round(episodes / elapsed, 2),
        "turns_per_s": round(turns / elapsed, 1),
        "wall_s": round(elapsed, 3),
        "start_s": round(ready - started, 2),
        "episodes_per_node": sorted((row["episodes"] for row in stats), reverse=True),
        "load_avg_before": round(load_before, 2),
    }


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


def run(args: argparse.Namespace) -> dict[str, Any]:
    import ray
    from ray.cluster_utils import Cluster

    agents = {"oracle": "guess-oracle", "latency": functools.partial(LatencyOracle, args.latency_ms)}
    series: dict[str, list[dict[str, Any]]] = {name: [] for name in agents}
    wait_longer_for_raylets()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "object_store_memory": NODE_OBJECT_STORE, "include_dashboard": False},
    )
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # LatencyOracle, for the workers
        for nodes in range(1, max(args.raylets) + 1):
            add_node(cluster)
            if nodes not in args.raylets:
                continue
            for name, agent in agents.items():
                episodes = args.episodes if name == "oracle" else args.latency_episodes
                row = asyncio.run(measure(agent, episodes, args.concurrency, nodes))
                series[name].append(row)
                print(f"{name:8} raylets={nodes}  {row['episodes_per_s']:8.1f} episodes/s  "
                      f"per node {row['episodes_per_node']}  load {row['load_avg_before']}", flush=True)  # fmt: skip
    finally:
        ray.shutdown()
        cluster.shutdown()
    for rows in series.values():
        base = rows[0]["episodes_per_s"] if rows else 0
        for row in rows:
            row["speedup_over_one"] = round(row["episodes_per_s"] / base, 2) if base else None
    return {
        "benchmark": "ray_scaling",
        "quick": args.quick,
        "settings": {
            "env": "guess",
            "raylets": args.raylets,
            "cpus_per_raylet": 1,
            "head_cpus": 0,
            "concurrency_per_node": args.concurrency,
            "episodes": {"oracle": args.episodes, "latency": args.latency_episodes},
            "latency_ms": args.latency_ms,
            "ray": ray.__version__,
        },
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "series": series,
    }


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (rate, speedup) = plt.subplots(1, 2, figsize=(10, 4))
    latency = report["settings"]["latency_ms"]
    for name, rows in report["series"].items():
        label = "oracle (no latency)" if name == "oracle" else f"oracle + {latency:g} ms a turn"
        xs = [r["raylets"] for r in rows]
        rate.plot(xs, [r["episodes_per_s"] for r in rows], marker="o", label=label)
        speedup.plot(xs, [r["speedup_over_one"] for r in rows], marker="o", label=label)
    if any(report["series"].values()):
        xs = sorted({r["raylets"] for rows in report["series"].values() for r in rows})
        speedup.plot(xs, xs, linestyle=":", color="grey", label="linear")
        cores = report["machine"]["cores"]
        speedup.axvline(cores, color="grey", linestyle="--", linewidth=0.8, label=f"{cores} cores")
    rate.set_ylabel("episodes / s")
    rate.set_title("Ray backend, env guess, 1 CPU a raylet")
    speedup.set_ylabel("speed-up over one raylet")
    speedup.set_title("scaling (same run)")
    for axis in (rate, speedup):
        axis.set_xlabel("raylets (nodes)")
        axis.set_xticks(sorted({r["raylets"] for rows in report["series"].values() for r in rows}))
        axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def section_lines(report: dict[str, Any] | None, results: Path, docs: Path) -> list[str]:
    """This benchmark's section of docs/benchmarks.md (benchmarks/summarize.py calls it)."""
    lines = ["## 9. Ray backend: episodes/s against raylets", ""]
    if report is None:
        return [*lines, "Not measured: ray_scaling.json is missing (`python benchmarks/ray_scaling.py`).", ""]
    settings, machine = report["settings"], report["machine"]
    latency = settings["latency_ms"]
    rows = []
    for name, series in report["series"].items():
        agent = "oracle" if name == "oracle" else f"oracle + {latency:g} ms a turn"
        for row in series:
            rows.append([agent, str(row["raylets"]), f"{row['episodes_per_s']:.1f}", f"{row['speedup_over_one']:.2f}x",
                         " / ".join(str(n) for n in row["episodes_per_node"]), f"{row['start_s']:.1f}",
                         f"{row['load_avg_before']:.1f}"])  # fmt: skip
    header = ["agent", "raylets", "episodes/s", "vs one raylet", "episodes per node", "start s", "load avg"]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(row) + " |" for row in rows]
    png = results / "ray_scaling.png"
    image = [f"![episodes/s against raylets]({Path(os.path.relpath(png, docs.parent)).as_posix()})", ""]
    block = report.get("provenance") or {}
    commit = (block.get("commit") or report.get("commit") or "unknown")[:10]  # "commit": before provenance
    date = block.get("finished") or report.get("date") or "at an unrecorded date"
    return [
        *lines,
        f"`benchmarks/ray_scaling.py` on {machine['cores']} cores (Ray {settings['ray']}, commit {commit}, "
        f"{date}{', --quick' if report.get('quick') else ''}): a head with no CPU and worker raylets "
        f"of one CPU each, env `{settings['env']}`, {settings['concurrency_per_node']} episodes at once a node; "
        f"{settings['episodes']['oracle']} oracle and {settings['episodes']['latency']} latency episodes a size, "
        "after a few untimed ones on every node.",
        "",
        *table,
        "",
        *(image if png.exists() else []),
        *reading(report),
    ]


def reading(report: dict[str, Any]) -> list[str]:
    """What the figures say, and what they cannot, from the report itself."""
    cores = report["machine"]["cores"]
    loads = [row["load_avg_before"] for rows in report["series"].values() for row in rows]
    best = {
        name: max(rows, key=lambda r: r["speedup_over_one"] or 0) for name, rows in report["series"].items() if rows
    }
    said = "; ".join(f"{name}: {row['speedup_over_one']:.2f}x at {row['raylets']}" for name, row in best.items())
    lines = [
        f"Best speed-up over one raylet: {said}. Every raylet here, with its node worker and env server, runs on the "
        f"same {cores} cores as the driver, so a raylet adds no core: past {cores} raylets the oracle series can only "
        "hold level or fall, and the latency series gains only while the cores have time to spare between the "
        "agent's waits. On a cluster of machines each node brings its own cores.",
        "",
    ]
    if loads and max(loads) > 2 * cores:
        lines += [
            f"The load average was {min(loads):.0f} to {max(loads):.0f} on {cores} cores while this ran (other "
            "work on the machine), so the rates swing with what else ran at each moment and a larger cluster "
            "can even win a larger share of the contended cores: these figures show that the backend runs at "
            "each size, not how it scales. Re-run on an idle machine before quoting a ratio.",
            "",
        ]
    return lines


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1 and 2 raylets, few episodes; to a temp dir")
    parser.add_argument("--raylets", type=int, nargs="+", default=None, help="cluster sizes (default 1 2 3 4)")
    parser.add_argument("--episodes", type=int, default=None, help="oracle episodes a size (default 600)")
    parser.add_argument("--latency-episodes", type=int, default=None, help="latency episodes a size (default 240)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="the latency agent's delay a turn")
    parser.add_argument("--concurrency", type=int, default=16, help="episodes at once on each node")
    parser.add_argument("--out", type=Path, default=None, help=f"directory for the results (default {RESULTS})")
    args = parser.parse_args(argv)
    args.raylets = sorted(set(args.raylets or ([1, 2] if args.quick else [1, 2, 3, 4])))
    if args.raylets[0] < 1:
        parser.error("--raylets must be >= 1")
    args.episodes = args.episodes or (40 if args.quick else 600)
    args.latency_episodes = args.latency_episodes or (24 if args.quick else 240)
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="ray_scaling-")) if args.quick else RESULTS
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    write_result(args.out / "ray_scaling.json", report, args)
    plot(report, args.out / "ray_scaling.png")
    print(f"wrote {args.out / 'ray_scaling.json'} and ray_scaling.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
