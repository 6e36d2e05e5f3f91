"""Evaluation: pass@k against hand-computed values, scoring rules, and `agenthub eval` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agenthub import Outcome, Task, Trajectory
from agenthub.cli.eval_command import spread
from agenthub.evaluation import default_ks, evaluate, pass_at_k
from agenthub.option_checks import option_aliases
from agenthub.testing import default_sigint


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # c / n
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
        (5, 2, 4, 1.0),  # fewer failures than draws: a success is certain
        (8, 0, 8, 0.0),
        (1, 1, 1, 1.0),
    ],
)
def test_unbiased_pass_at_k_matches_hand_computed_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_refuses_impossible_arguments() -> None:
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k(3, 4, 1)


def sample(task_id: int, index: int, sample_no: int, outcome: Outcome, reward: float) -> Trajectory:
    return Trajectory(
        task=Task(env="guess", task_id=task_id),
        first_observation="",
        outcome=outcome,
        reward=reward,
        key=f"{index}/{sample_no}",
    )


def test_avg_and_pass_at_k_as_agentgym_reports_them() -> None:
    s, f, a, e = Outcome.SUCCESS, Outcome.FAILURE, Outcome.AGENT_ERROR, Outcome.ENV_ERROR
    trajectories = [
        # task 7: 1 success in 4 -> Avg 0.25 (reward 1 for the win), Pass 1, pass@1 0.25
        sample(7, 0, 0, f, 0.0), sample(7, 0, 1, s, 1.0), sample(7, 0, 2, f, 0.0), sample(7, 0, 3, a, 0.0),
        # task 3: no success; one sample lost to the infra -> left out, so n = 3
        sample(3, 1, 0, f, 0.5), sample(3, 1, 1, f, 0.0), sample(3, 1, 2, e, 0.0), sample(3, 1, 3, f, 0.25),
    ]  # fmt: skip
    report = evaluate(reversed(trajectories), k=4)  # finish order must not matter
    rows = report.per_task()
    assert [r["task_id"] for r in rows] == [7, 3]  # the order the tasks were asked for
    assert rows[0] | {} == {**rows[0], "n": 4, "successes": 1, "avg": 0.25, "pass": True, "pass@1": 0.25}
    assert rows[0]["pass@2"] == pytest.approx(1 - 3 / 6) and rows[0]["pass@4"] == 1.0
    assert rows[1]["n"] == 3 and rows[1]["excluded"] == 1 and rows[1]["avg"] == 0.25 and rows[1]["pass@4"] is None
    overall = report.overall()
    assert overall["avg_at_k"] == pytest.approx((0.25 + 0.25) / 2)
    assert overall["pass_at_k"] == 0.5 and overall["excluded_infra_failures"] == 1
    assert overall["pass@1"] == pytest.approx((0.25 + 0.0) / 2)
    assert overall["pass@4"] == 1.0  # only task 7 has 4 valid samples
    assert overall["outcomes"] == {"failure": 5, "success": 1, "agent_error": 1, "env_error": 1}


@pytest.mark.parametrize(("env_errors", "warned"), [(1, False), (2, True)])
def test_env_errors_are_counted_beside_the_score_and_warned_of_above_5_percent(env_errors: int, warned: bool) -> None:
    """An agent that makes its env fail must not look better for it: the unscored share is shown and warned of."""
    s, e = Outcome.SUCCESS, Outcome.ENV_ERROR
    trajectories = [sample(i, i, 0, e if i < env_errors else s, 1.0) for i in range(20)]
    report = evaluate(trajectories, k=1)
    overall = report.overall()
    assert (overall["episodes"], overall["env_errors"]) == (20, env_errors)
    assert overall["env_error_share"] == env_errors / 20 and overall["success_rate"] == 1.0
    warnings = report.warnings()
    assert bool(warnings) is warned  # 1 of 20 is 5%, not above it
    if warned:
        assert warnings[0].startswith("2 of 20 episodes (10.0%) ended in env_error and are not scored")
        assert "trajectories.jsonl" in warnings[0] and "env server" in warnings[0]


def test_helpers() -> None:
    assert default_ks(8) == [1, 2, 4, 8] and default_ks(1) == [1] and default_ks(6) == [1, 2, 4, 6]
    assert spread([1, 2], 5) == [1, 2] and spread([1, 2], None) == [1, 2]
    assert option_aliases(["agent=openai", "agent.model=m", "k=2"]) == ["agent=openai", "agent_kwargs.model=m", "k=2"]


def test_n_tasks_are_one_per_stretch_of_the_split_and_the_same_every_time() -> None:
    picked = spread(list(range(100)), 4)
    assert [task // 25 for task in picked] == [0, 1, 2, 3]  # one from each quarter
    assert spread(list(range(100)), 4) == picked and len(set(spread(list(range(10)), 9))) == 9


def test_n_tasks_do_not_alias_with_ids_that_cycle_through_variants() -> None:
    # babyai's train ids: task i is level i % 40; an even stride of 200 (n=200) scored one level.
    train = list(range(400, 40_400))
    for n in (40, 200, 500):
        levels = {task % 40 for task in spread(train, n)}
        assert len(levels) >= min(n, 40) / 2, (n, sorted(levels))  # an even stride: 1 level


def agenthub(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenthub", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_eval_with_the_oracle_reaches_its_success_rate_saves_the_run_and_resumes(tmp_path: Path) -> None:
    done = agenthub("eval", "env=guess", "n=6", "k=3", "run_id=r", "concurrency=4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "overall" in done.stdout and "Pass@3" in done.stdout
    run_dir = tmp_path / "runs" / "r"
    result = json.loads((run_dir / "eval.json").read_text())
    assert result["overall"]["pass@1"] == 1.0 and result["overall"]["samples"] == 18
    overall = result["overall"]
    assert (overall["env_errors"], overall["env_error_share"], result["warnings"]) == (0, 0.0, [])
    assert "env_error: 0 of 18 episodes (0.0%), not scored" in done.stdout
    assert len(result["per_task"]) == 6
    lines = (run_dir / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 18
    provenance = json.loads(lines[0])["provenance"]
    assert provenance["agent"] == "guess-oracle" and provenance["env"] == "guess"

    again = agenthub("eval", "--resume", str(run_dir), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len((run_dir / "trajectories.jsonl").read_text().splitlines()) == 18  # nothing redone
    assert json.loads((run_dir / "run.json").read_text())["summary"]["resumed"] == 18


def test_eval_explains_bad_settings(tmp_path: Path) -> None:
    wrong_split = agenthub("eval", "env=guess", "split=dev", cwd=tmp_path)
    assert wrong_split.returncode != 0 and "has no split 'dev'" in wrong_split.stderr
    typo = agenthub("eval", "env=guess", "kk=2", cwd=tmp_path)
    assert typo.returncode != 0 and "did you mean 'k'" in typo.stderr


def test_eval_refuses_more_tasks_than_the_split_has(tmp_path: Path) -> None:
    done = agenthub("eval", "env=guess", "split=test", "n=600", "run_id=big", cwd=tmp_path)
    assert done.returncode == 2
    assert "n=600, but split 'test' of env 'guess' has 500 tasks; use n=500" in done.stderr
    assert not (tmp_path / "runs" / "big").exists()  # refused before anything was saved


def test_resume_refuses_options_that_change_the_run_and_names_their_stored_values(tmp_path: Path) -> None:
    first = agenthub("eval", "env=guess", "n=2", "run_id=r", "progress=false", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    run_dir = tmp_path / "runs" / "r"
    conflict = agenthub("eval", "--resume", str(run_dir), "k=5", "split=train", cwd=tmp_path)
    assert conflict.returncode == 2
    assert "its config differs in k: 1 -> 5, split: None -> 'train'" in conflict.stderr
    assert (
        "only address, backend, concurrency, max_attempts, processes, progress, token, url may change"
        in conflict.stderr
    )
    assert "k: 1" in (run_dir / "config.yaml").read_text()  # untouched
    same = agenthub("eval", "--resume", str(run_dir), "k=1", "concurrency=2", cwd=tmp_path)
    assert same.returncode == 0, same.stderr  # the stored value again, and how fast: both fine
    assert "concurrency: 2" in (run_dir / "config.yaml").read_text()


def test_agent_typos_are_answered_with_a_suggestion_oracle_included(tmp_path: Path) -> None:
    typo = agenthub("eval", "env=guess", "agent=orcale", cwd=tmp_path)
    assert typo.returncode == 2
    assert "unknown agent 'orcale'; did you mean 'oracle'? installed agents: oracle, " in typo.stderr
    assert "?;" not in typo.stderr


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_a_stopped_eval_is_recorded_as_interrupted_with_its_resume_line(tmp_path: Path, signal_name: str) -> None:
    """``kill`` (a scheduler's stop) ends an eval as Ctrl-C does: run.json says interrupted, and the
    resume line is printed; before, SIGTERM left run.json saying running."""
    import signal
    import time

    command = [sys.executable, "-m", "agenthub", "eval", "env=guess", "agent=random", "n=10", "k=5000"]
    command += ["concurrency=1", "progress=false", f"runs_dir={tmp_path}", "run_id=stopped"]
    child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint
    )
    trajectories = tmp_path / "stopped" / "trajectories.jsonl"
    deadline = time.monotonic() + 120
    while not (trajectories.exists() and trajectories.stat().st_size > 0):
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.1)
    child.send_signal(getattr(signal, signal_name))
    _, stderr = child.communicate(timeout=60)
    assert child.returncode != 0
    run = json.loads((tmp_path / "stopped" / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert f"resume with: agenthub eval --resume {tmp_path / 'stopped'}" in stderr
