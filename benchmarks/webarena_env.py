"""The ``webarena`` env through the service: latency, memory per session, scaling, and leak-freedom.

Starts ``agenthub serve env=webarena`` (a child process; the built-in shop and its task set, Debian's
Chromium) and measures, over HTTP as a trainer sees it:

- reset latency (``POST /v1/sessions``: a new browser context, the start page, its accessibility tree);
- step latency: ``scroll [down]`` (no navigation) and a ``click`` on a link (a page load);
- memory per open session: the PSS (shared pages split between their processes) of the server's whole
  process tree (server, Playwright driver, Chromium and its renderers, the shop), N sessions open, per session,
  read once the server has served ``--warm-resets`` resets (200 by default: a browser in its steady state,
  not a fresh one);
- sessions per server at which step latency doubles: k sessions stepping at once, k = 1, 2, 4, ...;
- memory over create/close cycles (1,000 by default): browser contexts must not leak. Each sample waits
  for the closed sessions' renderers to exit, and splits the tree into its parts (env server, Playwright
  driver, Chromium's browser process, its helpers, renderers, the shop), so a part that grows is named.

    python benchmarks/webarena_env.py            # the full run (several minutes on an idle machine)
    python benchmarks/webarena_env.py --quick    # small counts: shows it works, measures little; temp dir

The full run refuses to start when the load average is over the core count (the numbers would measure
the neighbours); ``--force`` runs it anyway and records the load (at the start, the end and with every
create/close sample). Writes benchmarks/results/webarena_env.json (through ``provenance.write_result``:
the commit, the settings and the code measured) and a plot, benchmarks/results/webarena_env.png
(``--out`` elsewhere). With ``--write-footprints`` (a full run), the footprint that sizes a webarena pod
goes to the plugin's ``footprints.json`` (``footprint_from_memory``: a line at or above every point from 8
sessions on, within the request's slack below that).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from agenthub import LocalServer, get_plugin_host
from agenthub.specs import FOOTPRINT_SLACK_MIB

sys.path.insert(0, str(Path(__file__).resolve().parent))
from footprint_files import round_up, write_footprint  # sibling modules of this script
from provenance import write_result

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TASK_ID_SPLIT = "test"


def tree_pids(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found.update(children)
        frontier.extend(children)
    return found


def process_pss_mb(pid: int) -> float:
    """PSS of one process, MB (shared pages split between the processes that map them); 0 once it exited."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0.0  # exited while the tree was being read
    return next((int(line.split()[1]) / 1024 for line in text.splitlines() if line.startswith("Pss:")), 0.0)


def tree_rss_mb(pid: int) -> float:
    """PSS of the process tree: each shared page (Chromium's many processes share most) counted once in all."""
    return round(sum(process_pss_mb(p) for p in tree_pids(pid)), 1)


def component(pid: int, server_pid: int) -> str | None:
    """Which part of the env server a process is (None: exited while being looked at)."""
    if pid == server_pid:
        return "server"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    if not cmd:
        return None  # a zombie: exited, not yet reaped
    if "chrom" in cmd:
        kind = re.search(r"--type=([\w-]+)", cmd)
        if kind is None:
            return "browser"
        return "renderers" if kind.group(1) == "renderer" else "browser helpers"
    if "playwright" in cmd or "node" in cmd.split(" ", 1)[0]:
        return "driver"
    if "shop" in cmd:
        return "shop"
    return "other"


def tree_components(pid: int) -> dict[str, dict[str, float]]:
    """PSS and process count of each part of the server's tree."""
    parts: dict[str, dict[str, float]] = {}
    for p in tree_pids(pid):
        name = component(p, pid)
        if name is None:
            continue
        part = parts.setdefault(name, {"processes": 0, "pss_mb": 0.0})
        part["processes"] += 1
        part["pss_mb"] = round(part["pss_mb"] + process_pss_mb(p), 1)
    return dict(sorted(parts.items()))


def renderers_gone(pid: int, timeout_s: float = 15.0) -> float:
    """Wait for the closed sessions' renderer processes to exit (they linger a moment): the seconds waited."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout_s and "renderers" in tree_components(pid):
        time.sleep(0.2)
    return round(time.perf_counter() - t0, 2)


def slope_per_1000(points: list[tuple[float, float]]) -> float | None:
    """Least-squares growth of y per 1,000 x (None with fewer than 3 points)."""
    if len(points) < 3:
        return None
    fit = statistics.linear_regression([x for x, _ in points], [y for _, y in points])
    return round(fit.slope * 1000, 1)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"n": len(ms), "mean_ms": round(statistics.mean(ms), 1), "p50_ms": round(pct(ms, 0.5), 1),
            "p90_ms": round(pct(ms, 0.9), 1)}  # fmt: skip


def checked(answer: httpx.Response) -> dict[str, Any]:
    """The answer's JSON; an error status stops the run with the server's own error body."""
    if answer.is_error:
        raise RuntimeError(f"{answer.request.method} {answer.request.url.path}: {answer.status_code} {answer.text}")
    return dict(answer.json())


class Bench:
    def __init__(self, http: httpx.Client, task_ids: list[int]) -> None:
        self.http = http
        self.task_ids = task_ids

    def create(self, i: int = 0) -> dict[str, Any]:
        answer = self.http.post("/v1/sessions", json={"task_id": self.task_ids[i % len(self.task_ids)]})
        return checked(answer)

    def step(self, sid: str, action: str) -> dict[str, Any]:
        return checked(self.http.post(f"/v1/sessions/{sid}/step", json={"action": action}))

    def close(self, sid: str) -> None:
        self.http.delete(f"/v1/sessions/{sid}")


def plot(result: dict[str, Any], path: Path) -> None:
    """Three panels: step latency by concurrent sessions, memory by open sessions, memory over cycles."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (scale, memory, cycles) = plt.subplots(1, 3, figsize=(14, 4.2))
    rows = result["scaling"]["by_concurrent_sessions"]
    xs = [r["sessions"] for r in rows]
    scale.plot(xs, [r["mean_ms"] for r in rows], marker="o", label="mean")
    scale.plot(xs, [r["p90_ms"] for r in rows], marker="s", linestyle="--", label="p90")
    scale.axhline(2 * rows[0]["mean_ms"], color="grey", linestyle=":", label="2x mean at 1 session")
    scale.set_xscale("log", base=2)
    scale.set_xlabel("sessions stepping at once")
    scale.set_ylabel("step latency, ms (scroll)")
    scale.set_title("step latency vs concurrency")
    scale.legend()
    opened = result["memory_per_session"]["by_open_sessions"]
    idle = result["memory_per_session"]["idle_tree_mb"]
    memory.plot([0] + [r["open_sessions"] for r in opened], [idle] + [r["tree_mb"] for r in opened], marker="o")
    memory.set_xlabel("open sessions")
    memory.set_ylabel("PSS of the server's process tree, MB")
    memory.set_title("memory vs open sessions")
    samples = result["create_close_cycles"]["samples"]
    xs = [s["cycle"] for s in samples]
    cycles.plot(xs, [s["tree_mb"] for s in samples], marker="o", label="whole tree")
    for name in sorted({name for s in samples for name in s.get("components_mb", {})}):
        cycles.plot(xs, [s.get("components_mb", {}).get(name, 0.0) for s in samples], linewidth=1, label=name)
    cycles.set_ylim(bottom=0)
    cycles.legend(fontsize=7, ncol=2)
    cycles.set_xlabel("create/close cycles")
    cycles.set_ylabel("PSS of the server's process tree, MB")
    cycles.set_title("memory over create/close cycles")
    load = result["machine"]
    fig.suptitle(f"webarena env through agenthub serve, {load['cores']} cores, "
                 f"load {load['load_avg_start']} to {load.get('load_avg_end')}", fontsize=10)  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def link_id(observation: str) -> str:
    match = re.search(r"\[(\d+)\] link '(?:Clothing|Shoes|Electronics|Books)'", observation)
    assert match, "no category link on the start page"
    return match.group(1)


SIZED_FROM_SESSIONS = 8
"""From this many open sessions on, the footprint alone covers the measured tree; below it, with the slack."""


def footprint_from_memory(memory: dict[str, Any]) -> tuple[float, float]:
    """Base and per-session MiB from the measured points: the slope through the two largest counts (rounded up
    to 0.5 MiB), and the lowest base (a multiple of 0.5, at least the idle tree) that covers every point from
    SIZED_FROM_SESSIONS on by itself and every other point with FOOTPRINT_SLACK_MIB."""
    points = sorted((p["open_sessions"], p["tree_mb"]) for p in memory["by_open_sessions"])
    (n_low, low), (n_high, high) = points[-2], points[-1]
    per = max(round_up((high - low) / (n_high - n_low), 0.5), 0.5)
    needed = [memory["idle_tree_mb"]]
    needed += [tree - n * per - (0 if n >= SIZED_FROM_SESSIONS else FOOTPRINT_SLACK_MIB) for n, tree in points]
    return round_up(max(needed), 0.5), per


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--force", action="store_true", help="run the full benchmark even on a loaded machine")
    parser.add_argument("--cycles", type=int, default=None, help="create/close cycles (default 1000, quick 50)")
    parser.add_argument(
        "--warm-resets", type=int, default=None, help="resets before memory per session is read (default 200, quick 10)"
    )
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS}; quick: temp)")
    parser.add_argument(
        "--write-footprints",
        action="store_true",
        help="write the footprint it measured to the plugin's footprints.json",
    )
    args = parser.parse_args(argv)
    if args.write_footprints and args.quick:
        parser.error("--write-footprints declares a full run's figures: leave out --quick")
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    if not args.quick and not args.force and load > cores:
        print(
            f"load average {load:.1f} on {cores} cores: the full run would measure the neighbours; run it on an "
            "idle machine, or pass --force (the load is recorded) or --quick",
            file=sys.stderr,
        )
        return 2
    n_lat = 5 if args.quick else 30
    open_counts = [1, 4] if args.quick else [1, 4, 8, 16]
    levels = [1, 2, 4] if args.quick else [1, 2, 4, 8, 16]
    cycles = args.cycles or (50 if args.quick else 1000)
    warm_resets = args.warm_resets if args.warm_resets is not None else (10 if args.quick else 200)
    result: dict[str, Any] = {
        "benchmark": "webarena_env",
        "quick": args.quick,
        "machine": {"cores": cores, "python": platform.python_version(), "load_avg_start": round(load, 2)},
        "settings": {
            "latency_samples": n_lat,
            "open_counts": open_counts,
            "concurrency_levels": levels,
            "cycles": cycles,
            "warm_resets": warm_resets,
            "server": {"max_sessions": 64, "ttl": 3600},
            "split": TASK_ID_SPLIT,
            "forced": bool(args.force),
        },
    }
    started = time.perf_counter()
    with (
        LocalServer("webarena", overrides={"max_sessions": 64, "ttl": 3600}) as server,
        httpx.Client(base_url=server.url, timeout=300) as http,
    ):
        task_ids = http.get("/v1/tasks", params={"split": TASK_ID_SPLIT}).json()["ids"]
        bench = Bench(http, task_ids)
        bench.close(bench.create()["session_id"])  # the first session starts the browser and the shop
        result["idle_server_mb"] = tree_rss_mb(server.pid)

        resets, scrolls, clicks = [], [], []
        for i in range(n_lat):
            t0 = time.perf_counter()
            session = bench.create(i)
            resets.append(time.perf_counter() - t0)
            sid = session["session_id"]
            for action in ("```scroll [down]```", "```scroll [up]```"):  # fenced, as the env expects by default
                t0 = time.perf_counter()
                bench.step(sid, action)
                scrolls.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            bench.step(sid, f"```click [{link_id(session['observation'])}]```")
            clicks.append(time.perf_counter() - t0)
            bench.close(sid)
        result["latency"] = {"reset": summary(resets), "step_scroll": summary(scrolls), "step_click": summary(clicks)}
        print("latency", json.dumps(result["latency"]), flush=True)

        served = 1 + n_lat  # the first session and the latency phase's
        for i in range(served, warm_resets):  # to the steady state: memory after many resets, not a fresh browser
            bench.close(bench.create(i)["session_id"])
        renderers_gone(server.pid)
        memory = []
        base = tree_rss_mb(server.pid)
        for count in open_counts:
            sids = [bench.create(i)["session_id"] for i in range(count)]
            time.sleep(1)
            used = tree_rss_mb(server.pid)
            memory.append({"open_sessions": count, "tree_mb": used, "per_session_mb": round((used - base) / count, 1)})
            for sid in sids:
                bench.close(sid)
        result["memory_per_session"] = {
            "resets_before": max(served, warm_resets),
            "idle_tree_mb": base,
            "by_open_sessions": memory,
        }
        print("memory", json.dumps(memory), flush=True)

        scaling = []
        for k in levels:
            sids = [bench.create(i)["session_id"] for i in range(k)]
            steps_each = 4 if args.quick else 10

            def drive(sid: str, steps: int = steps_each) -> list[float]:
                times = []
                for j in range(steps):
                    t0 = time.perf_counter()
                    bench.step(sid, "```scroll [down]```" if j % 2 == 0 else "```scroll [up]```")
                    times.append(time.perf_counter() - t0)
                return times

            with ThreadPoolExecutor(k) as pool:
                latencies = [t for times in pool.map(drive, sids) for t in times]
            scaling.append({"sessions": k, **summary(latencies)})
            for sid in sids:
                bench.close(sid)
        first = scaling[0]["mean_ms"]
        doubled = next((row["sessions"] for row in scaling if row["mean_ms"] >= 2 * first), None)
        result["scaling"] = {"by_concurrent_sessions": scaling, "latency_doubles_at_sessions": doubled}
        print("scaling", json.dumps(result["scaling"]), flush=True)

        samples = []
        every = max(1, cycles // 20)
        t0 = time.perf_counter()
        for i in range(cycles):
            bench.close(bench.create(i)["session_id"])
            if i % every == 0 or i == cycles - 1:
                waited = renderers_gone(server.pid)  # a renderer still exiting is not a leak
                parts = tree_components(server.pid)
                samples.append(
                    {
                        "cycle": i + 1,
                        "tree_mb": round(sum(part["pss_mb"] for part in parts.values()), 1),
                        "components_mb": {name: part["pss_mb"] for name, part in parts.items()},
                        "processes": int(sum(part["processes"] for part in parts.values())),
                        "renderers_waited_s": waited,
                        "load_avg": round(os.getloadavg()[0], 2),
                    }
                )
        later = samples[len(samples) // 2 :]
        names = sorted({name for s in later for name in s["components_mb"]})
        result["create_close_cycles"] = {
            "cycles": cycles,
            "seconds": round(time.perf_counter() - t0, 1),
            "samples": samples,
            "growth_mb_second_half": round(later[-1]["tree_mb"] - later[0]["tree_mb"], 1),
            "slope_mb_per_1000_second_half": slope_per_1000([(s["cycle"], s["tree_mb"]) for s in later]),
            "component_slopes_mb_per_1000_second_half": {
                name: slope_per_1000([(s["cycle"], s["components_mb"].get(name, 0.0)) for s in later]) for name in names
            },
            "processes_first_last": [samples[0]["processes"], samples[-1]["processes"]],
        }
        print("cycles", json.dumps(result["create_close_cycles"]), flush=True)
    result["machine"]["load_avg_end"] = round(os.getloadavg()[0], 2)
    result["wall_s"] = round(time.perf_counter() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "webarena_env.json"
    plot(write_result(path, result, args), path.with_suffix(".png"))
    print(f"wrote {path} and {path.with_suffix('.png')}")
    if args.write_footprints:
        base, per = footprint_from_memory(result["memory_per_session"])
        measured = {"idle_tree_mb": result["memory_per_session"]["idle_tree_mb"], "points": points_of(result)}
        source = "benchmarks/results/webarena_env.json (PSS of the process tree)"
        spec = get_plugin_host().env("webarena")
        written = write_footprint(spec, base_mib=base, per_session_mib=per, source=source, measured=measured)
        print(f"webarena: footprint {base} MiB + {per} MiB a session -> {written}")
    return 0


def points_of(result: dict[str, Any]) -> dict[str, float]:
    return {str(p["open_sessions"]): p["tree_mb"] for p in result["memory_per_session"]["by_open_sessions"]}


if __name__ == "__main__":
    raise SystemExit(main())
