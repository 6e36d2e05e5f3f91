"""docs/importers.md is what benchmarks/importer_tables.py renders from its committed JSON.

The sweep itself (``agenthub check`` on every TextArena game and reasoning-gym generator) takes
most of an hour; here the page is re-rendered from the recorded results, and one small sweep
runs end to end through the script's worker process.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("importer_tables", ROOT / "benchmarks" / "importer_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_committed_page_is_what_the_committed_results_render_to() -> None:
    script = load_script()
    results = json.loads(script.RESULTS.read_text())
    page = script.DOC.read_text()
    assert page == script.replace_between_markers(page, script.render_tables(results)), (
        "docs/importers.md differs from its JSON: run `python benchmarks/importer_tables.py --render`"
    )
    for importer in script.IMPORTERS:  # every registered name has a row, each with a verdict and its reason
        section = results["importers"][importer]
        assert section["rows"] and all(
            r["status"] in ("pass", "fail", "refused") and r["reason"] for r in section["rows"]
        )
        for row in section["rows"]:
            assert f"| `{importer}:{row['name']}` |" in page
    assert results["importers"]["reasoning_gym"]["registered_ids"] == 106
    assert results["importers"]["textarena"]["registered_ids"] == 712


def test_rendering_replaces_only_the_marked_part() -> None:
    script = load_script()
    results = {"python": "3.11.7", "importers": {}}
    tables = script.render_tables(results)
    assert "Not checked: the JSON has no textarena section." in tables
    page = f"# Title\n\nkept above\n\n{script.BEGIN}\nold tables\n{script.END}\n\nkept below\n"
    assert script.replace_between_markers(page, tables) == (
        f"# Title\n\nkept above\n\n{script.BEGIN}\n{tables}{script.END}\n\nkept below\n"
    )
    fresh = script.replace_between_markers("", tables)
    assert fresh.startswith("# Importer tables") and fresh.endswith(f"{script.BEGIN}\n{tables}{script.END}\n")


def test_a_small_sweep_runs_end_to_end_through_the_worker(tmp_path: Path) -> None:
    results, page = tmp_path / "results.json", tmp_path / "importers.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "importer_tables.py"), "--only", "reasoning_gym", "--limit", "1",
         "--timeout", "200", "--results", str(results), "--out", str(page)],
        capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    section = json.loads(results.read_text())["importers"]["reasoning_gym"]
    assert [(r["name"], r["status"]) for r in section["rows"]] == [("ab", "pass")]
    assert "| `reasoning_gym:ab` | pass | 13 checks passed |" in page.read_text()


@pytest.mark.parametrize(
    ("env", "status", "reason"),
    [
        ("reasoning_gym:composite", "refused", "reasoning_gym:composite is not served: it mixes other generators"),
        ("textarena:Klondike-v0", "refused", "textarena:Klondike-v0 cannot be imported: TextArena's source"),
    ],
)
def test_a_refusal_is_recorded_with_its_one_line_reason(env: str, status: str, reason: str) -> None:
    verdict = load_script().check_one(env)
    assert verdict["status"] == status and verdict["reason"].startswith(reason)
