"""Benchmarks keep running: each one's quick mode, end to end (figures are not asserted; see benchmarks/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_env_plugins_benchmark_quick_mode_writes_its_json_and_plot(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "env_plugins.py"), "--quick", "guess", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    guess = json.loads((tmp_path / "env_plugins.json").read_text())["envs"]["guess"]
    assert guess["latency"]["in_process"]["won"] == guess["latency"]["in_process"]["episodes"] > 0
    assert guess["latency"]["service"]["won"] == guess["latency"]["service"]["episodes"]
    assert (tmp_path / "env_plugins.png").stat().st_size > 0


def test_service_throughput_benchmark_quick_mode_writes_its_json_and_plot(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "service_throughput.py"), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
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
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "executor_scaling.py"), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "executor_scaling.json").read_text())
    rows = report["latencies"]["5"]
    assert [r["concurrency"] for r in rows] == [1, 8]
    for row in rows:  # every episode ran its 10 turns through the stand-in LLM and the env server
        assert row["episodes"] > 0 and row["executor_cpu_ms_per_turn"] > 0
        assert row["env_server_cpu_ms_per_turn"] >= 0 and row["llm_stand_in_cpu_ms_per_turn"] >= 0
    assert rows[0]["speedup_over_serial"] == 1.0
    assert (tmp_path / "executor_scaling.png").stat().st_size > 0
