"""Benchmarks keep running: each one's quick mode, end to end (figures are not asserted; see benchmarks/)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_benchmark(script: str, *args: str, timeout: float = 180) -> None:
    """Run ``benchmarks/<script>`` with ``args`` in a child Python; fail with its output if it fails."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_env_plugins_benchmark_quick_mode_writes_its_json_and_plot(tmp_path: Path) -> None:
    run_benchmark("env_plugins.py", "--quick", "guess", "--out", str(tmp_path))
    guess = json.loads((tmp_path / "env_plugins.json").read_text())["envs"]["guess"]
    assert guess["latency"]["in_process"]["won"] == guess["latency"]["in_process"]["episodes"] > 0
    assert guess["latency"]["service"]["won"] == guess["latency"]["service"]["episodes"]
    assert guess["memory"]["resets_before"] >= 20  # memory read warm: --quick's 20 resets served first
    assert (tmp_path / "env_plugins.png").stat().st_size > 0


def test_service_throughput_benchmark_quick_mode_writes_its_json_and_plot(tmp_path: Path) -> None:
    run_benchmark("service_throughput.py", "--quick", "--out", str(tmp_path))
    guess = json.loads((tmp_path / "service_throughput.json").read_text())["envs"]["guess"]
    assert guess["in_process"]["steps_per_s"] > 0
    one, two = guess["service"]["1"], guess["service"]["2"]
    assert [row["concurrency"] for row in one] == [row["concurrency"] for row in two] == [1, 16]
    for row in one + two:
        assert row["steps_per_s"] > 0 and row["step_p50_ms"] <= row["step_p99_ms"]
        assert row["server_cpu_ms_per_step"] > 0 and row["loadgen_cpu_ms_per_request"] > 0
        assert row["ratio_to_in_process"] > 0
    assert all(row["ratio_to_one_server"] > 0 for row in two)
    assert (tmp_path / "service_throughput.png").stat().st_size > 0


def test_executor_scaling_benchmark_quick_mode_runs_real_episodes_and_writes_its_json_and_plot(
    tmp_path: Path,
) -> None:
    run_benchmark("executor_scaling.py", "--quick", "--out", str(tmp_path))
    report = json.loads((tmp_path / "executor_scaling.json").read_text())
    fixed, loaded = report["latencies"]["5"], report["latencies"]["5 vllm-shaped"]
    growth = report["stand_in"]["growth"]
    assert growth > 0 and report["stand_in"]["calibration"]["source"].endswith("vllm_vs_hf.json")
    for rows, grows in ((fixed, 0.0), (loaded, growth)):
        assert [r["concurrency"] for r in rows] == [1, 8]
        assert rows[0]["episodes"] >= 20 and rows[0]["speedup_over_serial"] == 1.0  # the serial baseline
        for row in rows:  # every episode ran its 10 turns through the stand-in LLM and the env server
            assert row["episodes"] > 0 and row["executor_cpu_ms_per_turn"] > 0 and row["efficiency"] > 0
            assert row["env_server_cpu_ms_per_turn"] >= 0 and row["llm_stand_in_cpu_ms_per_turn"] >= 0
            assert row["llm_latency_ms"] == round(5 * (1 + grows * (row["concurrency"] - 1)), 1)
    assert (tmp_path / "executor_scaling.png").stat().st_size > 0


def test_the_stand_in_latency_grows_with_each_completion_in_flight_and_falls_back_as_they_finish() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from llm_stand_in import _Load

    load = _Load(latency_s=0.04, growth=1.0)
    assert [round(load.admit(), 3) for _ in range(8)] == [0.04 * k for k in range(1, 9)]
    load.in_flight -= 8  # what each completion's timer does when it answers
    assert (load.in_flight, round(load.admit(), 3)) == (0, 0.04)


def test_the_stand_in_llm_answers_slower_the_more_completions_are_in_flight() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from executor_scaling import StandInLLM

    async def timed(url: str, concurrent: int) -> list[float]:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:

            async def one() -> float:
                started = time.perf_counter()
                reply = await client.post("/chat/completions", json={"model": "stand-in", "messages": []})
                assert reply.status_code == 200 and "Action: look" in reply.text
                return time.perf_counter() - started

            return list(await asyncio.gather(*(one() for _ in range(concurrent))))

    # Lower bounds only: a loaded machine makes every request slower, never faster. 8 requests sent
    # together reach the server well inside the first one's 200 ms, so the last admitted waits
    # 200 * (1 + 0.5 * 7) = 900 ms and at least one waits 600 ms (the 5th: 200 * (1 + 0.5 * 4)).
    llm = StandInLLM(latency_ms=200, growth=0.5)
    try:
        [alone] = asyncio.run(timed(llm.url, 1))
        together = asyncio.run(timed(llm.url, 8))
    finally:
        llm.stop()
    assert alone >= 0.19 and min(together) >= 0.19 and max(together) >= 0.6, (alone, together)


def test_the_stand_in_growth_is_calibrated_from_the_vllm_result() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from executor_scaling import calibrate

    vllm = {
        "concurrency": 16,
        "results": {"vllm-openai": {"rounds": [{"wall_s": 50.0, "turns": 200, "cpu_s": 100.0}]}},
    }
    cal = calibrate(vllm)  # a turn at 16: 16 * 50 / 200 = 4 s; alone: 100 / 200 = 0.5 s; 8x slower
    assert (cal["turn_latency_at_c_s"], cal["cpu_s_per_turn"], cal["slowdown_at_c"]) == (4.0, 0.5, 8.0)
    assert cal["growth"] == round(7 / 15, 4)


TARGET_ROWS = (
    "steps/s at 64 sessions",
    "step p50 <= 1 ms at 1 session",
    "step p99 <= 30 ms at 64 sessions",
    "speed-up over serial >= 100x at 256",
    "memory: no growth over the create/close cycles",
    "load generator not the bottleneck",
)


def summary_of(results: Path, out: Path) -> str:
    run_benchmark("summarize.py", "--results", str(results), "--out", str(out), timeout=60)
    return out.read_text()


def test_summary_of_the_committed_results_has_every_target_with_a_verdict_and_links_its_plots(tmp_path: Path) -> None:
    out = tmp_path / "docs" / "benchmarks.md"
    text = summary_of(ROOT / "benchmarks" / "results", out)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    for target in TARGET_ROWS:
        row = next((r for r in rows if target in r), None)
        assert row is not None, f"no target row with {target!r}"
        assert row.endswith(("| met |", "| **missed** |")), row  # measured, whichever way it went
    for section in ("## Machine", "## 1. Env service", "## 2. Executor", "## 3. Memory", "## 4. Learning", "## 11."):
        assert section in text
    assert "| in flight | latency, ms | slowdown |" in text  # the stand-in LLM's curve, beside vLLM's point
    assert re.search(r"\| 64 \| [\d,]+ \| [\d,]+ \| \d\.\d\dx \(", text), "no serve-workers row at 64 sessions"
    plots = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert {Path(p).name for p in plots} >= {"service_throughput.png", "executor_scaling.png", "env_plugins.png"}
    for plot in plots:  # relative links that resolve from the page's own folder
        assert not Path(plot).is_absolute() and (out.parent / plot).is_file(), plot


def test_summary_without_results_says_what_was_not_measured(tmp_path: Path) -> None:
    text = summary_of(tmp_path, tmp_path / "benchmarks.md")
    assert "Not measured: service_throughput.json is missing." in text
    assert "Not measured: env_plugins.json is missing." in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "not measured" in line]
    assert len(rows) >= 5


def test_run_all_quick_runs_a_part_as_a_subprocess_and_writes_its_record_and_summary(tmp_path: Path) -> None:
    run_benchmark("run_all.py", "--quick", "--only", "memory", "--out", str(tmp_path), timeout=600)
    record = json.loads((tmp_path / "run_all.json").read_text())
    steps = record["benchmarks"]["memory"]  # sciworld_packing (env_plugins declares from it), env_plugins, jvm_heap
    assert "env_plugins.py --quick" in steps[1]["command"] and steps[1]["returncode"] == 0
    assert "--write-footprints" not in steps[1]["command"]  # a smoke run declares nothing
    scripts = [s["command"].split()[1] for s in steps]
    assert scripts == ["benchmarks/sciworld_packing.py", "benchmarks/env_plugins.py", "benchmarks/jvm_heap.py"]
    assert record["started"] <= steps[0]["started"] <= steps[-1]["finished"] <= record["finished"]
    assert all(s["run"] == record["started"] for s in steps)
    assert record["machine"]["cpus"] and record["load_average_before"]
    summary = (tmp_path / "benchmarks.md").read_text()  # --quick keeps the summary beside its results
    assert "| guess |" in summary and "env_plugins.png" in summary


def test_run_all_scripts_reruns_one_script_of_a_part_and_keeps_the_others_record(tmp_path: Path) -> None:
    earlier_run = "2026-01-01T00:00:00+00:00"

    def step(script: str, started: str) -> dict[str, object]:
        return {
            "command": f"python benchmarks/{script} --out x",
            "returncode": 0,
            "wall_s": 1.0,
            "started": started,
            "finished": started,
            "load_average_before": [0.1, 0.1, 0.1],
            "load_average_after": [0.1, 0.1, 0.1],
            "waited_for_load_s": 0.0,
            "run": earlier_run,
        }

    earlier = [
        step("sciworld_packing.py", "2026-01-01T00:00:01+00:00"),
        step("env_plugins.py", "2026-01-01T00:01:00+00:00"),
        {**step("jvm_heap.py", "2026-01-01T00:02:00+00:00"), "returncode": 1},  # an earlier failure
    ]
    record = {"started": earlier_run, "finished": "2026-01-01T00:03:00+00:00", "benchmarks": {"memory": earlier}}
    (tmp_path / "run_all.json").write_text(json.dumps(record))
    run_benchmark(
        "run_all.py", "--quick", "--only", "memory", "--scripts", "env_plugins.py", "--out", str(tmp_path), timeout=300
    )
    steps = json.loads((tmp_path / "run_all.json").read_text())["benchmarks"]["memory"]
    scripts = [s["command"].split()[1] for s in steps]
    assert scripts == ["benchmarks/sciworld_packing.py", "benchmarks/jvm_heap.py", "benchmarks/env_plugins.py"]
    assert [s["run"] == earlier_run for s in steps] == [True, True, False]  # only env_plugins ran in this call
    # run_benchmark asserted exit 0: the kept jvm_heap step's earlier failure is a note, not this call's failure
    assert "--quick" in steps[-1]["command"] and steps[-1]["returncode"] == 0


def test_jvm_heap_benchmark_quick_mode_reads_the_jvm_heap(tmp_path: Path) -> None:
    pytest.importorskip("agenthub_env_sciworld")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("sciworld needs a Java runtime")
    run_benchmark("jvm_heap.py", "--quick", "--out", str(tmp_path), timeout=300)
    report = json.loads((tmp_path / "jvm_heap.json").read_text())
    live = report["samples_mib"]["live_heap"]
    assert report["cycles"] == 60 and live[0][0] == 0 and live[-1][0] == 60
    committed = report["samples_mib"]["committed_heap"]
    assert all(0 < used <= heap for (_, used), (_, heap) in zip(live, committed, strict=True))
    assert report["live_heap"]["verdict"] in ("flat", "grows")


def test_service_throughput_busy_loops_mode_records_both_variants_side_by_side(tmp_path: Path) -> None:
    run_benchmark(
        "service_throughput.py", "guess", "--busy-loops", "1", "--concurrency", "1", "--rounds", "1",
        "--seconds", "0.3", "--out", str(tmp_path),
    )  # fmt: skip
    written = json.loads((tmp_path / "service_compare.json").read_text())  # a result of its own, one run
    [compared] = written["compared"].values()
    assert written["provenance"]["settings"]["busy_loops"] == 1
    assert [v["busy_loops"] for v in compared["variants"].values()] == [0, 1]
    for variant in compared["variants"].values():
        row = variant["by_concurrency"]["1"]
        assert row["steps_per_s"] > 0 and row["others_cpu_cores"] >= 0


def test_viewer_index_benchmark_quick_mode_writes_its_json_and_plot(tmp_path: Path) -> None:
    run_benchmark("viewer_index.py", "--quick", "--repeats", "2", "--out", str(tmp_path), timeout=300)
    results = json.loads((tmp_path / "viewer_index.json").read_text())["results"]
    assert results["episodes"] == 2000 and results["incremental_episodes"] == 1000
    assert results["first_page_fresh_rows"] == 50 and results["filtered_total"] > 0
    for key in ("first_page_fresh_s", "index_build_s", "open_indexed_s", "filtered_page_s", "incremental_update_s"):
        assert results[key] > 0, key
    assert (tmp_path / "viewer_index.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_trl_seeds_benchmark_quick_mode_runs_the_default_per_seed_and_counts_them(tmp_path: Path) -> None:
    pytest.importorskip("agenthub_trainer_trl")  # the TRL trainer plugin, in its own venv as a rule
    run_benchmark("trl_seeds.py", "--quick", "--out", str(tmp_path), timeout=600)
    report = json.loads((tmp_path / "trl_seeds.json").read_text())
    assert [r["seed"] for r in report["seeds"]] == [0, 1] and report["command"].endswith("seed=N steps=2")
    for record in report["seeds"]:  # a real run each: its steps, its final model scored on the test split
        assert record["returncode"] == 0 and [s["step"] for s in record["steps"]] == [1, 2]
        assert 0 <= record["final_success"] <= 1 and record["test"]["episodes"] == 32
        assert record["train_wall_s"] > 0 and isinstance(record["learned"], bool)
    assert report["summary"]["runs"] == 2 and report["summary"]["failed_runs"] == 0
    assert (tmp_path / "trl_seeds.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.timeout(1200)
def test_agentgym_recipe_benchmark_quick_mode_runs_every_stage_and_writes_its_json_and_plot(tmp_path: Path) -> None:
    for plugin in ("agenthub_trainer_trl", "agenthub_env_maze", "agenthub_agent_hf"):
        pytest.importorskip(plugin)  # the TRL trainer's own venv (plugins/trainers/trl/README.md) has all three
    run_benchmark(
        "agentgym_recipe.py", "--quick", "--out", str(tmp_path), "--runs", str(tmp_path / "runs"), timeout=1100
    )
    result = json.loads((tmp_path / "agentgym_recipe.json").read_text())
    [seed] = result["per_seed"]
    stages = [s["stage"] for s in seed["stages"]]
    assert stages == ["oracle", "export", "sft", "test-sft", "grpo", "test-grpo"]
    assert all(s["returncode"] == 0 and s["wall_s"] > 0 for s in seed["stages"])
    assert seed["stages"][0]["command"].startswith("agenthub eval env=maze agent=maze-oracle")
    for scored in (seed["test_sft"], seed["test_grpo"]):  # 3 test tasks, 1 sample each, every episode scored
        assert scored["episodes"] == 3 and 0 <= scored["success"] <= 1
    assert seed["margin"] == round(seed["test_grpo"]["success"] - seed["test_sft"]["success"], 4)
    assert [p["step"] for p in seed["grpo_curve"]] == [1, 2] and [p["max_turns"] for p in seed["grpo_curve"]] == [8, 16]
    runs = tmp_path / "runs" / "seed0"
    assert (runs / "sft" / "tiny-model" / "tokenizer.json").is_file()  # built on the exported demonstrations
    assert f"corpus: {runs / 'sft.jsonl'}" in (runs / "sft" / "config.yaml").read_text()
    low, high = seed["margin_interval_95"]  # the bootstrap interval holds the margin it was drawn around
    assert low <= seed["margin"] <= high and seed["gain_clear"] == (seed["margin"] >= 0.15 and low > 0)
    assert result["summary"]["seeds_gaining_bar_outside_noise"] == int(seed["gain_clear"])
    assert (tmp_path / "agentgym_recipe.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tiny_model_envs_benchmark_quick_mode_follows_the_launch_advice_and_reads_the_trl_run(tmp_path: Path) -> None:
    pytest.importorskip("agenthub_trainer_trl")  # the TRL trainer plugin, in its own venv as a rule
    run_benchmark("tiny_model_envs.py", "--quick", "--out", str(tmp_path), timeout=600)
    result = json.loads((tmp_path / "tiny_model_envs.json").read_text())
    [row] = result["envs"]
    # The default max_tokens cannot hold guess's actions: the refusal's advice was followed, then the run ran.
    assert row["env"] == "guess" and len(row["refusals_followed"]) == 1
    assert "max_tokens" in row["refusals_followed"][0] and any(s.startswith("max_tokens=") for s in row["settings"])
    assert row["returncode"] == 0 and not row["stopped_at_budget"] and row["status"] == "finished"
    assert [s["step"] for s in row["steps"]] == [1, 2] and row["steps_done"] == 2
    assert 0 <= row["first_success"] <= 1 and row["verdict"] in {"learned", "rises", "flat", "never scores"}
    assert row["test"]["split"] == "test"


def test_tiny_model_envs_reads_the_trainer_s_own_refusal_and_skipped_checks() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from tiny_model_envs import CHECKS_NOT_RUN, followed

    from agenthub.training.launch_report import Finding, LaunchReport

    problem = Finding(key="max_tokens", message="too short for the oracle's actions", refuse=True)
    report = LaunchReport(env="textworld", findings=[problem], advice={"max_tokens": 25, "horizon": 11})
    # As the run's log ends when its own checks refuse: the advice replaces those keys, the rest stay.
    log = f"loading...\n{report.refusal()}\n"
    advised = followed(["steps=30", "max_tokens=8", "seed=1"], log)
    assert advised == ["steps=30", "seed=1", "max_tokens=25", "horizon=11"]
    assert followed(["steps=30"], "Traceback: something else\n") is None
    skipped = LaunchReport(env="textworld", skipped="the env took longer than 300s to be measured").summary()
    found = CHECKS_NOT_RUN.search(f"...\n{skipped}\n")
    assert found is not None and found.group("why") == "the env took longer than 300s to be measured"


@pytest.mark.ray_cluster
def test_ray_scaling_benchmark_quick_mode_runs_on_a_real_cluster_and_renders_its_section(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ray_scaling import section_lines

    run_benchmark("ray_scaling.py", "--quick", "--raylets", "1", "2", "--out", str(tmp_path), timeout=400)
    report = json.loads((tmp_path / "ray_scaling.json").read_text())
    for name, rows in report["series"].items():
        assert [r["raylets"] for r in rows] == [1, 2], name
        assert all(r["episodes_per_s"] > 0 and sum(r["episodes_per_node"]) == r["episodes"] for r in rows)
        assert len(rows[1]["episodes_per_node"]) == 2 and rows[0]["speedup_over_one"] == 1.0
    assert report["provenance"]["commit"] and report["settings"]["ray"]  # written through provenance.write_result
    assert (tmp_path / "ray_scaling.png").stat().st_size > 0
    section = "\n".join(section_lines(report, tmp_path, tmp_path / "benchmarks.md"))
    assert "## 9. Ray backend" in section and "| oracle | 2 |" in section


def test_search_benchmark_generates_its_corpus_once_and_never_repeats_a_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("agenthub_env_search")
    monkeypatch.setenv("AGENTHUB_SEARCH_CACHE", str(tmp_path))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from search_retrieval import distinct_queries, generated_corpus

    corpus = generated_corpus(2000, seed=3)
    lines = corpus.read_text().splitlines()
    assert len(lines) == 2000 and corpus.is_relative_to(tmp_path)
    row = json.loads(lines[7])
    title, _, text = row["contents"].partition("\n")
    assert row["id"] == "7" and text.startswith(title) and 20 <= len(text.split()) - 2 <= 40
    mtime = corpus.stat().st_mtime_ns
    assert generated_corpus(2000, seed=3) == corpus and corpus.stat().st_mtime_ns == mtime  # cached, not rewritten
    queries = distinct_queries(corpus, 500)
    assert len(queries) == len(set(queries)) == 500


def test_agentgym_textcraft_benchmark_quick_mode_plays_both_servers(tmp_path: Path) -> None:
    """AgentGym's own server (vendored at a pinned commit) and agenthub's, through the same client, in every cell."""
    run_benchmark("agentgym_textcraft.py", "--quick", "--out", str(tmp_path))
    report = json.loads((tmp_path / "agentgym_textcraft.json").read_text())
    assert report["baseline"]["commit"] == "3ef9235d23e68e7c2920c5422ad957dc8ced5c6c"
    cells = report["cells"]
    assert set(cells) == {
        f"{workload} c={c}" + (" busy=1" if busy else "")
        for workload in ("episodes", "reused")
        for c in (1, 4)
        for busy in (0, 1)
    }
    for cell in cells.values():
        for side in ("agenthub", "agentgym"):
            figures = cell[side]
            assert figures["steps_per_s"] > 0 and figures["step_p50_ms"] <= figures["step_p99_ms"], (side, cell)
            assert figures["server_cpu_ms_per_step"] > 0, (side, cell)
        assert cell["ratio_median"] == cell["ratio_per_round"][0] > 0


def test_agentgym_errors_answered_with_200_are_not_counted_as_steps() -> None:
    """AgentGym's wrapper answers a failure with status 200 and {"error": ...}: the benchmark stops on it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from agentgym_textcraft import _answered  # a benchmarks/ module

    assert _answered({"observation": "Inventory: "}, "a step") == {"observation": "Inventory: "}
    with pytest.raises(RuntimeError, match="refused a step: The id 7 is not valid"):
        _answered({"error": "The id 7 is not valid."}, "a step")
