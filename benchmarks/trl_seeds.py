"""How reliably the CPU default learns: `agenthub run trainer=trl env=trail seed=N` for N = 0..19.

One run can learn by luck; this benchmark counts. For each seed it runs the default exactly as a
user would (a subprocess, no settings but ``seed``, ``runs_dir`` and ``run_id``), then records:

- ``success`` per step: the trainer's own record (``metrics.jsonl``) of each step's training episodes;
- ``final_success``: the mean training success of the last ``--final-steps`` steps (5), so one lucky
  or unlucky step does not decide;
- ``test_success``: the final model scored on ``--eval-episodes`` episodes of trail's *test* split,
  sampled at temperature 1 as in training (``trl_learning.score``, the same scoring as ``trl_learning.py``);
- the run's wall time.

A seed *learned* when both its final training success and its test success are at least ``--level``
(0.8). Seeds run ``--parallel`` at a time (2), each with ``--threads`` torch threads (1): on 2 cores
that finishes sooner than one run at a time with 2 threads, and each run's wall time is then the time
with one core, a bit more than a lone run's.

    pip install torch==2.13.0 && pip install -e . -e plugins/trainers/trl
    python benchmarks/trl_seeds.py                     # 20 seeds, about 40 minutes on 2 cores
    python benchmarks/trl_seeds.py --seeds 3 5 8       # some seeds
    python benchmarks/trl_seeds.py --quick             # smoke run: 2 seeds, 2 steps, small evals
    python benchmarks/trl_seeds.py learning_rate=1e-3  # the same, with other settings for every run

Writes benchmarks/results/trl_seeds.json (after every seed, so an interrupted run keeps what it
measured) and trl_seeds.png (``--out`` elsewhere).
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
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from threading import Lock
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trl_learning  # a sibling module: the same scoring on the test split
from provenance import write_result  # a sibling module of this script

from agenthub.rollout.store import RunStore

RESULTS = trl_learning.RESULTS
ENV = trl_learning.ENV
NAME = "trl_seeds"


def train(seed: int, runs: Path, steps: int | None, overrides: list[str], threads: int) -> tuple[float, int]:
    """``agenthub run trainer=trl env=trail seed=N`` as a user runs it; its wall time and exit code."""
    command = [sys.executable, "-m", "agenthub", "run", "trainer=trl", f"env={ENV}", f"seed={seed}",
               f"runs_dir={runs}", f"run_id=seed-{seed}", *([f"steps={steps}"] if steps else []),
               *overrides]  # fmt: skip
    # One torch thread a run when runs share the cores: threads of two runs contending for two cores
    # would slow both down.
    environment = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    log = runs / f"seed-{seed}.log"
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=environment)
    return time.monotonic() - started, done.returncode


def score_in_child(model_dir: Path, episodes: int, max_tokens: int, threads: int) -> dict[str, Any]:
    """``trl_learning.score`` in a child Python, so that runs scored side by side keep to their own threads."""
    command = [sys.executable, __file__, "--score", str(model_dir), "--eval-episodes", str(episodes),
               "--max-tokens", str(max_tokens)]  # fmt: skip
    environment = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    done = subprocess.run(command, capture_output=True, text=True, env=environment, check=True)
    scored: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return scored


def per_step(run_dir: Path) -> list[dict[str, Any]]:
    records = [r for r in RunStore.existing(run_dir).metrics() if "success" in r]
    return [{"step": r["step"], "success": r["success"], "reward": r.get("reward")} for r in records]


def kept_best(run_dir: Path) -> dict[str, Any] | None:
    """The run's best checkpoint as its summary names it (the step whose last steps' mean success is highest)."""
    summary = RunStore.existing(run_dir).meta().get("summary", {})
    best = summary.get("checkpoints", {}).get("best") or summary.get("best_step")
    return {"step": best["step"], "success": best["success"]} if best else None


def one_seed(seed: int, runs: Path, args: argparse.Namespace, max_tokens: int) -> dict[str, Any]:
    wall, returncode = train(seed, runs, args.steps, args.overrides, args.threads)
    run_dir = runs / f"seed-{seed}"
    record: dict[str, Any] = {"seed": seed, "returncode": returncode, "train_wall_s": round(wall, 1)}
    if returncode != 0:
        record["log_tail"] = (runs / f"seed-{seed}.log").read_text()[-2000:]
        return record
    steps = per_step(run_dir)
    tail = steps[-args.final_steps :]
    record["final_success"] = round(statistics.fmean(s["success"] for s in tail), 4)
    record["last"] = {"step": steps[-1]["step"], "success": steps[-1]["success"]}
    record["best"] = kept_best(run_dir)
    record["test"] = score_in_child(run_dir / "model", args.eval_episodes, max_tokens, args.threads)
    record["learned"] = record["final_success"] >= args.level and record["test"]["success"] >= args.level
    record["steps"] = steps
    return record


def summary(records: list[dict[str, Any]], level: float, target: float) -> dict[str, Any]:
    done = [r for r in records if r["returncode"] == 0]
    walls = [r["train_wall_s"] for r in done]
    return {
        "runs": len(records),
        "failed_runs": len(records) - len(done),
        "learned": sum(bool(r.get("learned")) for r in records),
        "final_success_at_least_level": sum(r["final_success"] >= level for r in done),
        "target": target,
        "final_success_at_least_target": sum(r["final_success"] >= target for r in done),
        "test_success_at_least_level": sum(r["test"]["success"] >= level for r in done),
        "not_learned_seeds": [r["seed"] for r in records if not r.get("learned")],
        "median_final_success": round(statistics.median(r["final_success"] for r in done), 4) if done else None,
        "median_test_success": round(statistics.median(r["test"]["success"] for r in done), 4) if done else None,
        "median_train_wall_s": round(statistics.median(walls), 1) if walls else None,
        "max_train_wall_s": max(walls) if walls else None,
    }


def plot(result: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [r for r in result["seeds"] if r["returncode"] == 0]
    fig, (curves, tests) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [2.2, 1]})
    for r in records:
        steps = [s["step"] for s in r["steps"]]
        colour = "tab:green" if r["learned"] else "tab:red"
        curves.plot(steps, [s["success"] for s in r["steps"]], color=colour, alpha=0.45, linewidth=1)
        if not r["learned"]:
            curves.annotate(f"seed {r['seed']}", (steps[-1], r["steps"][-1]["success"]), fontsize=8, color=colour)
    curves.axhline(result["level"], color="grey", linestyle=":", linewidth=1)
    curves.set_xlabel(f"GRPO step ({result['settings']['episodes_per_step']} training episodes each)")
    curves.set_ylabel("success of the step's training episodes")
    curves.set_ylim(-0.02, 1.05)
    curves.grid(alpha=0.3)
    curves.set_title("one curve per seed (green: learned, red: not)")
    seeds = [r["seed"] for r in records]
    tests.bar(
        [str(s) for s in seeds],
        [r["test"]["success"] for r in records],
        color=["tab:green" if r["learned"] else "tab:red" for r in records],
    )
    tests.scatter([str(s) for s in seeds], [r["final_success"] for r in records], color="black", s=10, zorder=3,
                  label=f"training, last {result['final_steps']} steps")  # fmt: skip
    tests.axhline(result["level"], color="grey", linestyle=":", linewidth=1)
    tests.set_ylim(0, 1.05)
    tests.set_xlabel("seed")
    tests.set_ylabel(f"final model: success on {result['eval_episodes']} test episodes")
    tests.legend(loc="lower right", fontsize=8)
    tests.tick_params(axis="x", labelsize=7)
    s = result["summary"]
    fig.suptitle(
        f"agenthub run trainer=trl env={ENV} seed=N: learned in {s['learned']} of {s['runs']} "
        f"(median {s['median_train_wall_s']:.0f} s a run, {result['parallel']} at a time on {result['cpus']} CPUs)"
    )
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(20)), help="the seeds (0..19)")
    parser.add_argument("--steps", type=int, default=None, help="steps=N for every run (default: the trainer's)")
    parser.add_argument("--final-steps", type=int, default=5, help="'by the end': the mean of the last N steps")
    parser.add_argument("--level", type=float, default=0.8, help="success that counts as learned")
    parser.add_argument(
        "--target", type=float, default=0.95, help="the final success the issue asks of 19 seeds in 20 (counted too)"
    )
    parser.add_argument("--eval-episodes", type=int, default=256)
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--quick", action="store_true", help="seeds 0 and 1, 2 steps, 32 eval episodes, temp dir")
    parser.add_argument("--out", type=Path, default=None, help="where the JSON and PNG go")
    parser.add_argument("--score", type=Path, default=None, help=argparse.SUPPRESS)  # the child's job
    parser.add_argument("--max-tokens", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="more `agenthub run` settings")
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.steps, args.eval_episodes = [0, 1], 2, 32
        args.final_steps = min(args.final_steps, 2)
    return args


def main() -> int:
    args = parse_args()
    if args.score is not None:  # the child: score one model and print the result as the last line
        scored = asyncio.run(trl_learning.score(args.score, episodes=args.eval_episodes, max_tokens=args.max_tokens))
        print(json.dumps(scored))
        return 0
    out = args.out or (Path(tempfile.mkdtemp(prefix="trl-seeds-")) if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)

    from agenthub_trainer_trl.config import TrlConfig

    from agenthub.config import deep_merge, parse_overrides, validate_config

    settings = deep_merge({"steps": args.steps} if args.steps else {}, parse_overrides(args.overrides))
    config = validate_config(TrlConfig, settings)
    assert config.max_tokens is not None
    import torch
    import transformers
    import trl

    result: dict[str, Any] = {
        "env": ENV,
        "command": " ".join(
            [
                f"agenthub run trainer=trl env={ENV} seed=N",
                *([f"steps={args.steps}"] if args.steps else []),
                *args.overrides,
            ]
        ),
        "settings": {
            **config.model_dump(mode="json", exclude={"seed", "runs_dir", "run_id", "resume"}),
            "episodes_per_step": config.episodes_per_step,
            "overrides": args.overrides,
        },
        "level": args.level,
        "final_steps": args.final_steps,
        "eval_episodes": args.eval_episodes,
        "parallel": args.parallel,
        "threads_per_run": args.threads,
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "machine": platform.platform(),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__},
        "seeds": [],
    }
    lock = Lock()
    started = time.monotonic()

    def write() -> None:
        records = sorted(result["seeds"], key=lambda r: r["seed"])
        result["seeds"] = records
        result["summary"] = summary(records, args.level, args.target)
        result["wall_s"] = round(time.monotonic() - started, 1)
        result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        write_result(out / f"{NAME}.json", result, args)

    with tempfile.TemporaryDirectory(prefix="trl-seeds-runs-") as tmp, ThreadPoolExecutor(args.parallel) as pool:
        jobs = {pool.submit(one_seed, seed, Path(tmp), args, config.max_tokens): seed for seed in args.seeds}
        for job in as_completed(jobs):
            record = job.result()
            with lock:
                result["seeds"].append(record)
                write()
            shown = {k: record.get(k) for k in ("final_success", "learned", "train_wall_s", "returncode")}
            print(f"seed {record['seed']}: {shown} test {record.get('test', {}).get('success')}", flush=True)

    write()
    plot(result, out / f"{NAME}.png")
    s = result["summary"]
    print(
        f"learned in {s['learned']} of {s['runs']} (final training success >= {args.level}: "
        f"{s['final_success_at_least_level']}, test success >= {args.level}: {s['test_success_at_least_level']}; "
        f"final training success >= {args.target}: {s['final_success_at_least_target']}); "
        f"median {s['median_train_wall_s']} s a run"
    )
    print(f"wrote {out / (NAME + '.json')} and {out / (NAME + '.png')}")
    return 0 if args.quick or (s["failed_runs"] == 0 and s["learned"] == s["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
