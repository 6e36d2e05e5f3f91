"""agenthub's TextCraft server beside AgentGym's own: steps/s, step latency and server CPU, interleaved.

AgentGym's server is its own FastAPI app (``benchmarks/third_party/agentgym_textcraft``, a pinned commit,
verbatim), run by uvicorn as AgentGym's ``textcraft`` command runs it; agenthub's is ``agenthub serve
env=textcraft`` (one process, through ``LocalServer``). Both serve the same game (textcraft 0.0.3's recipes)
on 127.0.0.1, and one client plays both (``lean_http``: one keep-alive connection per session, requests as
prebuilt bytes, so the client costs far less than either server):

- ``episodes``: create a session, 8 steps, close it (a rollout's episode);
- ``reused``: one session per connection for the whole cell, a reset to the next task every 64 steps
  (AgentGym-RL's own client, which keeps its env ids and resets them).

Every step sends ``inventory``, a valid command in both games (each answers with the inventory), so the
servers do the same kind of work per step. Cells: each workload at 1 and 64 sessions, alone and with 1 and
4 processes spinning on the servers' core (``--busy-loops``: a shared machine, as a training node's is).
Where the machine has two cores or more, the servers and the busy loops are pinned to the last core and the
client to the others (``os.sched_setaffinity``), so the client's CPU is not taken from a server's. A round
measures every cell on both servers, in an order that alternates between rounds; the ratio agenthub /
AgentGym (steps/s) is taken per round, and its median and spread over rounds are reported.

    python benchmarks/agentgym_textcraft.py [--rounds 5] [--seconds 3] [--busy-loops 1 4]
    python benchmarks/agentgym_textcraft.py --quick     # smoke run; writes to a temp dir

Writes benchmarks/results/agentgym_textcraft.json (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
import psutil

from agenthub import LocalServer, get_plugin_host

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lean_http import LeanConnection  # sibling modules of this script
from provenance import write_result

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
BASELINE = HERE / "third_party" / "agentgym_textcraft"
BASELINE_COMMIT = "3ef9235d23e68e7c2920c5422ad957dc8ced5c6c"
ACTION = "inventory"
WORKLOADS = {"episodes": 8, "reused": 64}
"""Steps per episode: ``episodes`` opens and closes a session around its steps, ``reused`` resets one."""
TASKS = 100


class Server(Protocol):
    """One side of the comparison: how a session is opened, stepped, reset and closed on it."""

    name: str
    pid: int
    port: int

    async def create(self, conn: LeanConnection, task: int) -> str: ...
    async def step(self, conn: LeanConnection, session: str) -> None: ...
    async def reset(self, conn: LeanConnection, session: str, task: int) -> None: ...
    async def close(self, conn: LeanConnection, session: str) -> None: ...


def _answered(reply: Any, what: str) -> Any:
    """AgentGym answers an error with status 200 and ``{"error": ...}``: a benchmark must not count it."""
    if isinstance(reply, dict) and "error" in reply:
        raise RuntimeError(f"AgentGym's server refused {what}: {reply['error']}")
    return reply


@dataclass
class AgentGymServer:
    """AgentGym's FastAPI app: ``/create`` (a reset to ``data_idx`` = the new id), ``/step``, ``/reset``,
    ``/close``, each with the env id in the JSON body."""

    pid: int
    port: int
    name: str = "agentgym"

    async def create(self, conn: LeanConnection, task: int) -> str:
        return str(_answered(await conn.json("POST", "/create", {}), "a create")["id"])

    async def step(self, conn: LeanConnection, session: str) -> None:
        _answered(await conn.json("POST", "/step", {"id": int(session), "action": ACTION}), "a step")

    async def reset(self, conn: LeanConnection, session: str, task: int) -> None:
        _answered(await conn.json("POST", "/reset", {"id": int(session), "data_idx": task}), "a reset")

    async def close(self, conn: LeanConnection, session: str) -> None:
        await conn.json("POST", "/close", {"id": int(session)})


@dataclass
class AgenthubServer:
    """agenthub's wire protocol v1: a session is created with its task, stepped, reset and deleted by id."""

    pid: int
    port: int
    name: str = "agenthub"

    async def create(self, conn: LeanConnection, task: int) -> str:
        created = await conn.json("POST", "/v1/sessions", {"task_id": task, "seed": task}, expect=201)
        return str(created["session_id"])

    async def step(self, conn: LeanConnection, session: str) -> None:
        await conn.json("POST", f"/v1/sessions/{session}/step", {"action": ACTION})

    async def reset(self, conn: LeanConnection, session: str, task: int) -> None:
        await conn.json("POST", f"/v1/sessions/{session}/reset", {"task_id": task, "seed": task})

    async def close(self, conn: LeanConnection, session: str) -> None:
        await conn.json("DELETE", f"/v1/sessions/{session}", expect=204)


# -- the servers -------------------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def agentgym_server() -> Iterator[AgentGymServer]:
    """AgentGym's app under uvicorn, in a scratch directory where ``agentenv_textcraft/recipes`` is textcraft's
    own recipe data (its wrapper reads them relative to the working directory)."""
    from agenthub_env_textcraft.recipes import data_dir

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="agentgym-textcraft-") as scratch:
        Path(scratch, "agentenv_textcraft").symlink_to(data_dir(), target_is_directory=True)
        # The vendored package comes first on the path: the scratch folder of the same name is only data.
        launch = (
            f"import sys; sys.path.insert(0, {str(BASELINE)!r}); import uvicorn; "
            f"uvicorn.run('agentenv_textcraft:app', host='127.0.0.1', port={port}, log_level='warning')"
        )
        # Its /step prints a line per request: to /dev/null, the cheapest place a log can go.
        process = subprocess.Popen(
            [sys.executable, "-c", launch], cwd=scratch, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            wait_until_up(f"http://127.0.0.1:{port}/", process)
            yield AgentGymServer(process.pid, port)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def wait_until_up(url: str, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise RuntimeError(f"AgentGym's server exited with {process.returncode} before answering: {error[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"AgentGym's server did not answer {url} within {timeout:.0f} s")


def pin(pid: int, cores: set[int]) -> None:
    """Pin every thread of ``pid`` (a thread pool's included) and of its children to ``cores``."""
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        for thread in process.threads():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(thread.id, cores)


def spin(cores: set[int]) -> None:
    if cores:
        os.sched_setaffinity(0, cores)
    while True:
        pass


@contextlib.contextmanager
def busy_loops(count: int, cores: set[int]) -> Iterator[None]:
    """``count`` processes spinning on ``cores`` while the block runs."""
    context = multiprocessing.get_context("spawn")
    loops = [context.Process(target=spin, args=(cores,), daemon=True) for _ in range(count)]
    for loop in loops:
        loop.start()
    try:
        time.sleep(0.3 if loops else 0)  # running before the cell starts
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.join()


# -- one cell ------------------------------------------------------------------------------------


async def play(server: Server, workload: str, concurrency: int, seconds: float, first: int) -> dict[str, Any]:
    """``concurrency`` sessions playing ``workload`` for ``seconds``: steps answered in time and their latencies."""
    steps_per_episode = WORKLOADS[workload]
    connections = [await LeanConnection("127.0.0.1", server.port).connect() for _ in range(concurrency)]
    latencies: list[float] = []
    counts = {"steps": 0, "episodes": 0}
    cpu_before = psutil.Process(server.pid).cpu_times()
    started = time.perf_counter()
    deadline = started + seconds

    async def run(index: int, conn: LeanConnection) -> None:
        episode = first + index
        session = await server.create(conn, episode % TASKS) if workload == "reused" else ""
        while time.perf_counter() < deadline:
            if workload == "reused":
                await server.reset(conn, session, episode % TASKS)
            else:
                session = await server.create(conn, episode % TASKS)
            for _ in range(steps_per_episode):
                before = time.perf_counter()
                await server.step(conn, session)
                now = time.perf_counter()
                if now > deadline:
                    break
                counts["steps"] += 1
                latencies.append(now - before)
            if workload == "episodes":
                await server.close(conn, session)
            counts["episodes"] += 1
            episode += concurrency
        if workload == "reused":
            await server.close(conn, session)

    try:
        await asyncio.gather(*(run(i, c) for i, c in enumerate(connections)))
    finally:
        for conn in connections:
            conn.close()
    wall = time.perf_counter() - started
    cpu_after = psutil.Process(server.pid).cpu_times()
    server_cpu = (cpu_after.user + cpu_after.system) - (cpu_before.user + cpu_before.system)
    latencies.sort()
    return {
        "steps_per_s": counts["steps"] / wall,
        "step_p50_ms": 1000 * latencies[len(latencies) // 2] if latencies else None,
        "step_p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else None,
        "server_cpu_ms_per_step": 1000 * server_cpu / max(counts["steps"], 1),
        "server_cpu_cores": server_cpu / wall,
    }


def _loop() -> Any:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def summarize(rounds: list[dict[str, float | None]]) -> dict[str, Any]:
    """The median of each figure over rounds, with steps/s per round."""

    def median(key: str) -> float | None:
        values = [r[key] for r in rounds if r[key] is not None]
        return statistics.median(values) if values else None  # type: ignore[type-var]

    keys = ("steps_per_s", "step_p50_ms", "step_p99_ms", "server_cpu_ms_per_step", "server_cpu_cores")
    return {**{key: median(key) for key in keys}, "steps_per_s_per_round": [r["steps_per_s"] for r in rounds]}


# -- the run ---------------------------------------------------------------------------------------


def cores_for() -> tuple[set[int], set[int]]:
    """(the servers' and busy loops' cores, the client's): the last core, the others; none pinned on one core."""
    available = sorted(os.sched_getaffinity(0))
    if len(available) < 2:
        return set(), set()
    return {available[-1]}, set(available[:-1])


def measure(args: argparse.Namespace) -> dict[str, Any]:
    server_cores, client_cores = cores_for()
    if client_cores:
        os.sched_setaffinity(0, client_cores)
    cells = [(w, c, b) for w in args.workloads for c in args.concurrency for b in sorted({0, *args.busy_loops})]
    measured: dict[tuple[str, int, int], dict[str, list[dict[str, Any]]]] = {
        cell: {"agenthub": [], "agentgym": []} for cell in cells
    }
    with agentgym_server() as theirs, LocalServer("textcraft") as ours_server:
        ours = AgenthubServer(ours_server.pid, urlsplit(ours_server.url).port or 80)
        servers: list[Server] = [ours, theirs]
        with asyncio.Runner(loop_factory=_loop()) as runner:
            for server in servers:  # warm: imports done, a thread pool started, then pinned
                runner.run(play(server, "episodes", 4, 0.5, 0))
                if server_cores:
                    pin(server.pid, server_cores)
            for round_index in range(args.rounds):
                order = servers if round_index % 2 == 0 else servers[::-1]
                for workload, concurrency, busy in cells:
                    with busy_loops(busy, server_cores):
                        for server in order:
                            first = 1000 * round_index
                            figures = runner.run(play(server, workload, concurrency, args.seconds, first))
                            measured[(workload, concurrency, busy)][server.name].append(figures)
                print(f"round {round_index + 1}/{args.rounds} done", flush=True)
    results = {}
    for (workload, concurrency, busy), by_server in measured.items():
        ratios = [
            a["steps_per_s"] / g["steps_per_s"]
            for a, g in zip(by_server["agenthub"], by_server["agentgym"], strict=True)
            if g["steps_per_s"]
        ]
        key = f"{workload} c={concurrency}" + (f" busy={busy}" if busy else "")
        results[key] = {
            "workload": workload,
            "steps_per_episode": WORKLOADS[workload],
            "concurrency": concurrency,
            "busy_loops": busy,
            "ratio_per_round": ratios,
            "ratio_median": statistics.median(ratios) if ratios else None,
            "ratio_min": min(ratios, default=None),
            "ratio_max": max(ratios, default=None),
            "agenthub": summarize(by_server["agenthub"]),
            "agentgym": summarize(by_server["agentgym"]),
        }
    return {"server_cores": sorted(server_cores), "client_cores": sorted(client_cores), "cells": results}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5; quick 1)")
    parser.add_argument("--seconds", type=float, default=None, help="seconds a cell (default 3; quick 0.5)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=None, help="sessions at once (default 1 64)")
    parser.add_argument("--workloads", nargs="+", choices=sorted(WORKLOADS), default=sorted(WORKLOADS))
    parser.add_argument(
        "--busy-loops",
        type=int,
        nargs="+",
        default=None,
        help="spinning processes on the servers' core, a cell each beside the quiet one (default 1 4; quick 1)",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 short round at 1 and 4 sessions; temp dir")
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.seconds = args.seconds or (0.5 if args.quick else 3.0)
    args.concurrency = args.concurrency or ([1, 4] if args.quick else [1, 64])
    args.busy_loops = args.busy_loops or ([1] if args.quick else [1, 4])
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS
    if args.rounds < 1 or args.seconds <= 0 or min(args.concurrency) < 1 or min(args.busy_loops) < 0:
        parser.error("--rounds, --seconds and --concurrency must be positive, --busy-loops at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    get_plugin_host().env("textcraft")  # not installed: a clear error now, not after the baseline starts
    load_before = os.getloadavg()
    report: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1_5_15_before": load_before,
        },
        "baseline": {
            "repository": "https://github.com/WooooDyy/AgentGym",
            "commit": BASELINE_COMMIT,
            "path": "agentenv-textcraft/agentenv_textcraft (server.py under uvicorn)",
            "vendored_at": str(BASELINE.relative_to(HERE.parent)),
        },
        "action": ACTION,
        **measure(args),
    }
    report["machine"]["load_average_1_5_15_after"] = os.getloadavg()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "agentgym_textcraft.json"
    write_result(path, report, args)
    for key, cell in report["cells"].items():
        ours, theirs = cell["agenthub"], cell["agentgym"]
        print(
            f"{key:24} agenthub/AgentGym {cell['ratio_median']:.2f}x "
            f"({cell['ratio_min']:.2f}-{cell['ratio_max']:.2f}); "
            f"steps/s {ours['steps_per_s']:.0f} vs {theirs['steps_per_s']:.0f}; server CPU a step "
            f"{ours['server_cpu_ms_per_step']:.3f} vs {theirs['server_cpu_ms_per_step']:.3f} ms"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
