"""Benchmark results say where they came from, and the page is rendered from them alone.

Every committed result either carries a complete provenance block (commit, start, end, load,
settings, code fingerprint, digest of its figures) that still checks out, or the page marks it
stale; a field added to a result by hand breaks its digest; docs/benchmarks.md is byte for byte
what ``benchmarks/summarize.py`` renders from ``benchmarks/results``; run_all.json's timeline is
one run's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "benchmarks"))

import provenance  # noqa: E402  (a benchmarks/ module, importable once its folder is on the path)
import summarize  # noqa: E402

RESULT_FILES = sorted(p for p in RESULTS.glob("*.json") if p.name != "run_all.json")


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@pytest.fixture(scope="module")
def page() -> str:
    return str(summarize.render(RESULTS, summarize.DOCS))


def test_the_page_re_renders_byte_for_byte_from_the_results(page: str) -> None:
    committed = summarize.DOCS.read_text()
    assert page == committed, (
        "docs/benchmarks.md is not what benchmarks/summarize.py renders from benchmarks/results (a result, the "
        "code it measured or the renderer changed since it was written): run `python benchmarks/summarize.py`"
    )


@pytest.mark.parametrize("path", RESULT_FILES, ids=lambda p: p.name)
def test_every_result_has_complete_provenance_or_the_page_marks_it_stale(path: Path, page: str) -> None:
    result = read(path)
    fresh = provenance.freshness(path.stem, result)
    [row] = [line for line in page.splitlines() if line.startswith(f"| {path.name} |")]
    if fresh.state != "current":
        assert "| **stale**" in row and fresh.detail in row, row
        return
    block = result["provenance"]
    assert provenance.missing_fields(result) == []
    assert block["commit"] and isinstance(block["settings"], dict)
    started, finished = datetime.fromisoformat(block["started"]), datetime.fromisoformat(block["finished"])
    assert started <= finished, f"{path.name}: started {started} after it finished {finished}"
    for key in ("load_average_start", "load_average_end"):
        assert len(block[key]) == 3 and all(x >= 0 for x in block[key]), (path.name, key)
    assert "| current" in row, row


@pytest.mark.parametrize("path", RESULT_FILES, ids=lambda p: p.name)
def test_no_result_has_a_field_written_after_its_script_wrote_it(path: Path) -> None:
    result = read(path)
    block = result.get("provenance") or {}
    if "digest" not in block:  # written before digests: it cannot be checked, so it must not count as current
        assert provenance.freshness(path.stem, result).state != "current", path.name
        return
    assert block["digest"] == provenance.digest(result), (
        f"{path.name} was edited after its script wrote it: re-run `python benchmarks/{path.stem}.py` "
        "instead of writing figures or notes into a result by hand"
    )


def test_a_hand_written_field_makes_a_result_stale(tmp_path: Path) -> None:
    path = tmp_path / "executor_scaling.json"
    written = provenance.write_result(path, {"latencies": {"50": [{"concurrency": 1}]}}, {"quick": True})
    assert provenance.freshness("executor_scaling", read(path)).state == "current"
    edited = {**written, "before_after": {"note": "load average 2 (not measured by the script)"}}
    fresh = provenance.freshness("executor_scaling", edited)
    assert fresh.state == "stale" and "edited after its script wrote it" in fresh.detail


def test_a_result_missing_a_provenance_field_is_stale_and_says_which(tmp_path: Path) -> None:
    path = tmp_path / "service_throughput.json"
    written = provenance.write_result(path, {"envs": {}}, {"seconds": 2})
    del written["provenance"]["load_average_start"]
    fresh = provenance.freshness("service_throughput", written)
    assert fresh.state == "stale" and "lacks load_average_start" in fresh.detail
    assert "python benchmarks/service_throughput.py" in fresh.detail


def test_the_code_fingerprint_names_the_files_on_disk(tmp_path: Path) -> None:
    paths = ["benchmarks/llm_stand_in.py", "benchmarks/lean_http.py"]
    assert provenance.code_fingerprint(paths) == provenance.code_fingerprint(list(reversed(paths)))
    assert provenance.code_fingerprint(paths) != provenance.code_fingerprint(paths[:1])


def test_run_all_records_one_run_whose_steps_do_not_overlap() -> None:
    record = read(RESULTS / "run_all.json")
    started, finished = datetime.fromisoformat(record["started"]), datetime.fromisoformat(record["finished"])
    this_call = [s for steps in record["benchmarks"].values() for s in steps if s.get("run") == record["started"]]
    assert this_call, "run_all.json names no step of its own call: re-run `python benchmarks/run_all.py`"
    spans = sorted((datetime.fromisoformat(s["started"]), datetime.fromisoformat(s["finished"])) for s in this_call)
    for begin, end in spans:
        assert started <= begin <= end <= finished, (begin, end, started, finished)
    for (_, end), (begin, _) in itertools.pairwise(spans):
        assert end <= begin, f"two steps of one run overlap: one ends {end}, the next began {begin}"
    earlier = [s for steps in record["benchmarks"].values() for s in steps if s.get("run") != record["started"]]
    assert all("run" in s for s in earlier), "a step carried from an earlier call must say which call (or None)"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository holding a benchmark ``speed`` and the code it measures."""
    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    (repo / "core").mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "config", "user.name", "bench")
    for path, text in (("benchmarks/speed.py", "v1"), ("core/server.py", "v1"), ("README.md", "r")):
        (repo / path).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    return repo


def measured_in(repo: Path) -> dict[str, Any]:
    """A result of ``speed`` as write_result would make it in ``repo`` (measuring core/)."""
    paths = ["benchmarks/speed.py", "core"]
    body: dict[str, Any] = {"rows": [1, 2]}
    block = {
        "commit": git(repo, "rev-parse", "HEAD"), "started": "2026-01-01T00:00:00+00:00",
        "finished": "2026-01-01T00:01:00+00:00", "load_average_start": [0.5, 0.5, 0.5],
        "load_average_end": [0.6, 0.5, 0.5], "measures": paths, "settings": {},
        "code": provenance.code_fingerprint(paths, repo), "digest": provenance.digest(body),
        "fingerprint": provenance.FINGERPRINT_VERSION,
    }  # fmt: skip
    return {**body, "provenance": block}


def test_a_result_is_stale_once_the_code_it_measured_changes_and_not_before(repo: Path) -> None:
    result = measured_in(repo)
    assert provenance.freshness("speed", result, root=repo).state == "current"
    (repo / "README.md").write_text("unrelated")
    assert provenance.freshness("speed", result, root=repo).state == "current"
    (repo / "core" / "server.py").write_text("v2")  # uncommitted: the code on disk is what counts
    stale = provenance.freshness("speed", result, root=repo)
    assert stale.state == "stale" and "changed since" in stale.detail


def test_a_test_file_under_the_measured_code_does_not_make_a_result_stale(repo: Path) -> None:
    (repo / "core" / "tests").mkdir()
    (repo / "core" / "tests" / "test_server.py").write_text("v1")
    result = measured_in(repo)
    for path in ("core/tests/test_server.py", "core/tests/helpers.py", "core/conftest.py", "core/test_x.py"):
        (repo / path).write_text("edited")
        assert provenance.freshness("speed", result, root=repo).state == "current", path
    old_block = {**result["provenance"], "code": provenance.code_fingerprint(["benchmarks/speed.py", "core"], repo,
                                                                            version=1)}  # fmt: skip
    del old_block["fingerprint"]  # a block written before version 2 is read as version 1: tests count there
    old = {**result, "provenance": old_block}
    assert provenance.freshness("speed", old, root=repo).state == "current"
    (repo / "core" / "tests" / "test_server.py").write_text("edited again")
    assert provenance.freshness("speed", old, root=repo).state == "stale"


def test_a_readme_under_the_measured_code_does_not_make_a_result_stale_from_version_3(repo: Path) -> None:
    (repo / "core" / "README.md").write_text("measured: 17 of 20")
    result = measured_in(repo)
    (repo / "core" / "README.md").write_text("measured: 20 of 20, and why")
    assert provenance.freshness("speed", result, root=repo).state == "current"
    old_block = {**result["provenance"], "fingerprint": 2}  # written by version 2: Markdown counted there
    old_block["code"] = provenance.code_fingerprint(["benchmarks/speed.py", "core"], repo, version=2)
    old = {**result, "provenance": old_block}
    assert provenance.freshness("speed", old, root=repo).state == "current"
    (repo / "core" / "README.md").write_text("edited again")
    assert provenance.freshness("speed", old, root=repo).state == "stale"


def test_a_declared_footprint_under_the_measured_code_does_not_make_a_result_stale_from_version_4(repo: Path) -> None:
    """A memory benchmark writes footprints.json into the plugin it measured: an output, not measured code."""
    (repo / "core" / "footprints.json").write_text('{"envs": {}}')
    result = measured_in(repo)
    (repo / "core" / "footprints.json").write_text('{"envs": {"x": {"base_mib": 80.5}}}')
    assert provenance.freshness("speed", result, root=repo).state == "current"
    old_block = {**result["provenance"], "fingerprint": 3}
    old_block["code"] = provenance.code_fingerprint(["benchmarks/speed.py", "core"], repo, version=3)
    old = {**result, "provenance": old_block}
    (repo / "core" / "footprints.json").write_text('{"envs": {"x": {"base_mib": 81.0}}}')
    assert provenance.freshness("speed", old, root=repo).state == "stale"  # version 3 counted it


def test_the_page_marks_a_result_that_started_under_load(tmp_path: Path) -> None:
    import summarize  # a benchmarks/ module

    quiet, loaded = [1.99, 3.0, 3.0], [2.0, 0.5, 0.5]
    assert provenance.started_quiet({"load_average_start": quiet}) is True
    assert provenance.started_quiet({"load_average_start": loaded}) is False
    assert provenance.started_quiet({}) is None
    for name, load in (("quiet", quiet), ("loaded", loaded)):
        body: dict[str, Any] = {"rows": [1]}
        block = {"load_average_start": load, "started": "2026-01-01T00:00:00+00:00", "digest": provenance.digest(body)}
        (tmp_path / f"{name}.json").write_text(json.dumps({**body, "provenance": block}))
    rows = {line.split(" | ")[0].strip("| "): line for line in summarize.freshness_section(tmp_path, tmp_path / "x")
            if line.startswith("| ") and ".json" in line}  # fmt: skip
    assert "started under load" in rows["loaded.json"] and "started under load" not in rows["quiet.json"]


def test_a_result_measured_on_uncommitted_changes_stays_current_once_they_are_committed(repo: Path) -> None:
    (repo / "core" / "server.py").write_text("v2")
    result = measured_in(repo)
    git(repo, "commit", "-q", "-am", "the measured change")
    assert provenance.freshness("speed", result, root=repo).state == "current"


def test_a_written_result_carries_its_commit_times_load_and_settings(tmp_path: Path) -> None:
    args = argparse.Namespace(quick=True, out=tmp_path, envs=["guess", "maze"], seconds=1.5)
    written = provenance.write_result(tmp_path / "service_throughput.json", {"rows": [1, 2]}, args)
    assert read(tmp_path / "service_throughput.json") == written
    block = written["provenance"]
    assert block["commit"].removesuffix("+changes") == git(ROOT, "rev-parse", "HEAD")
    assert block["measures"] == ["benchmarks/service_throughput.py", "core/agenthub/service", "benchmarks/lean_http.py"]
    assert block["settings"] == {"envs": ["guess", "maze"], "out": str(tmp_path), "quick": True, "seconds": 1.5}
    assert block["started"] <= block["finished"] and block["finished"].endswith("+00:00")


def test_a_result_whose_code_changed_while_it_ran_is_stale(tmp_path: Path) -> None:
    written = provenance.write_result(tmp_path / "executor_scaling.json", {"latencies": {}}, {})
    assert written["provenance"]["code_changed_during_run"] is False  # this test is no benchmark run
    written["provenance"]["code_changed_during_run"] = True
    fresh = provenance.freshness("executor_scaling", written)
    assert fresh.state == "stale" and "changed while it ran" in fresh.detail


def test_the_code_is_fingerprinted_as_a_benchmark_starts_for_every_result_its_script_writes() -> None:
    at_start = provenance._code_at_start("service_throughput")
    assert set(at_start) == {"service_throughput", "service_compare"} and all(at_start.values())
    now = provenance.code_fingerprint(provenance.measured_paths("service_throughput"))
    assert at_start["service_throughput"] == now
    assert provenance._code_at_start("pytest") == {}  # imported by a test or a tool: nothing to compare


def test_run_all_lists_a_command_for_every_result_the_page_renders(capsys: pytest.CaptureFixture[str]) -> None:
    import run_all  # a benchmarks/ module

    assert run_all.main(["--list", "--trl-python", "/trl/bin/python", "--vllm-python", "/vllm/bin/python"]) == 0
    listed = capsys.readouterr().out
    for path in [*RESULT_FILES, RESULTS / "serve_workers.json"]:
        script = f"benchmarks/{provenance.SCRIPT_OF.get(path.stem, path.stem)}.py"
        assert script in listed, f"{path.name}: run_all.py runs no {script}; add it to a part in run_all.commands"
    assert "[with /vllm/bin/python]" in listed and "[with /trl/bin/python]" in listed
    assert "total ~" in listed and "min" in listed


def test_run_all_scripts_narrows_the_parts_to_the_named_scripts(capsys: pytest.CaptureFixture[str]) -> None:
    import run_all  # a benchmarks/ module

    argv = ["--list", "--only", "memory", "envs", "--scripts", "env_plugins.py", "webarena_env.py"]
    assert run_all.main(argv) == 0
    listed = capsys.readouterr().out
    assert listed.count("benchmarks/env_plugins.py") == 2 and "benchmarks/webarena_env.py" in listed  # light, heavy
    assert "sciworld_packing.py" not in listed and "search_retrieval.py" not in listed and "jvm_heap" not in listed
    with pytest.raises(SystemExit):  # a typo runs nothing and says which names there are
        run_all.main(["--list", "--scripts", "env_plugin.py"])
    assert "--scripts names no benchmark of run_all: env_plugin.py; choose from" in capsys.readouterr().err


def test_run_all_waits_for_the_load_to_settle_and_gives_up_after_its_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import run_all  # a benchmarks/ module

    loads = iter([3.0, 2.5, 1.5])
    monkeypatch.setattr(run_all.os, "getloadavg", lambda: (next(loads, 1.5), 0.0, 0.0))
    monkeypatch.setattr(run_all.time, "sleep", lambda _: None)
    assert run_all.settle(2.0, 60) < 60  # polled until 1.5, without sleeping for real
    assert next(loads, None) is None
    assert run_all.settle(None, 60) == 0.0  # --quick: no wait
    monkeypatch.setattr(run_all.os, "getloadavg", lambda: (9.0, 0.0, 0.0))
    assert run_all.settle(2.0, 0) == 0.0  # never under 2: starts anyway at once when the limit is 0
    assert (
        run_all.parse_args([]).settle_load == 2.0
        and run_all.parse_args(["--quick", "--out", str(tmp_path)]).settle_load is None
    )
