"""The CPU default learns: `agenthub run trainer=trl env=trail` lifts a tiny random model's success.

1. Build the tiny random model (``agenthub.testing.tiny_model``, the trainer's default recipe) and
   score it on ``--eval-episodes`` episodes of trail's *test* split: the executor, real env
   servers, sampling at temperature 1 as in training.
2. Train it with ``agenthub run trainer=trl env=trail`` at its defaults (``--steps`` and overrides change
   them; GRPO, the hub executor as
   TRL's rollout) in a subprocess, exactly as a user would, timing it.
3. Score the trained model on the same test episodes.

The curve is the trainer's own per-step record (``metrics.jsonl``: success and reward of each
step's training episodes, KL, loss) with wall-clock seconds. Pass: test success before <= 0.3,
after >= 0.8, and training took under ``--budget-s`` (10 minutes).

    pip install torch==2.13.0 && pip install -e . -e plugins/trainers/trl
    python benchmarks/trl_learning.py                # about 5 minutes on 2 cores
    python benchmarks/trl_learning.py --quick        # smoke run: 2 steps, small evals

Writes benchmarks/results/trl_learning.json and trl_learning.png (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from provenance import current_commit, write_result  # a sibling module of this script

from agenthub.config import deep_merge, parse_overrides, validate_config
from agenthub.rollout.executor import Executor, episode_requests
from agenthub.rollout.policy import SamplingParams, TokenPolicy
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.store import RunStore
from agenthub.types import Outcome, Task

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
ENV = "trail"
SHOWN_SETTINGS = {
    "steps",
    "tasks_per_step",
    "num_generations",
    "learning_rate",
    "beta",
    "entropy_coef",
    "max_tokens",
    "tiny_model",
}


async def score(model_dir: Path, *, episodes: int, max_tokens: int) -> dict[str, Any]:
    """Success rate of the model at ``model_dir`` on the first ``episodes`` tasks of the test split."""
    from agenthub_trainer_trl.generate import ModelGenerator
    from agenthub_trainer_trl.grpo import stop_token_ids
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    stops = stop_token_ids(tokenizer, model)
    generate = ModelGenerator(lambda: model, pad_token_id=tokenizer.pad_token_id, stop_token_ids=stops)
    policy = TokenPolicy(generate, tokenizer, SamplingParams(temperature=1.0, max_tokens=max_tokens), name="bench")
    tasks = [Task(env=ENV, task_id=10_000 + i, split="test", seed=0) for i in range(episodes)]
    async with await EnvPool.launch(ENV) as pool:
        trajectories = await Executor(pool, policy, concurrency=64).run(episode_requests(tasks))
    won = sum(t.outcome is Outcome.SUCCESS for t in trajectories)
    return {
        "episodes": len(trajectories),
        "success": round(won / len(trajectories), 4),
        "mean_reward": round(sum(t.reward for t in trajectories) / len(trajectories), 4),
        "mean_turns": round(sum(len(t.turns) for t in trajectories) / len(trajectories), 3),
    }


def train(runs_dir: Path, run_id: str, steps: int, extra: list[str]) -> float:
    """``agenthub run trainer=trl env=trail`` in a subprocess; returns its wall time in seconds."""
    command = [sys.executable, "-m", "agenthub", "run", "trainer=trl", f"env={ENV}", f"steps={steps}",
               f"runs_dir={runs_dir}", f"run_id={run_id}", *extra]  # fmt: skip
    print("$", " ".join(command[2:]), flush=True)
    started = time.monotonic()
    subprocess.run(command, check=True)
    return time.monotonic() - started


def curve(run_dir: Path) -> list[dict[str, Any]]:
    records = [r for r in RunStore.existing(run_dir).metrics() if "reward" in r]
    start = records[0]["time"] - records[0].get("step_time", 0.0) if records else 0.0
    keep = ("step", "success", "reward", "turns", "kl", "loss", "entropy")
    return [{**{k: r.get(k) for k in keep}, "elapsed_s": round(r["time"] - start, 2)} for r in records]


def first_step_reaching(points: list[dict[str, Any]], level: float, window: int = 5) -> dict[str, Any] | None:
    """The first step whose trailing ``window``-step mean training success reaches ``level``."""
    for i in range(window - 1, len(points)):
        values = [p["success"] for p in points[i - window + 1 : i + 1]]
        if sum(values) / window >= level:
            return {"step": points[i]["step"], "elapsed_s": points[i]["elapsed_s"]}
    return None


def plot(result: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = result["curve"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    steps = [p["step"] for p in points]
    ax.plot(steps, [p["success"] for p in points], marker=".", label="success (training episodes)")
    ax.plot(steps, [p["reward"] for p in points], alpha=0.6, label="reward (training episodes)")
    before, after = result["eval_before"]["success"], result["eval_after"]["success"]
    ax.scatter([0, steps[-1]], [before, after], color="black", zorder=3, label="success on test split")
    ax.axhline(0.8, color="grey", linestyle=":", linewidth=1)
    reached = result["reached_0.8"]
    if reached:
        ax.axvline(reached["step"], color="green", linestyle="--", linewidth=1)
        ax.annotate(f"0.8 at step {reached['step']} ({reached['elapsed_s']:.0f}s)", (reached["step"], 0.05))
    ax.set_xlabel(f"GRPO step ({result['settings']['episodes_per_step']} episodes each)")
    ax.set_ylabel("per episode")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title(f"trl GRPO, tiny random model, env {ENV}: {result['train_wall_s']:.0f}s on {result['cpus']} CPUs")
    ax.legend(loc="center right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=None, help="default: the trainer's own (what a user gets)")
    parser.add_argument("--eval-episodes", type=int, default=256)
    parser.add_argument("--budget-s", type=float, default=600.0)
    parser.add_argument("--quick", action="store_true", help="2 steps and 32 eval episodes, in a temp dir")
    parser.add_argument("--out", type=Path, default=None, help="where the JSON and PNG go")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="more `agenthub run` settings")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.eval_episodes = 2, 32
    out = args.out or (Path(tempfile.mkdtemp(prefix="trl-bench-")) if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="trl-bench-runs-") as tmp:
        runs = Path(tmp)
        from agenthub_trainer_trl.config import TrlConfig
        from agenthub_trainer_trl.runs import model_path

        steps = {} if args.steps is None else {"steps": args.steps}
        config = validate_config(TrlConfig, deep_merge(steps, parse_overrides(args.overrides)))
        initial = Path(model_path(config, runs / "initial"))  # the same weights the run starts from
        before = asyncio.run(score(initial, episodes=args.eval_episodes, max_tokens=config.max_tokens))
        print(f"before training: {before}", flush=True)
        wall = train(runs, "bench", config.steps, args.overrides)
        run_dir = runs / "bench"
        after = asyncio.run(score(run_dir / "model", episodes=args.eval_episodes, max_tokens=config.max_tokens))
        print(f"after training: {after}", flush=True)
        points = curve(run_dir)

    import torch
    import transformers
    import trl

    result = {
        "env": ENV,
        "settings": {
            **config.model_dump(mode="json", include=SHOWN_SETTINGS),
            "episodes_per_step": config.episodes_per_step,
            "overrides": args.overrides,
        },
        "eval_before": before,
        "eval_after": after,
        "train_wall_s": round(wall, 1),
        "reached_0.8": first_step_reaching(points, 0.8),
        "passed": before["success"] <= 0.3 and after["success"] >= 0.8 and wall <= args.budget_s,
        "budget_s": args.budget_s,
        "curve": points,
        "cpus": os.cpu_count(),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "machine": platform.platform(),
        "commit": current_commit(),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__},
    }
    write_result(out / "trl_learning.json", result, args)
    plot(result, out / "trl_learning.png")
    print(json.dumps({k: result[k] for k in ("eval_before", "eval_after", "train_wall_s", "reached_0.8", "passed")}))
    print(f"wrote {out / 'trl_learning.json'} and {out / 'trl_learning.png'}")
    return 0 if result["passed"] or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
