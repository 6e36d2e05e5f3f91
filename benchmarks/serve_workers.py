"""``agenthub serve workers=N`` against one worker: steps/s and step latency, from interleaved rounds.

Two servers of one env run side by side for the whole run: ``agenthub serve`` (one process) and
``agenthub serve workers=N``. Each round measures every concurrency on both, in alternating order, so
both see the same machine load; the ratio N workers / 1 worker is taken per round, and its median and
spread (min, max) over rounds are reported with the medians of steps/s and step p50 / p99.

Whole episodes are played as in ``service_throughput.py`` (create with reset, ``STEPS_PER_EPISODE``
steps, delete), by ``lean_http`` (one keep-alive connection per session slot and server port).
Sessions are created through the one public port; each session's steps and delete go to its worker's own
port, as ``EnvClient`` does when it follows the create's ``Location`` (here read from the session id's
worker mark, which names the same worker, since ``lean_http`` returns no headers). The load generator
shares the machine with the servers (``--loadgen-processes``, default 2, each a share of the sessions): its
CPU, the servers' CPU per step and what everything else used are reported beside the rates.

    python benchmarks/serve_workers.py [--env textcraft] [--workers 2] [--rounds 5] [--seconds 3]
    python benchmarks/serve_workers.py --quick        # smoke run on guess; writes to a temp dir

Writes benchmarks/results/serve_workers.json (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psutil

from agenthub import LocalServer, get_plugin_host
from agenthub.service.workers.plan import read_mark

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lean_http import LeanConnection  # a sibling module of this script
from provenance import write_result  # a sibling module of this script

RESULTS = Path(__file__).resolve().parent / "results"
STEPS_PER_EPISODE = 8
TASKS = 200


def task_ids(env: str) -> list[Any]:
    splits = get_plugin_host().env(env).resolved_splits()
    return list(splits[next(iter(splits))].first(TASKS))


class Slot:
    """One session at a time: a connection to the public port for creates, one to each worker's own port."""

    def __init__(self, public: str, workers: list[str]) -> None:
        self.public = _connection(public)
        self.workers = [_connection(url) for url in workers]

    def of(self, session_id: str) -> LeanConnection:
        mark = read_mark(session_id)
        return self.public if mark is None else self.workers[mark[0]]

    def close(self) -> None:
        for conn in (self.public, *self.workers):
            conn.close()


def _connection(url: str) -> LeanConnection:
    parts = urlsplit(url)
    return LeanConnection(parts.hostname or "127.0.0.1", parts.port or 80)


async def play(
    slots: list[Slot], tasks: list[Any], seconds: float, first: int = 0, stride: int = 0
) -> tuple[int, list[float], float]:
    """Whole episodes on every slot for ``seconds``: (steps answered in time, their latencies, wall seconds).

    Slot ``i`` plays episodes ``first + i``, then every ``stride``-th after it (``stride``: all slots of the cell).
    """
    latencies: list[float] = []
    steps = 0
    started = time.perf_counter()
    deadline = started + seconds

    async def run(index: int, slot: Slot) -> None:
        nonlocal steps
        episode = first + index
        while time.perf_counter() < deadline:
            body = {"task_id": tasks[episode % len(tasks)], "seed": episode}
            created = await slot.public.json("POST", "/v1/sessions", body, expect=201)
            conn, path = slot.of(created["session_id"]), f"/v1/sessions/{created['session_id']}"
            info, actions = created["info"], ["look"]
            for turn in range(STEPS_PER_EPISODE):
                actions = info.get("available_actions") or actions
                before = time.perf_counter()
                reply = await conn.json(
                    "POST", path + "/step", {"action": actions[turn % len(actions)], "request_id": f"{episode}-{turn}"}
                )
                now = time.perf_counter()
                if now > deadline:
                    break
                steps += 1
                latencies.append(now - before)
                if reply["terminated"] or reply["truncated"]:
                    break
                info = reply["info"]
            await conn.json("DELETE", path, expect=204)
            episode += stride or len(slots)

    await asyncio.gather(*(run(i, s) for i, s in enumerate(slots)))
    return steps, latencies, time.perf_counter() - started


def load_share(
    public: str, workers: list[str], tasks: list[Any], seconds: float, first: int, count: int, stride: int, start: float
) -> dict[str, Any]:
    """One load generator process's share of a cell: ``count`` slots, measured from wall-clock ``start``."""

    async def share() -> dict[str, Any]:
        slots = [Slot(public, workers) for _ in range(count)]
        try:
            await play(slots, tasks, min(0.3, seconds / 4), first, stride)  # warm: connections, first instances
            await asyncio.sleep(max(0.0, start - time.time()))
            cpu = time.process_time()
            steps, latencies, wall = await play(slots, tasks, seconds, first, stride)
            return {"steps": steps, "latencies": latencies, "wall": wall, "cpu": time.process_time() - cpu}
        finally:
            for slot in slots:
                slot.close()

    with asyncio.Runner(loop_factory=_loop()) as runner:
        return runner.run(share())


def tree_cpu(pid: int) -> float:
    """CPU seconds of a server and its worker processes."""
    root = psutil.Process(pid)
    return sum(sum(p.cpu_times()[:2]) for p in [root, *root.children(recursive=True)])


def machine_busy() -> float:
    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def cell(
    pool: ProcessPoolExecutor,
    processes: int,
    server: LocalServer,
    workers: list[str],
    tasks: list[Any],
    seconds: float,
    concurrency: int,
) -> dict[str, Any]:
    """``concurrency`` sessions at once, split over ``processes`` load generator processes."""
    counts = [concurrency // processes + (i < concurrency % processes) for i in range(processes)]
    firsts = [sum(counts[:i]) for i in range(processes)]
    start = time.time() + 1.5 + 0.02 * concurrency  # after every share has connected and warmed up
    shares = [
        pool.submit(load_share, server.url, workers, tasks, seconds, first, count, concurrency, start)
        for first, count in zip(firsts, counts, strict=True)
        if count
    ]
    time.sleep(max(0.0, start - time.time()))
    server_cpu, machine, began = tree_cpu(server.pid), machine_busy(), time.perf_counter()
    time.sleep(seconds)
    server_cpu, machine = tree_cpu(server.pid) - server_cpu, machine_busy() - machine
    wall = time.perf_counter() - began
    results = [share.result() for share in shares]
    steps = sum(r["steps"] for r in results)
    client_cpu = sum(r["cpu"] for r in results)
    ordered = sorted(x for r in results for x in r["latencies"])
    return {
        "steps_per_s": sum(r["steps"] / r["wall"] for r in results),
        "step_p50_ms": 1000 * ordered[len(ordered) // 2] if ordered else float("nan"),
        "step_p99_ms": 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else float("nan"),
        "server_cpu_cores": server_cpu / wall,
        # What a step costs the server, whatever else the machine runs: the same for 1 and N workers means
        # the workers add no work per step, and N workers can use N cores where the machine has them free.
        "server_cpu_ms_per_step": 1000 * server_cpu / max(steps, 1),
        "loadgen_cpu_cores": client_cpu / wall,
        "others_cpu_cores": max(0.0, machine - server_cpu - client_cpu) / wall,
    }


def _loop() -> Any:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def measure(args: argparse.Namespace) -> dict[str, Any]:
    tasks = task_ids(args.env)
    counts = [1, args.workers]
    overrides = {"max_sessions": 2 * max(args.concurrency)}
    servers = {n: LocalServer(args.env, overrides={**overrides, "workers": n}) for n in counts}
    rows: dict[int, dict[int, list[dict[str, Any]]]] = {n: {c: [] for c in args.concurrency} for n in counts}
    # Forked now, before any server or event loop exists here; kept for the whole run.
    pool = ProcessPoolExecutor(args.loadgen_processes, mp_context=multiprocessing.get_context("fork"))
    pool.submit(int).result()  # with fork, the first task starts every process
    try:
        for server in servers.values():
            server.start()
        worker_urls = {
            n: [w["url"] for w in httpx.get(s.url + "/healthz").json().get("workers", [])] for n, s in servers.items()
        }
        for round_index in range(args.rounds):
            order = counts if round_index % 2 == 0 else counts[::-1]  # neither always goes first
            for concurrency in args.concurrency:
                for n in order:
                    row = cell(
                        pool, args.loadgen_processes, servers[n], worker_urls[n], tasks, args.seconds, concurrency
                    )
                    rows[n][concurrency].append(row)
                    print(
                        f"round {round_index + 1} c={concurrency:<4} workers={n}: {row['steps_per_s']:8.0f} steps/s "
                        f"p50 {row['step_p50_ms']:6.2f} ms p99 {row['step_p99_ms']:7.2f} ms "
                        f"server {row['server_cpu_cores']:.2f} cores ({row['server_cpu_ms_per_step']:.3f} ms/step) "
                        f"loadgen {row['loadgen_cpu_cores']:.2f} "
                        f"others {row['others_cpu_cores']:.2f} cores; load {os.getloadavg()[0]:.2f}",
                        flush=True,
                    )
    finally:
        pool.shutdown()
        for server in servers.values():
            server.stop()
    keys = (
        "steps_per_s",
        "step_p50_ms",
        "step_p99_ms",
        "server_cpu_cores",
        "server_cpu_ms_per_step",
        "loadgen_cpu_cores",
        "others_cpu_cores",
    )
    by_concurrency: dict[str, Any] = {}
    for concurrency in args.concurrency:
        one, many = rows[1][concurrency], rows[args.workers][concurrency]
        ratios = [m["steps_per_s"] / o["steps_per_s"] for o, m in zip(one, many, strict=True)]
        by_concurrency[str(concurrency)] = {
            "ratio_per_round": ratios,
            "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            **{
                f"workers_{n}": {key: statistics.median(r[key] for r in rows[n][concurrency]) for key in keys}
                | {"steps_per_s_per_round": [r["steps_per_s"] for r in rows[n][concurrency]]}
                for n in counts
            },
        }
    return by_concurrency


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default=None, help="env to serve (default textcraft; guess with --quick)")
    parser.add_argument("--workers", type=int, default=2, help="N in 'workers=N against one worker' (default 2)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=None, help="default: 1 64")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5)")
    parser.add_argument(
        "--loadgen-processes",
        type=int,
        default=2,
        help="load generator processes, the sessions split between them (default 2): one process gets one "
        "share of a busy machine's CPU and would measure itself",
    )
    parser.add_argument("--seconds", type=float, default=None, help="measured seconds per cell (default 3)")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: guess, 2 rounds of 0.3 s; writes to a temp dir"
    )
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    args = parser.parse_args(argv)
    if args.workers < 2:
        parser.error(f"--workers must be at least 2, got {args.workers}")
    args.env = args.env or ("guess" if args.quick else "textcraft")
    args.concurrency = args.concurrency or [1, 64]
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.seconds = args.seconds or (0.3 if args.quick else 3.0)
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = [round(x, 2) for x in os.getloadavg()]
    by_concurrency = measure(args)
    report = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1_5_15_before": load_before,
            "load_average_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        },
        "settings": {
            "env": args.env,
            "workers": args.workers,
            "rounds": args.rounds,
            "seconds": args.seconds,
            "concurrency": args.concurrency,
            "steps_per_episode": STEPS_PER_EPISODE,
            "load_generator": "benchmarks/lean_http.py (asyncio + uvloop + httptools), one connection per session "
            f"slot and port, in {args.loadgen_processes} processes",
        },
        "by_concurrency": by_concurrency,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "serve_workers.json"
    write_result(out, report, args)
    for concurrency, row in by_concurrency.items():
        print(
            f"c={concurrency}: workers={args.workers} / 1 = {row['ratio_median']:.2f}x "
            f"(rounds {row['ratio_min']:.2f}-{row['ratio_max']:.2f})"
        )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
