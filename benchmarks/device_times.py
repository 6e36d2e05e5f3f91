"""The README's main job and one seed of the AgentGym-RL recipe, timed on each machine they ran on (CPU, GPU).

Two steps, because a GPU machine is often another machine than the one that renders the page:

    # on each machine (here a 2-core CPU; on a GPU machine, the same command with its own folder):
    python benchmarks/device_times.py run --out-dir benchmarks/results/device_times/cpu
    # where the results live, from the folders each run left (one --from per machine):
    python benchmarks/device_times.py record --from benchmarks/results/device_times/cpu \
        --from benchmarks/results/device_times/h200

``benchmarks/results/device_times/h200`` is what two calls of a lent H200 brought back (their scripts,
``device_call_*.sh``, are beside it; they ran the same two jobs before this script had ``run``): ``adopt``
wrote its ``machine.json`` from those calls' logs (``main_wall=``/``recipe_wall=`` lines) and run records.

``run`` plays ``agenthub run trainer=trl env=trail`` (the README's main job) and
``examples/agentgym_recipe/run.py seed=0`` (oracle, export, SFT, test, GRPO, test) with their models in a
temporary folder, and keeps in ``--out-dir`` their logs, their run records and ``machine.json``: the device
torch trains on, the CPUs, the commit, the load average before each job and its wall time. ``record`` reads
those folders, the main job's ``run.json`` (its training time and test score) and the recipe's
``recipe.json`` (each stage's wall time and the test scores), and writes
``benchmarks/results/device_times.json``, one row per machine, each with its own commit and time: a row
measured at another commit than the page's says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from provenance import current_commit, write_result  # a sibling module of this script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
RECIPE = ROOT / "examples" / "agentgym_recipe" / "run.py"
MACHINE_FILE = "machine.json"
MAIN_DIR = "main"
RECIPE_DIR = "recipe"


def device_name() -> str:
    """What torch trains on here: the GPU's name, else ``CPU (N cores)``."""
    import torch

    if torch.cuda.is_available():
        return str(torch.cuda.get_device_name(0))
    return f"CPU ({os.cpu_count()} cores)"


def timed(command: list[str], log: Path) -> dict[str, Any]:
    """Run ``command`` (output to ``log``); its wall time, exit code and the load average before it."""
    load = [round(x, 2) for x in os.getloadavg()]
    started = time.monotonic()
    with log.open("w") as out:
        code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT).returncode
    return {
        "command": command[1:],
        "wall_s": round(time.monotonic() - started, 1),
        "returncode": code,
        "load_average_before": load,
    }


def keep_records(runs: Path, out_dir: Path) -> None:
    """Copy the run records ``record`` reads (not the models and checkpoints) from ``runs`` to ``out_dir``."""
    wanted = [*runs.glob(f"{MAIN_DIR}/*/run.json"), runs / RECIPE_DIR / "recipe.json"]
    wanted.append(runs / RECIPE_DIR / "test-grpo" / "run.json")
    for path in wanted:
        if path.is_file():
            target = out_dir / path.relative_to(runs)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def run(out_dir: Path, recipe_overrides: list[str]) -> dict[str, Any]:
    """Both jobs here; their logs, run records and ``machine.json`` in ``out_dir`` (models in a temp dir)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="device-times-") as scratch:
        runs = Path(scratch)
        main = timed(
            [python, "-m", "agenthub", "run", "trainer=trl", "env=trail", f"runs_dir={runs / MAIN_DIR}"],
            out_dir / "main.log",
        )
        recipe = timed(
            [python, str(RECIPE), "seed=0", f"runs_dir={runs / RECIPE_DIR}", *recipe_overrides],
            out_dir / "recipe.log",
        )
        keep_records(runs, out_dir)
    machine = {
        "device": device_name(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "commit": current_commit(),
        "started": started,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "main_job": main,
        "recipe": recipe,
    }
    (out_dir / MACHINE_FILE).write_text(json.dumps(machine, indent=2) + "\n")
    return machine


def epoch_iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def logged_wall(log: Path, key: str) -> float:
    """The ``key=N`` wall time a device call's script printed at the end of ``log``."""
    for line in reversed(log.read_text().splitlines()):
        for word in line.split():
            if word.startswith(f"{key}="):
                return float(word.split("=", 1)[1])
    raise SystemExit(f"{log}: no {key}= line; is this a folder a device call brought back?")


def adopt(folder: Path, *, device: str, cpus: int, commit: str) -> dict[str, Any]:
    """``machine.json`` for the folder of a device call, from its logs and run records (what ``run`` writes)."""
    main_run = next((folder / MAIN_DIR).glob("*/run.json"))
    last_stage = json.loads((folder / RECIPE_DIR / "test-grpo" / "run.json").read_text())
    stages = json.loads((folder / RECIPE_DIR / "recipe.json").read_text())["stages"]
    machine = {
        "device": device,
        "cpus": cpus,
        "platform": "the device call's machine",
        "commit": commit,
        "started": epoch_iso(json.loads(main_run.read_text())["started_at"]),
        "finished": epoch_iso(last_stage["finished_at"]),
        "main_job": {"wall_s": logged_wall(folder / "main.log", "main_wall"), "load_average_before": None},
        "recipe": {
            "wall_s": logged_wall(folder / "recipe.log", "recipe_wall"),
            "load_average_before": stages[0]["load_average_before"],
        },
    }
    (folder / MACHINE_FILE).write_text(json.dumps(machine, indent=2) + "\n")
    return machine


def main_job_row(folder: Path) -> dict[str, Any]:
    """The main job's figures from its run folder (the one run under ``main/``)."""
    runs = sorted(p for p in (folder / MAIN_DIR).iterdir() if (p / "run.json").is_file())
    if len(runs) != 1:
        raise SystemExit(f"{folder / MAIN_DIR}: expected one run folder with a run.json, found {len(runs)}")
    summary = json.loads((runs[0] / "run.json").read_text())["summary"]
    return {
        "train_s": summary["elapsed_s"],
        "last_steps_success": summary["last_steps_success"]["mean"],
        "test_success": summary["test"]["success"],
        "test_episodes": summary["test"]["episodes"],
    }


def recipe_row(folder: Path) -> dict[str, Any]:
    recipe = json.loads((folder / RECIPE_DIR / "recipe.json").read_text())
    return {
        "stages_s": {stage["stage"]: stage["wall_s"] for stage in recipe["stages"]},
        "total_s": recipe["total_wall_s"],
        "test_sft": recipe["test_sft"]["success"],
        "test_grpo": recipe["test_grpo"]["success"],
    }


def record(folders: list[Path]) -> dict[str, Any]:
    rows = []
    for folder in folders:
        if not (folder / MACHINE_FILE).is_file():
            raise SystemExit(
                f"{folder}: no {MACHINE_FILE}; give a folder that `device_times.py run --out-dir` wrote "
                "(or that `adopt` completed for a device call's files)"
            )
        machine = json.loads((folder / MACHINE_FILE).read_text())
        rows.append(
            {
                "device": machine["device"],
                "cpus": machine["cpus"],
                "commit": machine["commit"],
                "measured": f"{machine['started']} to {machine['finished']}",
                "main_job": {
                    **main_job_row(folder),
                    "wall_s": machine["main_job"]["wall_s"],
                    "load_average_before": machine["main_job"]["load_average_before"],
                },
                "recipe": {
                    **recipe_row(folder),
                    "wall_s": machine["recipe"]["wall_s"],
                    "load_average_before": machine["recipe"]["load_average_before"],
                },
                "from": str(folder),
            }
        )
    return {"machines": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="time both jobs on this machine")
    run_parser.add_argument("--out-dir", type=Path, required=True)
    run_parser.add_argument("overrides", nargs="*", metavar="key=value", help="more recipe settings")
    adopt_parser = commands.add_parser("adopt", help="machine.json for a device call's folder")
    adopt_parser.add_argument("folder", type=Path)
    adopt_parser.add_argument("--device", required=True, help="the GPU's name, as nvidia-smi printed it")
    adopt_parser.add_argument("--cpus", type=int, required=True)
    adopt_parser.add_argument("--commit", required=True, help="the commit whose wheels the call ran")
    record_parser = commands.add_parser("record", help="write the result from the folders `run` left")
    record_parser.add_argument("--from", dest="folders", type=Path, action="append", required=True)
    record_parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.command == "run":
        print(json.dumps(run(args.out_dir, args.overrides), indent=2))
        return 0
    if args.command == "adopt":
        print(json.dumps(adopt(args.folder, device=args.device, cpus=args.cpus, commit=args.commit), indent=2))
        return 0
    report = record(args.folders)
    args.out.mkdir(parents=True, exist_ok=True)
    write_result(args.out / "device_times.json", report, {"folders": [str(f) for f in args.folders]})
    print(f"wrote {args.out / 'device_times.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
