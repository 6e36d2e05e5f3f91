"""Every benchmark of issue 7, then the summary: one command.

    pip install -e '.[bench]' (and the env plugins and the openai agent: requirements-dev.txt)
    python benchmarks/run_all.py                      # ~25 minutes on 2 quiet cores; results/ and docs/benchmarks.md
    python benchmarks/run_all.py --quick              # smoke run, a few minutes; everything in a temp dir
    python benchmarks/run_all.py --only service executor
    python benchmarks/run_all.py --trl-python /tmp/venv-trl/bin/python   # learning too: about 45 minutes more

Parts, each run as a subprocess (a crash in one keeps the others' results):

- ``service``: ``service_throughput.py`` (textcraft, babyai, guess; in-process, 1 and 2 servers);
- ``executor``: ``executor_scaling.py`` (stand-in LLM at a fixed 50 and 500 ms, and one whose latency
  grows with the requests in flight, calibrated from ``vllm_vs_hf.json``);
- ``memory``: ``env_plugins.py`` for the light envs, then for the heavy ones (textworld, sciworld) with
  fewer sessions and tasks, merged into the same JSON; then ``jvm_heap.py`` (sciworld's JVM: live heap
  against resident size over many resets);
- ``learning``: ``trl_learning.py`` (one run, the test split before and after), then ``trl_seeds.py``
  (the default for seeds 0..19: how many learn), run with a Python that can import the TRL trainer
  plugin (this one, or ``--trl-python``). The plugin pins its own frameworks, so it usually lives in a
  venv of its own; when no such Python is given, learning is not run and the summary uses the
  ``trl_learning.json`` and ``trl_seeds.json`` already in ``benchmarks/results/``, with their dates;
- ``parsing``: ``action_parsing.py`` (every seed env's parse time against the length of a hostile action,
  1 KiB to 1 MiB: the exponent that says linear or quadratic).

Then ``summarize.py`` writes the markdown summary (``docs/benchmarks.md``; with ``--quick``, next to the
results in the temp dir). ``run_all.json`` beside the results records the machine, and for each command
its real start and end, the load average at both, and how it ended. A part this call did not run keeps
its record from the call that ran it, marked with that call's start (``run``), so no timeline mixes runs
unmarked; each result's own provenance block says when it was measured in any case.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import summarize  # a sibling module of this script

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
PARTS = ("service", "executor", "memory", "learning", "parsing")
LIGHT_ENVS = ["guess", "trail", "maze", "wordle", "textcraft", "babyai"]
HEAVY_ENVS = ["textworld", "sciworld"]
"""A JVM or a game compiler per session: fewer idle sessions, episodes and distinct tasks (game files)."""
HEAVY_SETTINGS = ["--sessions", "8", "--episodes", "30", "--cycle-tasks", "30"]
PART_TIMEOUT_S = 3 * 3600


def commands(part: str, args: argparse.Namespace, out: Path) -> list[list[str]]:
    """The subprocess command lines of one part."""
    py, quick = sys.executable, ["--quick"] if args.quick else []
    where = ["--out", str(out)]
    if part == "service":
        return [[py, str(HERE / "service_throughput.py"), *quick, *where]]
    if part == "executor":
        return [[py, str(HERE / "executor_scaling.py"), *quick, *where]]
    if part == "memory":
        if args.quick:
            return [[py, str(HERE / "env_plugins.py"), "--quick", *where, "guess"]]
        return [
            [py, str(HERE / "env_plugins.py"), *where, *LIGHT_ENVS],
            [py, str(HERE / "env_plugins.py"), "--merge", *HEAVY_SETTINGS, *where, *HEAVY_ENVS],
            [py, str(HERE / "jvm_heap.py"), *where],
        ]
    if part == "parsing":
        return [[py, str(HERE / "action_parsing.py"), *quick, *where]]
    assert part == "learning"
    learning_py = args.learning_python or py
    return [
        [learning_py, str(HERE / "trl_learning.py"), *quick, *where],
        [learning_py, str(HERE / "trl_seeds.py"), *quick, *where],
    ]


def trl_python(args: argparse.Namespace) -> str | None:
    """A Python that imports the TRL trainer plugin: ``--trl-python``, else this one; None if neither does."""
    for python in [args.trl_python] if args.trl_python else [sys.executable]:
        done = subprocess.run([python, "-c", "import agenthub_trainer_trl"], capture_output=True, timeout=120)
        if done.returncode == 0:
            return str(python)
    return None


def run_part(part: str, args: argparse.Namespace, out: Path, run: str) -> list[dict[str, Any]]:
    steps = []
    for command in commands(part, args, out):
        shown = " ".join(os.path.relpath(c, ROOT) if c.startswith(str(ROOT)) else c for c in command[1:])
        print(f"\n=== {part}: python {shown}", flush=True)
        load_before, started, started_at = list(os.getloadavg()), time.perf_counter(), now()
        try:
            # Its output goes straight to ours, so a long part shows its progress.
            returncode = subprocess.run(command, cwd=ROOT, timeout=PART_TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            returncode = -1
            print(f"=== {part}: stopped after {PART_TIMEOUT_S} s", flush=True)
        steps.append(
            {
                "command": f"python {shown}",
                "returncode": returncode,
                "wall_s": round(time.perf_counter() - started, 1),
                "started": started_at,
                "finished": now(),
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
                "run": run,
            }
        )
        print(f"=== {part}: exit code {returncode} after {steps[-1]['wall_s']:.0f} s", flush=True)
    return steps


def relative(path: Path) -> str:
    """A path under the checkout relative to it (``run_all.json`` is committed), else absolute."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def now() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smoke run of every part (minutes); temp dir")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="the parts to run")
    parser.add_argument("--out", type=Path, default=None, help=f"results directory (default {RESULTS})")
    parser.add_argument("--docs", type=Path, default=None, help="the summary (default docs/benchmarks.md)")
    parser.add_argument(
        "--trl-python", default=None, help="a Python with plugins/trainers/trl installed, for the learning part"
    )
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-all-")) if args.quick else RESULTS
    if args.docs is None:
        args.docs = args.out / "benchmarks.md" if args.quick else summarize.DOCS
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {
        "command": " ".join(["python benchmarks/run_all.py", *(sys.argv[1:] if argv is None else argv)]),
        "started": now(),
        "machine": {
            "cpus": os.cpu_count(),
            "cpu_model": summarize.cpu_model(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "benchmarks": {},
    }
    record_path = out / "run_all.json"
    if record_path.is_file():  # parts not run this time keep their record, marked with the run that made it
        earlier = json.loads(record_path.read_text())
        record["benchmarks"] = {
            p: [{**step, "run": step.get("run")} for step in steps]  # None: a call from before runs were named
            for p, steps in earlier.get("benchmarks", {}).items()
            if p not in args.only
        }
    args.learning_python = trl_python(args) if "learning" in args.only else None
    for part in PARTS:
        if part not in args.only:
            continue
        if part == "learning" and args.learning_python is None:
            record["learning"] = reuse_learning(out)
            print(f"\n=== learning: not run. {record['learning']['note']}", flush=True)
            continue
        if part == "learning":
            record["learning"] = {
                "file": relative(out / "trl_learning.json"),
                "note": f"Measured in this run, {now()}.",
            }
        record["benchmarks"][part] = run_part(part, args, out, record["started"])
    if "learning" not in record and record_path.is_file():
        earlier_learning = json.loads(record_path.read_text()).get("learning")
        if earlier_learning is not None:
            record["learning"] = earlier_learning
    record["finished"] = now()
    record["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    summarize.main(["--results", str(out), "--out", str(args.docs)])
    failed = [p for p, steps in record["benchmarks"].items() if any(s["returncode"] != 0 for s in steps)]
    if failed:
        print(f"parts that failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def reuse_learning(out: Path) -> dict[str, Any]:
    """The committed learning result stands in for a run: where it is and when it was made."""
    committed = RESULTS / "trl_learning.json"
    if not committed.is_file():
        return {"file": None, "note": "The TRL trainer plugin is not importable here and no earlier result exists."}
    block = json.loads(committed.read_text()).get("provenance") or {}
    date = block.get("finished") or "at an unrecorded date"
    if out != RESULTS:  # a temp dir: its own copy, so its page links a plot beside it
        for name in ("trl_learning.json", "trl_learning.png", "trl_seeds.json", "trl_seeds.png"):
            if (RESULTS / name).is_file():
                shutil.copy2(RESULTS / name, out / name)
    return {
        "file": relative(out / "trl_learning.json"),
        "note": (
            f"Not run in this run: the TRL trainer plugin (plugins/trainers/trl) is not importable by "
            f"{sys.executable} and no --trl-python was given; this is the earlier result, dated {date}."
        ),
    }


if __name__ == "__main__":
    sys.exit(main())
