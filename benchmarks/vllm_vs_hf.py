"""vLLM (CPU build) against the transformers-based ``hf`` agent: eval episodes/s and generated tokens/s.

One run, side by side: the same tiny random model (built here, head dimension 32 so vLLM's CPU
attention takes it), the same ``trail`` tasks and samples, the same sampling (temperature 1,
``max_tokens`` per turn), the same executor concurrency. Three ways to play:

- ``vllm-openai``: the ``openai`` agent over vLLM's ``/v1/chat/completions`` (what
  ``agenthub eval agent=openai`` does), token ids and logprobs asked for;
- ``vllm-tokens``: the executor's ``TokenPolicy`` over vLLM's ``/v1/completions`` with token-id prompts;
- ``hf``: the ``hf`` agent, transformers in this process, batched across episodes.

Configurations are interleaved over rounds and the median taken, as the machine is shared. Needs
the vLLM virtualenv (tests/vllm/README.md). Writes ``vllm_vs_hf.json`` and ``vllm_vs_hf.png``.

    python benchmarks/vllm_vs_hf.py                 # 32 tasks x 4 samples, 2 rounds
    python benchmarks/vllm_vs_hf.py --quick --out /tmp/bench
    python benchmarks/vllm_vs_hf.py --vllm-url http://127.0.0.1:8000 --model-dir DIR   # a running server
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
from provenance import write_result  # a sibling module of this script

from agenthub import Agent, LocalServer, Task, Trajectory, get_plugin_host
from agenthub.rollout.executor import Executor, episode_requests
from agenthub.rollout.policy import SamplingParams, TokenPolicy
from agenthub.rollout.pool import EnvPool
from agenthub.testing.tiny_model import build_tiny_model
from agenthub.testing.vllm_server import SERVED_NAME, TINY_MODEL_SHAPE, VLLMCompletions, VLLMServer

RESULTS = Path(__file__).resolve().parent / "results"
CONFIGS = ("vllm-openai", "vllm-tokens", "hf")


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def make_agent(name: str, model_dir: Path, vllm_url: str, max_tokens: int) -> tuple[Agent, Callable[[], Any]]:
    """The agent for one configuration, and what closes it."""
    if name == "vllm-openai":
        from agenthub_agent_openai import OpenAIAgent

        agent = OpenAIAgent(
            base_url=f"{vllm_url}/v1",
            model=SERVED_NAME,
            temperature=1.0,
            max_tokens=max_tokens,
            logprobs=True,
            action_format="raw",  # the whole reply is the move, as for the token-level ones
        )
        return agent, agent.aclose
    if name == "vllm-tokens":
        from transformers import AutoTokenizer

        generate = VLLMCompletions(f"{vllm_url}/v1", keep=False)
        tokenizer: Any = AutoTokenizer.from_pretrained(model_dir)
        policy = TokenPolicy(generate, tokenizer, SamplingParams(temperature=1.0, max_tokens=max_tokens))
        return policy, generate.aclose
    hf: Agent = (
        get_plugin_host()
        .agent("hf")
        .make(model=str(model_dir), device="cpu", temperature=1.0, max_tokens=max_tokens, threads=1)
    )

    async def nothing() -> None:
        return None

    return hf, nothing


def generated_tokens(trajectories: list[Trajectory]) -> int:
    """Tokens the engine sampled: each turn's ids (a turn the agent could not parse is not counted)."""
    return sum(len(turn.token_ids or []) for t in trajectories for turn in t.turns)


async def play(agent: Agent, env_url: str, tasks: list[Task], samples: int, concurrency: int) -> list[Trajectory]:
    async with EnvPool.from_urls([env_url]) as pool:
        return await Executor(pool, agent, concurrency=concurrency).run(episode_requests(tasks, samples=samples))


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            process = psutil.Process(pid)
            for p in [process, *process.children(recursive=True)]:
                times = p.cpu_times()
                total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


def measure(
    name: str, model_dir: Path, vllm_url: str, vllm_pid: int | None, env_url: str, args: argparse.Namespace
) -> dict[str, Any]:
    tasks = [Task(env="trail", task_id=10_000 + i) for i in range(args.tasks)]
    agent, close = make_agent(name, model_dir, vllm_url, args.max_tokens)
    pids = [os.getpid(), *([vllm_pid] if vllm_pid is not None else [])]

    async def run() -> tuple[list[Trajectory], float]:
        try:
            await play(agent, env_url, tasks[:2], 1, args.concurrency)  # warm-up: first batch, compiled paths
            started = time.perf_counter()
            done = await play(agent, env_url, tasks, args.samples, args.concurrency)
            return done, time.perf_counter() - started
        finally:
            await close()

    cpu_before = cpu_seconds(pids)
    trajectories, wall = asyncio.run(run())
    cpu = cpu_seconds(pids) - cpu_before
    tokens = generated_tokens(trajectories)
    turns = sum(len(t.turns) for t in trajectories)
    return {
        "episodes": len(trajectories),
        "turns": turns,
        "generated_tokens": tokens,
        "wall_s": round(wall, 3),
        "episodes_per_s": round(len(trajectories) / wall, 3),
        "tokens_per_s": round(tokens / wall, 1),
        "cpu_s": round(cpu, 2),
        # The openai agent keeps a trace only while vLLM's next prompt extends it (its README says why).
        "token_traces_kept": sum(t.tokens is not None for t in trajectories),
        "outcomes": dict(sorted(Counter(t.outcome.value for t in trajectories).items())),
    }


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["results"])
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    panels = (("episodes_per_s", "episodes/s", "%.1f"), ("tokens_per_s", "generated tokens/s", "%.0f"))
    for ax, (key, label, fmt) in zip(axes, panels, strict=True):
        values = [report["results"][n]["median"][key] for n in names]
        bars = ax.bar(names, values, color=["#4c72b0", "#55a868", "#c44e52"][: len(names)])
        ax.bar_label(bars, fmt=fmt)
        ax.set_title(label)
        ax.set_ylabel(label)
    load = report["load_average"]
    fig.suptitle(
        f"trail, {report['episodes_per_round']} episodes a round, temperature 1, max_tokens {report['max_tokens']}; "
        f"2-core CPU shared (load {load['before'][0]} -> {load['after'][0]})",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="4 tasks x 2 samples, one round, 8 tokens a turn")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--tasks", type=int, default=32)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--vllm-url", help="a vLLM server already serving --model-dir as 'tiny' (none started)")
    parser.add_argument("--model-dir", type=Path, help="with --vllm-url: the model it serves")
    args = parser.parse_args(argv)
    if args.quick:
        args.tasks, args.samples, args.rounds, args.max_tokens = 4, 2, 1, 8
    if bool(args.vllm_url) != bool(args.model_dir):
        parser.error("--vllm-url and --model-dir go together")
    args.out.mkdir(parents=True, exist_ok=True)
    # One warning per episode whose trace the openai agent dropped: counted in the JSON instead.
    logging.getLogger("agenthub.agent.openai").setLevel(logging.ERROR)

    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    load_before = load_average()
    with tempfile.TemporaryDirectory() as scratch, LocalServer("trail") as env:
        server: VLLMServer | None = None
        model_dir = args.model_dir or build_tiny_model(Path(scratch) / "tiny", seed=0, **TINY_MODEL_SHAPE)
        engine: dict[str, Any] = {"server": "given" if args.vllm_url else "started here"}
        try:
            if args.vllm_url:
                vllm_url = args.vllm_url.rstrip("/")
                vllm_pid = None
            else:
                server = VLLMServer(model_dir, log=Path(scratch) / "vllm.log").start()
                vllm_url, vllm_pid = server.url, server.process.pid if server.process else None
                engine["startup_s"] = round(server.startup_s or 0.0, 1)
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in CONFIGS}
            for round_no in range(args.rounds):
                for name in CONFIGS if round_no % 2 == 0 else reversed(CONFIGS):
                    row = measure(name, model_dir, vllm_url, vllm_pid, env.url, args)
                    print(f"round {round_no + 1} {name}: {row}", flush=True)
                    runs[name].append(row)
            if server is not None:
                engine["rss_gib"] = round(server.rss_bytes() / 2**30, 2)
        finally:
            if server is not None:
                server.stop()
    load_after = load_average()

    results: dict[str, dict[str, Any]] = {
        name: {
            "rounds": rows,
            "median": {
                key: statistics.median(r[key] for r in rows) for key in ("episodes_per_s", "tokens_per_s", "wall_s")
            },
        }
        for name, rows in runs.items()
    }
    hf = results["hf"]["median"]
    for name in ("vllm-openai", "vllm-tokens"):
        median = results[name]["median"]
        for key in ("episodes_per_s", "tokens_per_s"):
            median[f"{key}_vs_hf"] = round(median[key] / hf[key], 2) if hf[key] else None
    report = {
        "benchmark": "vllm_vs_hf",
        "quick": args.quick,
        "when": {"start": started_at, "end": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "load_average": {"before": load_before, "after": load_after},
        "model": {"template": "chatml", "layers": 2, **TINY_MODEL_SHAPE},
        "env": "trail",
        "episodes_per_round": args.tasks * args.samples,
        "rounds": args.rounds,
        "max_tokens": args.max_tokens,
        "concurrency": args.concurrency,
        "hf_threads": 1,
        "vllm": engine,
        "results": results,
    }
    write_result(args.out / "vllm_vs_hf.json", report, args)
    plot(report, args.out / "vllm_vs_hf.png")
    print(json.dumps({n: r["median"] for n, r in results.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
