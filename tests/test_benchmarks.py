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
