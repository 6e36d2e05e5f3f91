"""benchmarks/action_parsing.py tells a linear parser from a quadratic one, and renders its section of the page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_quick_run_measures_guess_as_linear_and_its_pattern_before_as_quadratic(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "action_parsing.py"), "--quick", "guess", "guess@before"]
    # A cap of 0.8 s stops the quadratic pattern after 4,096 characters (60-150 ms there): seconds, not minutes.
    # Its exponent then rests on two sizes, so five rounds (the fastest counts) keep a burst of load on one
    # of them from bending it; a round of the quadratic pattern costs a fraction of a second.
    settings = ["--repeats", "5", "--cap-s", "0.8", "--out", str(tmp_path)]
    done = subprocess.run([*command, *settings], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "action_parsing.json").read_text())
    assert report["provenance"]["measures"][0] == "benchmarks/action_parsing.py"
    guess, before = report["envs"]["guess"], report["envs"]["guess@before"]
    assert guess["linear"] and guess["max_exponent"] < 1.5 and guess["max_action_chars"] == 32_768
    assert [p["chars"] for p in guess["shapes"]["whitespace"]] == report["sizes"] == [1024 * 4**i for i in range(6)]
    # Two whitespace runs that meet: CPU time grows with the square of the length, and the cap stops it early.
    # Near 2 on a quiet machine; the test asks only that it read as not linear (LINEAR_BELOW is 1.5).
    assert before["exponents"]["whitespace"] > 1.5 and not before["linear"]
    assert before["shapes"]["whitespace"][-1]["seconds"] is None and "skipped" in before["shapes"]["whitespace"][-1]
    assert (tmp_path / "action_parsing.png").stat().st_size > 0

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from action_parsing import section_lines

    section = "\n".join(section_lines(report, tmp_path, tmp_path / "benchmarks.md"))
    assert "## 10. Agent text: parse time against action length" in section
    assert "| guess | 32,768 |" in section and "**not linear**" in section and "action_parsing.png" in section
