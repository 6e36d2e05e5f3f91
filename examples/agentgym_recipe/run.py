"""The AgentGym-RL recipe, end to end, as the CLI commands a user would type.

1. ``agenthub eval agent=<oracle>`` on the train split: demonstrations.
2. ``agenthub export sft --only-success``: chat JSONL of the successful episodes.
3. ``agenthub run trainer=trl mode=sft``: a tiny model (tokenizer trained on that JSONL) imitates them.
4. ``agenthub eval agent=hf`` on the test split: the SFT start's score.
5. ``agenthub run trainer=trl model=<sft model>``: GRPO with a ScalingInter-RL horizon schedule.
6. ``agenthub eval agent=hf`` on the test split, with the same sampling: the final score.

    python examples/agentgym_recipe/run.py                     # maze.yaml, seed 0
    python examples/agentgym_recipe/run.py seed=1 grpo.steps=30 runs_dir=/tmp/recipe

Each command is printed before it runs. ``<runs_dir>/recipe.json`` records the commands, each stage's
wall time and load average, the two test scores and the GRPO curve.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenthub.config import deep_merge, load_yaml, parse_overrides

HERE = Path(__file__).resolve().parent
DEFAULT_CONFIG = HERE / "maze.yaml"
RESULT_FILE = "recipe.json"


@dataclass
class Stage:
    name: str
    argv: list[str]  # after `agenthub`


def flatten(settings: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``{"horizon": {"rounds": [8, 12]}}`` as ``["horizon.rounds=[8,12]"]``: the CLI's key=value form."""
    items: list[str] = []
    for key, value in settings.items():
        if isinstance(value, Mapping):
            items.extend(flatten(value, f"{prefix}{key}."))
        elif isinstance(value, list):
            items.append(f"{prefix}{key}=[{','.join(str(v) for v in value)}]")
        else:
            items.append(f"{prefix}{key}={value}")
    return items


def runs_dir_of(config: Mapping[str, Any]) -> Path:
    return Path(config["runs_dir"] or f"runs/agentgym-{config['env']}-seed{config['seed']}")


def oracle_of(env: str) -> str:
    from agenthub import get_plugin_host

    oracle = get_plugin_host().env(env).oracle
    if oracle is None:
        raise SystemExit(f"env {env!r} registers no oracle agent: the recipe needs one for its demonstrations")
    return oracle


def stages(config: Mapping[str, Any]) -> list[Stage]:
    """The six commands of the recipe for ``config`` (maze.yaml merged with the command line's overrides)."""
    env, seed, runs = config["env"], config["seed"], runs_dir_of(config)
    where = [f"runs_dir={runs}"]
    sft_data = runs / "sft.jsonl"
    test = dict(config["test"])
    test_agent = {**test.pop("agent"), "seed": seed}  # one sampling seed for both test evals: a fair comparison

    def test_eval(name: str, model: Path) -> Stage:
        argv = ["eval", f"env={env}", "agent=hf", f"agent.model={model}", *flatten(test_agent, "agent.")]
        return Stage(name, [*argv, *flatten(test), "progress=false", *where, f"run_id={name}"])

    trl_common = ["trainer=trl", f"env={env}", f"seed={seed}", *where]
    return [
        Stage(
            "oracle",
            [
                "eval",
                f"env={env}",
                f"agent={oracle_of(env)}",
                *flatten(config["oracle"]),
                "progress=false",
                *where,
                "run_id=oracle",
            ],
        ),
        Stage("export", ["export", "sft", str(runs / "oracle"), "--only-success", "-o", str(sft_data)]),
        Stage(
            "sft",
            [
                "run",
                *trl_common,
                "mode=sft",
                f"dataset={sft_data}",
                f"tiny_model.corpus={sft_data}",
                f"tiny_model.seed={seed}",
                *flatten(config["sft"]),
                "run_id=sft",
            ],
        ),
        test_eval("test-sft", runs / "sft" / "model"),
        Stage("grpo", ["run", *trl_common, f"model={runs / 'sft' / 'model'}", *flatten(config["grpo"]), "run_id=grpo"]),
        test_eval("test-grpo", runs / "grpo" / "model"),
    ]


def test_score(run_dir: Path) -> dict[str, Any]:
    """Success on the test split from ``agenthub eval``'s ``eval.json``."""
    overall = json.loads((run_dir / "eval.json").read_text())["overall"]
    samples = overall["samples"]
    return {
        "episodes": samples,
        "success": round(overall["outcomes"].get("success", 0) / samples, 4) if samples else None,
        "pass_at_k": overall["pass_at_k"],
        "outcomes": overall["outcomes"],
    }


def grpo_curve(run_dir: Path) -> list[dict[str, Any]]:
    """Per GRPO step: success and reward of its training episodes, the turn limit, KL, seconds since the start."""
    from agenthub.rollout import RunStore

    records = [r for r in RunStore.existing(run_dir).metrics() if "reward" in r]
    start = records[0]["time"] - records[0].get("step_time", 0.0) if records else 0.0
    keep = ("step", "success", "reward", "turns", "max_turns", "kl", "entropy")
    return [{**{k: r.get(k) for k in keep}, "elapsed_s": round(r["time"] - start, 1)} for r in records]


def run_recipe(config: Mapping[str, Any]) -> dict[str, Any]:
    """Run every stage in order (stopping at the first that fails); write and return ``recipe.json``."""
    runs = runs_dir_of(config)
    if runs.exists() and any(runs.iterdir()):
        raise SystemExit(f"{runs} is not empty: the recipe writes fixed run ids there; give another runs_dir=")
    runs.mkdir(parents=True, exist_ok=True)
    child_env = {**os.environ, "OMP_NUM_THREADS": str(config["threads"])}
    print(f"# every stage runs with OMP_NUM_THREADS={config['threads']}", flush=True)
    timings: list[dict[str, Any]] = []
    started = time.monotonic()
    for stage in stages(config):
        print(f"\n$ agenthub {shlex.join(stage.argv)}", flush=True)
        load_before, t0 = os.getloadavg(), time.monotonic()
        done = subprocess.run([sys.executable, "-m", "agenthub", *stage.argv], env=child_env)
        timings.append(
            {
                "stage": stage.name,
                "command": f"agenthub {shlex.join(stage.argv)}",
                "wall_s": round(time.monotonic() - t0, 1),
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
                "returncode": done.returncode,
            }
        )
        if done.returncode != 0:
            raise SystemExit(f"stage {stage.name} failed (exit code {done.returncode}); its output is above")
    before, after = test_score(runs / "test-sft"), test_score(runs / "test-grpo")
    result = {
        "env": config["env"],
        "seed": config["seed"],
        "config": dict(config),
        "test_sft": before,
        "test_grpo": after,
        "margin": round(after["success"] - before["success"], 4),
        "total_wall_s": round(time.monotonic() - started, 1),
        "stages": timings,
        "grpo_curve": grpo_curve(runs / "grpo"),
        "cpus": os.cpu_count(),
    }
    (runs / RESULT_FILE).write_text(json.dumps(result, indent=2))
    minutes = ", ".join(f"{t['stage']} {t['wall_s'] / 60:.1f}" for t in timings)
    print(
        f"\ntest success ({config['test']['split']} split, k={config['test']['k']}): SFT start {before['success']:.3f}"
        f" -> after GRPO {after['success']:.3f} (margin {result['margin']:+.3f})\n"
        f"minutes: {minutes}; total {result['total_wall_s'] / 60:.1f} (load average now "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())})\nrecord: {runs / RESULT_FILE}",
        flush=True,
    )
    return result


def load_config(config_file: Path, overrides: list[str]) -> dict[str, Any]:
    return deep_merge(load_yaml(config_file), parse_overrides(overrides))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="default: maze.yaml beside this script")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="e.g. seed=1 grpo.steps=30")
    args = parser.parse_args()
    config = load_config(args.config, args.overrides)
    if args.dry_run:
        for stage in stages(config):
            print(f"agenthub {shlex.join(stage.argv)}")
        return 0
    run_recipe(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
