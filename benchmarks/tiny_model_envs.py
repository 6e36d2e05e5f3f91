"""What a model trained from scratch learns on each env, on a CPU: measured, env by env.

For each env with no recipe of its own, the trainer's default run on the built-in tiny model (random
weights, a tokenizer trained on the spot), exactly as a user types it:

1. ``agenthub run trainer=trl env=E --dry-run``. When the checks before launch refuse, their last line
   names settings with which the oracle's episodes fit ("Settings with which the oracle's measured
   episodes fit: max_tokens=38 max_context=3177."): those are added and the dry run repeated, as a user
   following the refusal would. A refusal that names no such settings is recorded as the env's result.
   A dry run whose checks did not run (measuring took over the trainer's time limit, as when an env
   generates its games on first use) passes; the row records why they did not run.
2. ``agenthub run trainer=trl env=E steps=30 <those settings>`` under a wall-clock budget per env
   (``--budget-min``). At the budget the run gets Ctrl-C: it ends ``interrupted`` with the steps it
   finished recorded, and the row says how many it reached. When the run itself refuses at launch with
   settings to follow (its checks ran where the dry run's did not), they are followed and the run
   started again, as at step 1.
3. From the run's own record (``metrics.jsonl``): training success in the first and last 5 steps, the
   best step, and the test-split score the run prints at its end (only when it finished).

Envs with a recipe are read from their own results, not run again: ``trail`` from ``trl_seeds.json``
(the default run over 20 seeds) and ``maze`` from ``agentgym_recipe.json`` (oracle -> SFT -> GRPO).

    pip install torch==2.13.0 && pip install -e . -e plugins/trainers/trl -e plugins/envs/wordle ...
    python benchmarks/tiny_model_envs.py                      # every installed env, 8 minutes each at most
    python benchmarks/tiny_model_envs.py --envs guess wordle --budget-min 4
    python benchmarks/tiny_model_envs.py --quick              # smoke run: guess, 2 steps

Writes benchmarks/results/tiny_model_envs.json (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from provenance import write_result  # a sibling module of this script

from agenthub.rollout.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
NAME = "tiny_model_envs"
RECIPE_ENVS = ("trail", "maze")
"""Envs with a recipe of their own, measured by their own benchmarks: read, not run here."""
ADVICE = re.compile(r"^Settings with which the oracle's measured episodes fit: (?P<settings>.+)\.$", re.MULTILINE)
CHECKS_NOT_RUN = re.compile(r"checks before launch: not run \((?P<why>.+)\)")
FOLLOWED_REFUSALS = 3
"""How many refusals in a row are followed (at the dry run, and again at the run) before the env counts as refused."""
EDGE_STEPS = 5
"""'At the start' and 'by the end': the mean training success of this many first and last steps."""
STOP_GRACE_S = 180
"""How long a run sent Ctrl-C at its budget may take to save and close before it is killed."""


def agenthub(*args: str) -> list[str]:
    return [sys.executable, "-m", "agenthub", *args]


def child_environment(threads: int) -> dict[str, str]:
    # One torch thread: two threads on two cores shared with the env servers wait on each other.
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}


def installed_envs() -> list[str]:
    from agenthub.plugins import get_plugin_host

    return sorted(spec.name for spec in get_plugin_host().envs)


def followed(settings: list[str], refusal: str) -> list[str] | None:
    """``settings`` with the refusal's advice applied (its keys replaced), or None when it names none."""
    advice = ADVICE.search(refusal)
    if advice is None:
        return None
    named = advice.group("settings").split()
    keys = {item.split("=", 1)[0] for item in named}
    return [item for item in settings if item.split("=", 1)[0] not in keys] + named


def launch_settings(env: str, base: list[str], threads: int) -> tuple[list[str], str | None, list[str], str | None]:
    """The settings that pass the checks before launch, following each refusal's advice.

    Returns the settings, the refusal still standing (None when the dry run passed), each dry run's
    refusal in turn, for the record, and why the passing dry run's checks did not run (None when they ran).
    """
    settings = list(base)
    refusals: list[str] = []
    for _ in range(FOLLOWED_REFUSALS):
        command = agenthub("run", "trainer=trl", f"env={env}", *settings, "--dry-run")
        done = subprocess.run(command, capture_output=True, text=True, env=child_environment(threads), cwd=ROOT)
        if done.returncode == 0:
            not_run = CHECKS_NOT_RUN.search(done.stdout + done.stderr)
            return settings, None, refusals, not_run.group("why") if not_run else None
        text = (done.stderr or done.stdout).strip()
        refusals.append(text)
        advised = followed(settings, text)
        if advised is None:
            return settings, text, refusals, None
        settings = advised
    return settings, refusals[-1], refusals, None


def train(env: str, settings: list[str], runs: Path, budget_s: float, threads: int) -> dict[str, Any]:
    """One run under the budget: Ctrl-C at the budget, as a user stopping it; its wall time and ending."""
    command = agenthub("run", "trainer=trl", f"env={env}", f"runs_dir={runs}", f"run_id={env}", *settings)
    log = runs / f"{env}.log"
    started = time.monotonic()
    stopped = False
    with log.open("w") as out:
        child = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=child_environment(threads), cwd=ROOT
        )
        try:
            child.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            stopped = True
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    return {
        "returncode": child.returncode,
        "stopped_at_budget": stopped,
        "wall_s": round(time.monotonic() - started, 1),
        "log_tail": log.read_text()[-1500:],
    }


def mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def read_run(run_dir: Path) -> dict[str, Any]:
    """Training success per step from the run's own record, and the test split's score when it finished."""
    if not run_dir.is_dir():
        return {"steps_done": 0}
    store = RunStore.existing(run_dir)
    steps = [{"step": r["step"], "success": r["success"]} for r in store.metrics() if "success" in r]
    successes = [s["success"] for s in steps]
    meta = store.meta()
    summary = meta.get("summary", {})
    best = max(steps, key=lambda s: s["success"]) if steps else None
    return {
        "status": meta.get("status"),
        "steps_done": len(steps),
        "first_success": mean(successes[:EDGE_STEPS]),
        "last_success": mean(successes[-EDGE_STEPS:]),
        "best_step": best,
        "test": summary.get("test"),
        "steps": steps,
    }


def verdict(row: dict[str, Any]) -> str:
    """learned / rises / flat / never scores, from the run's training success (first against last steps)."""
    first, last = row.get("first_success"), row.get("last_success")
    if first is None or last is None:
        return "no steps"
    if last >= 0.8:
        return "learned"
    if last - first >= 0.1:
        return "rises"
    return "never scores" if max(s["success"] for s in row["steps"]) == 0 else "flat"


def one_env(env: str, args: argparse.Namespace, runs: Path) -> dict[str, Any]:
    print(f"\n=== {env}", flush=True)
    settings, refused, refusals, not_run = launch_settings(env, [f"steps={args.steps}", *args.overrides], args.threads)
    row: dict[str, Any] = {"env": env, "settings": settings, "refusals_followed": refusals}
    row["dry_run_checks_not_run"] = not_run
    if refused is not None:
        return refused_row(row, refused)
    for _ in range(FOLLOWED_REFUSALS):
        print(f"agenthub run trainer=trl env={env} {' '.join(settings)}", flush=True)
        row.update(train(env, settings, runs, args.budget_min * 60, args.threads))
        advised = followed(settings, row["log_tail"]) if row["returncode"] == 2 else None
        if advised is None:
            break
        # The run's own checks refused what the dry run let through: follow them, as a user would.
        refusals.append(row["log_tail"].strip())
        row["runs_refused_at_launch"] = row.get("runs_refused_at_launch", 0) + 1
        settings = row["settings"] = advised
        shutil.rmtree(runs / env, ignore_errors=True)
    row.update(read_run(runs / env))
    row["verdict"] = verdict(row)
    print(f"{env}: {row['verdict']}, {row['steps_done']} steps in {row['wall_s']:.0f} s, "
          f"success {row.get('first_success')} -> {row.get('last_success')}", flush=True)  # fmt: skip
    return row


def refused_row(row: dict[str, Any], refusal: str) -> dict[str, Any]:
    print(f"refused before launch, with no settings to follow:\n{refusal}", flush=True)
    return {**row, "refused": refusal, "verdict": "refused"}


def recipe_rows(out: Path) -> list[dict[str, Any]]:
    """trail and maze as their own benchmarks measured them: their results beside ours, else the committed ones."""
    rows: list[dict[str, Any]] = []
    results = out if (out / "trl_seeds.json").is_file() else RESULTS
    seeds_path = results / "trl_seeds.json"
    if seeds_path.is_file():
        seeds = json.loads(seeds_path.read_text())
        summary = seeds.get("summary", {})
        rows.append({
            "env": "trail",
            "recipe": "the default run (agenthub run trainer=trl env=trail)",
            "source": "trl_seeds.json",
            "seeds": summary.get("runs"),
            "learned_seeds": summary.get("learned"),
            "at_target_seeds": summary.get("final_success_at_least_target"),
            "verdict": "learned",
        })  # fmt: skip
    results = out if (out / "agentgym_recipe.json").is_file() else RESULTS
    recipe_path = results / "agentgym_recipe.json"
    if recipe_path.is_file():
        recipe = json.loads(recipe_path.read_text())
        summary = recipe.get("summary", {})
        margin = summary.get("margin", {})
        rows.append({
            "env": "maze",
            "recipe": "examples/agentgym_recipe (oracle -> SFT -> GRPO)",
            "source": "agentgym_recipe.json",
            "seeds": summary.get("seeds"),
            "test_before": summary.get("test_sft", {}).get("mean"),
            "test_after": summary.get("test_grpo", {}).get("mean"),
            "margin_mean": margin.get("mean"),
            "verdict": "rises" if (margin.get("mean") or 0) >= 0.1 else "flat",
        })  # fmt: skip
    return rows


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=None, help="envs to run (default: every installed env "
                        f"but {', '.join(RECIPE_ENVS)}, which are read from their own results)")  # fmt: skip
    parser.add_argument("--steps", type=int, default=30, help="GRPO steps per env (the issue's 30)")
    parser.add_argument("--budget-min", type=float, default=8.0, help="wall-clock minutes per env at most")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--quick", action="store_true", help="smoke run: guess, 2 steps, temp dir")
    parser.add_argument("--out", type=Path, default=None, help="where the JSON goes")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="more `agenthub run` settings for every env")
    args = parser.parse_args()
    if args.quick:
        args.envs, args.steps, args.budget_min = ["guess"], 2, 5.0
        args.overrides = ["tasks_per_step=2", "num_generations=2", *args.overrides]
    return args


def main() -> int:
    args = parse_args()
    out = args.out or (Path(tempfile.mkdtemp(prefix="tiny-model-envs-")) if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    available = installed_envs()
    envs = args.envs or [env for env in available if env not in RECIPE_ENVS]
    missing = [env for env in envs if env not in available]
    if missing:
        print(f"not installed: {', '.join(missing)} (installed: {', '.join(available)}); install them with "
              "`agenthub install env-NAME` or leave them out of --envs", file=sys.stderr)  # fmt: skip
        return 2
    import torch
    import transformers
    import trl

    result: dict[str, Any] = {
        "steps": args.steps,
        "budget_min": args.budget_min,
        "edge_steps": EDGE_STEPS,
        "threads_per_run": args.threads,
        "overrides": args.overrides,
        "cpus": os.cpu_count(),
        "machine": platform.platform(),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__},
        "recipes": recipe_rows(out),
        "envs": [],
    }
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tiny-model-envs-runs-") as tmp:
        for env in envs:
            result["envs"].append(one_env(env, args, Path(tmp)))
            result["wall_s"] = round(time.monotonic() - started, 1)
            write_result(out / f"{NAME}.json", result, args)  # after each env: a stopped run keeps the rows done
    print(f"\nwrote {out / f'{NAME}.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
