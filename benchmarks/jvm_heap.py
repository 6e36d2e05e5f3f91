"""Where sciworld's memory goes over many resets: the JVM's live heap against its resident size.

``env_plugins.py`` counts a server's child processes in its RSS, and sciworld's
JVMs grow there over create/close cycles while the server process stays flat.
This tells a leak (objects the simulator or py4j keeps alive: the live heap
after a full collection grows) from the JVM's own warm-up (compiled code,
class metadata: resident size grows, live heap flat). One ``SciWorldEnv`` is
reset ``--cycles`` times over the split's first 30 tasks, as a server reuses
an idle instance; every ``--sample-every`` resets the JVM is asked for two
full collections (``System.gc()``) and its heap is read through py4j.

    python benchmarks/jvm_heap.py [--cycles 1500]       # ~2 minutes
    python benchmarks/jvm_heap.py --quick               # 60 resets; temp dir

Writes benchmarks/results/jvm_heap.json (``--out`` elsewhere); the rule is env_plugins.py's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from agenthub import get_plugin_host

sys.path.insert(0, str(Path(__file__).resolve().parent))
from env_plugins import FLAT_RULE, MIB, quarter_growth  # a sibling module of this script
from provenance import write_result  # a sibling module of this script

RESULTS = Path(__file__).resolve().parent / "results"
TASKS = 30


def measure(cycles: int, every: int) -> dict[str, Any]:
    spec = get_plugin_host().env("sciworld")
    splits = spec.resolved_splits()
    ids = splits[next(iter(splits))].first(TASKS)
    env: Any = spec.make()

    def sample(cycle: int) -> dict[str, float]:
        # The instance's JVM now: the plugin recycles a JVM after so many resets, and the instance moves on.
        jvm = env.jvm  # the plugin's ScienceWorldJVM: its py4j gateway and process
        for _ in range(2):  # a second collection catches what the first one's finalizers freed
            jvm.gateway.jvm.java.lang.System.gc()
        runtime = jvm.gateway.jvm.java.lang.Runtime.getRuntime()
        total, free = int(runtime.totalMemory()), int(runtime.freeMemory())
        rss = psutil.Process(jvm.pid).memory_info().rss
        return {"cycle": cycle, "live_heap": total - free, "committed_heap": total, "rss": rss, "jvm_pid": jvm.pid}

    started = time.perf_counter()
    try:
        samples = [sample(0)]
        for i in range(1, cycles + 1):
            env.reset(task_id=ids[i % len(ids)], seed=i % len(ids))
            if i % every == 0 or i == cycles:
                samples.append(sample(i))
    finally:
        env.close()
    wall = time.perf_counter() - started

    def series(key: str) -> list[tuple[int, int]]:
        return [(int(s["cycle"]), int(s[key])) for s in samples]

    return {
        "cycles": cycles,
        "distinct_tasks": len(ids),
        "resets_per_s": cycles / wall,
        "jvm_processes": len({s["jvm_pid"] for s in samples}),  # more than 1: the plugin recycled its JVM
        "samples_mib": {key: [[c, v / MIB] for c, v in series(key)] for key in ("live_heap", "committed_heap", "rss")},
        "live_heap": quarter_growth(series("live_heap")),
        "rss": quarter_growth(series("rss")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=None, help="resets of the one instance (default 1500)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 60 resets; writes to a temp dir")
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    args = parser.parse_args(argv)
    cycles = args.cycles or (60 if args.quick else 1500)
    out = args.out or (Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS)
    result = {
        "env": "sciworld",
        "rule": FLAT_RULE.replace("server RSS", "value"),
        "load_average_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        **measure(cycles, max(1, cycles // 20)),
    }
    out.mkdir(parents=True, exist_ok=True)
    write_result(out / "jvm_heap.json", result, args)
    for key in ("live_heap", "rss"):
        growth = result[key]["growth_kib_per_1000"]
        print(f"sciworld JVM {key}: {growth:+.1f} KiB per 1,000 resets, {result[key]['verdict']}")
    print(f"wrote {out / 'jvm_heap.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
