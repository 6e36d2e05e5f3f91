"""Steps per second of an env in-process versus through its service, side by side in one run.

Whole episodes are counted (create + reset, steps, close), with a fixed number of
steps per episode. The client's own CPU time per request is reported too, because
on a small machine the load generator can be the bottleneck.

    pip install -e '.[bench]'
    python benchmarks/service_steps.py [--env guess] [--seconds 5] [--concurrency 1 16 64]

Writes benchmarks/results/service_steps.json and service_steps.png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import psutil

from agenthub import EnvClient, LocalServer, get_plugin_host
from agenthub.types import Observation

RESULTS = Path(__file__).resolve().parent / "results"
STEPS_PER_EPISODE = 8


def action_for(observation: Observation, turn: int) -> str:
    actions = observation.available_actions or ["look"]
    return actions[turn % len(actions)]


def in_process(env_name: str, seconds: float) -> dict[str, Any]:
    spec = get_plugin_host().env(env_name)
    task_ids = spec.resolved_splits()[next(iter(spec.resolved_splits()))].first(1000)
    steps, latencies = 0, []
    deadline = time.perf_counter() + seconds
    episode = 0
    while time.perf_counter() < deadline:
        env = spec.make()
        text, info = env.reset(task_id=task_ids[episode % len(task_ids)], seed=episode)
        observation = Observation(text=text, info=info)
        for turn in range(STEPS_PER_EPISODE):
            started = time.perf_counter()
            text, _, terminated, truncated, info = env.step(action_for(observation, turn))
            latencies.append(time.perf_counter() - started)
            steps += 1
            if terminated or truncated:
                break
            observation = Observation(text=text, info=info)
        env.close()
        episode += 1
    return {"steps_per_s": steps / seconds, "step_p50_ms": 1000 * statistics.median(latencies)}


async def through_service(
    url: str, server_pid: int, task_ids: list[Any], seconds: float, concurrency: int
) -> dict[str, Any]:
    latencies: list[float] = []
    steps = 0
    deadline = time.perf_counter() + seconds
    server = psutil.Process(server_pid)
    server_cpu_started = sum(server.cpu_times()[:2])
    cpu_started = time.process_time()

    async def worker(client: EnvClient, offset: int) -> None:
        nonlocal steps
        episode = offset
        while time.perf_counter() < deadline:
            session = await client.create_session(task_ids[episode % len(task_ids)], seed=episode)
            observation = Observation(text=session.observation, info=session.info)
            for turn in range(STEPS_PER_EPISODE):
                started = time.perf_counter()
                result = await session.step(action_for(observation, turn))
                latencies.append(time.perf_counter() - started)
                steps += 1
                if result.done:
                    break
                observation = Observation(text=result.observation, info=result.info)
            await session.close()
            episode += concurrency

    wall_started = time.perf_counter()
    async with EnvClient(url, max_connections=concurrency) as client:  # one pooled client, as an executor has
        await asyncio.gather(*(worker(client, i) for i in range(concurrency)))
    wall = time.perf_counter() - wall_started
    server_cpu = sum(server.cpu_times()[:2]) - server_cpu_started
    latencies.sort()
    return {
        "concurrency": concurrency,
        "steps_per_s": steps / wall,
        "step_p50_ms": 1000 * latencies[len(latencies) // 2],
        "step_p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
        "client_cpu_ms_per_step": 1000 * (time.process_time() - cpu_started) / max(steps, 1),
        "server_cpu_ms_per_step": 1000 * server_cpu / max(steps, 1),
    }


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["service"]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r["concurrency"] for r in rows], [r["steps_per_s"] for r in rows], marker="o", label="through the service")
    ax.axhline(result["in_process"]["steps_per_s"], color="grey", linestyle="--", label="in-process (ceiling)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("concurrent sessions")
    ax.set_ylabel("steps / s (whole episodes)")
    ax.set_title(f"env {result['env']!r}, one server process")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="guess")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    args = parser.parse_args()
    spec = get_plugin_host().env(args.env)
    task_ids = spec.resolved_splits()[next(iter(spec.resolved_splits()))].first(1000)
    result: dict[str, Any] = {
        "env": args.env,
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "in_process": in_process(args.env, args.seconds),
        "service": [],
    }
    with LocalServer(args.env, overrides={"max_sessions": max(args.concurrency) * 2}) as server:
        for concurrency in args.concurrency:
            row = asyncio.run(through_service(server.url, server.pid, task_ids, args.seconds, concurrency))
            row["ratio_to_in_process"] = row["steps_per_s"] / result["in_process"]["steps_per_s"]
            result["service"].append(row)
            print(json.dumps(row))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "service_steps.json").write_text(json.dumps(result, indent=2))
    plot(result, RESULTS / "service_steps.png")
    print(json.dumps(result["in_process"]))


if __name__ == "__main__":
    main()
