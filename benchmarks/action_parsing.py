"""Parse time of every seed env against the length of a hostile action: linear, or not.

An agent's text is hostile input (issue 27): a regex with overlapping quantifiers that answers a
50-character command at once can take quadratic time on a long reply, and a server whose env runs
on the event loop stalls every other request meanwhile. For each env, each shape of
``agenthub.testing.hostile_actions`` (long bracket, tag, keyword, whitespace and digit runs,
Unicode) and each size from 1 KiB to 1 MiB, an env instance is reset to its first task and one
``step`` with that action is timed, in-process: the env's own parser and its answer, with
nothing of the server (whose ``max_action_chars`` would refuse most of these sizes first). The
fastest of ``--repeats`` rounds over the sizes counts.

The exponent ``k`` of ``time ~ size^k`` is the least-squares slope of log time on log size over the
sizes from ``--fit-from`` (16 KiB) up, where the input, not the env's fixed cost per step, sets the
time: about 1 for a linear parser (below 1 while a fixed cost still shows), 2 for a quadratic one.
``guess@before`` is the built-in guess env's pattern before issue 27, timed on the same inputs, for
comparison. A size whose time, extrapolated quadratically from the size before, would pass
``--cap-s`` is not run (recorded as skipped), so a quadratic parser cannot stall the benchmark.

    python benchmarks/action_parsing.py            # every seed env (~5 minutes here: sciworld's JVM, textworld)
    python benchmarks/action_parsing.py --quick    # the pure-Python envs, 3 rounds; to a temp dir
    python benchmarks/action_parsing.py guess maze # some envs

Writes benchmarks/results/action_parsing.json and action_parsing.png (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from provenance import write_result  # a sibling module of this script

from agenthub import get_plugin_host
from agenthub.testing.hostile_text import hostile_actions

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = [1024 * 4**i for i in range(6)]  # 1 KiB .. 1 MiB
LIGHT_ENVS = ["guess", "trail", "tictactoe", "maze", "wordle", "textcraft", "babyai"]
HEAVY_ENVS = ["textworld", "sciworld", "search"]
"""A game compiler, a JVM, a search index: seconds to start, slower resets."""
BEFORE = "guess@before"
CPU_RESOLUTION_S = 1e-6
"""A step that used less CPU than the clock shows counts as this much (log of zero)."""
LINEAR_BELOW = 1.5
"""An exponent under this reads as linear: a quadratic parser measures near 2; on a loaded machine a linear
one measures up to about 1.3 (strings past the CPU's caches, load bursts on the larger sizes)."""

_GUESS_BEFORE = re.compile(r"^\s*(?:guess\s*)?(-?\d+)\s*[.!]?\s*$", re.IGNORECASE)
"""``agenthub.builtin.guess``'s pattern before issue 27 (two whitespace runs that meet: quadratic)."""


@dataclass
class Stepper:
    """One env instance, reset before every timed step: a step that ends an episode must not end the next."""

    reset: Callable[[], None]
    step: Callable[[str], Any]
    close: Callable[[], None]
    max_action_chars: int | None


def stepper(name: str) -> Stepper:
    if name == BEFORE:
        return Stepper(lambda: None, _GUESS_BEFORE.match, lambda: None, None)
    spec = get_plugin_host().env(name)
    env: Any = spec.make()
    split = next(iter(spec.resolved_splits().values()))
    [task_id] = split.first(1)
    seat = 0 if spec.players > 1 else None

    def reset() -> None:
        env.reset(task_id=task_id, seed=0)

    def step(action: str) -> Any:
        return env.step(action) if seat is None else env.step(seat, action)

    return Stepper(reset, step, env.close, spec.max_action_chars)


def children_cpu_seconds(me: psutil.Process) -> float:
    """CPU time of this process's children (a JVM, a game interpreter), user and system."""
    total = 0.0
    for child in me.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            times = child.cpu_times()
            total += times.user + times.system
    return total


def timed(run: Stepper, action: str, me: psutil.Process) -> tuple[float, float]:
    """Wall and CPU seconds of one step (this process's CPU and its children's), the env reset first (untimed)."""
    run.reset()
    gc.collect()
    gc.disable()  # a collection inside the timed call is noise, not parse time
    try:
        children = children_cpu_seconds(me)  # read outside the timed span: scanning /proc costs milliseconds
        cpu, started = time.process_time(), time.perf_counter()
        run.step(action)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        return wall, cpu + children_cpu_seconds(me) - children
    finally:
        gc.enable()


def shape_points(run: Stepper, actions: dict[int, str], args: argparse.Namespace) -> list[dict[str, Any]]:
    """The fastest of ``--repeats`` rounds over every size: rounds, not tries in a row, so that a burst of
    load on a shared machine lands on one size's try rather than on all of one size's tries."""
    me = psutil.Process()
    points: list[dict[str, Any]] = []
    for size in args.sizes:  # the first round; it also decides which sizes are too slow to run
        last = next((p for p in reversed(points) if p.get("seconds")), None)
        if last is not None and last["seconds"] * (size / last["chars"]) ** 2 > args.cap_s:
            points.append({"chars": size, "seconds": None, "skipped": f"over --cap-s={args.cap_s:g} if quadratic"})
        else:
            wall, cpu = timed(run, actions[size], me)
            points.append({"chars": size, "seconds": wall, "cpu_seconds": cpu})
    for _ in range(args.repeats - 1):
        for point in points:
            if point["seconds"] is not None:
                wall, cpu = timed(run, actions[point["chars"]], me)
                point["seconds"], point["cpu_seconds"] = min(point["seconds"], wall), min(point["cpu_seconds"], cpu)
    return points


def exponent(points: list[dict[str, Any]], fit_from: int) -> float | None:
    """The least-squares slope of log CPU seconds on log chars over the sizes from ``fit_from`` up (the
    three largest measured, where the cap stopped a slow parser before that).

    CPU time, not wall time: on a shared machine a step of tens of milliseconds is preempted and one of
    a millisecond is not, which bends wall time upwards at the larger sizes and the slope with it.
    """
    measured = [(p["chars"], max(p["cpu_seconds"], CPU_RESOLUTION_S)) for p in points if p.get("seconds") is not None]
    fitted = [(c, t) for c, t in measured if c >= fit_from]
    if len(fitted) < 3:
        fitted = measured[-3:]
    if len(fitted) < 2:
        return None
    slope, _ = statistics.linear_regression([math.log(c) for c, _ in fitted], [math.log(s) for _, s in fitted])
    return round(slope, 3)


def measure(name: str, args: argparse.Namespace, actions: dict[int, dict[str, str]]) -> dict[str, Any]:
    started = time.perf_counter()
    run = stepper(name)
    try:
        run.reset()  # the first reset loads data and warms caches; it is not timed
        shapes = {
            shape: shape_points(run, {size: actions[size][shape] for size in args.sizes}, args)
            for shape in actions[args.sizes[0]]
        }
    finally:
        run.close()
    exponents = {shape: exponent(points, args.fit_from) for shape, points in shapes.items()}
    known = {shape: e for shape, e in exponents.items() if e is not None}
    worst = max(known, key=lambda s: known[s]) if known else None
    at_top = {s: p[-1] for s, p in shapes.items()}
    measured_top = {s: p for s, p in at_top.items() if p["seconds"] is not None}
    result = {
        "max_action_chars": run.max_action_chars,
        "shapes": shapes,
        "exponents": exponents,
        "worst_shape": worst,
        "max_exponent": known[worst] if worst else None,
        "linear": worst is not None and known[worst] < LINEAR_BELOW and len(measured_top) == len(at_top),
        "slowest_at_largest_s": max(p["seconds"] for p in measured_top.values()) if measured_top else None,
        "slowest_cpu_at_largest_s": max(p["cpu_seconds"] for p in measured_top.values()) if measured_top else None,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    shown = f"{result['max_exponent']:.2f}" if result["max_exponent"] is not None else "-"
    top, cpu = result["slowest_at_largest_s"], result["slowest_cpu_at_largest_s"]
    print(f"{name:14} exponent {shown} (worst: {worst}); slowest at {args.sizes[-1]:,} chars: "
          f"{'-' if top is None else f'{1000 * top:.1f} ms ({1000 * cpu:.1f} ms CPU)'}; {result['wall_s']} s",
          flush=True)  # fmt: skip
    return result


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    envs = report["envs"]
    columns = 4
    rows = (len(envs) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(4 * columns, 3.4 * rows), squeeze=False)
    for ax, (name, result) in zip(axes.flat, envs.items(), strict=False):
        if "error" in result:
            ax.set_title(f"{name}: not measured", fontsize=9)
            continue
        for shape, points in result["shapes"].items():
            measured = [(p["chars"], max(p["cpu_seconds"], CPU_RESOLUTION_S)) for p in points if p.get("seconds")]
            if measured:
                ax.loglog(*zip(*measured, strict=True), marker=".", label=f"{shape} ({result['exponents'][shape]})")
        top = max(p["cpu_seconds"] for pts in result["shapes"].values() for p in pts if p.get("seconds"))
        sizes = report["sizes"]
        ax.loglog(sizes, [top * s / sizes[-1] for s in sizes], color="grey", linestyle=":", label="slope 1")
        ax.set_title(f"{name}: exponent {result['max_exponent']}", fontsize=9)
        ax.set_xlabel("action length (characters)", fontsize=8)
        ax.set_ylabel("step CPU time (s)", fontsize=8)
        ax.legend(fontsize=6, loc="lower right")  # the lines rise to the upper right; a quadratic one far left
    for ax in list(axes.flat)[len(envs) :]:
        ax.axis("off")
    commit = (report.get("provenance") or {}).get("commit") or "unknown"
    fig.suptitle(f"parse time of a hostile action against its length @ {commit[:10]}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def section_lines(report: dict[str, Any] | None, results: Path, docs: Path) -> list[str]:
    """This benchmark's section of docs/benchmarks.md (benchmarks/summarize.py calls it)."""
    lines = ["## 10. Agent text: parse time against action length", ""]
    if report is None:
        return [*lines, "Not measured: action_parsing.json is missing (`python benchmarks/action_parsing.py`).", ""]
    settings, machine = report["provenance"]["settings"], report["machine"]
    rows = []
    for name, result in report["envs"].items():
        if "error" in result:
            rows.append([name, "-", "-", "-", "-", f"not measured: {result['error']}"])
            continue
        top, cpu = result["slowest_at_largest_s"], result["slowest_cpu_at_largest_s"]
        skipped = [shape for shape, points in result["shapes"].items() if points[-1]["seconds"] is None]
        limit = result["max_action_chars"]
        rows.append(
            [
                name,
                "-" if limit is None else f"{limit:,}",
                "-" if result["max_exponent"] is None else f"{result['max_exponent']:.2f} ({result['worst_shape']})",
                ", ".join(f"{s} {e}" for s, e in result["exponents"].items() if e is not None),
                f"{', '.join(skipped)}: not run (over the cap)" if skipped else f"{1000 * top:.1f} / {1000 * cpu:.1f}",
                "linear" if result["linear"] else "**not linear**",
            ]
        )
    header = ["env", "max_action_chars", "exponent (worst shape)", "exponent by shape",
              f"slowest step at {report['sizes'][-1]:,} chars, ms: wall / CPU", "verdict"]  # fmt: skip
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    png = results / "action_parsing.png"
    image = [f"![parse time against action length]({Path(os.path.relpath(png, docs.parent)).as_posix()})", ""]
    quick = ", --quick" if settings.get("quick") else ""
    return [
        *lines,
        f"`benchmarks/action_parsing.py`{quick}: one `step` of a freshly reset env in-process (its parser and its "
        f"answer, no server) per hostile action of {report['sizes'][0]:,} to {report['sizes'][-1]:,} characters, "
        f"in {len(report['shapes'])} shapes ({', '.join(report['shapes'])}; `agenthub.testing.hostile_actions`), "
        f"fastest of {settings['repeats']} rounds. The exponent is the slope of log CPU time (this process and "
        f"its children: a JVM, a game interpreter) on log length from {settings['fit_from']:,} characters up: 1 "
        f"for a linear parser (less while the env's fixed cost per step still shows), 2 for a quadratic one; under "
        f"{LINEAR_BELOW} reads as linear. `{BEFORE}` is the guess env's pattern before issue 27, on the same "
        f"inputs; a size its time would pass {settings['cap_s']:g} s at, extrapolated quadratically, is not run "
        "(its exponent is fitted on the sizes that ran). The server answers an action over the env's "
        f"`max_action_chars` as an invalid action before the env sees it. {machine['cpus']} cores, load average "
        f"{' / '.join(map(str, machine['load_average_before']))} before, "
        f"{' / '.join(map(str, machine['load_average_after']))} after.",
        "",
        *table,
        "",
        *(image if png.exists() else []),
    ]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("envs", nargs="*", help=f"envs to measure (default: all seed envs and {BEFORE})")
    parser.add_argument("--quick", action="store_true", help="the pure-Python envs, 3 rounds; to a temp dir")
    parser.add_argument("--repeats", type=int, default=None, help="rounds over the sizes, fastest counts (5)")
    parser.add_argument("--fit-from", type=int, default=16384, help="fit the exponent from this size up")
    parser.add_argument(
        "--cap-s", type=float, default=None, help="skip a size that would take longer if quadratic (20; quick: 5)"
    )
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    args = parser.parse_args(argv)
    args.envs = args.envs or [*LIGHT_ENVS, *([] if args.quick else HEAVY_ENVS), BEFORE]
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.cap_s = args.cap_s or (5.0 if args.quick else 20.0)
    args.sizes = SIZES
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.simplefilter("ignore")  # envs' third-party packages warn on import; the timings are the output
    actions = {size: hostile_actions(size) for size in args.sizes}
    load_before = [round(x, 2) for x in os.getloadavg()]
    envs: dict[str, Any] = {}
    for name in args.envs:
        try:
            envs[name] = measure(name, args, actions)
        except Exception as exc:  # an env that is not installed or cannot start: said so, the others measured
            envs[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            print(f"{name:14} not measured: {envs[name]['error']}", flush=True)
    report = {
        "sizes": args.sizes,
        "shapes": list(actions[args.sizes[0]]),
        "envs": envs,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_before": load_before,
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    written = write_result(args.out / "action_parsing.json", report, args)
    plot(written, args.out / "action_parsing.png")
    print(f"wrote {args.out / 'action_parsing.json'} and action_parsing.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
