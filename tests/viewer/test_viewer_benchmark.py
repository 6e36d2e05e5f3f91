"""The viewer's benchmark keeps running: its quick mode end to end (figures are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_viewer_index_benchmark_quick_mode_writes_its_json_and_plot(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "viewer_index.py"),
            "--quick",
            "--repeats",
            "2",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "viewer_index.json").read_text())["results"]
    assert results["episodes"] == 2000 and results["incremental_episodes"] == 1000
    assert results["first_page_fresh_rows"] == 50 and results["filtered_total"] > 0
    for key in ("first_page_fresh_s", "index_build_s", "open_indexed_s", "filtered_page_s", "incremental_update_s"):
        assert results[key] > 0, key
    assert (tmp_path / "viewer_index.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
