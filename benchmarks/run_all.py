"""Every benchmark whose result docs/benchmarks.md renders, then the page: one command.

    pip install -e '.[bench,ray]' (and the env plugins and the openai agent: requirements-dev.txt)
    python benchmarks/run_all.py --list               # the parts, their commands and rough durations; runs nothing
    python benchmarks/run_all.py                      # about 2.5 hours on 2 quiet cores, 1 h of it importers
    python benchmarks/run_all.py --quick              # smoke run of every part; everything in a temp dir
    python benchmarks/run_all.py --only service executor
    python benchmarks/run_all.py --only memory envs --scripts env_plugins.py webarena_env.py
    python benchmarks/run_all.py --trl-python /tmp/venv-trl/bin/python   # learning too: about 65 minutes more
    python benchmarks/run_all.py --vllm-python /tmp/venv-vllm/bin/python # vLLM against hf too: ~6 minutes more

Parts, in this order, each command run as a subprocess (a crash in one keeps the others' results):

- ``engines``: ``vllm_vs_hf.py`` (vLLM's CPU build against transformers), run with ``--vllm-python`` (vLLM
  pins its own torch, so it lives in a venv of its own); without one it is not run and the page uses the
  committed ``vllm_vs_hf.json``, with its date. It goes first: ``executor`` calibrates from its result;
- ``service``: ``service_throughput.py`` (textcraft, babyai, guess; in-process, 1 and 2 servers), then
  ``serve_workers.py`` (``agenthub serve workers=2`` against one worker, interleaved rounds), then
  ``agentgym_textcraft.py`` (agenthub's TextCraft server beside AgentGym's own, interleaved), then
  ``env_client_transports.py`` (client CPU per request of EnvClient's candidate transports);
- ``executor``: ``executor_scaling.py`` (stand-in LLM at a fixed 50 and 500 ms, and one whose latency
  grows with the requests in flight, calibrated from ``vllm_vs_hf.json``: this run's when ``engines`` ran);
- ``memory``: ``sciworld_packing.py`` (sessions packed per JVM), then ``env_plugins.py`` for the light envs,
  then for the heavy ones (textworld, sciworld) with fewer sessions and tasks, merged into the same JSON;
  then ``jvm_heap.py`` (sciworld's JVM: live heap against resident size over many resets). Memory per
  session is read after at least 200 resets (``--warm-resets``), not from a fresh JVM; a full run writes
  each env's footprint (what a pod requests) to its plugin's ``footprints.json`` (``--write-footprints``);
- ``envs``: ``search_retrieval.py`` (BM25 shared by several servers) and ``webarena_env.py`` (a real
  browser per server; memory per session after 200 resets). The full webarena run refuses to start on a
  machine whose load average exceeds its cores: run it on a quiet one; then ``maze_observation_ceiling.py``
  (how much of the maze oracle's moves a policy of the observation alone can match: seconds);
- ``ray``: ``ray_scaling.py`` (episodes/s against raylets on this machine);
- ``viewer``: ``viewer_index.py`` (the run viewer's index on 100,000 episodes);
- ``importers``: ``importer_tables.py`` (``agenthub check`` over every TextArena game and reasoning-gym
  generator: 7 minutes here on 2 quiet cores, over 20 when a check runs to its time limit; it also rewrites
  the tables in ``docs/importers.md``; ``--quick`` checks two of each and writes the tables beside the results);
- ``parsing``: ``action_parsing.py`` (every seed env's parse time against the length of a hostile action,
  1 KiB to 1 MiB: the exponent that says linear or quadratic);
- ``learning``: ``trl_learning.py`` (one run, the test split before and after), ``trl_seeds.py`` (the
  default for seeds 0..19: how many learn) and ``agentgym_recipe.py`` (oracle, SFT, GRPO on maze), run with
  a Python that can import the TRL trainer plugin (this one, or ``--trl-python``). The plugin pins its own
  frameworks, so it usually lives in a venv of its own; when no such Python is given, learning is not run
  and the page uses the committed results, with their dates.

Then ``summarize.py`` writes the markdown summary (``docs/benchmarks.md``; with ``--quick``, next to the
results in the temp dir). Before each command a full run waits (up to ``--settle-max-s``) until the
1-minute load average is under ``--settle-load`` (2): the previous benchmark's load lingers in it.
``run_all.json`` beside the results records the machine, and for each command its real start and end,
the load average at both, the wait, and how it ended. A part this call did not run keeps its record
from the call that ran it, marked with that call's start (``run``), so no timeline mixes runs
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import summarize  # sibling modules of this script
from provenance import QUIET_LOAD

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
PARTS = ("engines", "service", "executor", "memory", "envs", "ray", "viewer", "importers", "parsing", "learning")
"""In this order: ``engines`` first, since ``executor`` calibrates its stand-in LLM from ``vllm_vs_hf.json``."""
LIGHT_ENVS = ["guess", "trail", "maze", "wordle", "textcraft", "babyai"]
HEAVY_ENVS = ["textworld", "sciworld"]
"""A JVM or a game compiler per session: fewer idle sessions, episodes and distinct tasks (game files)."""
HEAVY_SETTINGS = ["--sessions", "8", "--episodes", "30", "--cycle-tasks", "30"]
PART_TIMEOUT_S = 3 * 3600
IMPORTERS_QUICK_LIMIT = "2"
"""Envs per importer in a smoke run (the full sweep checks every TextArena game and reasoning-gym generator)."""

ESTIMATE_S: dict[str, tuple[float, float]] = {
    # script: (full run, --quick run) on 2 quiet cores; from the committed results' own timings where they
    # recorded one (run_all.json's wall_s, a provenance block's start and end, a result's wall_s), else the
    # script's docstring; memory parts include the 200 warm-up resets before memory is read.
    "vllm_vs_hf.py": (360, 120),
    "service_throughput.py": (240, 30),
    "serve_workers.py": (200, 30),
    "agentgym_textcraft.py": (420, 20),
    "env_client_transports.py": (120, 15),
    "executor_scaling.py": (720, 30),
    "env_plugins.py light": (150, 20),
    "env_plugins.py heavy": (540, 0),
    "jvm_heap.py": (110, 20),
    "sciworld_packing.py": (900, 120),
    "search_retrieval.py": (600, 60),
    "webarena_env.py": (800, 120),
    "maze_observation_ceiling.py": (10, 5),
    "ray_scaling.py": (300, 90),
    "viewer_index.py": (180, 20),
    "importer_tables.py": (420, 120),
    "action_parsing.py": (300, 30),
    "trl_learning.py": (210, 60),
    "trl_seeds.py": (3110, 120),
    "agentgym_recipe.py": (660, 120),
    "tiny_model_envs.py": (3600, 120),
    "device_times.py run": (1200, 0),
    "device_times.py record": (2, 0),
}
"""Rough wall time of each command, for ``--list``: the full run's, then ``--quick``'s."""


def commands(part: str, args: argparse.Namespace, out: Path) -> list[list[str]]:
    """The subprocess command lines of one part (only those of ``--scripts`` when it names any)."""
    return [command for _, command in labelled_commands(part, args, out) if selected(command, args)]


def script_of(argv: Sequence[str]) -> str:
    """The benchmark script a command line runs (``python benchmarks/NAME.py ...``): ``NAME.py``."""
    return Path(argv[1]).name if len(argv) > 1 else ""


def selected(command: list[str], args: argparse.Namespace) -> bool:
    """Whether ``--scripts`` (none: every script) names the benchmark script ``command`` runs."""
    wanted: list[str] | None = getattr(args, "scripts", None)
    return not wanted or script_of(command) in wanted


def labelled_commands(part: str, args: argparse.Namespace, out: Path) -> list[tuple[str, list[str]]]:
    """Each command of one part with the key of its duration in :data:`ESTIMATE_S`."""
    py, quick = sys.executable, ["--quick"] if args.quick else []
    # A full run declares the memory it measured in each env plugin's footprints.json (what a pod requests).
    declare = [] if args.quick else ["--write-footprints"]
    where = ["--out", str(out)]

    def script(name: str, *extra: str, python: str = py, key: str | None = None) -> tuple[str, list[str]]:
        return key or name, [python, str(HERE / name), *quick, *extra, *where]

    if part == "engines":
        return [script("vllm_vs_hf.py", python=args.vllm_python or py)]
    if part == "service":
        service = [script("service_throughput.py"), script("serve_workers.py"), script("agentgym_textcraft.py")]
        return [*service, script("env_client_transports.py")]
    if part == "executor":
        fresh = ["--vllm-result", str(out / "vllm_vs_hf.json")] if getattr(args, "engines_ran", False) else []
        return [script("executor_scaling.py", *fresh)]
    if part == "memory":
        light = ["guess"] if args.quick else [*LIGHT_ENVS, *declare]
        # sciworld_packing first: the heavy run declares sciworld's memory a session from its result.
        steps = [script("sciworld_packing.py"), script("env_plugins.py", *light, key="env_plugins.py light")]
        if not args.quick:
            heavy = ["--merge", *HEAVY_SETTINGS, *declare, *HEAVY_ENVS]
            steps.append(script("env_plugins.py", *heavy, key="env_plugins.py heavy"))
        return [*steps, script("jvm_heap.py")]
    if part == "envs":
        webarena = script("webarena_env.py", *declare)
        return [script("search_retrieval.py"), webarena, script("maze_observation_ceiling.py")]
    if part == "ray":
        return [script("ray_scaling.py")]
    if part == "viewer":
        return [script("viewer_index.py")]
    if part == "importers":  # its --out is the page its tables go to; its JSON is --results
        limit = ["--limit", IMPORTERS_QUICK_LIMIT] if args.quick else []
        results = ["--results", str(out / "importer_tables.json")]
        page = ["--out", str(out / "importers.md")] if args.quick else []
        name = "importer_tables.py"
        return [(name, [py, str(HERE / name), *limit, *results, *page])]
    if part == "parsing":
        return [script("action_parsing.py")]
    assert part == "learning", part
    learning_py = args.learning_python or py
    steps = [script("trl_learning.py", python=learning_py), script("trl_seeds.py", python=learning_py)]
    if getattr(args, "agentgym_ready", True):  # the recipe also needs the maze env and the hf agent
        steps.append(script("agentgym_recipe.py", python=learning_py))
        # After the two it reads (trail's and maze's rows come from their results).
        steps.append(script("tiny_model_envs.py", python=learning_py))
        if not args.quick:  # times of the full-size jobs, beside the GPU's: a smaller run's time says nothing
            times, cpu_runs = str(HERE / "device_times.py"), str(out / "device_times" / "cpu")
            gpu_runs = str(HERE / "results" / "device_times" / "h200")
            steps.append(("device_times.py run", [learning_py, times, "run", "--out-dir", cpu_runs]))
            record = [py, times, "record", "--from", cpu_runs, "--from", gpu_runs, "--out", str(out)]
            steps.append(("device_times.py record", record))
    return steps


def imports(python: str | None, module: str) -> bool:
    if python is None:
        return False
    try:
        done = subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def trl_python(args: argparse.Namespace) -> str | None:
    """A Python that imports the TRL trainer plugin: ``--trl-python``, else this one; None if neither does."""
    python = args.trl_python or sys.executable
    return str(python) if imports(python, "agenthub_trainer_trl") else None


def vllm_python(args: argparse.Namespace) -> str | None:
    """A Python that imports vLLM: ``--vllm-python`` (its own venv: vLLM pins its own torch), else this one."""
    python = args.vllm_python or sys.executable
    return str(python) if imports(python, "vllm") else None


def list_parts(args: argparse.Namespace, out: Path) -> str:
    """Every part's commands with a rough duration each (``--list``): what a call would run, and for how long."""
    lines, total = [], 0.0
    args.learning_python = args.learning_python or args.trl_python
    for part in args.only:
        lines.append(f"{part}:")
        for key, command in labelled_commands(part, args, out):
            if not selected(command, args):
                continue
            seconds = ESTIMATE_S[key][1 if args.quick else 0]
            total += seconds
            shown = " ".join(os.path.relpath(c, ROOT) if c.startswith(str(ROOT)) else c for c in command[1:])
            python = "" if command[0] == sys.executable else f"  [with {command[0]}]"
            lines.append(f"  ~{minutes(seconds):>7}  python {shown}{python}")
    conditional = "engines runs only with --vllm-python, learning only with a Python that imports the TRL plugin"
    lines.append(f"total ~{minutes(total)} on 2 quiet cores if every part runs ({conditional})")
    return "\n".join(lines)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def settle(below: float | None, at_most_s: float) -> float:
    """Wait (up to ``at_most_s``) until the 1-minute load average is under ``below``: the previous benchmark's
    load lingers in that average for a minute or two, and each result records the load it started under."""
    if below is None:
        return 0.0
    started = time.monotonic()
    while os.getloadavg()[0] >= below and time.monotonic() - started < at_most_s:
        time.sleep(5)
    waited = round(time.monotonic() - started, 1)
    if os.getloadavg()[0] >= below:
        print(
            f"=== the load average is still {os.getloadavg()[0]:.2f} after {waited:.0f} s: starting anyway", flush=True
        )
    return waited


def run_part(part: str, args: argparse.Namespace, out: Path, run: str) -> list[dict[str, Any]]:
    steps = []
    for command in commands(part, args, out):
        shown = " ".join(os.path.relpath(c, ROOT) if c.startswith(str(ROOT)) else c for c in command[1:])
        print(f"\n=== {part}: python {shown}", flush=True)
        waited = settle(args.settle_load, args.settle_max_s)
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
                "waited_for_load_s": waited,
                "run": run,
            }
        )
        print(f"=== {part}: exit code {returncode} after {steps[-1]['wall_s']:.0f} s", flush=True)
    return steps


def ran_by(step: Mapping[str, Any], scripts: list[str]) -> bool:
    """Whether an earlier step (``python benchmarks/NAME.py ...``) ran one of ``scripts``."""
    return script_of(str(step.get("command", "")).split()) in scripts


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
    parser.add_argument(
        "--vllm-python", default=None, help="a Python with vLLM (its own venv), for the engines part (vllm_vs_hf.py)"
    )
    parser.add_argument(
        "--scripts",
        nargs="+",
        default=None,
        metavar="SCRIPT",
        help="within the --only parts, run only these scripts (e.g. env_plugins.py webarena_env.py); the part's "
        "other steps keep their record from the call that ran them",
    )
    parser.add_argument(
        "--list", action="store_true", help="print the parts, their commands and rough durations; run nothing"
    )
    parser.add_argument(
        "--settle-load",
        type=float,
        default=None,
        help="before each command, wait until the 1-minute load average is under this (default 2 for a full run, "
        "none with --quick)",
    )
    parser.add_argument("--settle-max-s", type=float, default=300, help="the longest such wait (default 300 s)")
    args = parser.parse_args(argv)
    if args.scripts:
        known = sorted({key.split()[0] for key in ESTIMATE_S})
        unknown = [name for name in args.scripts if name not in known]
        if unknown:
            names = ", ".join(unknown)
            parser.error(f"--scripts names no benchmark of run_all: {names}; choose from {', '.join(known)}")
    if args.settle_load is None and not args.quick:
        args.settle_load = QUIET_LOAD
    if args.list and args.out is None:  # nothing is written: no temp dir to leave behind
        args.out = Path(tempfile.gettempdir()) / "agenthub-bench-all-(a new folder)" if args.quick else RESULTS
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-all-")) if args.quick else RESULTS
    if args.docs is None:
        args.docs = args.out / "benchmarks.md" if args.quick else summarize.DOCS
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out.resolve()
    if args.list:
        args.learning_python = None
        print(list_parts(args, out))
        return 0
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
    earlier_steps: dict[str, list[dict[str, Any]]] = {}
    if record_path.is_file():  # parts not run this time keep their record, marked with the run that made it
        earlier = json.loads(record_path.read_text())
        earlier_steps = {
            p: [{**step, "run": step.get("run")} for step in steps]  # None: a call from before runs were named
            for p, steps in earlier.get("benchmarks", {}).items()
        }
        record["benchmarks"] = {p: steps for p, steps in earlier_steps.items() if p not in args.only}
    args.learning_python = trl_python(args) if "learning" in args.only else None
    args.vllm_python = vllm_python(args) if "engines" in args.only else None
    args.agentgym_ready = imports(args.learning_python, AGENTGYM_MODULES)
    if args.learning_python is not None and not args.agentgym_ready:
        record["agentgym"] = reuse_committed(
            out, ("agentgym_recipe",), "--trl-python", AGENTGYM_NEEDS, args.learning_python
        )
        print(f"\n=== learning: agentgym_recipe.py not run. {record['agentgym']['note']}", flush=True)
    args.engines_ran = False
    for part in PARTS:
        if part not in args.only:
            continue
        if part == "engines" and args.vllm_python is None:
            record["engines"] = reuse_committed(out, ENGINE_FILES, "--vllm-python", "vLLM")
            print(f"\n=== engines: not run. {record['engines']['note']}", flush=True)
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
        not_rerun = [s for s in earlier_steps.get(part, []) if args.scripts and not ran_by(s, args.scripts)]
        part_steps = [*not_rerun, *run_part(part, args, out, record["started"])]
        record["benchmarks"][part] = sorted(part_steps, key=lambda step: str(step.get("started", "")))
        args.engines_ran = args.engines_ran or part == "engines"
    for kept in ("learning", "engines", "agentgym"):
        if kept not in record and record_path.is_file():
            earlier_note = json.loads(record_path.read_text()).get(kept)
            if earlier_note is not None:
                record[kept] = earlier_note
    record["finished"] = now()
    record["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    summarize.main(["--results", str(out), "--out", str(args.docs)])
    this_call = record["started"]
    failed_now = [
        p
        for p in args.only
        if any(s["returncode"] != 0 and s.get("run") == this_call for s in record["benchmarks"].get(p, []))
    ]
    if failed_now:
        print(f"parts that failed in this run: {', '.join(failed_now)}", file=sys.stderr)
    # Steps kept from an earlier run (a part not run, or a script --scripts left out) are reported with that
    # run, and do not fail this one.
    for part, steps in record["benchmarks"].items():
        earlier_failures = [s for s in steps if s["returncode"] != 0 and s.get("run") != this_call]
        if earlier_failures:
            runs = sorted({str(s.get("run") or "an unnamed earlier run") for s in earlier_failures})
            print(f"note: part {part} failed in an earlier run ({', '.join(runs)}); re-run it with --only {part}")
    return 1 if failed_now else 0


LEARNING_FILES = ("trl_learning", "trl_seeds", "agentgym_recipe")
AGENTGYM_MODULES = "agenthub_trainer_trl, agenthub_env_maze, agenthub_agent_hf"
AGENTGYM_NEEDS = "the maze env and hf agent plugins (agentgym_recipe.py needs them beside the TRL trainer)"
ENGINE_FILES = ("vllm_vs_hf",)


def reuse_learning(out: Path) -> dict[str, Any]:
    """The committed learning results stand in for a run: where they are and when they were made."""
    return reuse_committed(out, LEARNING_FILES, "--trl-python", "the TRL trainer plugin (plugins/trainers/trl)")


def reuse_committed(
    out: Path, names: tuple[str, ...], option: str, needs: str, python: str = sys.executable
) -> dict[str, Any]:
    """A part not run here: its committed results stand in, copied beside a temp dir's so its page links them."""
    committed = RESULTS / f"{names[0]}.json"
    if not committed.is_file():
        return {"file": None, "note": f"{needs} is not importable here and no earlier result exists."}
    result = json.loads(committed.read_text())
    block, when = result.get("provenance") or {}, result.get("when") or {}  # "when": vllm_vs_hf's own dates
    date = block.get("finished") or block.get("measured_at") or when.get("end") or "at an unrecorded date"
    if out != RESULTS:
        for name in names:
            for suffix in (".json", ".png"):
                if (RESULTS / f"{name}{suffix}").is_file():
                    shutil.copy2(RESULTS / f"{name}{suffix}", out / f"{name}{suffix}")
    return {
        "file": relative(out / f"{names[0]}.json"),
        "note": (
            f"Not run in this run: {python} cannot import {needs} and no {option} that can was given; "
            f"this is the earlier result, dated {date}."
        ),
    }


if __name__ == "__main__":
    sys.exit(main())
