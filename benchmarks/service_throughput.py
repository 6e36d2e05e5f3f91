"""Steps/s and step latency of env servers under load, against the in-process ceiling.

For each env (default: textcraft, babyai and the built-in guess), whole episodes
(create with reset, ``STEPS_PER_EPISODE`` steps, close) are played:

1. **in-process**: ``spec.make()``, ``reset``, ``step``, ``close`` in a loop on
   one core, no HTTP: the ceiling;
2. **through the service**, at each concurrency (1, 16, 64, 256 sessions at once),
   with 1 and with N server processes (``agenthub serve``, sessions spread
   round-robin across them), over ``--rounds`` interleaved rounds (default 3): both
   server sets run throughout and, within a round, each concurrency is measured on
   one then the other; each figure is the median over rounds, kept beside the rounds'
   own rates and latencies (the spread the summary shows with every verdict).

Each action is picked from ``info['available_actions']`` (cycled), so every env
plays the same way in-process and over HTTP. The load generator is
``lean_http`` (asyncio + httptools, one keep-alive connection per session),
because an httpx client would be the bottleneck; its CPU per request and the
servers' CPU per step (psutil) are reported beside the rates. The load
generator shares the machine with the servers, so absolute figures move with
the machine's load: compare the ratios, which are measured side by side.

    pip install -e '.[bench]'
    python benchmarks/service_throughput.py [ENV ...] [--seconds 2] [--rounds 3] [--concurrency 1 16 64 256]
    python benchmarks/service_throughput.py --quick      # smoke run, seconds; writes to a temp dir

Writes benchmarks/results/service_throughput.json and .png (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

from agenthub import EnvSpec, LocalServer, get_plugin_host

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lean_http import LeanConnection  # a sibling module of this script
from provenance import write_result  # a sibling module of this script

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_ENVS = ["textcraft", "babyai", "guess"]
STEPS_PER_EPISODE = 8
TASKS = 200
"""Episodes cycle over the first TASKS task ids of the env's first split."""


def task_ids(spec: EnvSpec) -> list[Any]:
    splits = spec.resolved_splits()
    return list(splits[next(iter(splits))].first(TASKS))


def choose(info: dict[str, Any], turn: int, previous: list[str]) -> tuple[str, list[str]]:
    actions = info.get("available_actions") or previous
    return actions[turn % len(actions)], actions


def percentiles(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    if not ordered:
        return {"step_p50_ms": float("nan"), "step_p99_ms": float("nan")}
    return {
        "step_p50_ms": 1000 * ordered[len(ordered) // 2],
        "step_p99_ms": 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
    }


# -- in-process: the ceiling ---------------------------------------------------------


def in_process(spec: EnvSpec, seconds: float) -> dict[str, Any]:
    tasks = task_ids(spec)
    latencies: list[float] = []
    steps = episodes = 0
    cpu_started, started = time.process_time(), time.perf_counter()
    while time.perf_counter() - started < seconds:
        env = spec.make()
        _, info = env.reset(task_id=tasks[episodes % len(tasks)], seed=episodes)
        actions: list[str] = ["look"]
        for turn in range(STEPS_PER_EPISODE):
            action, actions = choose(info, turn, actions)
            before = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            latencies.append(time.perf_counter() - before)
            steps += 1
            if terminated or truncated:
                break
        env.close()
        episodes += 1
    wall = time.perf_counter() - started
    return {
        "steps_per_s": steps / wall,
        "episodes": episodes,
        "cpu_ms_per_step": 1000 * (time.process_time() - cpu_started) / max(steps, 1),
        **percentiles(latencies),
    }


# -- through the service ---------------------------------------------------------------


async def play(
    connections: list[LeanConnection], tasks: list[Any], seconds: float, processes: list[psutil.Process]
) -> dict[str, Any]:
    """Whole episodes on every connection for ``seconds``; what completed within them, and the CPU spent.

    Only answers that arrive before the deadline count, so slow envs at high concurrency are not
    measured over the tail of their last episodes; at the deadline each session is closed.
    """
    latencies: list[float] = []
    counts = {"steps": 0, "episodes": 0, "requests": 0}
    server_cpu, client_cpu, machine_cpu = cpu_seconds(processes), time.process_time(), machine_busy_seconds()
    started = time.perf_counter()
    deadline = started + seconds
    spent: dict[str, float] = {}

    async def sample_at_deadline() -> None:
        await asyncio.sleep(seconds)
        spent["server"] = cpu_seconds(processes) - server_cpu
        spent["client"] = time.process_time() - client_cpu
        spent["machine"] = machine_busy_seconds() - machine_cpu
        spent["wall"] = time.perf_counter() - started

    def done(kind: str | None) -> bool:
        """Count a request that just completed (and its step or episode); True once past the deadline."""
        if time.perf_counter() > deadline:
            return True
        counts["requests"] += 1
        if kind is not None:
            counts[kind] += 1
        return False

    async def worker(index: int, conn: LeanConnection) -> None:
        episode = index
        while time.perf_counter() < deadline:
            created = await conn.json(
                "POST", "/v1/sessions", {"task_id": tasks[episode % len(tasks)], "seed": episode}, expect=201
            )
            path = f"/v1/sessions/{created['session_id']}"
            info, actions = created["info"], ["look"]
            late = done(None)
            for turn in range(STEPS_PER_EPISODE):
                if late:
                    break
                action, actions = choose(info, turn, actions)
                before = time.perf_counter()
                reply = await conn.json("POST", path + "/step", {"action": action, "request_id": f"{episode}-{turn}"})
                late = done("steps")
                if not late:
                    latencies.append(time.perf_counter() - before)
                if reply["terminated"] or reply["truncated"]:
                    break
                info = reply["info"]
            await conn.json("DELETE", path, expect=204)
            done("episodes")
            episode += len(connections)

    await asyncio.gather(sample_at_deadline(), *(worker(i, c) for i, c in enumerate(connections)))
    return {**counts, "latencies": latencies, **spent}


def cpu_seconds(processes: list[psutil.Process]) -> float:
    return sum(sum(p.cpu_times()[:2]) for p in processes)


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent busy, every process and the kernel's own work."""
    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


async def through_service(
    servers: list[LocalServer], tasks: list[Any], seconds: float, concurrency: int
) -> dict[str, Any]:
    addresses = [urlsplit(s.url) for s in servers]
    connections = []
    for i in range(concurrency):  # sessions spread round-robin over the servers
        address = addresses[i % len(addresses)]
        connections.append(await LeanConnection(address.hostname or "127.0.0.1", address.port or 80).connect())
    processes = [psutil.Process(s.pid) for s in servers]
    try:
        await play(connections, tasks, min(0.2, seconds / 4), processes)  # warm: first instances, code paths
        measured = await play(connections, tasks, seconds, processes)
    finally:
        for conn in connections:
            conn.close()
    steps = measured["steps"]
    return {
        "concurrency": concurrency,
        "servers": len(servers),
        "steps_per_s": steps / measured["wall"],
        "episodes": measured["episodes"],
        **percentiles(measured["latencies"]),
        "server_cpu_ms_per_step": 1000 * measured["server"] / max(steps, 1),
        "loadgen_cpu_ms_per_request": 1000 * measured["client"] / max(measured["requests"], 1),
        "requests_per_step": measured["requests"] / max(steps, 1),
        # What the rest of the machine used meanwhile (other work, the kernel's network path): the tail moves with it.
        "others_cpu_cores": max(0.0, measured["machine"] - measured["server"] - measured["client"]) / measured["wall"],
    }


@contextlib.contextmanager
def running_servers(env: str, count: int, max_sessions: int) -> Iterator[list[LocalServer]]:
    servers = [LocalServer(env, overrides={"max_sessions": max_sessions}) for _ in range(count)]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


SPREAD_KEYS = ("steps_per_s", "step_p50_ms", "step_p99_ms")
"""Kept per round beside each cell's medians: the spread the page shows next to a verdict."""


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One cell over its rounds: the median of every figure, and each round's rates and latencies."""
    merged: dict[str, Any] = {
        key: statistics.median(row[key] for row in rows) for key, value in rows[0].items() if not isinstance(value, str)
    }
    merged["concurrency"], merged["servers"] = rows[0]["concurrency"], rows[0]["servers"]
    merged["rounds"] = {key: [round(row[key], 3) for row in rows] for key in SPREAD_KEYS}
    return merged


def measure_env(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """The in-process ceiling, then every service cell over interleaved rounds: medians and their spread.

    The 1-server and N-server sets run at once and, within a round, each concurrency is measured on
    one set then the other, so both see the same load; the ratio of N to 1 is taken per round.
    """
    spec = get_plugin_host().env(name)
    tasks = task_ids(spec)
    ceiling = in_process(spec, args.seconds)
    print(f"{name:>10} in-process: {ceiling['steps_per_s']:8.0f} steps/s", flush=True)
    counts = [str(n) for n in sorted({1, args.servers})]
    samples: dict[str, dict[int, list[dict[str, Any]]]] = {n: {c: [] for c in args.concurrency} for n in counts}
    with contextlib.ExitStack() as stack:
        # Enough session slots per server that the round-robin spread never meets a 503.
        sets = {n: stack.enter_context(running_servers(name, int(n), 2 * max(args.concurrency))) for n in counts}
        for round_ in range(args.rounds):
            for concurrency in args.concurrency:
                for count, servers in sets.items():
                    with asyncio.Runner(loop_factory=_loop()) as runner:
                        row = runner.run(through_service(servers, tasks, args.seconds, concurrency))
                    samples[count][concurrency].append(row)
                    print(
                        f"{name:>10} round {round_ + 1} servers={count} c={concurrency:<4} "
                        f"{row['steps_per_s']:8.0f} steps/s p50 {row['step_p50_ms']:6.2f} ms "
                        f"p99 {row['step_p99_ms']:7.2f} ms server {row['server_cpu_ms_per_step']:.3f} ms/step "
                        f"loadgen {row['loadgen_cpu_ms_per_request']:.3f} ms/request",
                        flush=True,
                    )
    service = {n: [median_row(rows) for rows in by_c.values()] for n, by_c in samples.items()}
    for row in (r for rows in service.values() for r in rows):
        row["ratio_to_in_process"] = row["steps_per_s"] / ceiling["steps_per_s"]
    if args.servers != 1:
        many = str(args.servers)
        for row in service[many]:
            ones, manys = samples["1"][row["concurrency"]], samples[many][row["concurrency"]]
            # A round where one server completed no step in the cell (a starved machine) has no ratio.
            ratios = [m["steps_per_s"] / o["steps_per_s"] for o, m in zip(ones, manys, strict=True) if o["steps_per_s"]]
            row["ratio_to_one_server"] = statistics.median(ratios) if ratios else None
    return {"in_process": ceiling, "service": service}


def compare(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """This checkout's server against servers importing agenthub from other checkouts (``--compare``), and/or
    against itself with ``--busy-loops`` processes spinning on the machine during its cells.

    All servers run at once and the cells interleave round by round, so each
    comparison is side by side on the same machine load; medians over rounds.
    """
    tasks = task_ids(get_plugin_host().env(name))
    here = "this checkout"
    paths = {label: {"PYTHONPATH": core} for label, core in args.compare} | {here: {}}
    # Variant label -> (the server it plays against, busy loops running during its cells).
    variants = {label: (label, 0) for label in paths}
    if args.busy_loops:
        variants[f"{here}, {args.busy_loops} busy loop{'s' if args.busy_loops > 1 else ''} beside"] = (
            here,
            args.busy_loops,
        )
    samples: dict[str, dict[int, list[dict[str, Any]]]] = {v: {c: [] for c in args.concurrency} for v in variants}
    overrides = {"max_sessions": 2 * max(args.concurrency)}
    servers = {label: LocalServer(name, overrides=overrides, extra_env=env) for label, env in paths.items()}
    try:
        for server in servers.values():
            server.start()
        for _ in range(args.rounds):
            for concurrency in args.concurrency:
                for label, (server_label, busy) in variants.items():
                    with busy_loops(busy), asyncio.Runner(loop_factory=_loop()) as runner:
                        row = runner.run(through_service([servers[server_label]], tasks, args.seconds, concurrency))
                    samples[label][concurrency].append(row)
    finally:
        for server in servers.values():
            server.stop()
    keys = (
        "steps_per_s",
        "step_p50_ms",
        "step_p99_ms",
        "server_cpu_ms_per_step",
        "loadgen_cpu_ms_per_request",
        "others_cpu_cores",
    )
    result: dict[str, Any] = {"env": name, "rounds": args.rounds, "seconds": args.seconds, "variants": {}}
    for label, by_concurrency in samples.items():
        result["variants"][label] = {
            "pythonpath": dict(args.compare).get(variants[label][0], here),
            "busy_loops": variants[label][1],
            "by_concurrency": {
                str(c): {key: statistics.median(row[key] for row in rows) for key in keys}
                for c, rows in by_concurrency.items()
            },
        }
    for label, variant in result["variants"].items():
        for c, row in variant["by_concurrency"].items():
            now = result["variants"]["this checkout"]["by_concurrency"][c]
            print(
                f"{label:>14} c={c:<4} {row['steps_per_s']:8.0f} steps/s p50 {row['step_p50_ms']:6.2f} ms "
                f"p99 {row['step_p99_ms']:7.2f} ms server {row['server_cpu_ms_per_step']:.3f} ms/step "
                f"others {row['others_cpu_cores']:.2f} cores "
                f"(this checkout: x{now['steps_per_s'] / row['steps_per_s']:.2f} steps/s)",
                flush=True,
            )
    return result


@contextlib.contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """``count`` processes spinning on the CPU: another tenant's work on a shared machine, on demand."""
    spinning = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL) for _ in range(count)
    ]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def _loop() -> Any:
    """uvloop for the load generator too: asyncio's own loop costs it more CPU per request."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    envs = report["envs"]
    fig, axes = plt.subplots(2, len(envs), figsize=(4.5 * len(envs), 7), squeeze=False)
    for column, (name, result) in enumerate(envs.items()):
        rate, latency = axes[0][column], axes[1][column]
        for count, rows in result["service"].items():
            label = f"{count} server{'s' if count != '1' else ''}"
            xs = [r["concurrency"] for r in rows]
            rate.plot(xs, [r["steps_per_s"] for r in rows], marker="o", label=label)
            latency.plot(xs, [r["step_p50_ms"] for r in rows], marker="o", label=f"p50, {label}")
            latency.plot(xs, [r["step_p99_ms"] for r in rows], marker="x", linestyle="--", label=f"p99, {label}")
        rate.axhline(result["in_process"]["steps_per_s"], color="grey", linestyle=":", label="in-process (ceiling)")
        rate.set_title(f"{name}: steps/s (whole episodes)")
        latency.set_title(f"{name}: step latency (ms)")
        for ax in (rate, latency):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("concurrent sessions")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("envs", nargs="*", help=f"envs to measure (default: {' '.join(DEFAULT_ENVS)})")
    parser.add_argument("--seconds", type=float, default=None, help="measured seconds per cell and round (default 2)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=None, help="default: 1 16 64 256")
    parser.add_argument("--servers", type=int, default=2, help="N in '1 versus N server processes' (default 2)")
    parser.add_argument("--quick", action="store_true", help="smoke run: guess only, 0.3 s cells; writes to a temp dir")
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    parser.add_argument(
        "--compare",
        metavar="LABEL=PATHS",
        action="append",
        default=[],
        help="instead of the full run: this checkout's server side by side with one run with PYTHONPATH=PATHS, "
        "which must hold an agenthub package: e.g. the core/ folder of a 'git worktree' of an older commit, "
        "plus its plugin folders (such as plugins/envs/textcraft) when their registration changed since; "
        "repeatable; the result is written to service_compare.json, a result of its own",
    )
    parser.add_argument(
        "--busy-loops",
        type=int,
        default=0,
        help="instead of the full run: this checkout's server alone, side by side with the same server while N "
        "processes spin on the CPU (how the figures move when the machine is shared); combines with --compare",
    )
    parser.add_argument(
        "--rounds", type=int, default=None, help="interleaved rounds (default 3; 5 for --compare and --busy-loops)"
    )
    args = parser.parse_args(argv)
    pairs = []
    for item in args.compare:
        label, sep, paths = item.partition("=")
        folders = [str(Path(p).resolve()) for p in paths.split(os.pathsep) if p]
        if not sep or not label or not any(Path(f, "agenthub").is_dir() for f in folders):
            parser.error(f"--compare {item!r}: give LABEL=PATHS, where one of the PATHS holds the agenthub package")
        pairs.append((label, os.pathsep.join(folders)))
    args.compare = pairs
    if args.servers < 1:
        parser.error(f"--servers must be at least 1, got {args.servers}")
    args.envs = args.envs or (["guess"] if args.quick else DEFAULT_ENVS)
    args.seconds = args.seconds or (0.3 if args.quick else 2.0)
    args.rounds = args.rounds or (5 if args.compare or args.busy_loops else 1 if args.quick else 3)
    args.concurrency = args.concurrency or ([1, 16] if args.quick else [1, 16, 64, 256])
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.compare or args.busy_loops:
        return main_compare(args)
    load_before = [round(x, 2) for x in os.getloadavg()]
    report: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1_5_15_before": load_before,
        },
        "settings": {
            "seconds": args.seconds,
            "rounds": args.rounds,
            "concurrency": args.concurrency,
            "servers": args.servers,
            "steps_per_episode": STEPS_PER_EPISODE,
            "load_generator": "benchmarks/lean_http.py (asyncio + uvloop + httptools, one connection per session)",
        },
        "envs": {name: measure_env(name, args) for name in args.envs},
    }
    report["machine"]["load_average_1_5_15_after"] = [round(x, 2) for x in os.getloadavg()]
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "service_throughput.json"
    write_result(out, report, args)
    plot(report, args.out / "service_throughput.png")
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


def main_compare(args: argparse.Namespace) -> int:
    load_before = [round(x, 2) for x in os.getloadavg()]
    results = {name: compare(name, args) for name in args.envs}
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "service_compare.json"  # a run of its own: nothing from another run is carried into it
    machine = {
        "cpus": os.cpu_count(),
        "load_average_1_5_15_before": load_before,
        "load_average_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
    }
    compared = {f"{name}: {' / '.join(result['variants'])}": result for name, result in results.items()}
    report = {"machine": machine, "compared": compared}
    write_result(out, report, args)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
