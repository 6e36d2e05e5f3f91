"""The trajectory index: complete, incremental as a run grows, and never fooled by a torn or damaged file."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from pathlib import Path

import pytest

import agenthub.viewer.index as index_module
from agenthub import Outcome, Task, Trajectory
from agenthub.rollout.store import TRAJECTORIES_FILE, RunStore
from agenthub.types import TokenTrace, Turn
from agenthub.viewer.index import INDEX_FILE, RunIndex, default_index_path

from .conftest import EVAL_RUN, TOKEN_RUN


def episode(number: int, outcome: Outcome = Outcome.FAILURE, *, tokens: bool = False) -> Trajectory:
    return Trajectory(
        task=Task(env="guess", task_id=number % 5, split="train"),
        first_observation=f"start {number}",
        turns=[Turn(action=f"guess {number}", observation="too low", reward=0.0, terminated=False, truncated=False)],
        reward=float(outcome is Outcome.SUCCESS),
        outcome=outcome,
        key=f"{number % 5}/{number // 5}",
        duration_s=0.5,
        tokens=TokenTrace(prompt_ids=[1, 2], response_ids=[3, 4], response_mask=[1, 0], logprobs=[-0.5, 0.0])
        if tokens
        else None,
    )


def stored_run(root: Path, episodes: int, *, tokens_every: int = 0) -> RunStore:
    """A closed run ``root/r`` of ``episodes`` failed guess episodes (with tokens on every ``tokens_every``-th)."""
    store = RunStore.create({"env": "guess"}, root=root, run_id="r")
    for number in range(episodes):
        store.write(episode(number, tokens=tokens_every > 0 and number % tokens_every == 0))
    store.close()
    return store


def indexed_rows(run: RunIndex) -> list[tuple[object, ...]]:
    with run.reading() as db:
        return db.execute("SELECT id, env, task, key, outcome, reward, turns, has_tokens FROM episodes").fetchall()


@pytest.mark.parametrize("run", [EVAL_RUN, TOKEN_RUN])
def test_every_episode_is_indexed_with_its_summary_and_can_be_read_back(fresh_root: Path, run: str) -> None:
    trajectories = list(RunStore.existing(fresh_root / run).trajectories())
    run_index = RunIndex(fresh_root / run)
    status = run_index.update()
    assert status.complete and status.episodes == len(trajectories) and status.damaged == 0
    assert indexed_rows(run_index) == [
        (i, t.task.env, str(t.task.task_id), t.key, t.outcome.value, t.reward, len(t.turns), int(t.tokens is not None))
        for i, t in enumerate(trajectories)
    ]
    for number in (0, len(trajectories) - 1):
        assert Trajectory.model_validate(run_index.read(number)) == trajectories[number]
    assert run_index.read(len(trajectories)) is None
    assert run_index.path == fresh_root / run / INDEX_FILE


def test_updates_are_incremental_and_skip_a_torn_last_line(tmp_path: Path) -> None:
    store = stored_run(tmp_path, 3)
    run_index = RunIndex(store.path)
    assert run_index.update().episodes == 3
    file = store.path / TRAJECTORIES_FILE
    whole = episode(3, Outcome.SUCCESS).model_dump_json().encode() + b"\n"
    with file.open("ab") as handle:  # a writer killed (or caught) mid-line
        handle.write(whole[:40])
    status = run_index.update()
    assert status.episodes == 3 and status.complete  # nothing more can be indexed until the line ends
    with file.open("ab") as handle:
        handle.write(whole[40:])
    assert not run_index.status().complete  # the file grew: the page says it is indexing
    status = run_index.update()
    assert status.episodes == 4 and status.complete and status.bytes_indexed == file.stat().st_size
    assert indexed_rows(run_index)[-1][4] == "success"
    assert indexed_rows(run_index)[:3] == indexed_rows(RunIndex(store.path))[:3]  # nothing indexed twice


def test_a_damaged_line_is_recorded_and_the_rest_stays_viewable(tmp_path: Path) -> None:
    store = RunStore.create({"env": "guess"}, root=tmp_path, run_id="r")
    store.write(episode(0))
    with (store.path / TRAJECTORIES_FILE).open("ab") as handle:
        handle.write(b'{"not": "a trajectory"}\n{broken json\n')
    store.write(episode(1, Outcome.SUCCESS))
    store.close()
    run_index = RunIndex(store.path)
    status = run_index.update()
    assert status.episodes == 2 and status.damaged == 2 and status.as_dict()["damaged_lines"] == 2
    assert [row[4] for row in indexed_rows(run_index)] == ["failure", "success"]
    with run_index.reading() as db:
        lines = db.execute("SELECT line, message FROM damaged ORDER BY line").fetchall()
    assert [line for line, _ in lines] == [2, 3] and "not a trajectory" in lines[0][1]
    assert run_index.read(1)["outcome"] == "success"  # type: ignore[index]


def test_a_replaced_file_is_indexed_again_from_the_start(tmp_path: Path) -> None:
    store = stored_run(tmp_path, 4)
    run_index = RunIndex(store.path)
    assert run_index.update().episodes == 4
    file = store.path / TRAJECTORIES_FILE
    # Shorter: e.g. the run was started again under the same id.
    file.write_bytes(episode(9, Outcome.SUCCESS).model_dump_json().encode() + b"\n")
    status = run_index.update()
    assert status.episodes == 1 and [row[4] for row in indexed_rows(run_index)] == ["success"]
    # As long or longer but different from the start: a different run copied over it.
    lines = [episode(n, Outcome.TRUNCATED).model_dump_json().encode() + b"\n" for n in range(6)]
    file.write_bytes(b"".join(lines))
    status = run_index.update()
    assert status.episodes == 6 and {row[4] for row in indexed_rows(run_index)} == {"truncated"}
    # Emptied, then written again: numbering starts over.
    file.write_bytes(b"")
    assert run_index.update().episodes == 0 and indexed_rows(run_index) == []
    file.write_bytes(b"".join(lines[:2]))
    status = run_index.update()
    assert status.episodes == 2 and [row[0] for row in indexed_rows(run_index)] == [0, 1]


def test_a_damaged_index_file_is_rebuilt(fresh_root: Path) -> None:
    run = fresh_root / EVAL_RUN
    (run / INDEX_FILE).write_bytes(b"this is not sqlite" * 100)
    assert RunIndex(run).update().episodes == 24


def test_an_index_of_another_schema_version_is_rebuilt(fresh_root: Path) -> None:
    run = fresh_root / EVAL_RUN
    RunIndex(run).update()
    with contextlib.closing(sqlite3.connect(run / INDEX_FILE)) as db, db:  # sqlite3's own `with` only commits
        db.execute("UPDATE state SET value = 0 WHERE name = 'schema'")
    assert RunIndex(run).update().episodes == 24


def test_big_runs_are_indexed_in_chunks_that_readers_see(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = stored_run(tmp_path, 200, tokens_every=2)
    line = (store.path / TRAJECTORIES_FILE).stat().st_size // 200
    monkeypatch.setattr(index_module, "CHUNK_BYTES", line * 20)  # about 20 episodes a transaction
    run_index = RunIndex(store.path)
    partial = run_index.update(max_seconds=0)  # one chunk, then stop: what a background slice does
    assert 0 < partial.episodes < 200 and not partial.complete
    seen: list[int] = []
    reader = threading.Thread(target=lambda: seen.append(RunIndex(store.path).status().episodes))
    reader.start()
    reader.join()
    assert seen[0] >= partial.episodes  # another connection reads what is committed so far
    done = run_index.update()
    assert done.complete and done.episodes == 200
    assert [row[7] for row in indexed_rows(run_index)] == [int(n % 2 == 0) for n in range(200)]


def test_wait_for_returns_once_enough_episodes_are_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = stored_run(tmp_path, 100)
    monkeypatch.setattr(index_module, "CHUNK_BYTES", (store.path / TRAJECTORIES_FILE).stat().st_size // 10)
    run_index = RunIndex(store.path)
    worker = threading.Thread(target=run_index.update)
    worker.start()
    run_index.wait_for(30, timeout=30)
    assert run_index.status().episodes >= 30
    worker.join()


def test_a_read_only_run_keeps_its_index_in_the_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run dir's permissions are stood in for by os.access: tests run as root here, who may write anywhere."""
    run = tmp_path / "run"
    run.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != run.resolve())
    path = default_index_path(run)
    assert path.parent == tmp_path / "cache" / "agenthub" / "viewer" and path.suffix == ".sqlite"
    assert default_index_path(run) == path  # the same run always finds its index again
