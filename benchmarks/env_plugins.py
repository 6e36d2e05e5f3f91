"""Reset and step latency, memory per session and a leak check for every installed env plugin.

For each env (default: every registered env whose factory imports):

1. **Latency.** Whole episodes played by the env's oracle agent (``EnvSpec.oracle``,
   else the built-in ``random``), in-process (``spec.make()``, ``env.reset``,
   ``env.step``) and through one ``LocalServer`` on 127.0.0.1 with an ``EnvClient``.
   The two run interleaved, episode by episode, on the same tasks and seeds, so the
   service/in-process ratios hold up on a noisy machine. Service times are what a
   client sees: HTTP and the client's own CPU included; the server's own time in
   ``step`` (its ``/metrics``) is reported beside them. Only env calls are timed,
   never the agent.
2. **Memory per session.** Server RSS (its child processes included) with 0
   sessions, with N idle sessions open, and after closing them all, read once the server
   has served ``--warm-resets`` resets (200 by default: the latency phase's, then
   create/close cycles), so a JVM or a game compiler is measured warm, not fresh.
3. **Create/close cycles**: 10,000 by default (fewer for envs in ``FEWER_CYCLES``,
   with the reason recorded) over the split's first ``--cycle-tasks`` tasks. RSS is
   sampled about 100 times; the verdict compares the median RSS of the last quarter
   of the cycles with that of the second quarter (the first quarter is warm-up:
   caches, allocator arenas), as KiB per 1,000 cycles (see ``FLAT_RULE``).

    pip install -e '.[bench]'
    python benchmarks/env_plugins.py [ENV ...] [--episodes 100] [--sessions 32] [--cycles 10000]
    python benchmarks/env_plugins.py --quick guess     # smoke run, seconds; writes to a temp dir
    python benchmarks/env_plugins.py --merge --sessions 8 sciworld textworld   # heavy envs, added to the file
    python benchmarks/env_plugins.py --write-footprints guess   # and declare what was measured

Writes benchmarks/results/env_plugins.json and env_plugins.png (``--out`` elsewhere). With
``--write-footprints``, each measured env's idle RSS and memory per session, rounded up, also go to its
plugin's ``footprints.json`` (what ``agenthub deploy k8s`` and the Ray backend reserve; ``footprint_files.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from footprint_files import round_up, write_footprint  # sibling modules of this script
from provenance import write_result

from agenthub import (
    Action,
    Agent,
    AgentEpisode,
    EnvClient,
    EnvInfo,
    EnvSpec,
    LocalServer,
    Observation,
    Outcome,
    ServiceSettings,
    Task,
    TaskId,
    UnknownNameError,
    get_plugin_host,
)
from agenthub.rollout import terminal_outcome

RESULTS = Path(__file__).resolve().parent / "results"
MIB = 1024 * 1024
KIB = 1024
CYCLES = 10_000
TOLERANCE_KIB_PER_1000 = 64.0
"""A leak of one small object per cycle (a dict, a closure: 100-300 bytes) is 100-300 KiB per 1,000 cycles."""
FLAT_RULE = (
    "flat if the median server RSS over the last quarter of the create/close cycles exceeds the median over "
    f"the second quarter (the first quarter is warm-up) by at most {TOLERANCE_KIB_PER_1000:g} KiB per 1,000 "
    "cycles between the two quarters' midpoints; otherwise grows"
)
FEWER_CYCLES: dict[str, tuple[int, str]] = {
    "sciworld": (
        2000,
        "each session holds a JVM: create/close cycles, reusing an idle JVM, ran at 8-11 per second on a quiet "
        "machine and 1.7 per second on a busy one, so 10,000 would take 15 minutes to 1.5 hours of the run; "
        "2,000 reset the same reused JVM about 2,000 times (benchmarks/jvm_heap.py looks inside it)",
    ),
}
"""Envs whose cycles are too slow for ``CYCLES``: (count, why), used unless ``--cycles`` is given."""
FALLBACK_AGENT = "random"
TOKEN_ENV_VAR = "AGENTHUB_TOKEN"  # the server reads it too; see agenthub.service.settings


# -- measuring ---------------------------------------------------------------------------


@dataclass
class Samples:
    """Latencies of one operation, in seconds."""

    values: list[float] = field(default_factory=list)

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        started = time.perf_counter()
        yield
        self.values.append(time.perf_counter() - started)

    def summary(self) -> dict[str, float | int | None]:
        if not self.values:
            return {"n": 0, "p50_ms": None, "p90_ms": None, "mean_ms": None}
        p90 = statistics.quantiles(self.values, n=10)[-1] if len(self.values) > 1 else self.values[0]
        return {
            "n": len(self.values),
            "p50_ms": 1000 * statistics.median(self.values),
            "p90_ms": 1000 * p90,
            "mean_ms": 1000 * statistics.fmean(self.values),
        }


@dataclass
class Side:
    """What one side (in-process or service) measured over its episodes."""

    ops: dict[str, Samples] = field(default_factory=dict)
    episodes: int = 0
    won: int = 0
    errors: list[str] = field(default_factory=list)

    def op(self, name: str) -> Samples:
        return self.ops.setdefault(name, Samples())

    def finish(self, won: bool) -> None:
        self.episodes += 1
        self.won += won

    def error(self, where: str, exc: BaseException) -> None:
        self.errors.append(f"{where}: {type(exc).__name__}: {exc}"[:300])

    def report(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "won": self.won,
            "errors": len(self.errors),
            "first_errors": self.errors[:3],
            **{name: samples.summary() for name, samples in self.ops.items()},
        }


def tree_rss(pid: int) -> int:
    """RSS of a process and its descendants (an env may run a JVM or a solver as a child)."""
    root = psutil.Process(pid)
    total = 0
    for process in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += process.memory_info().rss
    return total


async def server_step_seconds(url: str) -> tuple[float, float]:
    """``(sum, count)`` of the server's ``agenthub_step_seconds`` histogram: time spent in ``step``, thread pool
    included, HTTP excluded."""
    token = os.environ.get(TOKEN_ENV_VAR)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=10) as http:
        text = (await http.get(f"{url}/metrics")).raise_for_status().text
    values = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in ("agenthub_step_seconds_sum", "agenthub_step_seconds_count"):
            values[name] = float(value)
    return values.get("agenthub_step_seconds_sum", 0.0), values.get("agenthub_step_seconds_count", 0.0)


# -- 1. latency, in-process and through the service, interleaved ----------------------------


async def _act(episode: AgentEpisode, observation: Observation, side: Side) -> Action | None:
    """The agent's next action; ``None`` ends the episode (the agent failed, which is recorded)."""
    try:
        reply = await episode.act(observation)
    except Exception as exc:  # an oracle that gives up ends its episode, never the benchmark
        side.error("agent", exc)
        return None
    return reply.action


async def in_process_episode(spec: EnvSpec, agent: Agent, task: Task, info: EnvInfo, side: Side) -> None:
    with side.op("make").timed():
        env = spec.make()
    try:
        with side.op("reset").timed():
            text, step_info = env.reset(task_id=task.task_id, seed=task.seed)
        episode = agent.start_episode(task, info)
        won = False
        for _ in range(info.default_max_turns):
            action = await _act(episode, Observation(text=text, info=step_info), side)
            if action is None:
                break
            with side.op("step").timed():
                text, reward, terminated, truncated, step_info = env.step(action)
            if terminated or truncated:
                won = terminated and terminal_outcome(reward, step_info) is Outcome.SUCCESS
                break
        side.finish(won)
    except Exception as exc:
        side.error("env", exc)
    finally:
        with side.op("close").timed():
            env.close()


async def service_episode(client: EnvClient, agent: Agent, task: Task, info: EnvInfo, side: Side) -> None:
    with side.op("create").timed():
        session = await client.create_session(task.task_id, seed=task.seed)
    try:
        # The explicit reset is the like-for-like twin of env.reset; create also builds or reuses an env.
        with side.op("reset").timed():
            first = await session.reset(task.task_id, seed=task.seed)
        episode = agent.start_episode(task, info)
        observation = Observation(text=first.observation, info=first.info)
        won = False
        for _ in range(info.default_max_turns):
            action = await _act(episode, observation, side)
            if action is None:
                break
            with side.op("step").timed():
                result = await session.step(action)
            if result.done:
                won = result.terminated and terminal_outcome(result.reward, result.info) is Outcome.SUCCESS
                break
            observation = Observation(text=result.observation, info=result.info)
        side.finish(won)
    except Exception as exc:
        side.error("service", exc)
    finally:
        with side.op("close").timed():
            await session.close()


def _ratio(service: Samples, in_process: Samples) -> float | None:
    if not service.values or not in_process.values:
        return None
    denominator = statistics.median(in_process.values)
    return statistics.median(service.values) / denominator if denominator > 0 else None


async def latency(spec: EnvSpec, agent: Agent, client: EnvClient, tasks: list[Task], seconds: float) -> dict[str, Any]:
    info = await client.info()
    local, remote = Side(), Side()
    # One untimed episode each first: imports, caches and the server's first env instance.
    await in_process_episode(spec, agent, tasks[0], info, Side())
    await service_episode(client, agent, tasks[0], info, Side())
    server_sum, server_count = await server_step_seconds(client.base_url)
    deadline = time.perf_counter() + seconds
    for i, task in enumerate(tasks):
        if time.perf_counter() > deadline:
            break
        # Alternate which side goes first so neither always meets the warmer machine.
        pair = [in_process_episode(spec, agent, task, info, local), service_episode(client, agent, task, info, remote)]
        for run in pair if i % 2 == 0 else reversed(pair):
            await run
    server_sum_after, server_count_after = await server_step_seconds(client.base_url)
    steps_in_server = server_count_after - server_count
    return {
        "in_process": local.report(),
        "service": remote.report(),
        "server_step_mean_ms": 1000 * (server_sum_after - server_sum) / steps_in_server if steps_in_server else None,
        "ratio": {
            "reset": _ratio(remote.op("reset"), local.op("reset")),
            "step": _ratio(remote.op("step"), local.op("step")),
        },
    }


# -- 2. memory per idle session -------------------------------------------------------------


async def session_memory(client: EnvClient, pid: int, tasks: list[Task], sessions: int) -> dict[str, Any]:
    rss_0 = tree_rss(pid)
    opened = []
    for i in range(sessions):
        task = tasks[i % len(tasks)]
        opened.append(await client.create_session(task.task_id, seed=task.seed))
    rss_n = tree_rss(pid)
    for session in opened:
        await session.close()
    rss_closed = tree_rss(pid)
    return {
        "sessions": sessions,
        "rss_0_mib": rss_0 / MIB,
        "rss_n_mib": rss_n / MIB,
        "rss_after_close_mib": rss_closed / MIB,
        "per_session_kib": (rss_n - rss_0) / sessions / 1024,
    }


# -- 3. create/close cycles -----------------------------------------------------------------


def quarter_growth(samples: list[tuple[int, int]]) -> dict[str, Any]:
    """Growth between the second and the last quarter of the cycles (see ``FLAT_RULE``), from ``(cycle, rss)``.

    Medians, so a lone spike (a collection, an arena kept for a moment) moves nothing.
    """
    total = samples[-1][0]
    second = [rss for cycle, rss in samples if total / 4 < cycle <= total / 2]
    last = [rss for cycle, rss in samples if cycle > 3 * total / 4]
    if total < 4 or not second or not last:
        return {"growth_kib_per_1000": None, "verdict": "too few cycles"}
    # The quarters' midpoints are half the cycles apart.
    growth_kib = (statistics.median(last) - statistics.median(second)) / KIB
    per_1000 = 1000 * growth_kib / (total / 2)
    return {
        "second_quarter_median_mib": statistics.median(second) / MIB,
        "last_quarter_median_mib": statistics.median(last) / MIB,
        "growth_kib_per_1000": per_1000,
        "verdict": "flat" if per_1000 <= TOLERANCE_KIB_PER_1000 else "grows",
    }


async def create_close_cycles(
    client: EnvClient, pid: int, tasks: list[Task], cycles: int, every: int, seconds: float
) -> dict[str, Any]:
    server = psutil.Process(pid)
    samples = [(0, tree_rss(pid))]
    # The server process alone too: where growth is when an env runs child processes (a JVM, a game compiler).
    own = [(0, server.memory_info().rss)]
    started = time.perf_counter()
    done = 0
    while done < cycles and time.perf_counter() - started < seconds:
        task = tasks[done % len(tasks)]
        session = await client.create_session(task.task_id, seed=task.seed)
        await session.close()
        done += 1
        if done % every == 0 or done == cycles:
            samples.append((done, tree_rss(pid)))
            own.append((done, server.memory_info().rss))
    if samples[-1][0] != done:
        samples.append((done, tree_rss(pid)))
        own.append((done, server.memory_info().rss))
    elapsed = time.perf_counter() - started
    first, last = samples[0][1], samples[-1][1]
    xs, ys = [float(c) for c, _ in samples], [float(r) for _, r in samples]
    slope = statistics.linear_regression(xs, ys).slope if len(set(xs)) > 1 else 0.0
    return {
        "cycles": done,
        "cycles_asked": cycles,
        "stopped_by_time_cap": done < cycles,
        "distinct_tasks": len({t.task_id for t in tasks}),
        "sample_every": every,
        "cycles_per_s": done / elapsed if elapsed > 0 else None,
        "rss_mib": [[c, r / MIB] for c, r in samples],
        "growth_mib": (last - first) / MIB,
        "growth_pct": 100 * (last - first) / first,
        "slope_bytes_per_cycle": slope,
        "tolerance_kib_per_1000": TOLERANCE_KIB_PER_1000,
        **quarter_growth(samples),
        "server_process_rss_mib": [[c, r / MIB] for c, r in own],
        "server_process_growth_kib_per_1000": quarter_growth(own)["growth_kib_per_1000"],
    }


# -- one env --------------------------------------------------------------------------------


def choose_agent(spec: EnvSpec) -> tuple[str, Agent]:
    host = get_plugin_host()
    name = spec.oracle if spec.oracle is not None and spec.oracle in host.agents else FALLBACK_AGENT
    return name, host.agent(name).make()


def tasks_for(spec: EnvSpec, count: int) -> tuple[str, list[Task]]:
    splits = spec.resolved_splits()
    split = next(iter(splits))
    ids: list[TaskId] = splits[split].first(max(1, count))
    return split, [Task(env=spec.name, task_id=task_id, split=split, seed=i) for i, task_id in enumerate(ids)]


def sessions_for(spec: EnvSpec, wanted: int) -> int:
    cap = int(spec.service_defaults.get("max_sessions", ServiceSettings.model_fields["max_sessions"].default))
    return max(1, min(wanted, cap))


def served_resets(latency_result: dict[str, Any]) -> int:
    """Resets the server ran in the latency phase: a create and an explicit reset per episode, untimed one too."""
    service = latency_result["service"]
    return 2 + sum(int((service.get(op) or {}).get("n") or 0) for op in ("create", "reset"))


async def warm_up(client: EnvClient, tasks: list[Task], resets: int) -> None:
    """Create/close cycles (each create resets a reused env) up to ``resets``: memory read warm, not fresh."""
    for i in range(resets):
        task = tasks[i % len(tasks)]
        session = await client.create_session(task.task_id, seed=task.seed)
        await session.close()


async def through_server(
    spec: EnvSpec, agent: Agent, server: LocalServer, tasks: list[Task], args: argparse.Namespace
) -> dict[str, Any]:
    async with EnvClient(server.url, token=os.environ.get(TOKEN_ENV_VAR), max_connections=4) as client:
        result = {"latency": await latency(spec, agent, client, tasks[: args.episodes], args.seconds)}
        done = served_resets(result["latency"])
        await warm_up(client, tasks[: args.cycle_tasks], max(0, args.warm_resets - done))
        result["memory"] = await session_memory(client, server.pid, tasks, sessions_for(spec, args.sessions))
        result["memory"]["resets_before"] = max(done, args.warm_resets)
        cycles, why = cycles_for(spec.name, args)
        every = args.sample_every or max(1, cycles // 100)
        result["cycles"] = await create_close_cycles(
            client, server.pid, tasks[: args.cycle_tasks], cycles, every, args.cycle_seconds
        )
        if why:
            result["cycles"]["fewer_cycles_because"] = why
    return result


def cycles_for(env: str, args: argparse.Namespace) -> tuple[int, str | None]:
    """The create/close cycles for ``env``, and why they are fewer than ``CYCLES`` when they are."""
    if args.cycles is not None:
        return args.cycles, None
    if args.quick:
        return 100, None
    return FEWER_CYCLES.get(env, (CYCLES, None))


def bench_env(name: str, args: argparse.Namespace) -> dict[str, Any]:
    spec = get_plugin_host().env(name)
    agent_name, agent = choose_agent(spec)
    split, tasks = tasks_for(spec, max(args.episodes, args.sessions, args.cycle_tasks))
    result: dict[str, Any] = {
        "agent": agent_name,
        "agent_is_oracle": agent_name == spec.oracle,
        "split": split,
        "service_defaults": dict(spec.service_defaults),
    }
    started = time.perf_counter()
    with LocalServer(name) as server:
        result["server_start_s"] = time.perf_counter() - started
        result["rss_fresh_mib"] = tree_rss(server.pid) / MIB
        result.update(asyncio.run(through_server(spec, agent, server, tasks, args)))
    result["wall_s"] = time.perf_counter() - started
    return result


BASE_STEP_MIB = 0.5
"""A declared base is the idle RSS plus at least a quarter MiB, rounded up to this step."""
PER_SESSION_STEP_MIB = 0.01
PACKED_PER_SESSION = {"sciworld": "sciworld_packing.json"}
"""Envs whose sessions share a process that the server packs them into: a session's memory is its share of a
warm packed process (that benchmark's ``modes.packed.idle.per_session_rss_mib``), not the room a session finds
in an idle server's heap (about 0 for a JVM that has grown)."""


def declare_footprints(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Write each measured env's footprint to its plugin's footprints.json; a line per env written."""
    lines = []
    for name, result in results.items():
        memory = result.get("memory")
        if "measured_in" in result or not memory:  # merged from an earlier run, or its measurement failed
            continue
        spec = get_plugin_host().env(name)
        per_session = max(memory["per_session_kib"] / 1024, 0.0)
        source = "benchmarks/results/env_plugins.json"
        measured: dict[str, Any] = {key: memory[key] for key in ("rss_0_mib", "per_session_kib", "resets_before")}
        if name in PACKED_PER_SESSION:
            packed = json.loads((out / PACKED_PER_SESSION[name]).read_text())["modes"]["packed"]["idle"]
            per_session = packed["per_session_rss_mib"]
            measured["packed_per_session_rss_mib"] = per_session
            source = f"env_plugins.json (base), {PACKED_PER_SESSION[name]} (per session)"
        base = round_up(memory["rss_0_mib"] + BASE_STEP_MIB / 2, BASE_STEP_MIB)
        per = max(round_up(per_session, PER_SESSION_STEP_MIB), PER_SESSION_STEP_MIB)
        path = write_footprint(spec, base_mib=base, per_session_mib=per, source=source, measured=measured)
        lines.append(f"{name}: footprint {base} MiB + {per} MiB a session -> {path}")
    return lines


def installed_envs() -> list[str]:
    """Registered envs whose factory imports; a plugin missing a dependency is skipped, with a note."""
    from agenthub.specs import resolve_factory

    names = []
    for spec in get_plugin_host().envs:
        try:
            resolve_factory(spec.factory, what=f"env {spec.name!r}")
        except Exception as exc:
            print(f"skipping env {spec.name!r}: {exc}", file=sys.stderr)
            continue
        names.append(spec.name)
    return names


# -- output ---------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 1 else f"{value:.1f}" if value >= 100 else f"{value:.2f}"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}x" if value >= 10 else f"{value:.1f}x"


def table(results: dict[str, dict[str, Any]]) -> str:
    """One line per env. Latencies in ms: medians, then p90s, then the mean step in-process and inside the server
    (thread pool included, HTTP not); ``x`` is service / in-process."""
    columns = [
        ("env", 10),
        ("agent", 17),
        ("won/eps", 8),
        ("reset in/svc", 14),
        ("x", 5),
        ("step in/svc", 13),
        ("x", 5),
        ("p90 in/svc", 13),
        ("mean in/srv", 13),
        ("KiB/sess", 8),
        ("RSS 0/N/closed", 14),
        ("cycles", 6),
        ("KiB/1000c", 9),
        ("verdict", 7),
    ]
    lines = [
        " ".join(f"{title:>{width}}" if i > 1 else f"{title:<{width}}" for i, (title, width) in enumerate(columns))
    ]
    lines.append("-" * len(lines[0]))
    for name, r in results.items():
        if "error" in r:
            lines.append(f"{name:<10} error: {r['error']}")
            continue
        lat, mem, cyc = r["latency"], r["memory"], r["cycles"]
        loc, svc = lat["in_process"], lat["service"]
        loc_step, svc_step = loc.get("step", {}), svc.get("step", {})
        cells = [
            name,
            r["agent"],
            f"{svc['won']}/{svc['episodes']}",
            f"{_ms(loc['reset']['p50_ms'])}/{_ms(svc['reset']['p50_ms'])}",
            _x(lat["ratio"]["reset"]),
            f"{_ms(loc_step.get('p50_ms'))}/{_ms(svc_step.get('p50_ms'))}",
            _x(lat["ratio"]["step"]),
            f"{_ms(loc_step.get('p90_ms'))}/{_ms(svc_step.get('p90_ms'))}",
            f"{_ms(loc_step.get('mean_ms'))}/{_ms(lat['server_step_mean_ms'])}",
            f"{mem['per_session_kib']:.1f}",
            f"{mem['rss_0_mib']:.0f}/{mem['rss_n_mib']:.0f}/{mem['rss_after_close_mib']:.0f}",
            str(cyc["cycles"]),
            "-" if cyc["growth_kib_per_1000"] is None else f"{cyc['growth_kib_per_1000']:+.1f}",
            cyc["verdict"],
        ]
        lines.append(
            " ".join(
                f"{cell:>{width}}" if i > 1 else f"{cell:<{width}}"
                for i, (cell, (_, width)) in enumerate(zip(cells, columns, strict=True))
            )
        )
    return "\n".join(lines)


def plot(results: dict[str, dict[str, Any]], path: Path) -> bool:
    """Four panels; returns False (and writes nothing) when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = {name: r for name, r in results.items() if "error" not in r}
    names = list(ok)
    fig, axes = plt.subplots(2, 2, figsize=(12, 9.5))
    ax = axes[0][0]
    series: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        ("reset in-process", lambda r: r["latency"]["in_process"]["reset"]["p50_ms"]),
        ("reset service", lambda r: r["latency"]["service"]["reset"]["p50_ms"]),
        ("step in-process", lambda r: r["latency"]["in_process"].get("step", {}).get("p50_ms")),
        ("step service", lambda r: r["latency"]["service"].get("step", {}).get("p50_ms")),
    ]
    width = 0.8 / len(series)
    for k, (label, get) in enumerate(series):
        values = [get(ok[n]) or 0.0 for n in names]
        ax.bar([i + (k - 1.5) * width for i in range(len(names))], values, width, label=label)
    ax.scatter(
        [i + 1.5 * width for i in range(len(names))],
        [ok[n]["latency"]["server_step_mean_ms"] or float("nan") for n in names],
        marker="_",
        s=300,
        color="black",
        zorder=3,
        label="step inside the server (mean)",
    )
    ax.set_yscale("log")
    ax.set_ylim(top=ax.get_ylim()[1] * 30)  # headroom for the legend
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel("median ms (log)")
    ax.set_title("reset and step latency")
    ax.legend(fontsize=7, ncol=2, loc="upper right")

    ax = axes[0][1]
    for k, op in enumerate(("reset", "step")):
        values = [ok[n]["latency"]["ratio"][op] or 0.0 for n in names]
        ax.bar([i + (k - 0.5) * 0.4 for i in range(len(names))], values, 0.4, label=op)
    ax.axhline(1, color="grey", linestyle=":")
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel("service / in-process (median)")
    ax.set_title("cost of the service (run side by side)")
    ax.legend(fontsize=8)

    ax = axes[1][0]
    bars = ax.bar(names, [ok[n]["memory"]["per_session_kib"] for n in names])
    ax.bar_label(bars, labels=[f"N={ok[n]['memory']['sessions']}" for n in names], fontsize=8)
    ax.set_yscale("log")  # a JVM per session (sciworld) beside envs of a few KiB
    ax.set_ylabel("KiB per idle session (log)")
    ax.set_title("server RSS per open session: (RSS_N - RSS_0) / N")

    ax = axes[1][1]
    for n in names:
        cyc = ok[n]["cycles"]
        points = cyc["rss_mib"]
        first = points[0][1]
        per_1000 = cyc.get("growth_kib_per_1000")
        growth = "" if per_1000 is None else f"{per_1000:+.0f} KiB/1000 cycles, "
        # Fractions of each env's own cycle count, so 300 sciworld cycles share the axis with 10,000 others.
        ax.plot(
            [c / max(cyc["cycles"], 1) for c, _ in points],
            [r - first for _, r in points],
            marker=".",
            markersize=3,
            label=f"{n}: {cyc['cycles']:,} cycles, {first:.0f} MiB at start; {growth}{cyc['verdict']}",
        )
    for edge in (0.25, 0.5, 0.75):
        ax.axvline(edge, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("fraction of the create/close cycles (quarters 2 and 4 are compared)")
    # Linear below 1 MiB, logarithmic above: the light envs' KiB and sciworld's JVMs on one axis.
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylabel("server RSS - first sample (MiB, symlog)")
    ax.set_title(f"RSS over create/close cycles (flat: <= {TOLERANCE_KIB_PER_1000:g} KiB per 1,000 cycles)")
    ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)  # below: the curves fill the box
    for bars_ax in (axes[0][0], axes[0][1], axes[1][0]):
        bars_ax.tick_params(axis="x", labelrotation=30)
    fig.suptitle(f"agenthub env plugins, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# -- CLI ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("envs", nargs="*", help="envs to measure (default: every installed env)")
    parser.add_argument("--episodes", type=int, default=None, help="episodes per side per env (default 100)")
    parser.add_argument("--seconds", type=float, default=None, help="cap on the latency phase per env (default 90)")
    parser.add_argument("--sessions", type=int, default=None, help="idle sessions for memory (default 32)")
    parser.add_argument(
        "--warm-resets", type=int, default=None, help="resets the server serves before memory is read (default 200)"
    )
    parser.add_argument(
        "--cycles",
        type=int,
        default=None,
        help=f"create/close cycles for every env (default {CYCLES:,}, or the env's count in FEWER_CYCLES)",
    )
    parser.add_argument(
        "--sample-every", type=int, default=None, help="cycles between RSS samples (default: cycles / 100)"
    )
    parser.add_argument(
        "--cycle-tasks", type=int, default=1000, help="distinct tasks the cycles go round (default 1000)"
    )
    parser.add_argument(
        "--cycle-seconds", type=float, default=1200.0, help="cap on the cycles phase per env (default 1200)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 3 episodes, 4 sessions, 100 cycles; writes to a temp dir"
    )
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    parser.add_argument(
        "--write-footprints",
        action="store_true",
        help="also write each measured env's footprint to its plugin's footprints.json (not with --quick)",
    )
    parser.add_argument(
        "--replot", action="store_true", help="measure nothing: draw OUT/env_plugins.png again from its JSON"
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the other envs already in OUT/env_plugins.json (measure heavy envs in a run of their own)",
    )
    args = parser.parse_args(argv)
    defaults = (
        {"episodes": 3, "seconds": 10.0, "sessions": 4, "warm_resets": 20}
        if args.quick
        else {"episodes": 100, "seconds": 90.0, "sessions": 32, "warm_resets": 200}
    )
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS
    if args.warm_resets < 0:
        parser.error("--warm-resets must be >= 0")
    if args.write_footprints and args.quick:
        parser.error("--write-footprints declares a full run's figures: leave out --quick")
    for key in ("episodes", "sessions", "cycles", "sample_every", "cycle_tasks"):
        if getattr(args, key) is not None and getattr(args, key) < 1:
            parser.error(f"--{key.replace('_', '-')} must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.replot:
        plot(json.loads((args.out / "env_plugins.json").read_text())["envs"], args.out / "env_plugins.png")
        return 0
    names = args.envs or installed_envs()
    for name in names:
        try:
            get_plugin_host().env(name)  # an unknown name fails now, not after minutes of measuring
        except UnknownNameError as exc:
            print(f"env_plugins.py: {exc}", file=sys.stderr)
            return 2
    load_before = os.getloadavg()
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            results[name] = bench_env(name, args)
        except Exception as exc:  # one broken env must not cost the others' numbers
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
        print(f"{name}: done in {results[name].get('wall_s', 0):.1f}s", flush=True)
    report = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1_5_15_before": load_before,
            "load_average_1_5_15_after": os.getloadavg(),
        },
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "rules": {
            "flat": FLAT_RULE,
            "fewer_cycles": {name: {"cycles": n, "why": why} for name, (n, why) in FEWER_CYCLES.items()},
            "memory": "RSS of the server process and its children (psutil); RSS_0 is taken after the latency "
            "phase and enough create/close cycles that the server has served --warm-resets resets (resets_before), "
            "so env code is imported, caches are warm and a reused JVM or compiler is in its steady state; "
            "env instances the server keeps for reuse "
            "(idle_envs) count in RSS_0 and after close; per-session figures of a few KiB are near the "
            "resolution of RSS (pages, allocator arenas)",
            "latency": "median, p90 and mean of env calls only (never the agent); service times are what the "
            "client sees, HTTP and client CPU included; server_step_mean_ms is the server's own step time "
            "(its agenthub_step_seconds, thread pool included); ratio = service median / in-process median, "
            "measured interleaved episode by episode",
        },
        "envs": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    if args.merge and (args.out / "env_plugins.json").is_file():
        earlier = json.loads((args.out / "env_plugins.json").read_text())
        # Each env keeps the machine and settings of the run that measured it.
        for name, result in earlier.get("envs", {}).items():
            if name not in results:
                origin = {"machine": earlier["machine"], "settings": earlier["settings"]}
                results[name] = {"measured_in": origin, **result}
        report["envs"] = results
    write_result(args.out / "env_plugins.json", report, args)
    plotted = plot(results, args.out / "env_plugins.png")
    print(table(results))
    print(f"rule: {FLAT_RULE}")
    for name, r in results.items():
        for side in ("in_process", "service"):
            errors = r.get("latency", {}).get(side, {}).get("first_errors")
            if errors:
                print(f"note: {name} {side} had errors, e.g. {errors[0]}")
    print(f"wrote {args.out / 'env_plugins.json'}" + (f" and {args.out / 'env_plugins.png'}" if plotted else ""))
    if args.write_footprints:
        print("\n".join(declare_footprints(results, args.out)))
    return 1 if any("error" in r for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
