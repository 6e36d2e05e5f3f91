"""Hub executor scaling: episodes/s against concurrency, with an LLM of fixed latency and one that saturates.

Every part is real except the model: the hub ``Executor`` drives the ``openai``
agent plugin against a real ``agenthub serve env=guess`` process, and the model
is a stand-in OpenAI-compatible server (``llm_stand_in.py``, its own process on
127.0.0.1). Two kinds of series:

- **fixed** (50 ms and 500 ms at any concurrency): what the executor itself costs, with a model
  that never saturates (issue 7's target is read here);
- **vLLM-shaped**: the latency grows with the completions in flight,
  ``latency_ms * (1 + growth * (in_flight - 1))``, with ``growth`` calibrated from vLLM's CPU
  build as measured by ``benchmarks/vllm_vs_hf.py`` (:func:`calibrate`): its speed-up stops
  growing once the model is saturated, as a real inference server's does, and "of ideal" is
  measured against what such a model allows at that concurrency.

The stand-in's reply is always ``Action: look``, which ``guess`` answers without ending the
game, so with ``max_turns=10`` every episode is exactly 10 turns (outcome
``truncated``); each trajectory is appended to a run store, as ``agenthub eval``
does.

Reported per series and concurrency: episodes/s, the speed-up over concurrency 1 (serial, at
least 20 episodes) measured in the same run, the share of the ideal, the executor
process's CPU ms per turn (its env and LLM clients included), and the CPU per
turn of the env server and of the stand-in LLM (to show neither is the
bottleneck). The machine is shared and noisy, so compare ratios, not rates.

    pip install -e '.[bench]' -e plugins/agents/openai
    python benchmarks/executor_scaling.py                  # ~7 minutes on 2 cores
    python benchmarks/executor_scaling.py --quick          # smoke run, seconds; writes to a temp dir
    python benchmarks/executor_scaling.py --latency-ms 500 --concurrency 1 256

Writes benchmarks/results/executor_scaling.json and executor_scaling.png (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
from provenance import write_result  # a sibling module of this script

from agenthub import LocalServer, Task
from agenthub.rollout.executor import Executor, episode_requests
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.store import RunStore
from agenthub.types import Outcome

RESULTS = Path(__file__).resolve().parent / "results"
TURNS = 10
TARGET_SPEEDUP = 100.0
TARGET_AT = (500, 256)  # (latency ms, concurrency) where issue 7's target applies
SERIAL_EPISODES = 20
"""The serial baseline every speed-up divides by: enough episodes that one slow turn does not move it."""
VLLM_RESULT = RESULTS / "vllm_vs_hf.json"
VLLM_CONFIG = "vllm-openai"  # the openai agent over vLLM's chat completions: what this benchmark's agent does


def calibrate(vllm: dict[str, Any]) -> dict[str, Any]:
    """The stand-in's ``growth`` from vLLM's measured rounds (``vllm_vs_hf.json``, concurrency c).

    That result has one concurrency, so two points are read from it: the latency of a turn at c,
    by Little's law (c requests always in flight: c * wall / turns), and at concurrency 1, from the
    CPU a turn cost (vLLM's processes and the executor's, per turn): on a CPU-bound server a turn
    alone cannot take less than the CPU it needs. A line through both gives the latency's growth
    per extra request in flight, as a share of the latency alone; medians over the rounds.
    """
    rounds = vllm["results"][VLLM_CONFIG]["rounds"]
    c = int(vllm["concurrency"])
    at_c = statistics.median(c * r["wall_s"] / r["turns"] for r in rounds)
    alone = statistics.median(r["cpu_s"] / r["turns"] for r in rounds)
    return {
        "source": "benchmarks/results/vllm_vs_hf.json",
        "config": VLLM_CONFIG,
        "concurrency": c,
        "turn_latency_at_c_s": round(at_c, 3),
        "cpu_s_per_turn": round(alone, 3),
        "slowdown_at_c": round(at_c / alone, 2),
        "growth": round((at_c / alone - 1) / (c - 1), 4),
        "vllm_measured": vllm.get("when", {}),
    }


# -- the stand-in LLM, in its own process ----------------------------------------------------

STAND_IN = Path(__file__).resolve().parent / "llm_stand_in.py"


class StandInLLM:
    """The stand-in server as a child process (uvloop), so its CPU is measured apart from the executor's."""

    def __init__(self, latency_ms: float, growth: float = 0.0) -> None:
        self.latency_ms, self.growth = latency_ms, growth
        self.process = subprocess.Popen(
            [sys.executable, str(STAND_IN), "--latency-ms", str(latency_ms), "--growth", str(growth)],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the stand-in LLM exited with {self.process.wait()} before it listened; see its stderr")
        self.url: str = json.loads(line)["url"]
        self.ps = psutil.Process(self.process.pid)

    def cpu_s(self) -> float:
        return float(sum(self.ps.cpu_times()[:2]))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


# -- one measurement ------------------------------------------------------------------


def episodes_for(concurrency: int, quick: bool, rounds: int | None) -> int:
    """Enough rounds that start-up and the last stragglers are a small part of the wall time."""
    if concurrency == 1:
        return SERIAL_EPISODES
    if quick:
        return concurrency
    return concurrency * (rounds or (4 if concurrency <= 64 else 2))


async def measure(
    env_url: str, env_pid: int, llm: StandInLLM, concurrency: int, episodes: int, store_root: Path
) -> dict[str, Any]:
    from agenthub_agent_openai import OpenAIAgent

    agent = OpenAIAgent(
        base_url=llm.url,
        model="stand-in",
        api_key_env=None,
        max_concurrency=max(concurrency, 1),
        max_tokens=64,
        timeout_s=120,
    )
    pool = EnvPool.from_urls([env_url], capacity=concurrency)
    executor = Executor(pool, agent, concurrency=concurrency)
    tasks = [Task(env="guess", task_id=i % 10_000, split="train", seed=i, max_turns=TURNS) for i in range(episodes)]
    env_server = psutil.Process(env_pid)
    outcomes: dict[str, int] = {}
    turns = 0
    async with pool:
        await pool.info()
        store = RunStore.create({"benchmark": "executor_scaling", "concurrency": concurrency}, root=store_root)
        env_cpu, llm_cpu = sum(env_server.cpu_times()[:2]), llm.cpu_s()
        cpu, wall = time.process_time(), time.perf_counter()
        async for trajectory in executor.stream(episode_requests(tasks)):
            store.write(trajectory)
            turns += len(trajectory.turns)
            outcomes[trajectory.outcome.value] = outcomes.get(trajectory.outcome.value, 0) + 1
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        env_cpu = sum(env_server.cpu_times()[:2]) - env_cpu
        llm_cpu = llm.cpu_s() - llm_cpu
        store.finish()
    await agent.aclose()
    if outcomes != {Outcome.TRUNCATED.value: episodes} or turns != episodes * TURNS:
        raise RuntimeError(
            f"expected {episodes} episodes of exactly {TURNS} turns ending 'truncated', got {outcomes} over "
            f"{turns} turns; see the trajectories in {store.path}"
        )
    return {
        "concurrency": concurrency,
        "episodes": episodes,
        "wall_s": round(wall, 3),
        "episodes_per_s": round(episodes / wall, 3),
        "executor_cpu_ms_per_turn": round(1000 * cpu / turns, 3),
        "executor_cpu_share": round(cpu / wall, 3),
        "env_server_cpu_ms_per_turn": round(1000 * env_cpu / turns, 3),
        "llm_stand_in_cpu_ms_per_turn": round(1000 * llm_cpu / turns, 3),
        "machine_cpu_share": round((cpu + env_cpu + llm_cpu) / wall / (os.cpu_count() or 1), 3),
    }


def _loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return None  # asyncio's own loop, as `agenthub eval` runs the executor


def run_latency(
    latency_ms: float,
    concurrencies: list[int],
    env_url: str,
    env_pid: int,
    args: argparse.Namespace,
    store_root: Path,
    growth: float = 0.0,
    rounds: int | None = None,
) -> list[dict[str, Any]]:
    llm = StandInLLM(latency_ms, growth)
    rows: list[dict[str, Any]] = []
    try:
        for concurrency in concurrencies:
            episodes = episodes_for(concurrency, args.quick, rounds)
            with asyncio.Runner(loop_factory=_loop_factory(args.loop)) as runner:
                row = runner.run(measure(env_url, env_pid, llm, concurrency, episodes, store_root))
            row["latency_ms"] = latency_ms
            row["growth"] = growth
            # What the stand-in answers in, with every episode's request in flight at once.
            row["llm_latency_ms"] = round(latency_ms * (1 + growth * (concurrency - 1)), 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        llm.stop()
    serial = next((r["episodes_per_s"] for r in rows if r["concurrency"] == 1), None)
    for row in rows:
        row["speedup_over_serial"] = round(row["episodes_per_s"] / serial, 2) if serial else None
        # The best any executor could do: every episode a chain of TURNS model calls at the model's
        # latency for that many in flight, nothing else.
        row["ideal_episodes_per_s"] = round(row["concurrency"] / (TURNS * row["llm_latency_ms"] / 1000), 3)
        row["efficiency"] = round(row["episodes_per_s"] / row["ideal_episodes_per_s"], 3)
    return rows


# -- report ---------------------------------------------------------------------------


LOADED = "vllm-shaped"
"""The suffix of a series key whose stand-in saturates (``"50 vllm-shaped"``)."""


def series_label(key: str) -> str:
    latency, _, kind = key.partition(" ")
    return f"{latency} ms alone, vLLM-shaped" if kind == LOADED else f"{latency} ms fixed"


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (rate, cpu) = plt.subplots(1, 2, figsize=(11, 4.2))
    for latency, rows in report["latencies"].items():
        xs = [r["concurrency"] for r in rows]
        (line,) = rate.plot(xs, [r["episodes_per_s"] for r in rows], marker="o", label=f"LLM {series_label(latency)}")
        rate.plot(xs, [r["ideal_episodes_per_s"] for r in rows], linestyle=":", color=line.get_color())
        cpu.plot(
            xs,
            [r["executor_cpu_ms_per_turn"] for r in rows],
            marker="o",
            color=line.get_color(),
            label=f"executor, LLM {series_label(latency)}",
        )
        cpu.plot(
            xs,
            [r["env_server_cpu_ms_per_turn"] for r in rows],
            marker="s",
            linestyle="--",
            color=line.get_color(),
            label=f"env server, LLM {series_label(latency)}",
        )
        cpu.plot(
            xs,
            [r["llm_stand_in_cpu_ms_per_turn"] for r in rows],
            marker="^",
            linestyle=":",
            color=line.get_color(),
            label=f"stand-in LLM, LLM {series_label(latency)}",
        )
    for axis in (rate, cpu):
        axis.set_xscale("log", base=2)
        axis.set_xlabel("concurrent episodes")
    rate.set_yscale("log")
    rate.set_ylabel("episodes / s (10 turns each); dotted: ideal")
    rate.set_title("hub executor, openai agent, env guess")
    rate.legend()
    cpu.set_ylabel("CPU ms per turn")
    cpu.set_title("CPU per turn by process")
    cpu.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[50.0, 500.0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64, 256, 1024])
    parser.add_argument(
        "--loaded-latency-ms",
        type=float,
        default=50.0,
        help="the vLLM-shaped series' latency alone (its curve's shape is the calibrated growth; default 50)",
    )
    parser.add_argument(
        "--loaded-concurrency", type=int, nargs="+", default=[1, 4, 16, 64, 256], help="the vLLM-shaped series' cells"
    )
    parser.add_argument(
        "--growth",
        type=float,
        default=None,
        help=f"the vLLM-shaped series' growth per request in flight (default: calibrated from {VLLM_RESULT.name})",
    )
    parser.add_argument("--vllm-result", type=Path, default=VLLM_RESULT, help="the vLLM result to calibrate from")
    parser.add_argument("--quick", action="store_true", help="smoke run: 5 ms LLM, concurrency 1 and 8; temp dir")
    parser.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="the executor's event loop (default asyncio's, as agenthub eval uses)",
    )
    parser.add_argument(
        "--rounds", type=int, default=None, help="episodes per concurrent slot (default 4 up to 64, then 2)"
    )
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    parser.add_argument(
        "--server-pythonpath",
        default=None,
        help="PYTHONPATH for the env server (hold the server fixed while comparing executor changes)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.latency_ms, args.concurrency = [5.0], [1, 8]
        args.loaded_latency_ms, args.loaded_concurrency = 5.0, [1, 8]
        args.out = args.out or Path(tempfile.mkdtemp(prefix="executor-scaling-"))
    args.out = args.out or RESULTS
    if 1 not in args.concurrency or 1 not in args.loaded_concurrency:
        parser.error("--concurrency and --loaded-concurrency must include 1: speed-ups are over the serial run")
    if args.growth is None and not args.vllm_result.is_file():
        parser.error(f"{args.vllm_result} is missing: run benchmarks/vllm_vs_hf.py, or give --growth")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    concurrencies = sorted(set(args.concurrency))
    loaded = sorted(set(args.loaded_concurrency))
    calibration = calibrate(json.loads(args.vllm_result.read_text())) if args.growth is None else None
    growth = calibration["growth"] if calibration is not None else args.growth
    latencies: dict[str, list[dict[str, Any]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="executor-scaling-runs-") as runs,
        LocalServer(
            "guess",
            overrides={"max_sessions": 2 * max(concurrencies + loaded)},
            extra_env={"PYTHONPATH": args.server_pythonpath} if args.server_pythonpath else None,
        ) as env_server,
    ):
        for latency in args.latency_ms:
            rows = run_latency(latency, concurrencies, env_server.url, env_server.pid, args, Path(runs))
            latencies[f"{latency:g}"] = rows
        latencies[f"{args.loaded_latency_ms:g} {LOADED}"] = run_latency(
            args.loaded_latency_ms, loaded, env_server.url, env_server.pid, args, Path(runs), growth, rounds=1
        )
    target_rows = [r for r in latencies.get(f"{TARGET_AT[0]}", []) if r["concurrency"] == TARGET_AT[1]]
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "settings": {
            "turns": TURNS,
            "env": "guess",
            "agent": "openai",
            "env_server_processes": 1,
            "executor_loop": args.loop,
            "serial_episodes": SERIAL_EPISODES,
        },
        "stand_in": {
            "curve": "latency_ms * (1 + growth * (in_flight - 1))",
            "growth": growth,
            "calibration": calibration,
        },
        "latencies": latencies,
        "target": {
            "speedup_over_serial_at_500ms_c256": target_rows[0]["speedup_over_serial"] if target_rows else None,
            "required": TARGET_SPEEDUP,
            "met": bool(target_rows) and target_rows[0]["speedup_over_serial"] >= TARGET_SPEEDUP,
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    write_result(args.out / "executor_scaling.json", report, args)
    plot(report, args.out / "executor_scaling.png")
    print(f"wrote {args.out / 'executor_scaling.json'} and executor_scaling.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
