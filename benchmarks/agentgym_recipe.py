"""The AgentGym-RL recipe (oracle -> SFT -> GRPO with a ScalingInter-RL horizon) over several seeds.

Runs ``examples/agentgym_recipe/run.py`` once per seed, each a subprocess that runs the recipe's six CLI
commands (oracle eval, export, SFT, test eval, GRPO, test eval), and records per seed the test-split
success of the SFT start and of the GRPO model (same sampling), the margin, each stage's wall time and
load average, and the GRPO curve. Each seed's margin gets a 95% bootstrap interval (both evals' episodes
resampled); a seed's gain counts when it is at least 0.15 and the interval's lower end is above 0. The
summary is the margin's mean, standard deviation and range, and how many seeds' gains count.

    pip install torch==2.13.0 && pip install -e . -e plugins/trainers/trl -e plugins/envs/maze -e plugins/agents/hf
    python benchmarks/agentgym_recipe.py                     # seeds 0-2, about 15 minutes each on 2 cores
    python benchmarks/agentgym_recipe.py --seeds 0 1 2 3 4 grpo.steps=30
    python benchmarks/agentgym_recipe.py --quick             # smoke run: every stage, tiny sizes, seconds

Writes benchmarks/results/agentgym_recipe.json and agentgym_recipe.png (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from provenance import write_result  # a sibling module of this script

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "examples" / "agentgym_recipe" / "run.py"
RESULTS = ROOT / "benchmarks" / "results"
NAME = "agentgym_recipe"
BUDGET_S = 15 * 60
GAIN = 0.15
"""The gain in test success over the SFT start that a seed should reach (the issue's bar)."""
BOOTSTRAP_RESAMPLES = 10_000
# Every stage at its smallest: shows the pipeline works end to end, measures nothing.
QUICK = [
    "oracle.n=6",
    "sft.epochs=1",
    "sft.batch_size=4",
    "grpo.steps=2",
    "grpo.tasks_per_step=2",
    "grpo.num_generations=2",
    # The checks before launch refuse a horizon within which no oracle episode can be won, and a context its
    # episodes do not fit (a tokenizer trained on 6 episodes spends more tokens than one trained on 500).
    "grpo.horizon.rounds=[8,16]",
    "grpo.horizon.every=1",
    "grpo.max_context=2048",
    "test.k=1",
    "test.max_turns=3",
    "test.n=3",
]


def run_seed(seed: int, runs: Path, overrides: list[str]) -> dict[str, Any]:
    """One recipe run in a subprocess (its output goes to ours); its ``recipe.json``."""
    runs_dir = runs / f"seed{seed}"
    command = [sys.executable, str(RECIPE), f"seed={seed}", f"runs_dir={runs_dir}", *overrides]
    print(f"\n=== seed {seed}: python {RECIPE.relative_to(ROOT)} {' '.join(command[2:])}", flush=True)
    subprocess.run(command, check=True, cwd=ROOT)
    result: dict[str, Any] = json.loads((runs_dir / "recipe.json").read_text())
    return result


def spread(values: list[float]) -> dict[str, float]:
    return {
        "mean": round(statistics.fmean(values), 4),
        "std": round(statistics.stdev(values), 4) if len(values) > 1 else 0.0,
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def margin_interval(before: dict[str, Any], after: dict[str, Any], seed: int) -> list[float]:
    """95% bootstrap interval of the margin (after - before): each eval's episodes resampled with replacement.

    Resampling n won-or-lost episodes with replacement draws the number won from Binomial(n, observed
    rate), so that is what is drawn, for both evals independently (different models, different samples).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    rates = []
    for scored in (before, after):
        n = int(scored["episodes"])
        rates.append(rng.binomial(n, scored["success"], BOOTSTRAP_RESAMPLES) / n)
    low, high = np.percentile(rates[1] - rates[0], [2.5, 97.5])
    return [round(float(low), 4), round(float(high), 4)]


def with_intervals(per_seed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each seed's record with its margin's bootstrap interval, and whether the gain clears the bar and the noise."""
    for r in per_seed:
        interval = margin_interval(r["test_sft"], r["test_grpo"], seed=int(r["seed"]))
        r["margin_interval_95"] = interval
        r["gain_clear"] = r["margin"] >= GAIN and interval[0] > 0
    return per_seed


def summarize(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    before = [r["test_sft"]["success"] for r in per_seed]
    after = [r["test_grpo"]["success"] for r in per_seed]
    half_widths = [(r["margin_interval_95"][1] - r["margin_interval_95"][0]) / 2 for r in per_seed]
    stages: dict[str, list[float]] = {}
    for r in per_seed:
        for t in r["stages"]:
            stages.setdefault(t["stage"], []).append(t["wall_s"])
    return {
        "test_sft": spread(before),
        "test_grpo": spread(after),
        "margin": spread([b - a for a, b in zip(before, after, strict=True)]),
        "improved_seeds": sum(b > a for a, b in zip(before, after, strict=True)),
        "gain_bar": GAIN,
        "seeds_gaining_bar": sum(r["margin"] >= GAIN for r in per_seed),
        "seeds_gaining_bar_outside_noise": sum(r["gain_clear"] for r in per_seed),
        "margin_interval_half_width_mean": round(statistics.fmean(half_widths), 4),
        "seeds": len(per_seed),
        "stage_minutes_mean": {k: round(statistics.fmean(v) / 60, 2) for k, v in stages.items()},
        "total_minutes": spread([r["total_wall_s"] / 60 for r in per_seed]),
        "within_budget": sum(r["total_wall_s"] <= BUDGET_S for r in per_seed),
    }


def plot(result: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = result["per_seed"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [1, 1.6]})
    xs = range(len(seeds))
    width = 0.38
    left.bar([x - width / 2 for x in xs], [r["test_sft"]["success"] for r in seeds], width, label="SFT start")
    left.bar([x + width / 2 for x in xs], [r["test_grpo"]["success"] for r in seeds], width, label="after GRPO")
    left.set_xticks(list(xs), [f"seed {r['seed']}" for r in seeds])
    summary = result["summary"]
    test = seeds[0]["config"]["test"]
    left.set_ylabel(f"success on the {test['split']} split (k={test['k']}, {test['max_turns']} turns)")
    left.set_title(
        f"margin {summary['margin']['mean']:+.3f} ± {summary['margin']['std']:.3f} "
        f"({summary['improved_seeds']}/{summary['seeds']} seeds improved)"
    )
    left.set_ylim(0, 1)
    left.legend(loc="upper left")
    left.grid(axis="y", alpha=0.3)
    for r in seeds:
        curve = r["grpo_curve"]
        steps = [p["step"] for p in curve]
        right.plot(steps, [p["success"] for p in curve], marker=".", alpha=0.8, label=f"seed {r['seed']}")
    if seeds and seeds[0]["grpo_curve"]:
        twin = right.twinx()
        curve = seeds[0]["grpo_curve"]
        twin.step([p["step"] for p in curve], [p["max_turns"] for p in curve], where="mid", color="grey", alpha=0.5)
        twin.set_ylabel("turn limit (horizon schedule)", color="grey")
        twin.set_ylim(0, max(p["max_turns"] or 0 for p in curve) * 1.5 or 1)
    right.xaxis.get_major_locator().set_params(integer=True)
    right.set_xlabel("GRPO step")
    right.set_ylabel("success of the step's training episodes")
    right.set_ylim(-0.02, 1.02)
    right.set_title("GRPO on the train split (ScalingInter-RL stepwise horizon)")
    right.legend(loc="upper left")
    right.grid(alpha=0.3)
    minutes = summary["total_minutes"]
    fig.suptitle(
        f"AgentGym-RL recipe on {result['env']}, tiny model, {result['cpus']} CPUs: "
        f"{minutes['mean']:.1f} min a seed ({minutes['min']:.1f}-{minutes['max']:.1f}), load average "
        f"{result['load_average_mean']:.1f}"
    )
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--quick", action="store_true", help="one seed, every stage at its smallest, in a temp dir")
    parser.add_argument("--out", type=Path, default=None, help="where the JSON and PNG go")
    parser.add_argument("--runs", type=Path, default=None, help="where the runs go (default: a temp dir)")
    parser.add_argument("--merge", action="store_true", help="add these seeds to the seeds already in --out's JSON")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="recipe settings, e.g. grpo.steps=30")
    args = parser.parse_args()
    overrides = [*QUICK, *args.overrides] if args.quick else args.overrides
    seeds = args.seeds[:1] if args.quick else args.seeds
    out = args.out or (Path(tempfile.mkdtemp(prefix=f"{NAME}-")) if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    runs = args.runs or Path(tempfile.mkdtemp(prefix=f"{NAME}-runs-"))

    started = time.monotonic()
    per_seed = [run_seed(seed, runs, overrides) for seed in seeds]
    earlier = out / f"{NAME}.json"
    if args.merge and earlier.is_file():  # seeds run at other times: kept unless run again now
        kept = [r for r in json.loads(earlier.read_text())["per_seed"] if r["seed"] not in seeds]
        per_seed = sorted([*kept, *per_seed], key=lambda r: int(r["seed"]))
    per_seed = with_intervals(per_seed)
    load_samples = [t["load_average_before"][0] for r in per_seed for t in r["stages"]]

    import torch
    import transformers
    import trl

    result = {
        "env": per_seed[0]["env"],
        "quick": args.quick,
        "overrides": overrides,
        "summary": summarize(per_seed),
        "per_seed": per_seed,
        "wall_s": round(time.monotonic() - started, 1),
        "budget_s_per_seed": BUDGET_S,
        "cpus": os.cpu_count(),
        "load_average_mean": round(statistics.fmean(load_samples), 2),
        "machine": platform.platform(),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__},
    }
    write_result(out / f"{NAME}.json", result, args)
    plot(result, out / f"{NAME}.png")
    print(json.dumps(result["summary"], indent=2))
    print(f"wrote {out / f'{NAME}.json'} and {out / f'{NAME}.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
