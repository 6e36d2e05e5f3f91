"""SciWorld sessions packed many per JVM against one JVM per session, side by side in one run.

For each mode (``packed``: ``sessions_per_jvm=--per-jvm``; ``single``: ``sessions_per_jvm=1``), in this order:

1. **Idle memory**: ``--sessions`` instances are built and reset to a task each, then reset in turn until
   every JVM has served ``--warm-resets`` resets (200 by default, at most ``--recycle-after``, after which
   a JVM is replaced: each JVM in its steady state, not fresh); the resident (RSS) and proportional (PSS,
   shared pages split between the processes that map them) memory of the mode's JVM processes is summed
   and divided by the sessions. The result names the resets in all and those each JVM had served.
2. **Throughput per core**: one thread per session (as the env service calls them) plays ``--steps`` steps
   each; steps per second of wall time, and steps per CPU-second (this process's and the JVMs' user+system
   time), the figure that says how many sessions a core carries.
3. **Reset cycles**: the sessions are reset ``--cycles`` times in turn (each after a few steps), and the
   summed JVM RSS is sampled; in packed mode the JVMs are recycled after ``--recycle-after`` resets.

    python benchmarks/sciworld_packing.py                 # 8 sessions, 400 resets per mode (~10 min here)
    python benchmarks/sciworld_packing.py --quick         # 4 sessions, 60 resets, 8 before the read; temp dir

Writes benchmarks/results/sciworld_packing.json and .png (``--out`` elsewhere), with the commit and settings.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

if TYPE_CHECKING:
    from agenthub_env_sciworld.env import SciWorldEnv
    from agenthub_env_sciworld.pool import JVMPool

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import write_result  # a sibling module of this script: the commit, date and settings

RESULTS = Path(__file__).resolve().parent / "results"
MIB = 1024 * 1024
ACTIONS = ["look around", "inventory", "open door to kitchen", "go to kitchen", "look around", "go to hallway"]


def jvm_processes(pool: JVMPool) -> list[psutil.Process]:
    return [psutil.Process(shared.jvm.pid) for shared in pool.jvms() if shared.jvm.alive]


def memory(pool: JVMPool) -> dict[str, float]:
    rss = pss = 0
    processes = jvm_processes(pool)
    for process in processes:
        full = process.memory_full_info()
        rss += full.rss
        pss += full.pss
    return {"jvms": len(processes), "rss_mib": rss / MIB, "pss_mib": pss / MIB}


def cpu_seconds(pool: JVMPool) -> float:
    own = psutil.Process().cpu_times()
    total = own.user + own.system
    for process in jvm_processes(pool):
        times = process.cpu_times()
        total += times.user + times.system
    return total


def run_mode(name: str, per_jvm: int, args: argparse.Namespace) -> dict[str, Any]:
    # Imported here: summarize.py imports this module for section_lines() without the plugin installed.
    from agenthub_env_sciworld.env import SciWorldEnv
    from agenthub_env_sciworld.tasks import TRAIN_IDS

    print(f"[{name}] starting {args.sessions} sessions, {per_jvm} per JVM", flush=True)
    envs = [SciWorldEnv(sessions_per_jvm=per_jvm, recycle_after=args.recycle_after) for _ in range(args.sessions)]
    pool = envs[0].pool
    try:
        for i, env in enumerate(envs):
            env.reset(task_id=TRAIN_IDS[i * 97 % len(TRAIN_IDS)])
        # To the steady state: every JVM reset many times (a JVM of its own per session takes sessions x more).
        target, resets = min(args.warm_resets, args.recycle_after), len(envs)
        while resets < target * len(envs) and min(shared.resets for shared in pool.jvms()) < target:
            envs[resets % len(envs)].reset(task_id=TRAIN_IDS[resets * 97 % len(TRAIN_IDS)])
            resets += 1
        idle: dict[str, Any] = dict(memory(pool))
        idle["resets_before"] = resets
        idle["resets_served_by_each_jvm"] = sorted((shared.resets for shared in pool.jvms()), reverse=True)
        idle["per_session_rss_mib"] = idle["rss_mib"] / args.sessions
        idle["per_session_pss_mib"] = idle["pss_mib"] / args.sessions
        print(f"[{name}] idle: {idle}", flush=True)

        def play(env: SciWorldEnv) -> None:
            for step in range(args.steps):
                env.step(ACTIONS[step % len(ACTIONS)])

        cpu_before, wall_before = cpu_seconds(pool), time.perf_counter()
        threads = [threading.Thread(target=play, args=(env,)) for env in envs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall, cpu = time.perf_counter() - wall_before, cpu_seconds(pool) - cpu_before
        steps = args.steps * args.sessions
        throughput = {
            "steps": steps,
            "wall_s": wall,
            "cpu_s": cpu,
            "steps_per_s": steps / wall,
            "steps_per_cpu_s": steps / cpu,
        }
        print(f"[{name}] throughput: {throughput}", flush=True)

        samples = [[0, memory(pool)["rss_mib"]]]
        every = max(1, args.cycles // 20)
        started = time.perf_counter()
        for cycle in range(1, args.cycles + 1):
            env = envs[cycle % len(envs)]
            env.reset(task_id=TRAIN_IDS[cycle * 31 % len(TRAIN_IDS)])
            for action in ACTIONS[:3]:
                env.step(action)
            if cycle % every == 0 or cycle == args.cycles:
                samples.append([cycle, memory(pool)["rss_mib"]])
        cycles_wall = time.perf_counter() - started
        half = len(samples) // 2
        second_half = [rss for _, rss in samples[half:]]
        print(f"[{name}] rss over cycles: {samples[0][1]:.0f} -> {samples[-1][1]:.0f} MiB", flush=True)
        return {
            "sessions_per_jvm": per_jvm,
            "idle": idle,
            "throughput": throughput,
            "cycles": {
                "resets": args.cycles,
                "resets_per_s": args.cycles / cycles_wall,
                "rss_mib": samples,
                "max_rss_mib": max(rss for _, rss in samples),
                "second_half_range_mib": [min(second_half), max(second_half)],
                "jvms_at_end": len(pool.jvms()),
            },
        }
    finally:
        for env in envs:
            env.close()


def section_lines(result: dict[str, Any] | None, results: Path, docs: Path) -> list[str]:
    """docs/benchmarks.md's section for this result (summarize.py renders the page ``docs`` from ``results``)."""
    lines = ["## 8. SciWorld: sessions packed many per JVM", ""]
    if result is None:
        return [*lines, "Not measured: sciworld_packing.json is missing (`python benchmarks/sciworld_packing.py`).", ""]
    modes, ratios = result["modes"], result["ratios_single_over_packed"]
    rows = []
    for name, mode in modes.items():
        idle, speed, cycles = mode["idle"], mode["throughput"], mode["cycles"]
        low, high = cycles["second_half_range_mib"]
        rows.append(
            [
                f"{name} ({mode['sessions_per_jvm']} per JVM)",
                f"{idle['jvms']}",
                f"{idle['per_session_pss_mib']:.1f} / {idle['per_session_rss_mib']:.1f}",
                f"{speed['steps_per_cpu_s']:.0f}",
                f"{speed['steps_per_s']:.1f}",
                f"{cycles['rss_mib'][0][1]:.0f} / {cycles['max_rss_mib']:.0f}",
                f"{low:.0f} to {high:.0f}",
            ]
        )
    header = [
        "mode",
        "JVMs",
        "idle MiB per session, PSS / RSS",
        "steps per CPU-s",
        "steps/s",
        "JVM RSS MiB: start / max",
        "JVM RSS MiB, second half",
    ]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    load = " / ".join(str(x) for x in result.get("load_average_1_5_15_after", []))
    if all("resets_before" in mode["idle"] for mode in modes.values()):
        served = "; ".join(
            f"{name}: {mode['idle']['resets_before']:,} resets in all, "
            f"{', '.join(str(n) for n in mode['idle']['resets_served_by_each_jvm'])} by each JVM"
            for name, mode in modes.items()
        )
        target = min(result["provenance"]["settings"]["warm_resets"], result["recycle_after"])
        warm = f"idle memory read once each JVM had served {target} resets, not fresh ({served}); "
    else:
        warm = "idle memory read on fresh JVMs, after one reset each; "
    lines += [
        f"`benchmarks/sciworld_packing.py`: {result['sessions']} open sessions per mode, each reset to a task; "
        f"{warm}memory summed over the mode's JVM processes; throughput with one thread per session; then "
        f"{modes['packed']['cycles']['resets']} resets in turn (3 steps each), packed JVMs recycled every "
        f"{result['recycle_after']} resets. {result['cpu_count']} cores, load average after: {load}.",
        "",
        *table,
        "",
        f"One JVM per session over packed: {ratios['idle_pss_per_session']:.1f}x the idle memory per session (PSS), "
        f"{ratios['steps_per_cpu_s']:.2f}x the steps per CPU-second, "
        f"{ratios['steps_per_s']:.2f}x the steps per second.",
        "",
        "- Packed JVM memory peaks when a JVM is recycled: the spent JVM and its successor run together until the "
        "spent one's last session has moved; between recycles it stays within a few tens of MiB.",
        "- Steps per second count the wall clock: one packed JVM runs one call at a time (its lock), where 8 JVMs "
        "run 8, and on a shared machine 8 processes also get 8 shares of the CPU. Steps per CPU-second is the "
        "figure for sizing: how many sessions a core carries.",
        "",
    ]
    plot_path = results / "sciworld_packing.png"
    if plot_path.is_file():
        lines += [f"![sciworld packing]({Path(os.path.relpath(plot_path, docs.parent)).as_posix()})", ""]
    return lines


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = result["modes"]
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.5))
    names = list(modes)
    left.bar(names, [modes[m]["idle"]["per_session_pss_mib"] for m in names], label="PSS")
    left.bar(names, [modes[m]["idle"]["per_session_rss_mib"] for m in names], fill=False, label="RSS")
    left.axhline(30, color="red", linestyle="--", label="goal: 30 MiB")
    left.set_ylabel("MiB per idle session")
    left.set_title(f"idle memory, {result['sessions']} sessions")
    left.legend()
    middle.bar(names, [modes[m]["throughput"]["steps_per_cpu_s"] for m in names])
    middle.set_ylabel("steps per CPU-second")
    middle.set_title("throughput per core")
    for name in names:
        cycles, rss = zip(*modes[name]["cycles"]["rss_mib"], strict=True)
        right.plot(cycles, rss, marker=".", label=name)
    right.set_xlabel("resets")
    right.set_ylabel("JVM RSS, all JVMs (MiB)")
    right.set_title(f"JVM memory over resets (packed: recycled every {result['recycle_after']})")
    right.legend()
    fig.suptitle(f"sciworld packing @ {result['provenance']['commit']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=None, help="open sessions per mode (default 8)")
    parser.add_argument("--per-jvm", type=int, default=8, help="sessions per JVM in packed mode (default 8)")
    parser.add_argument("--steps", type=int, default=None, help="steps per session in the throughput run (60)")
    parser.add_argument("--cycles", type=int, default=None, help="resets per mode (default 400)")
    parser.add_argument("--recycle-after", type=int, default=200, help="resets a JVM serves (default 200)")
    parser.add_argument(
        "--warm-resets", type=int, default=None, help="resets each JVM serves before idle memory is read (default 200)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 4 sessions, 60 resets; temp dir")
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    args = parser.parse_args(argv)
    args.sessions = args.sessions or (4 if args.quick else 8)
    args.steps = args.steps or (20 if args.quick else 60)
    args.cycles = args.cycles or (60 if args.quick else 400)
    if args.warm_resets is None:
        args.warm_resets = 8 if args.quick else 200
    out = args.out or (Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS)
    modes = {"packed": run_mode("packed", args.per_jvm, args), "single": run_mode("single", 1, args)}
    packed, single = modes["packed"], modes["single"]
    result = {
        "env": "sciworld",
        "sessions": args.sessions,
        "recycle_after": args.recycle_after,
        "cpu_count": os.cpu_count(),
        "load_average_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        "modes": modes,
        "ratios_single_over_packed": {
            "idle_pss_per_session": single["idle"]["per_session_pss_mib"] / packed["idle"]["per_session_pss_mib"],
            "idle_rss_per_session": single["idle"]["per_session_rss_mib"] / packed["idle"]["per_session_rss_mib"],
            "steps_per_cpu_s": single["throughput"]["steps_per_cpu_s"] / packed["throughput"]["steps_per_cpu_s"],
            "steps_per_s": single["throughput"]["steps_per_s"] / packed["throughput"]["steps_per_s"],
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    written = write_result(out / "sciworld_packing.json", result, args)
    plot(written, out / "sciworld_packing.png")
    for name, mode in modes.items():
        idle, speed = mode["idle"], mode["throughput"]
        print(
            f"{name:6}: idle {idle['per_session_pss_mib']:.1f} MiB PSS / {idle['per_session_rss_mib']:.1f} MiB RSS "
            f"per session ({idle['jvms']} JVMs); {speed['steps_per_cpu_s']:.0f} steps/CPU-s, "
            f"{speed['steps_per_s']:.0f} steps/s; RSS over {args.cycles} resets max {mode['cycles']['max_rss_mib']:.0f}"
        )
    print(f"wrote {out / 'sciworld_packing.json'} and .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
