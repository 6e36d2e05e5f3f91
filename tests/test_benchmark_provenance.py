"""Benchmark results name the code they measured, and the summary marks those that went stale.

The git history is real: a small repository made in the test, with commits that change the
measured code or something else.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_provenance() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchmarks_provenance", ROOT / "benchmarks" / "provenance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


provenance = load_provenance()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    (repo / "core").mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "config", "user.name", "bench")
    return repo


def commit_file(repo: Path, path: str, text: str) -> str:
    (repo / path).write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", f"change {path}")
    return git(repo, "rev-parse", "HEAD")


def result_of(commit: str | None) -> dict[str, object]:
    return {"provenance": {"commit": commit, "measures": ["benchmarks/speed.py", "core/server.py"]}}


def test_a_written_result_carries_its_commit_the_code_it_measures_and_its_settings(tmp_path: Path) -> None:
    args = argparse.Namespace(quick=True, out=tmp_path, envs=["guess", "maze"], seconds=1.5)
    written = provenance.write_result(tmp_path / "service_throughput.json", {"rows": [1, 2]}, args)
    on_disk = json.loads((tmp_path / "service_throughput.json").read_text())
    assert on_disk == written and on_disk["rows"] == [1, 2]
    block = on_disk["provenance"]
    assert block["commit"].removesuffix("+changes") == git(ROOT, "rev-parse", "HEAD")
    assert block["measures"] == ["benchmarks/service_throughput.py", "core/agenthub/service"]
    assert block["settings"] == {"envs": ["guess", "maze"], "out": str(tmp_path), "quick": True, "seconds": 1.5}
    assert block["measured_at"].endswith("+00:00")


def test_a_result_is_stale_once_the_code_it_measured_changes_and_not_before(repo: Path) -> None:
    measured = commit_file(repo, "core/server.py", "v1")
    assert provenance.freshness("speed", result_of(measured), root=repo).state == "current"

    commit_file(repo, "README.md", "unrelated")
    assert provenance.freshness("speed", result_of(measured), root=repo).state == "current"

    changed = commit_file(repo, "core/server.py", "v2")
    stale = provenance.freshness("speed", result_of(measured), root=repo)
    assert stale.state == "stale" and changed[:10] in stale.detail

    script_changed = commit_file(repo, "benchmarks/speed.py", "faster")
    assert provenance.freshness("speed", result_of(changed), root=repo).detail.startswith(
        f"the measured code changed in {script_changed[:10]}"
    )


def test_results_without_a_commit_or_with_a_foreign_one_are_marked_unknown(repo: Path) -> None:
    commit_file(repo, "core/server.py", "v1")
    undated = provenance.freshness("speed", {"rows": []}, root=repo)
    assert (undated.state, undated.commit) == ("unknown", None)
    assert undated.detail.startswith("commit unknown")
    foreign = provenance.freshness("speed", result_of("0" * 40), root=repo)
    assert foreign.state == "unknown" and "not in this repository's history" in foreign.detail
    # The commit key that results carried before the provenance block still counts.
    older = provenance.freshness("speed", {"commit": git(repo, "rev-parse", "HEAD") + "+changes"}, root=repo)
    assert older.state == "current" and older.detail.endswith("with uncommitted changes")


def test_the_summary_lists_each_result_with_its_state(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    head = git(ROOT, "rev-parse", "HEAD")
    (results / "viewer_index.json").write_text(json.dumps({"provenance": {"commit": head}}))
    (results / "search_retrieval.json").write_text(json.dumps({"rows": []}))
    out = tmp_path / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "summarize.py"), "--results", str(results), "--out", str(out)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = {line.split(" | ")[0].lstrip("| "): line for line in out.read_text().splitlines() if ".json | " in line}
    assert f"| {head[:10]} |" in rows["viewer_index.json"] and "| current |" in rows["viewer_index.json"]
    assert "| commit unknown |" in rows["search_retrieval.json"]
