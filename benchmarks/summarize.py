"""Render the benchmarks' summary (docs/benchmarks.md) from the JSON files they wrote.

Every figure comes from the JSON in ``--results``: ``service_throughput.json``,
``executor_scaling.json`` (with the stand-in LLM's latency curve, calibrated from
``vllm_vs_hf.json``), ``env_plugins.json`` and ``jvm_heap.json``, ``trl_learning.json``,
``trl_seeds.json``, ``vllm_vs_hf.json``, ``search_retrieval.json``, ``webarena_env.json``,
``sciworld_packing.json``, ``ray_scaling.json``, ``action_parsing.json``, ``serve_workers.json``
and, when ``run_all.py`` made them, ``run_all.json`` (machine, date, load average, how each
benchmark ended); every result's provenance block gives the "which code" table. A missing file
makes its section say so; nothing is filled in by hand.

    python benchmarks/summarize.py                                  # results/ -> docs/benchmarks.md
    python benchmarks/summarize.py --results DIR --out DIR/benchmarks.md
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from provenance import QUIET_LOAD, freshness, started_quiet

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs" / "benchmarks.md"

# Issue 7's targets on a 2-core machine.
STEPS_PER_S_AT_64 = 3000.0
P50_MS_AT_1 = 1.0
P99_MS_AT_64 = 30.0
SPEEDUP_AT_256_500MS = 100.0
LOADGEN_CORE_SHARE = 0.5
"""The load generator is not the bottleneck while it uses under half of one core in every cell."""

MEMORY_TARGET = "memory: no growth over the create/close cycles, every env"

Json = dict[str, Any]


# -- reading ---------------------------------------------------------------------------------


def load(results: Path, name: str) -> Json | None:
    path = results / name
    if not path.is_file():
        return None
    data: Json = json.loads(path.read_text())
    return data


def result_date(result: Json) -> str:
    """When a result was measured, from its own provenance block (never git or the file's mtime: the page
    must render the same bytes from the same results, before and after they are committed)."""
    block = result.get("provenance") or {}
    when = block.get("finished") or block.get("measured_at") or result.get("measured_at")
    return str(when) if when else "at an unrecorded date"


# -- formatting ------------------------------------------------------------------------------


def num(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 1 else f"{value:.2f}" if value < 10 else f"{value:.1f}"


def times(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}x" if value < 0.1 else f"{value:.2f}x" if value < 10 else f"{value:.0f}x"


def cores(value: float | None) -> str:
    # Per-process and machine-wide CPU clocks tick apart, so an idle machine can read a hair below zero.
    return "-" if value is None else f"{max(value, 0.0):.2f}"


def verdict(met: bool | None) -> str:
    return "not measured" if met is None else "met" if met else "**missed**"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def image(results: Path, docs: Path, png: str, alt: str) -> list[str]:
    path = results / png
    if not path.is_file():
        return [f"(no plot: {png} is missing)"]
    return [f"![{alt}]({Path(os.path.relpath(path, docs.parent)).as_posix()})"]


# -- the figures the targets need ------------------------------------------------------------


def service_row(service: Json | None, env: str, servers: str, concurrency: int) -> Json | None:
    if service is None:
        return None
    rows = service.get("envs", {}).get(env, {}).get("service", {}).get(servers, [])
    return next((row for row in rows if row["concurrency"] == concurrency), None)


def loadgen_core_share(row: Json) -> float:
    """The load generator's CPU as a fraction of one core: its CPU per request times requests per second."""
    return float(row["loadgen_cpu_ms_per_request"] * row["requests_per_step"] * row["steps_per_s"] / 1000)


def server_core_share(row: Json) -> float:
    return float(row["server_cpu_ms_per_step"] * row["steps_per_s"] / 1000)


def executor_row(executor: Json | None, latency: str, concurrency: int) -> Json | None:
    if executor is None:
        return None
    rows = executor.get("latencies", {}).get(latency, [])
    return next((row for row in rows if row["concurrency"] == concurrency), None)


def memory_envs(memory: Json | None) -> dict[str, Json]:
    if memory is None:
        return {}
    return {name: r for name, r in memory.get("envs", {}).items() if "error" not in r}


def spread(row: Json, key: str, show: Callable[[float], str]) -> str:
    """`` (median of N interleaved rounds: low to high)``, or `` (one round)`` for a result without rounds."""
    values = (row.get("rounds") or {}).get(key) or []
    if len(values) < 2:
        return " (one round)"
    return f" (median of {len(values)} interleaved rounds: {show(min(values))} to {show(max(values))})"


def low_high(row: Json, key: str, show: Callable[[float], str]) -> str:
    """`` (low-high)`` over a cell's rounds, for a table cell; nothing for a single round."""
    values = (row.get("rounds") or {}).get(key) or []
    return f" ({show(min(values))}-{show(max(values))})" if len(values) > 1 else ""


def stale_note(name: str, result: Json | None) -> str:
    """`` (from a stale result: ...)`` when the result a target is read from no longer checks out."""
    if result is None:
        return ""
    fresh = freshness(name, result)
    return "" if fresh.state == "current" else f"; from a **stale** result ({name}.json, see below)"


def target_rows(service: Json | None, executor: Json | None, memory: Json | None) -> list[list[str]]:
    def check(row: Json | None, key: str, ok: Callable[[float], bool], show: Callable[[float], str]) -> list[str]:
        if row is None or row.get(key) is None:
            return ["not measured", verdict(None)]
        source = ("service_throughput", service) if row.get("servers") else ("executor_scaling", executor)
        return [show(row[key]) + spread(row, key, show) + stale_note(*source), verdict(ok(row[key]))]

    at_64, at_1 = service_row(service, "textcraft", "1", 64), service_row(service, "textcraft", "1", 1)
    rows = [
        [
            f"textcraft, one server process: >= {STEPS_PER_S_AT_64:,.0f} steps/s at 64 sessions (whole episodes)",
            *check(at_64, "steps_per_s", lambda v: v >= STEPS_PER_S_AT_64, lambda v: f"{v:,.0f} steps/s"),
        ],
        [
            f"textcraft, one server process: step p50 <= {P50_MS_AT_1:g} ms at 1 session",
            *check(at_1, "step_p50_ms", lambda v: v <= P50_MS_AT_1, lambda v: f"{ms(v)} ms"),
        ],
        [
            f"textcraft, one server process: step p99 <= {P99_MS_AT_64:g} ms at 64 sessions",
            *check(at_64, "step_p99_ms", lambda v: v <= P99_MS_AT_64, lambda v: f"{ms(v)} ms"),
        ],
        [
            f"executor: speed-up over serial >= {SPEEDUP_AT_256_500MS:g}x at 256 concurrent episodes, "
            "500 ms LLM (fixed latency)",
            *check(
                executor_row(executor, "500", 256),
                "speedup_over_serial",
                lambda v: v >= SPEEDUP_AT_256_500MS,
                lambda v: f"{v:.0f}x",
            ),
        ],
    ]
    envs = memory_envs(memory)
    if envs:
        flat = [n for n, r in envs.items() if r["cycles"]["verdict"] == "flat"]
        cells = [n for n, r in envs.items() if r["cycles"].get("growth_kib_per_1000") is not None]
        worst = max(cells, key=lambda n: envs[n]["cycles"]["growth_kib_per_1000"]) if cells else None
        shown = f"{len(flat)} of {len(envs)} envs flat"
        if worst is not None:
            shown += f"; largest: {envs[worst]['cycles']['growth_kib_per_1000']:+.1f} KiB per 1,000 cycles ({worst})"
        for name in (n for n in envs if n not in flat):
            own = envs[name]["cycles"].get("server_process_growth_kib_per_1000")
            if own is not None and own <= envs[name]["cycles"]["tolerance_kib_per_1000"]:
                shown += f"; {name}'s server process alone: {own:+.1f} KiB per 1,000 cycles (its child processes grow)"
        rows.append([MEMORY_TARGET, shown + stale_note("env_plugins", memory), verdict(len(flat) == len(envs))])
    else:
        rows.append([MEMORY_TARGET, "not measured", verdict(None)])
    cells_measured = [
        (env, servers, row)
        for env, result in (service or {}).get("envs", {}).items()
        for servers, rows_ in result["service"].items()
        for row in rows_
    ]
    if cells_measured:
        env, servers, busiest = max(cells_measured, key=lambda cell: loadgen_core_share(cell[2]))
        share = loadgen_core_share(busiest)
        rows.append(
            [
                f"load generator not the bottleneck: under {LOADGEN_CORE_SHARE:.0%} of one core in every service cell",
                f"at most {share:.0%} of a core ({env}, {servers} server(s), {busiest['concurrency']} sessions; "
                f"the servers used {server_core_share(busiest):.0%} of one there)",
                verdict(share < LOADGEN_CORE_SHARE),
            ]
        )
    return rows


# -- sections --------------------------------------------------------------------------------


def machine_section(run: Json | None, service: Json | None) -> list[str]:
    if run is not None:
        m = run["machine"]
        when = f"{run['started']} to {run['finished']}"
        load = f"{_load(run.get('load_average_before'))} before, {_load(run.get('load_average_after'))} after"
    else:  # results from separate runs: describe this machine, say so
        m = {
            "cpus": os.cpu_count(),
            "cpu_model": cpu_model(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        }
        m = {**m, **((service or {}).get("machine") or {})}
        when, load = "not recorded (no run_all.json)", "not recorded"
    return [
        "## Machine",
        "",
        *table(
            ["CPUs", "CPU model", "Python", "platform", "when", "load average (1, 5, 15 min)"],
            [
                [
                    str(m.get("cpus")),
                    str(m.get("cpu_model", "-")),
                    str(m.get("python")),
                    str(m.get("platform")),
                    when,
                    load,
                ]
            ],
        ),
        "",
        "The machine is shared: figures move with its load, so every comparison below is a ratio of figures "
        "measured side by side in the same run.",
        "",
    ]


def _load(values: list[float] | None) -> str:
    return "-" if not values else " / ".join(f"{v:.2f}" for v in values)


def cpu_model() -> str:
    with contextlib.suppress(OSError):  # no /proc/cpuinfo (macOS): fall back to what platform knows
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "-"


def service_section(service: Json | None, results: Path, docs: Path) -> list[str]:
    lines = ["## 1. Env service: steps/s and step latency", ""]
    if service is None:
        return [*lines, "Not measured: service_throughput.json is missing.", ""]
    settings, machine = service.get("settings", {}), service.get("machine", {})
    n = str(settings.get("servers", 2))
    lines += [
        f"Whole episodes (create with reset, {settings.get('steps_per_episode', '?')} steps, close) for "
        f"{settings.get('seconds', '?')} s per cell and round, {settings.get('rounds', 1)} round(s): within a "
        f"round each concurrency runs on 1 server, then on {n}, so both see the same load; every figure is "
        "the median over rounds, and a ratio is the median of each round's ratio. "
        "Each action is from `info['available_actions']`. "
        f"In-process (`spec.make()`, no HTTP, one core) is the ceiling. Load generator: "
        f"{settings.get('load_generator', '-')}. Load average {_load(machine.get('load_average_1_5_15_before'))} "
        f"before, {_load(machine.get('load_average_1_5_15_after'))} after. The column of other processes' CPU is "
        "what the rest of the machine (other work, the kernel) used during the cell, in cores of the "
        f"{machine.get('cpus')}.",
        "",
    ]
    for env, result in service.get("envs", {}).items():
        ceiling = result["in_process"]
        lines += [
            f"**{env}**: in-process {num(ceiling['steps_per_s'])} steps/s, step p50 {ms(ceiling['step_p50_ms'])} ms.",
            "",
        ]
        rows = []
        for one in result["service"].get("1", []):
            many = service_row(service, env, n, one["concurrency"]) if n != "1" else None
            rows.append(
                [
                    str(one["concurrency"]),
                    num(one["steps_per_s"]) + low_high(one, "steps_per_s", num),
                    times(one.get("ratio_to_in_process")),
                    f"{ms(one['step_p50_ms'])} / {ms(one['step_p99_ms'])}" + low_high(one, "step_p99_ms", ms),
                    "-" if many is None else num(many["steps_per_s"]) + low_high(many, "steps_per_s", num),
                    "-" if many is None else times(many.get("ratio_to_one_server")),
                    "-" if many is None else f"{ms(many['step_p50_ms'])} / {ms(many['step_p99_ms'])}",
                    f"{one['server_cpu_ms_per_step']:.3f}",
                    f"{one['loadgen_cpu_ms_per_request']:.3f} ({loadgen_core_share(one):.0%})",
                    cores(one.get("others_cpu_cores")),
                ]
            )
        lines += table(
            [
                "sessions",
                "1 server steps/s (range over rounds)",
                "service / in-process",
                "p50 / p99 ms (p99's range)",
                f"{n} servers steps/s",
                f"{n} servers / 1",
                f"{n} servers p50 / p99 ms",
                "server CPU ms/step",
                "load generator CPU ms/request (share of a core)",
                "other processes' CPU, cores",
            ],
            rows,
        )
        lines.append("")
    compared = load(results, "service_compare.json")
    lines += p99_reading(service, compared)
    lines += before_after_service(compared)
    lines += [*image(results, docs, "service_throughput.png", "service throughput and latency"), ""]
    return lines


def p99_reading(service: Json, compared: Json | None) -> list[str]:
    """What the p99 target at 64 sessions depends on, in this run's own figures."""
    row = service_row(service, "textcraft", "1", 64)
    if row is None:
        return []
    # Little's law: with 64 sessions each waiting on its one request, mean latency = 64 / requests per second.
    mean_ms = 1000 * 64 / (row["steps_per_s"] * row["requests_per_step"])
    text = (
        f"Reading the p99 at 64 sessions (textcraft, one server): 64 sessions each wait on one request, so the "
        f"mean request latency is 64 / (requests per second) = {mean_ms:.1f} ms here (Little's law), and the "
        f"p99 step was {row['step_p99_ms'] / mean_ms:.1f}x that: the latency target is a throughput target "
        "in disguise, and it moves with whatever else the machine runs."
    )
    for one in (compared or {}).get("compared", {}).values():
        variants = one.get("variants", {})
        alone = variants.get("this checkout", {}).get("by_concurrency", {}).get("64")
        busy = next((v for v in variants.values() if v.get("busy_loops")), None)
        if alone is None or busy is None or "64" not in busy["by_concurrency"]:
            continue
        beside = busy["by_concurrency"]["64"]
        text += (
            f" Side by side (below), the same server's p99 was {ms(alone['step_p99_ms'])} ms with other processes "
            f"using {cores(alone.get('others_cpu_cores'))} cores and {ms(beside['step_p99_ms'])} ms with "
            f"{busy['busy_loops']} busy loop(s) beside it ({cores(beside.get('others_cpu_cores'))} cores); "
            f"steps/s {num(alone['steps_per_s'])} and {num(beside['steps_per_s'])}."
        )
    return [text, ""]


def before_after_service(compared_result: Json | None) -> list[str]:
    """``service_compare.json`` (``service_throughput.py --compare / --busy-loops``), when one was run."""
    lines: list[str] = []
    machine = (compared_result or {}).get("machine", {})
    for env, compared in (compared_result or {}).get("compared", {}).items():
        variants = compared.get("variants", {})
        if len(variants) < 2:
            continue
        lines += [
            f"Side by side on {compared.get('env', env)} (`service_compare.json`), one server each, cells "
            f"interleaved over {compared.get('rounds')} rounds of {compared.get('seconds')} s (medians); load "
            f"average {_load(machine.get('load_average_1_5_15_before'))} before, "
            f"{_load(machine.get('load_average_1_5_15_after'))} after.",
            "",
        ]
        rows = []
        for label, variant in variants.items():
            for c, row in variant["by_concurrency"].items():
                rows.append(
                    [
                        label,
                        c,
                        num(row["steps_per_s"]),
                        ms(row["step_p50_ms"]),
                        ms(row["step_p99_ms"]),
                        f"{row['server_cpu_ms_per_step']:.3f}",
                        cores(row.get("others_cpu_cores")),
                    ]
                )
        lines += table(
            ["server", "sessions", "steps/s", "p50 ms", "p99 ms", "server CPU ms/step", "other processes' CPU, cores"],
            rows,
        )
        lines.append("")
    return lines


def executor_section(executor: Json | None, results: Path, docs: Path) -> list[str]:
    lines = ["## 2. Executor: episodes/s against concurrency", ""]
    if executor is None:
        return [*lines, "Not measured: executor_scaling.json is missing.", ""]
    settings = executor.get("settings", {})
    lines += [
        f"The hub `Executor` drives the `{settings.get('agent')}` agent against one `{settings.get('env')}` server; "
        f"{settings.get('turns')}-turn episodes; the LLM is an OpenAI-compatible stand-in "
        "(`benchmarks/llm_stand_in.py`). Speed-up is over concurrency 1 (serial, "
        f'{settings.get("serial_episodes", "a few")} episodes) in the same run; "of ideal" is the share of what '
        "the model allows at that concurrency: concurrency / (turns x the stand-in's latency there).",
        "",
        *stand_in_lines(executor.get("stand_in")),
        *stand_in_curve(executor),
    ]
    rows = []
    for series, cells in executor.get("latencies", {}).items():
        for row in cells:
            rows.append(
                [
                    series_label(series),
                    str(row["concurrency"]),
                    "-" if row.get("llm_latency_ms") is None else f"{row['llm_latency_ms']:,.0f}",
                    f"{row['episodes_per_s']:.2f}",
                    times(row.get("speedup_over_serial")),
                    f"{row.get('efficiency', 0):.0%}",
                    f"{row['executor_cpu_ms_per_turn']:.2f}",
                    f"{row.get('env_server_cpu_ms_per_turn', 0):.2f}",
                ]
            )
    lines += table(
        [
            "LLM",
            "concurrency",
            "LLM latency there, ms",
            "episodes/s",
            "speed-up over serial",
            "of ideal",
            "executor CPU ms/turn",
            "env server CPU ms/turn",
        ],
        rows,
    )
    return [
        *lines,
        "",
        *saturation_reading(executor.get("latencies", {}), (executor.get("stand_in") or {}).get("growth")),
        *image(results, docs, "executor_scaling.png", "executor scaling"),
        "",
    ]


def saturation_reading(latencies: dict[str, list[Json]], growth: float | None) -> list[str]:
    """What the vLLM-shaped series shows, in its own figures: the speed-up levels off, the executor keeps up."""
    loaded = next((rows for key, rows in latencies.items() if " " in key), None)
    if not loaded or not growth or len(loaded) < 2:
        return []
    serial, top = loaded[0], max(loaded, key=lambda r: r["speedup_over_serial"] or 0)
    shares = [r["efficiency"] for r in loaded[1:]]
    return [
        f"Under the vLLM-shaped stand-in the speed-up levels off at {times(top['speedup_over_serial'])} "
        f"(concurrency {top['concurrency']}), where a fixed latency's ideal keeps growing with concurrency: past "
        "a few requests in flight, more concurrency only lengthens every turn. The serial run itself reached "
        f"{serial['efficiency']:.0%} of its ideal (the executor's own time per turn at concurrency 1), so a "
        f"speed-up over it can exceed the model's bound of {1 / growth:.1f}x; the share of ideal at concurrency "
        f"{loaded[1]['concurrency']} and above, {min(shares):.0%} to {max(shares):.0%}, says the executor is "
        "not what limits it.",
        "",
    ]


def stand_in_curve(executor: Json) -> list[str]:
    """The vLLM-shaped stand-in's latency at each concurrency it ran, next to vLLM's measured point."""
    stand_in = executor.get("stand_in") or {}
    growth = stand_in.get("growth")
    loaded = next((rows for key, rows in executor.get("latencies", {}).items() if " " in key), None)
    if not growth or not loaded:
        return []
    rows = []
    for row in loaded:
        c, slowdown = row["concurrency"], 1 + growth * (row["concurrency"] - 1)
        rows.append([str(c), f"{row['llm_latency_ms']:,.0f}", f"{slowdown:.2f}x", f"{c / slowdown:.2f}x", "-"])
    cal = stand_in.get("calibration")
    if cal:
        c = cal["concurrency"]
        rows.append(
            [
                f"{c} (vLLM, measured)",
                f"{1000 * cal['turn_latency_at_c_s']:,.0f}",
                f"{cal['slowdown_at_c']:.2f}x",
                f"{c / cal['slowdown_at_c']:.2f}x",
                f"{1 + growth * (c - 1):.2f}x",
            ]
        )
    return [
        "The stand-in's latency against the completions in flight (`benchmarks/llm_stand_in.py`, vLLM-shaped "
        "series, as run above), and the model's throughput there over its serial rate, concurrency / slowdown"
        + (
            "; the last row is vLLM's own point from `vllm_vs_hf.json` (full scale, its latency by Little's law), "
            "with the slowdown the stand-in's curve gives at the same concurrency:"
            if cal
            else ":"
        ),
        "",
        *table(["in flight", "latency, ms", "slowdown", "throughput over serial", "the curve there"], rows),
        "",
    ]


def series_label(key: str) -> str:
    """``"500"``: a fixed latency; ``"50 vllm-shaped"``: 50 ms alone, growing with the requests in flight."""
    latency, _, kind = key.partition(" ")
    return f"{latency} ms alone, vLLM-shaped" if kind else f"{latency} ms fixed"


def stand_in_lines(stand_in: Json | None) -> list[str]:
    """The stand-in's curve and where its growth came from (executor_scaling.py's ``calibrate``)."""
    if not stand_in:
        return ["This result predates the load-dependent stand-in: every series is a fixed latency.", ""]
    growth = stand_in["growth"]
    text = (
        f"Fixed series answer after the same delay at any concurrency: the executor's own cost. The vLLM-shaped "
        f"series answers after `{stand_in['curve']}` with growth {growth:g}: each completion in flight adds "
        f"{growth:.0%} of the latency alone, so the model's throughput can never exceed {1 / growth:.1f}x "
        "its serial rate (concurrency / (1 + growth (concurrency - 1)) tends to 1 / growth), as a saturated "
        "inference server's does."
    )
    cal = stand_in.get("calibration")
    if cal:
        text += (
            f" Calibrated from `{cal['source']}` ({cal['config']}, vLLM's CPU build on this 2-core machine, "
            f"measured {(cal.get('vllm_measured') or {}).get('start', 'at an unrecorded date')}): that result has "
            f"one concurrency, {cal['concurrency']}, so its latency per turn there is read by Little's law "
            f"({cal['concurrency']} x wall time / turns = {cal['turn_latency_at_c_s']:.2f} s), and the latency "
            f"alone is bounded by the CPU a turn cost ({cal['cpu_s_per_turn']:.3f} s: a CPU-bound server cannot "
            f"answer faster); the line through both, {cal['slowdown_at_c']:.2f}x slower at "
            f"{cal['concurrency']}, gives growth = ({cal['slowdown_at_c']:.2f} - 1) / {cal['concurrency'] - 1}. "
            "Only the curve's shape is taken: its latency alone is scaled down so the run fits in minutes; "
            "speed-up and share of ideal do not depend on that scale."
        )
    else:
        text += " Its growth was given on the command line (`--growth`), not calibrated."
    return [text, ""]


def memory_section(memory: Json | None, results: Path, docs: Path) -> list[str]:
    lines = ["## 3. Memory: per idle session, after close, over create/close cycles", ""]
    if memory is None:
        return [*lines, "Not measured: env_plugins.json is missing.", ""]
    rules = memory.get("rules", {})
    lines += [
        f"Server RSS (its child processes included). {rules.get('memory', '')}",
        "",
        f"Rule: {rules.get('flat', '-')}.",
        "",
    ]
    rows, notes = [], []
    for name, r in memory.get("envs", {}).items():
        if "error" in r:
            rows.append([name, "-", "-", "-", "-", "-", "-", f"error: {r['error']}"])
            continue
        mem, cyc = r["memory"], r["cycles"]
        per_1000 = cyc.get("growth_kib_per_1000")
        own_1000 = cyc.get("server_process_growth_kib_per_1000")
        rows.append(
            [
                name,
                f"{mem['per_session_kib']:,.1f} (N={mem['sessions']}"
                + (f", after {mem['resets_before']:,} resets)" if "resets_before" in mem else ")"),
                f"{mem['rss_0_mib']:.0f} / {mem['rss_n_mib']:.0f} / {mem['rss_after_close_mib']:.0f}",
                f"{cyc['cycles']:,}" + (" (time cap)" if cyc.get("stopped_by_time_cap") else ""),
                f"{cyc['growth_mib']:+.2f}",
                "-" if per_1000 is None else f"{per_1000:+.1f}",
                "-" if own_1000 is None else f"{own_1000:+.1f}",
                cyc["verdict"],
            ]
        )
        if cyc.get("fewer_cycles_because"):
            notes.append(f"- {name}: {cyc['cycles']:,} cycles, because {cyc['fewer_cycles_because']}.")
    lines += table(
        [
            "env",
            "KiB per idle session",
            "RSS MiB: 0 / N open / after close",
            "create/close cycles",
            "RSS first to last sample, MiB",
            "KiB per 1,000 cycles (quarter 4 vs 2)",
            "the same, server process alone",
            "verdict",
        ],
        rows,
    )
    lines += ["", *notes] if notes else []
    lines += jvm_heap_lines(load(results, "jvm_heap.json"))
    lines += declared_footprint_lines()
    return [*lines, "", *image(results, docs, "env_plugins.png", "env plugins: latency and memory"), ""]


def _measured(value: Any) -> str:
    if isinstance(value, dict):
        return "(" + ", ".join(f"{key}: {_measured(v)}" for key, v in value.items()) + ")"
    return f"{value:,.2f}" if isinstance(value, float) else str(value)


def declared_footprint_lines() -> list[str]:
    """What each installed env plugin declares a server costs: its footprints.json, which the memory benchmarks
    wrote from their results (``--write-footprints``), and the pod that ``agenthub deploy k8s`` sizes from it."""
    from agenthub import get_plugin_host
    from agenthub.deploy.k8s import K8sConfig, memory_mib, pod_sessions
    from agenthub.errors import PluginError
    from agenthub.measured_footprints import FOOTPRINTS_FILE, package_of, read_footprints

    host, rows = get_plugin_host(), []
    for spec in sorted(host.envs, key=lambda spec: spec.name):
        name = spec.name
        try:
            entry = read_footprints(package_of(spec)).get(name)
        except PluginError:
            entry = None
        if not entry:
            continue
        config = K8sConfig(env=name)
        sessions = pod_sessions(spec, config)
        request, limit, _ = memory_mib(spec, config, sessions)
        measured = ", ".join(f"{key} {_measured(value)}" for key, value in entry.get("measured", {}).items())
        rows.append(
            [
                name,
                f"{entry['base_mib']:g}",
                f"{entry['per_session_mib']:g}",
                f"{sessions}: {request:,} / {limit:,} Mi",
                f"{entry.get('source', '-')}: {measured}",
            ]
        )
    if not rows:
        return []
    return [
        "",
        f"Declared footprints: each env plugin's `{FOOTPRINTS_FILE}`, written by `env_plugins.py --write-footprints` "
        "(webarena: `webarena_env.py --write-footprints`) from the figures above, rounded up; what "
        "`agenthub deploy k8s` requests for a pod (the server, its sessions and 64 MiB of slack; the limit 1.5 "
        "times that) and the Ray backend reserves.",
        "",
        *table(["env", "server MiB", "a session MiB", "pod at its max_sessions: request / limit", "measured"], rows),
    ]


def jvm_heap_lines(heap: Json | None) -> list[str]:
    """Inside sciworld's JVM: whether what grows is live objects (a leak) or the JVM's own resident memory."""
    if heap is None:
        return []
    live, rss = heap["live_heap"], heap["rss"]
    first, last = heap["samples_mib"]["live_heap"][0][1], heap["samples_mib"]["live_heap"][-1][1]
    rss_first, rss_last = heap["samples_mib"]["rss"][0][1], heap["samples_mib"]["rss"][-1][1]
    if live["verdict"] == "flat" and rss["verdict"] != "flat":
        reading = (
            "the objects the simulator and py4j keep alive do not grow; what grows is the JVM's own resident "
            "memory (compiled code, class metadata, its allocator), fastest in the first resets: not a leak of "
            "the plugin's, and the strict rule above still counts it as growth"
        )
    elif live["verdict"] != "flat":
        reading = "the live heap grows: objects are kept alive across resets (a leak in the simulator or py4j)"
    else:
        reading = "neither grows"
    jvms = heap.get("jvm_processes", 1)
    if jvms > 1:  # the plugin recycles a JVM after so many resets: resident size restarts with each new one
        reading += (
            f"; the instance was served by {jvms} JVMs in turn (the plugin recycles one after so many resets), "
            "so the resident size is bounded by the recycling, and the live heap is the reading of a leak"
        )
    return [
        "",
        f"- {heap['env']}'s JVM from the inside (`benchmarks/jvm_heap.py`: one instance reset "
        f"{heap['cycles']:,} times, two full collections before each sample): live heap {first:.1f} to "
        f"{last:.1f} MiB ({live['growth_kib_per_1000']:+.1f} KiB per 1,000 resets, {live['verdict']}), resident "
        f"size {rss_first:.0f} to {rss_last:.0f} MiB ({rss['growth_kib_per_1000']:+.1f} KiB per 1,000 resets, "
        f"{rss['verdict']}): {reading}.",
    ]


def learning_settings_line(learning: Json) -> str:
    """The settings that decide what the figure means, and the commit and load it was measured at."""
    settings = learning.get("settings", {})
    shown = ", ".join(
        f"{key}={settings[key]}"
        for key in ("max_tokens", "tasks_per_step", "num_generations", "learning_rate", "beta", "entropy_coef")
        if key in settings
    )
    commit = learning.get("commit")
    measured = f"; measured at commit {commit[:12]}" if commit else "; the commit it measured was not recorded"
    load = learning.get("load_average_at_end")
    at_load = f", load average {load[0]:.1f} at its end" if load else ""
    return f"Settings: {shown or 'not recorded'}{measured}{at_load}."


def learning_section(learning: Json | None, path: Path, how: Json | None, docs: Path) -> list[str]:
    lines = ["## 4. Learning: the embedded default with the TRL trainer", ""]
    if learning is None:
        return [
            *lines,
            f"Not measured: {path.name} is missing.",
            "",
            *seeds_lines(path.parent / "trl_seeds.json", docs),
        ]
    how = how or {}
    source = how.get("note") or f"From {path.name}, measured {result_date(learning)}."
    if learning.get("measured_at"):  # the result's own date beats a note from an older run_all
        source = f"Measured {learning['measured_at']} ({path.name})."
    before, after = learning["eval_before"], learning["eval_after"]
    reached = learning.get("reached_0.8") or {}
    settings = learning.get("settings", {})
    lines += [
        f"`agenthub run trainer=trl env={learning['env']}`: GRPO on a tiny random model, "
        f"{settings.get('steps')} steps of {settings.get('episodes_per_step')} episodes, on "
        f"{learning.get('cpus')} CPUs. {source}",
        "",
        learning_settings_line(learning),
        "",
        *table(
            ["test success before", "after", "reached 0.8 (training episodes)", "training wall time", "passed"],
            [
                [
                    f"{before['success']:.1%} of {before['episodes']}",
                    f"{after['success']:.1%} of {after['episodes']}",
                    f"step {reached['step']} at {reached['elapsed_s']:.0f} s" if reached else "never",
                    f"{learning['train_wall_s']:.0f} s (budget {learning.get('budget_s', 0):.0f} s)",
                    "yes" if learning.get("passed") else "**no**",
                ]
            ],
        ),
        "",
        *image(path.parent, docs, path.with_suffix(".png").name, "learning curve"),
        "",
        *seeds_lines(path.parent / "trl_seeds.json", docs),
    ]
    return lines


def seed_list(seeds: list[int]) -> str:
    """``0-19`` for a run of consecutive seeds, else each one."""
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


def maze_ceiling_lines(ceiling: Json | None) -> list[str]:
    """``maze_observation_ceiling.py``: how much of the maze oracle's demonstrations the agent's view explains."""
    if ceiling is None:
        return []
    seen, held, policy = ceiling["demonstrations"], ceiling["held_out"], ceiling["greedy_policy"]

    def pct(share: float) -> str:
        return f"{100 * share:.1f}%"

    return [
        "### What the maze oracle's demonstrations can teach",
        "",
        f"The AgentGym-RL recipe (`examples/agentgym_recipe`) warm-starts on the maze oracle's wins. The oracle plans "
        "with the whole maze; the agent sees the goal, its position and the walls next to it. Share of the "
        f"oracle's moves each policy of that view matches, on the recipe's {seen['mazes']} demonstration mazes "
        f"({seen['moves']:,} moves) and on {held['mazes']} other train mazes "
        f"(measured {result_date(ceiling)}{stale_note('maze_observation_ceiling', ceiling)}):",
        "",
        *table(
            ["policy of the current view", "demonstrations", "other mazes"],
            [
                [
                    "a table fitted on the demonstrations (memorising them)",
                    pct(seen["lookup_share"]),
                    pct(held["lookup_share"]),
                ],
                ["a table of the walls alone", pct(seen["walls_share"]), pct(held["walls_share"])],
                [
                    "greedy: an open move that most shortens the distance to the goal",
                    pct(seen["greedy_share"]),
                    pct(held["greedy_share"]),
                ],
            ],
        ),
        "",
        f"As a policy, the greedy rule wins {policy['test_wins']} of the {policy['test_tasks']} test starts and "
        f"{policy['test_random_wins']:,} of {policy['test_random_tasks']:,} `test-random` mazes within "
        f"{policy['max_turns']} moves. So the view holds most of what the oracle does: a start that only learns "
        "the walls (the recipe's SFT start matched 40-46% of moves) has not yet learnt to compare its position "
        "with the goal's, and memorising the demonstrations does not carry to other mazes.",
        "",
        *goal_blind_lines(ceiling.get("goal_blind")),
    ]


def goal_blind_lines(blind: Json | None) -> list[str]:
    """Walks that never read the goal: what the recipe can gain before its model compares positions."""
    if blind is None:
        return []
    test = blind["test"]
    rows = [["test (25 double-T starts)", str(test["max_turns"]), f"{test['walls']:.2f}", f"{test['no_reverse']:.2f}"]]
    rows += [
        [f"train ({blind['train_tasks']} mazes)", str(h["max_turns"]), f"{h['walls']:.2f}", f"{h['no_reverse']:.2f}"]
        for h in blind["train"]
    ]
    return [
        f"Policies that never read the goal, {blind['samples_per_task']} sampled walks a task: a random open move "
        "(what a start that learnt only the walls plays), and one that does not undo its last move unless it "
        "must (the walls and the agent's own last reply, both in its context):",
        "",
        *table(["tasks", "turn limit", "random open move", "never undo the last move"], rows),
        "",
        "Not undoing the last move is learnable without comparing positions, and is most of the gap between "
        "a walls-only start and the test's ceiling; the turn limits of GRPO's schedule decide how often a "
        "training group holds a win at all.",
        "",
    ]


def seeds_lines(path: Path, docs: Path) -> list[str]:
    """``trl_seeds.py``'s count: the same default run for many seeds, how many of them learned."""
    lines = ["### Over seeds: how often the default learns", ""]
    if not path.is_file():
        return [*lines, f"Not measured: {path.name} is missing.", ""]
    seeds: Json = json.loads(path.read_text())
    s, level = seeds["summary"], seeds["level"]
    done = [r for r in seeds["seeds"] if r["returncode"] == 0]

    def at_step(kept: Json | None) -> str:
        return f"{kept['success']:.2f} (step {kept['step']})" if kept else "-"

    rows = [
        [
            str(r["seed"]),
            f"{r['final_success']:.2f}",
            at_step(r.get("last")),
            at_step(r.get("best")),
            f"{r['test']['success']:.2f}",
            f"{r['train_wall_s']:.0f} s",
            "yes" if r["learned"] else "**no**",
        ]
        for r in done
    ]
    rows += [
        [str(r["seed"]), "-", "-", "-", "-", f"{r['train_wall_s']:.0f} s", "**failed**"]
        for r in seeds["seeds"]
        if r not in done
    ]
    target = (
        f" Final training success at least {s['target']}: **{s['final_success_at_least_target']} of {s['runs']}**."
        if "target" in s
        else ""
    )
    return [
        *lines,
        f"`{seeds['command'].strip()}` for seeds {seed_list([r['seed'] for r in seeds['seeds']])} "
        f"(`benchmarks/trl_seeds.py`), {seeds['parallel']} runs at a time with {seeds['threads_per_run']} torch "
        f"thread each on {seeds['cpus']} CPUs, from {path.name}, measured {result_date(seeds)}. A seed learned when "
        f"the mean training success of its last {seeds['final_steps']} steps and its final model's success on "
        f"{seeds['eval_episodes']} test episodes are both at least {level}: **learned in {s['learned']} of "
        f"{s['runs']}** (training success: {s['final_success_at_least_level']}, test success: "
        f"{s['test_success_at_least_level']}); median {s['median_train_wall_s']:.0f} s a run, at most "
        f"{s['max_train_wall_s']:.0f} s.{target} *Last* is the last step's training success; *best* is the "
        "checkpoint the run keeps as its best (the highest mean success over its last steps).",
        "",
        *table(
            [
                "seed",
                f"training success, last {seeds['final_steps']} steps",
                "last step",
                "best checkpoint",
                "test success",
                "wall time",
                "learned",
            ],
            rows,
        ),
        "",
        *image(path.parent, docs, path.with_suffix(".png").name, "success per step, one curve per seed"),
        "",
    ]


def engines_section(engines: Json | None, results: Path, docs: Path) -> list[str]:
    lines = ["## 5. Inference engines: vLLM on a CPU against transformers", ""]
    if engines is None:
        return [*lines, "Not measured: vllm_vs_hf.json is missing (benchmarks/vllm_vs_hf.py, in the vLLM venv).", ""]
    load = engines["load_average"]
    model = engines["model"]
    vllm = engines.get("vllm", {})
    lines += [
        f"`benchmarks/vllm_vs_hf.py`: `agenthub eval`'s executor on `{engines['env']}`, "
        f"{engines['episodes_per_round']} episodes a round ({engines['rounds']} rounds, medians), temperature 1, "
        f"max_tokens {engines['max_tokens']}, concurrency {engines['concurrency']}; the tiny random model "
        f"(hidden {model['hidden_size']}, {model['heads']} heads) served by vLLM's CPU build, or run in-process by "
        f"the `hf` agent ({engines['hf_threads']} torch thread). Load average {_load(load['before'])} before, "
        f"{_load(load['after'])} after. vLLM started in {num(vllm.get('startup_s'), 1)} s and held "
        f"{num(vllm.get('rss_gib'), 2)} GiB. CPU ms per token: this process's CPU and vLLM's (API server, "
        "engine core, worker), per generated token. A model this small costs next to nothing to run, so what is "
        "measured is each engine's own cost per step: one batched `generate` in-process against vLLM's scheduler "
        "and three processes passing every step over ZeroMQ (untuned: no tcmalloc or Intel OpenMP preloaded). It "
        "says nothing of a real model on a machine of its own.",
        "",
    ]
    rows = []
    for name, result in engines["results"].items():
        median = result["median"]
        cpu = statistics.median(r["cpu_s"] / r["generated_tokens"] * 1000 for r in result["rounds"])
        rows.append(
            [
                name,
                f"{median['episodes_per_s']:.2f}",
                f"{median['tokens_per_s']:.0f}",
                times(median.get("tokens_per_s_vs_hf")) if name != "hf" else "1x",
                f"{cpu:.2f}",
            ]
        )
    lines += table(["engine", "episodes/s", "generated tokens/s", "tokens/s vs hf", "CPU ms per token"], rows)
    return [*lines, "", *image(results, docs, "vllm_vs_hf.png", "vLLM against hf"), ""]


def which_call(step_run: str | None, this_call: str) -> str:
    """The run_all.py call a step belongs to: this one, an earlier one by its start, or one not recorded."""
    if step_run == this_call:
        return "this call"
    try:
        datetime.datetime.fromisoformat(step_run or "")
    except ValueError:
        return "an earlier call (its start not recorded)"
    return f"the call started {step_run}"


def runs_section(run: Json | None) -> list[str]:
    if run is None:
        return []
    rows = [
        [
            name,
            f"`{step['command']}`",
            str(step.get("started", "-")),
            str(step.get("finished", "-")),
            f"{step['wall_s']:.0f} s",
            str(step["returncode"]),
            _load(step.get("load_average_before")),
            which_call(step.get("run"), run["started"]),
        ]
        for name, steps in run.get("benchmarks", {}).items()
        for step in steps
    ]
    return [
        "## How these figures were made",
        "",
        "`benchmarks/run_all.py` ran each part's benchmarks as subprocesses; its last call was "
        f"`{run['command']}` ({run['started']} to {run['finished']}). A part that call did not run keeps its "
        "record from the call that did, named in the last column:",
        "",
        *table(["part", "command", "started", "finished", "wall", "exit code", "load average before", "run"], rows),
        "",
    ]


def search_section(search: Json | None) -> list[str]:
    """The search env's retrieval (benchmarks/search_retrieval.py)."""
    lines = ["## 6. Search env: BM25 retrieval shared by several servers", ""]
    if search is None:
        return [*lines, "Not measured: search_retrieval.json is missing (`python benchmarks/search_retrieval.py`).", ""]
    build = search.get("build", {})
    rows = [
        [
            str(row["servers"]),
            num(row.get("queries_per_s")),
            ms(row.get("p50_ms")),
            ms(row.get("p99_ms")),
            ", ".join(f"{x:.0f}" for x in row.get("rss_mib_each", [])),
            ", ".join(f"{x:.0f}" for x in row.get("uss_mib_each", [])),
        ]
        for row in search.get("servers", [])
    ]
    batched = next((r["batched"] for r in search.get("servers", []) if r.get("batched")), None)
    per_session = search.get("per_session", {})
    first = (search.get("servers") or [{}])[0]
    settings = (search.get("provenance") or {}).get("settings", {})
    if "built_in_this_run" in build:  # the generated corpus at scale, a multi-process load generator
        cached = "built in this run" if build["built_in_this_run"] else "loaded from the cache an earlier run built"
        lines += [
            f"`benchmarks/search_retrieval.py` on {build.get('passages', 0):,} generated passages "
            f"({build.get('corpus_mib')} MiB, Zipf-distributed made-up words); the BM25 index (bm25s) took "
            f"{build.get('build_s')} s to build and is {build.get('index_mib')} MiB on disk, {cached} "
            f"(opened in {build.get('open_s')} s) and memory-mapped by every server. "
            f"{first.get('queries', 0):,} distinct queries per server count, never repeated, through "
            f"`agenthub serve-retriever`, one query a request, top 3, from {first.get('loadgen_processes')} "
            f"load-generator processes of {settings.get('clients', '?')} connections each:",
            "",
        ]
    else:
        lines += [
            f"`benchmarks/search_retrieval.py` on the generated corpus: {build.get('passages', 0):,} passages "
            f"({build.get('corpus_mib')} MiB); the BM25 index (bm25s) built in {build.get('build_s')} s, "
            f"{build.get('index_mib')} MiB on disk, memory-mapped by every server. Queries through "
            "`agenthub serve-retriever`, one query a request, top 3, 4 clients a server:",
            "",
        ]
    lines += [
        *table(["servers", "queries/s", "p50 ms", "p99 ms", "RSS MiB each", "own (USS) MiB each"], rows),
        "",
    ]
    if batched:
        rate = num(batched["queries_per_s"])
        lines += [f"Batches of {batched['batch']} queries to one server: {rate} queries/s.", ""]
    if per_session:
        lines += [f"One more env session costs about {per_session.get('bytes_per_session')} bytes.", ""]
    return lines


WEBARENA_PLOT_ALT = "webarena env: step latency by concurrency, memory by open sessions and over create/close cycles"


def webarena_section(web: Json | None, results: Path, docs: Path) -> list[str]:
    """The webarena env through the service (benchmarks/webarena_env.py)."""
    lines = ["## 7. WebArena env: a real browser per server", ""]
    if web is None:
        return [*lines, "Not measured: webarena_env.json is missing (`python benchmarks/webarena_env.py`).", ""]
    machine = web.get("machine", {})
    quick = " (`--quick`: small samples)" if web.get("quick") else ""
    latency = web.get("latency", {})
    rows = [[name.replace("_", " "), ms(v.get("mean_ms")), ms(v.get("p50_ms")), ms(v.get("p90_ms")), str(v.get("n"))]
            for name, v in latency.items()]  # fmt: skip
    memory = web.get("memory_per_session", {})
    per = [f"{r['per_session_mb']:.0f}" for r in memory.get("by_open_sessions", [])]
    scaling = web.get("scaling", {})
    cycles = web.get("create_close_cycles", {})
    resets = memory.get("resets_before")
    warm = f", read after {resets:,} resets" if resets else ", read on a fresh browser (no warm-up resets recorded)"
    lines += [
        f"`benchmarks/webarena_env.py`{quick}, through `agenthub serve env=webarena` on the built-in shop, "
        f"load average {machine.get('load_avg_start')} to {machine.get('load_avg_end')} on "
        f"{machine.get('cores')} cores: upper bounds.",
        "",
        *table(["call", "mean ms", "p50 ms", "p90 ms", "n"], rows),
        "",
        f"Memory of the server's process tree (server, browser){warm}: {memory.get('idle_tree_mb')} MB idle, about "
        f"{' / '.join(per)} MB more per open session. Step latency doubles at "
        f"{scaling.get('latency_doubles_at_sessions')} concurrent sessions. Over {cycles.get('cycles')} "
        f"create/close cycles: processes {' -> '.join(str(p) for p in cycles.get('processes_first_last', []))}.",
        "",
        *webarena_cycle_reading(cycles, memory.get("by_open_sessions", [])),
        *image(results, docs, "webarena_env.png", WEBARENA_PLOT_ALT),
        "",
    ]
    return lines


FLAT_MB_PER_1000_CYCLES = 10.0
"""Memory counts as flat over create/close cycles when it grows less than this per 1,000 (10 KB a context)."""


def webarena_cycle_reading(cycles: Json, by_open: list[Json]) -> list[str]:
    """The create/close samples, which part of the tree grew (if any), and the marginal cost of a session."""
    samples = cycles.get("samples", [])
    if not samples:
        return []
    every = samples[1]["cycle"] - samples[0]["cycle"] if len(samples) > 1 else 0
    points = ", ".join(f"{s['tree_mb']:.0f} MB at cycle {s['cycle']}" for s in samples)
    loads = [s["load_avg"] for s in samples if s.get("load_avg") is not None]
    line = f"Process-tree memory every {every} cycles: {points}."
    if loads:
        line += f" Load average during the cycles {min(loads):.1f} to {max(loads):.1f}."
    if len(by_open) >= 2:
        a, b = by_open[-2], by_open[-1]
        marginal = (b["tree_mb"] - a["tree_mb"]) / (b["open_sessions"] - a["open_sessions"])
        line += (
            f" Between {a['open_sessions']} and {b['open_sessions']} open sessions each one adds "
            f"({b['tree_mb']} - {a['tree_mb']}) / {b['open_sessions'] - a['open_sessions']} = {marginal:.0f} MB."
        )
    lines = [line, ""]
    slope = cycles.get("slope_mb_per_1000_second_half")
    parts = cycles.get("component_slopes_mb_per_1000_second_half", {})
    if slope is None or "components_mb" not in samples[-1]:  # a result from before the samples were split
        growth = max(s["tree_mb"] for s in samples[len(samples) // 2 :]) - min(s["tree_mb"] for s in samples[1:])
        if growth > 20:  # MB: more than the noise of one sample, so say so rather than call it flat
            lines += [
                f"The samples after the first range over {growth:.0f} MB (renderers of closed sessions still "
                "exiting were counted), so this run does not show memory flat.",
                "",
            ]
        return lines
    later = samples[len(samples) // 2 :]
    low, high = min(s["tree_mb"] for s in later), max(s["tree_mb"] for s in later)
    by_part = ", ".join(f"{name} {value:+.1f}" for name, value in parts.items() if value is not None)
    verdict = (
        f"flat: under the {FLAT_MB_PER_1000_CYCLES:g} MB per 1,000 cycles this page counts as flat"
        if abs(slope) <= FLAT_MB_PER_1000_CYCLES
        else f"**not flat**: over the {FLAT_MB_PER_1000_CYCLES:g} MB per 1,000 cycles this page allows"
    )
    lines += [
        f"Each sample is taken once the closed sessions' renderers have exited. Over the second half "
        f"(cycles {later[0]['cycle']} to {later[-1]['cycle']}) the tree stays within {low:.0f} to {high:.0f} MB "
        f"and its least-squares slope is {slope:+.1f} MB per 1,000 cycles, {verdict}. By part, MB per 1,000 "
        f"cycles: {by_part}.",
        "",
    ]
    return lines


def speedup_lines(machines: list[Json]) -> list[str]:
    """Each GPU row's time against the CPU row's, for the main job's training and the recipe."""
    cpu = next((m for m in machines if m["device"].startswith("CPU")), None)
    if cpu is None:
        return []
    lines = []
    for m in machines:
        if m is cpu:
            continue
        train = cpu["main_job"]["train_s"] / m["main_job"]["train_s"]
        recipe = cpu["recipe"]["total_s"] / m["recipe"]["total_s"]
        lines.append(
            f"{m['device']} against the CPU: the main job's training {train:.2f}x as fast, the recipe "
            f"{recipe:.2f}x (SFT {cpu['recipe']['stages_s']['sft'] / m['recipe']['stages_s']['sft']:.2f}x, GRPO "
            f"{cpu['recipe']['stages_s']['grpo'] / m['recipe']['stages_s']['grpo']:.2f}x). The default's tiny model "
            "is too small for the GPU to shorten its matrix work much; what is left is CPU work (the episodes' "
            "env steps and tokenizing), on CPUs that were shared there (below)."
        )
    return [*lines, ""] if lines else []


def device_times_section(times: Json | None) -> list[str]:
    """``device_times.py``: the README's main job and one recipe seed, on each machine they ran on."""
    lines = ["## 12. CPU and GPU: the main job and the recipe", ""]
    if times is None:
        return [*lines, "Not measured: device_times.json is missing.", ""]
    machines = times["machines"]
    stages = ["oracle", "sft", "test-sft", "grpo", "test-grpo"]
    rows = []
    for m in machines:
        main, recipe = m["main_job"], m["recipe"]
        rows.append(
            [
                m["device"] if m["device"].startswith("CPU") else f"{m['device']} ({m['cpus']} CPUs)",
                m["commit"][:10],
                m["measured"].split(" to ")[0][:16].replace("T", " "),
                f"{main['train_s']:.0f} s",
                f"{main['wall_s']:.0f} s",
                f"{main['test_success']:.2f}",
                *(f"{recipe['stages_s'].get(stage, 0.0):.0f} s" for stage in stages),
                f"{recipe['total_s'] / 60:.1f} min",
                f"{recipe['test_sft']:.3f} -> {recipe['test_grpo']:.3f}",
            ]
        )
    lines += [
        f"`python benchmarks/device_times.py run` on each machine, then `record` (measured "
        f"{result_date(times)}{stale_note('device_times', times)}). Each row names the commit it ran: the trainer "
        "code a row measured may be older than this page's. The main job is `agenthub run trainer=trl env=trail` "
        "(training time, then the whole command with its test-split score over 256 episodes); the recipe is "
        "`examples/agentgym_recipe/run.py seed=0`, each stage's wall time:",
        "",
        *table(
            [
                "machine",
                "commit",
                "when (UTC)",
                "main job: training",
                "main job: whole",
                "test success",
                *(f"recipe: {stage}" for stage in stages),
                "recipe: total",
                "recipe: test success, SFT -> GRPO",
            ],
            rows,
        ),
        "",
        *speedup_lines(machines),
        "The GPU rows are what calls of a lent machine brought back (`benchmarks/results/device_times/`, with the "
        "scripts that made them), run while that machine's CPU cores also ran `trl_seeds.py` sweeps, so its "
        "env servers and evals shared the CPUs. There, with TRL's default bf16 mixed precision on a GPU, the "
        "recipe's GRPO stage failed at step 16 on scores that were NaN (`recipe-bf16-crash.log`); the recipe now "
        "trains GRPO in float32 (`trl.bf16: false` in `maze.yaml`), and a model whose scores cannot be sampled "
        "from stops with that cause and cure instead of CUDA's device-side assert.",
        "",
    ]
    return lines


def recipe_lines(recipe: Json | None) -> list[str]:
    """``agentgym_recipe.py``: per seed, the SFT start, GRPO's model, the margin and its bootstrap interval."""
    if recipe is None:
        return ["The AgentGym-RL recipe on maze: not measured (agentgym_recipe.json is missing).", ""]
    summary = recipe["summary"]
    if "margin_interval_half_width_mean" not in summary:
        return [
            f"The AgentGym-RL recipe on maze (measured {result_date(recipe)}{stale_note('agentgym_recipe', recipe)}): "
            f"test success {summary['test_sft']['mean']:.3f} -> {summary['test_grpo']['mean']:.3f} over "
            f"{summary['seeds']} seeds (margin {summary['margin']['mean']:+.3f}); that run recorded no intervals.",
            "",
        ]
    rows = []
    for r in recipe["per_seed"]:
        low, high = r["margin_interval_95"]
        loads = [t["load_average_before"][0] for t in r["stages"]]
        rows.append(
            [
                str(r["seed"]),
                f"{r['test_sft']['success']:.2f}",
                f"{r['test_grpo']['success']:.2f}",
                f"{r['margin']:+.2f}",
                f"{low:+.2f} to {high:+.2f}",
                "yes" if r["gain_clear"] else "no",
                f"{r['total_wall_s'] / 60:.1f}",
                f"{min(loads):.1f}-{max(loads):.1f}",
            ]
        )
    test = recipe["per_seed"][0]["config"]["test"]
    episodes = recipe["per_seed"][0]["test_sft"]["episodes"]
    return [
        f"**The AgentGym-RL recipe on maze** (`python benchmarks/agentgym_recipe.py`, measured "
        f"{result_date(recipe)}{stale_note('agentgym_recipe', recipe)}): oracle -> SFT -> GRPO per seed, test "
        f"success of the SFT start and of GRPO's model on the `{test['split']}` split ({episodes} episodes each: "
        f"k={test['k']}, at most {test['max_turns']} moves). The interval is the margin's 95% bootstrap interval "
        f"(both evals' episodes resampled); a gain counts at {summary['gain_bar']:+.2f} or more with the "
        "interval above 0:",
        "",
        *table(
            ["seed", "SFT start", "after GRPO", "margin", "95% interval", "gain counts", "minutes", "load average"],
            rows,
        ),
        "",
        f"{summary['seeds_gaining_bar_outside_noise']} of {summary['seeds']} seeds gain "
        f"{summary['gain_bar']:+.2f} or more outside the noise ({summary['seeds_gaining_bar']} reach the bar); "
        f"margin {summary['margin']['mean']:+.3f} ± {summary['margin']['std']:.3f}. With {episodes} episodes an "
        f"eval's interval is about ±{summary['margin_interval_half_width_mean']:.2f} on the margin; narrowing it to "
        "±0.05 takes about four times the episodes, which the 15 minutes a seed do not hold on this machine.",
        "",
    ]


def recipe_rows(recipe: Json | None, seeds: Json | None) -> list[list[str]]:
    """trail and maze as their own results measured them (read here, so the rows are never older than those)."""
    rows = []
    if seeds is not None:
        summary = seeds["summary"]
        rows.append([
            "trail", f"the default run (agenthub run trainer=trl env=trail), {summary['runs']} seeds",
            f"{summary['final_success_at_least_target']} of {summary['runs']} seeds end at "
            f"{summary['target']:.2f} or more, {summary['learned']} at 0.8 or more (section 4)",
            f"{summary['median_test_success']:.2f} (median)", f"{summary['median_train_wall_s'] / 60:.1f} (median)",
            "learned",
        ])  # fmt: skip
    if recipe is not None:
        summary = recipe["summary"]
        margin = summary["margin"]["mean"]
        rows.append([
            "maze", f"examples/agentgym_recipe (oracle -> SFT -> GRPO), {summary['seeds']} seeds",
            f"test success {summary['test_sft']['mean']:.2f} -> {summary['test_grpo']['mean']:.2f} on average "
            f"(above)", f"{summary['test_grpo']['mean']:.2f} (mean)", f"{summary['total_minutes']['mean']:.1f}",
            "rises" if margin >= 0.1 else "part of it (the SFT start); GRPO not reliably",
        ])  # fmt: skip
    return rows


def tiny_model_rows(tiny: Json) -> list[list[str]]:
    rows = []
    for r in tiny["envs"]:
        settings = " ".join(s for s in r["settings"] if not s.startswith("steps="))
        if "refused" in r:
            rows.append([r["env"], f"refused: {r['refused'].splitlines()[1].strip()}", "", "", "", "refused"])
            continue
        if r.get("returncode") not in (0, None) and not r.get("stopped_at_budget"):  # ended on its own, failing
            error = next((line for line in r["log_tail"].splitlines() if "error" in line), "see its log_tail")
            rows.append([r["env"], settings, f"failed after {r['steps_done']} steps: {error}", "-",
                         f"{r['wall_s'] / 60:.1f}", f"failed (exit {r['returncode']})"])  # fmt: skip
            continue
        stopped = ", stopped at the budget" if r.get("stopped_at_budget") else ""
        test = r.get("test") or {}
        refused_at_launch = r.get("runs_refused_at_launch", 0)
        followed = f" (the run's own checks refused {refused_at_launch}x; followed)" if refused_at_launch else ""
        rows.append(
            [
                r["env"],
                f"{tiny['steps']} GRPO steps from scratch{': ' + settings if settings else ''}{followed}",
                f"{num(r.get('first_success'), 2)} -> {num(r.get('last_success'), 2)} "
                f"({r['steps_done']} steps{stopped})",
                num(test.get("success"), 2) if test.get("success") is not None else "-",
                f"{r['wall_s'] / 60:.1f}",
                r["verdict"],
            ]
        )
    return rows


def from_scratch_section(recipe: Json | None, seeds: Json | None, tiny: Json | None) -> list[str]:
    """What a model trained from scratch learns on each env, on a CPU: the recipes, then 30 steps of the rest."""
    lines = ["## 13. What a model trained from scratch learns on a CPU", "", *recipe_lines(recipe)]
    if tiny is None:
        return [*lines, "Per env: not measured (tiny_model_envs.json is missing).", ""]
    lines += [
        f"**Per env** (`python benchmarks/tiny_model_envs.py`, measured {result_date(tiny)}"
        f"{stale_note('tiny_model_envs', tiny)}): the envs with a recipe as their own benchmarks measured them "
        "(their rows read from `trl_seeds.json` and `agentgym_recipe.json`); "
        f"every other env through `agenthub run trainer=trl env=E steps={tiny['steps']}` on the built-in tiny "
        "model, with the settings the checks before launch named when they refused the defaults, stopped with "
        f"Ctrl-C after {tiny['budget_min']:g} minutes at most. Training success is the mean of the first and the "
        f"last {tiny['edge_steps']} steps' episodes; the test split is scored by the run itself when it finishes:",
        "",
        *table(
            ["env", "recipe and settings", "training success, first -> last", "test success", "minutes", "verdict"],
            [*recipe_rows(recipe, seeds), *tiny_model_rows(tiny)],
        ),
        "",
    ]
    return lines


def agentgym_section(compared: Json | None) -> list[str]:
    """agenthub's TextCraft server beside AgentGym's own (benchmarks/agentgym_textcraft.py)."""
    lines = ["## 14. Env service: agenthub's TextCraft server beside AgentGym's", ""]
    if compared is None:
        missing = "Not measured: agentgym_textcraft.json is missing (`python benchmarks/agentgym_textcraft.py`)."
        return [*lines, missing, ""]
    settings = (compared.get("provenance") or {}).get("settings", {})
    machine, baseline = compared.get("machine", {}), compared["baseline"]
    rows = []
    for cell in compared.get("cells", {}).values():
        ours, theirs = cell["agenthub"], cell["agentgym"]
        busy = cell["busy_loops"]
        rows.append(
            [
                f"{cell['workload']} ({cell['steps_per_episode']} steps)",
                str(cell["concurrency"]),
                str(busy) if busy else "none",
                f"**{cell['ratio_median']:.2f}x** ({cell['ratio_min']:.2f} to {cell['ratio_max']:.2f})",
                f"{num(ours['steps_per_s'])} / {num(theirs['steps_per_s'])}",
                f"{ms(ours['step_p50_ms'])} / {ms(theirs['step_p50_ms'])}",
                f"{ms(ours['step_p99_ms'])} / {ms(theirs['step_p99_ms'])}",
                f"{ours['server_cpu_ms_per_step']:.3f} / {theirs['server_cpu_ms_per_step']:.3f}",
            ]
        )
    pinned = compared.get("server_cores")
    where = (
        f"the servers and the busy loops pinned to core {', '.join(map(str, pinned))} and the client to the others"
        if pinned
        else "nothing pinned (one core)"
    )
    lines += [
        f"`benchmarks/agentgym_textcraft.py`, {machine.get('cpus')} cores, load average "
        f"{_load(machine.get('load_average_1_5_15_before'))} at the start, finished {result_date(compared)}: "
        f"AgentGym's own TextCraft server (its FastAPI app: `{baseline['path']}` at "
        f"`{baseline['commit'][:12]}`, vendored verbatim in `{baseline['vendored_at']}`) and `agenthub serve "
        f"env=textcraft` (one process), the same client for both (`lean_http`), every step `{compared['action']}`; "
        f"{where}. `episodes`: create, steps, close; `reused`: one session a connection, reset every 64 steps "
        f"(AgentGym-RL's client). {settings.get('rounds')} rounds of {settings.get('seconds')} s a cell, both "
        "servers in each round in alternating order; the ratio is agenthub's steps/s over AgentGym's, per round: "
        "its median and range. Steps/s and latencies are medians over the rounds.",
        "",
        *table(
            [
                "workload",
                "sessions",
                "busy loops on the servers' core",
                "agenthub / AgentGym (range)",
                "steps/s, agenthub / AgentGym",
                "p50 ms",
                "p99 ms",
                "server CPU ms/step",
            ],
            rows,
        ),
        "",
    ]
    rounds = [(ratio, key) for key, cell in compared.get("cells", {}).items() for ratio in cell["ratio_per_round"]]
    if rounds:
        lowest, where = min(rounds)
        lines += [
            f"The lowest ratio of any round: **{lowest:.2f}x** ({where}); agenthub's server "
            f"{'was faster than' if lowest > 1 else 'was not always faster than'} AgentGym's in every round of "
            "every cell. Busy loops widen the range: a round's two cells can land on different shares of the "
            "servers' core.",
            "",
        ]
    return lines


def serve_workers_section(workers: Json | None) -> list[str]:
    """``agenthub serve workers=N`` against one worker, from interleaved rounds (benchmarks/serve_workers.py)."""
    lines = ["## 11. Env service: `agenthub serve workers=N` against one worker", ""]
    if workers is None:
        return [*lines, "Not measured: serve_workers.json is missing (`python benchmarks/serve_workers.py`).", ""]
    settings, machine = workers.get("settings", {}), workers.get("machine", {})
    n = settings.get("workers", 2)
    rows = []
    for concurrency, cell in workers.get("by_concurrency", {}).items():
        one, many = cell["workers_1"], cell[f"workers_{n}"]
        rows.append(
            [
                concurrency,
                num(one["steps_per_s"]),
                num(many["steps_per_s"]),
                f"{cell['ratio_median']:.2f}x ({cell['ratio_min']:.2f} to {cell['ratio_max']:.2f})",
                f"{ms(one['step_p50_ms'])} / {ms(many['step_p50_ms'])}",
                f"{ms(one['step_p99_ms'])} / {ms(many['step_p99_ms'])}",
                f"{one['server_cpu_ms_per_step']:.3f} / {many['server_cpu_ms_per_step']:.3f}",
                f"{cores(one.get('others_cpu_cores'))} / {cores(many.get('others_cpu_cores'))}",
            ]
        )
    load = machine.get("load_average_1_5_15_before")
    lines += [
        f"`benchmarks/serve_workers.py` on `{settings.get('env')}`, {machine.get('cpus')} cores, load average "
        f"{_load(load)} at the start, finished {result_date(workers)}: a one-worker server and a {n}-worker server "
        "side by side; "
        f"{settings.get('rounds')} rounds of {settings.get('seconds')} s a cell, each round measuring both in "
        f"alternating order, so both see the same load. The ratio is {n} workers' steps/s over one worker's, "
        "taken per round: its median and, in brackets, its range over the rounds. Steps/s and latencies are "
        f"medians over the rounds. Load generator: {settings.get('load_generator')}.",
        "",
        *table(
            [
                "sessions",
                "1 worker steps/s",
                f"{n} workers steps/s",
                f"{n} / 1 (range over rounds)",
                f"p50 ms, 1 / {n}",
                f"p99 ms, 1 / {n}",
                f"server CPU ms/step, 1 / {n}",
                f"other processes' CPU, cores, 1 / {n}",
            ],
            rows,
        ),
        "",
    ]
    lines += workers_ceiling_lines(workers, n, machine.get("cpus"))
    spread_wide = [
        c for c, cell in workers.get("by_concurrency", {}).items() if cell["ratio_max"] > 2 * cell["ratio_min"]
    ]
    if spread_wide:
        lines += [
            f"At {', '.join(spread_wide)} sessions the ratio's range over rounds spans more than a factor of two: "
            "the machine's other work moved between rounds, so the median is the figure to read and a single "
            "round says nothing.",
            "",
        ]
    return lines


def workers_ceiling_lines(workers: Json, n: int, cpus: int | None) -> list[str]:
    """What the machine's cores allow at the highest concurrency: the load generator shares them, so N workers
    can use at most ``cpus - loadgen cores``, against the cores one worker used."""
    cells = workers.get("by_concurrency", {})
    if not cells or not cpus:
        return []
    concurrency = max(cells, key=int)
    cell = cells[concurrency]
    one, many = cell["workers_1"], cell[f"workers_{n}"]
    if not one.get("server_cpu_cores") or many.get("loadgen_cpu_cores") is None:
        return []
    room = min(float(n), cpus - many["loadgen_cpu_cores"])
    ceiling = room / one["server_cpu_cores"]
    return [
        f"What the cores allow at {concurrency} sessions: one worker used {one['server_cpu_cores']:.2f} cores; "
        f"with {n} workers the load generator took {many['loadgen_cpu_cores']:.2f} of the {cpus} cores, leaving "
        f"the workers at most {room:.2f}, so at the same CPU per step {n} workers can serve at most "
        f"{ceiling:.2f}x what one does here (they used {many['server_cpu_cores']:.2f} cores, at "
        f"{many['server_cpu_ms_per_step']:.3f} ms a step against one worker's {one['server_cpu_ms_per_step']:.3f}). "
        "A load generator on other cores, as in production, leaves the workers the whole machine.",
        "",
    ]


def freshness_section(results: Path, learning_path: Path) -> list[str]:
    """Each result's provenance, read back by benchmarks/provenance.py: complete, unedited, code unchanged."""
    files = sorted(p for p in results.glob("*.json") if p.name != "run_all.json")
    if learning_path.is_file() and learning_path.resolve() not in {p.resolve() for p in files}:
        files.append(learning_path)
    rows = []
    for path in files:
        try:
            result = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(result, dict):
            continue
        fresh = freshness(path.stem, result)
        mark = {"current": "current", "stale": "**stale**", "unknown": "**stale** (undated)"}[fresh.state]
        block = result.get("provenance") or {}
        if block.get("settings", {}).get("quick"):
            mark += ", `--quick` (small samples)"
        if started_quiet(block) is False:
            mark += f", **started under load** (at or above {QUIET_LOAD:g}: re-run it on a quiet machine)"
        started = block.get("started") or block.get("measured_at") or result.get("measured_at")
        when = f"{started or '-'} to {block.get('finished') or '-'}"
        commit = "-" if fresh.commit is None else fresh.commit[:10] + ("+changes" if "+" in fresh.commit else "")
        rows.append([path.name, commit, when, _load(block.get("load_average_start")), mark, fresh.detail])
    if not rows:
        return []
    return [
        "## Which code each result describes",
        "",
        "Each result's provenance block (`benchmarks/provenance.py`) names the commit, when its script started "
        "and finished, the load average at its start, its settings, a fingerprint of the code it measured "
        "(`MEASURED_CODE`) and a digest of its figures. A result is **stale** when a field is missing, when "
        "its figures were edited after its script wrote them, or when the measured code on disk differs from "
        "the fingerprint; this column is rendered from those checks, not written by hand. Re-run a stale "
        f"result's benchmark before quoting it. A result whose run began at a load average of {QUIET_LOAD:g} or "
        "more is marked as started under load: its figures may measure the machine's other work.",
        "",
        *table(["result", "commit", "measured (start to end)", "load average at start", "state", "why"], rows),
        "",
    ]


def sciworld_packing_section(results: Path, docs: Path) -> list[str]:
    """SciWorld sessions packed per JVM against a JVM each (its benchmark renders its own lines)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from sciworld_packing import section_lines  # a sibling module of this script

    return section_lines(load(results, "sciworld_packing.json"), results, docs)


def action_parsing_section(results: Path, docs: Path) -> list[str]:
    """Each seed env's parse time against the length of a hostile action (its benchmark renders its own lines)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from action_parsing import section_lines  # a sibling module of this script

    return section_lines(load(results, "action_parsing.json"), results, docs)


def ray_scaling_section(results: Path, docs: Path) -> list[str]:
    """The Ray backend's episodes/s against raylets (its benchmark renders its own lines)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from ray_scaling import section_lines  # a sibling module of this script

    return section_lines(load(results, "ray_scaling.json"), results, docs)


# -- the page --------------------------------------------------------------------------------


def render(results: Path, docs: Path) -> str:
    service = load(results, "service_throughput.json")
    executor = load(results, "executor_scaling.json")
    memory = load(results, "env_plugins.json")
    run = load(results, "run_all.json")
    how = (run or {}).get("learning")
    learning_path = Path(how["file"]) if how and how.get("file") else results / "trl_learning.json"
    if not learning_path.is_absolute():
        learning_path = ROOT / learning_path
    learning = json.loads(learning_path.read_text()) if learning_path.is_file() else None
    lines = [
        "# Benchmarks",
        "",
        "Made by `python benchmarks/run_all.py` (each benchmark in `benchmarks/`, then this page); "
        "`python benchmarks/summarize.py` renders this page again from the JSON in "
        f"`{Path(os.path.relpath(results, docs.parent)).as_posix()}/`, and nothing else: every figure, "
        "date, load average and verdict below comes from a result a script wrote (its provenance block says "
        "which run), and `tests/test_benchmark_provenance.py` fails when this page differs by a byte from "
        "what the results render, or when a result was edited after its script wrote it. Figures depend on "
        "the machine; the ratios, measured side by side in one run, carry over.",
        "",
        *machine_section(run, service),
        "## Targets",
        "",
        *table(["target (issue 7, 2-core machine)", "measured", "verdict"], target_rows(service, executor, memory)),
        "",
        *freshness_section(results, learning_path),
        *service_section(service, results, docs),
        *executor_section(executor, results, docs),
        *memory_section(memory, results, docs),
        *learning_section(learning, learning_path, how, docs),
        *maze_ceiling_lines(load(results, "maze_observation_ceiling.json")),
        *engines_section(load(results, "vllm_vs_hf.json"), results, docs),
        *search_section(load(results, "search_retrieval.json")),
        *webarena_section(load(results, "webarena_env.json"), results, docs),
        *sciworld_packing_section(results, docs),
        *ray_scaling_section(results, docs),
        *action_parsing_section(results, docs),
        *serve_workers_section(load(results, "serve_workers.json")),
        *agentgym_section(load(results, "agentgym_textcraft.json")),
        *device_times_section(load(results, "device_times.json")),
        *from_scratch_section(
            load(results, "agentgym_recipe.json"),
            load(results, "trl_seeds.json"),
            load(results, "tiny_model_envs.json"),
        ),
        *runs_section(run),
    ]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"where the JSON files are (default {RESULTS})")
    parser.add_argument("--out", type=Path, default=DOCS, help=f"the markdown file to write (default {DOCS})")
    args = parser.parse_args(argv)
    results, out = args.results.resolve(), args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(results, out))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
