"""benchmarks/vllm_vs_hf.py keeps running: its quick mode against the session's vLLM server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agenthub.testing.vllm_server import VLLMServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(600)
def test_quick_mode_plays_every_configuration_and_writes_its_json_and_plot(
    vllm_server: VLLMServer, tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "vllm_vs_hf.py"),
        "--quick",
        "--out",
        str(tmp_path),
        "--vllm-url",
        vllm_server.url,
        "--model-dir",
        str(tiny_models["chatml"]),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "vllm_vs_hf.json").read_text())
    assert set(report["results"]) == {"vllm-openai", "vllm-tokens", "hf"}
    for name, result in report["results"].items():
        [row] = result["rounds"]
        assert row["episodes"] == report["episodes_per_round"] == 8, name
        assert row["generated_tokens"] > 0 and result["median"]["tokens_per_s"] > 0, name
    assert (tmp_path / "vllm_vs_hf.png").stat().st_size > 0
