"""The run store: flushed per episode, survives SIGKILL, resumes without redoing work."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthub import LocalServer, Outcome, Task, Trajectory
from agenthub.errors import ConfigError
from agenthub.rollout.progress import ProgressDisplay, RunSummary
from agenthub.rollout.store import TRAJECTORIES_FILE, RunStore, RunStoreError

CHILD = Path(__file__).with_name("collect_child.py")


@pytest.fixture(scope="module")
def guess_url() -> Iterator[str]:
    with LocalServer("guess") as server:
        yield server.url


def trajectory(key: str, outcome: Outcome = Outcome.SUCCESS) -> Trajectory:
    return Trajectory(task=Task(env="guess", task_id=1), first_observation="hi", outcome=outcome, key=key, reward=1.0)


def test_sigkill_loses_only_episodes_in_flight_and_resume_finishes_the_rest(guess_url: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "killed"
    child = subprocess.Popen([sys.executable, str(CHILD), guess_url, str(run_dir)])
    lines = run_dir / TRAJECTORIES_FILE
    deadline = time.monotonic() + 60
    while not (lines.exists() and lines.read_bytes().count(b"\n") >= 6):
        assert child.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "the run wrote no trajectories"
        time.sleep(0.02)
    child.kill()  # SIGKILL: no cleanup, no flush, episodes in flight are lost
    child.wait()
    store = RunStore(run_dir)
    before = store.completed_keys()
    assert 6 <= len(before) < 30
    assert store.meta()["status"] == "running"

    subprocess.run([sys.executable, str(CHILD), guess_url, str(run_dir), "--resume"], check=True, timeout=120)
    keys = [t.key for t in store.trajectories()]
    assert sorted(keys) == sorted(f"{i}/0" for i in range(30))  # each episode exactly once
    assert all(t.outcome is Outcome.SUCCESS for t in store.trajectories())
    meta = store.meta()
    assert meta["status"] == "finished" and meta["summary"]["resumed"] == len(before)
    assert meta["summary"]["episodes"] == 30 - len(before)


def test_a_torn_last_line_is_cut_off_on_resume(tmp_path: Path) -> None:
    store = RunStore.create({"env": "guess"}, root=tmp_path, run_id="r")
    store.write(trajectory("0/0"))
    store.close()
    with (store.path / TRAJECTORIES_FILE).open("ab") as file:
        file.write(b'{"task": {"env": "gu')  # what a kill mid-write leaves
    assert store.completed_keys() == {"0/0"}
    resumed = RunStore.resume(store.path, {"env": "guess"})
    resumed.write(trajectory("1/0"))
    resumed.close()
    assert [t.key for t in resumed.trajectories()] == ["0/0", "1/0"]


def test_resume_refuses_a_different_config_and_a_missing_run(tmp_path: Path) -> None:
    store = RunStore.create({"env": "guess", "k": 8}, root=tmp_path, run_id="r")
    with pytest.raises(ConfigError, match=r"k: 8 -> 4"):
        RunStore.resume(store.path, {"env": "guess", "k": 4})
    with pytest.raises(RunStoreError, match="not a run directory"):
        RunStore.resume(tmp_path / "nope")
    with pytest.raises(RunStoreError, match="already exists"):
        RunStore.create({"env": "guess"}, root=tmp_path, run_id="r")


def test_config_metrics_and_parquet_export(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    store = RunStore.create({"env": "guess", "horizon": {"kind": "fixed", "turns": 8}}, root=tmp_path)
    for i, outcome in enumerate([Outcome.SUCCESS, Outcome.FAILURE, Outcome.ENV_ERROR]):
        store.write(trajectory(f"{i}/0", outcome))
    store.log_metrics({"step": 3, "success_rate": 0.5})
    store.finish({"episodes": 3})
    assert store.config()["horizon"] == {"kind": "fixed", "turns": 8}
    assert store.metrics()[0]["success_rate"] == 0.5
    table = pq.read_table(store.export_parquet())
    assert table.num_rows == 3
    assert table.column("outcome").to_pylist() == ["success", "failure", "env_error"]
    assert json.loads(table.column("task")[0].as_py())["env"] == "guess"


def test_progress_shows_on_a_terminal_and_is_quiet_otherwise() -> None:
    summary = RunSummary()
    for outcome in (Outcome.SUCCESS, Outcome.SUCCESS, Outcome.FAILURE):
        summary.add(trajectory("k", outcome))
    shown = io.StringIO()
    with ProgressDisplay(4, stream=shown, enabled=True) as display:
        display.update(summary)
    assert "3/4" in shown.getvalue() and "success 66.7%" in shown.getvalue()
    quiet = io.StringIO()  # not a terminal
    with ProgressDisplay(4, stream=quiet) as display:
        display.update(summary)
    assert quiet.getvalue() == ""
    assert summary.as_dict()["outcomes"] == {"success": 2, "failure": 1}


def test_progress_counts_a_multi_player_game_once_not_once_per_seat() -> None:
    summary = RunSummary(resumed=1)
    for game in ("0/0", "0/1"):
        for seat in (0, 1):
            summary.add(trajectory(f"{game}/seat{seat}").model_copy(update={"seat": seat}))
    assert (summary.episodes, summary.games) == (4, 2)  # four seats' trajectories, two games
    shown = io.StringIO()
    with ProgressDisplay(3, stream=shown, enabled=True) as display:
        display.update(summary)
    assert "3/3" in shown.getvalue()  # two games played and one resumed, of three: never 5/3
