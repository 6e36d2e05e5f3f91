"""``agenthub eval``'s steps, each on its own: which split, which tasks, and how the results are written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenthub.cli.eval_command import RESULTS_FILE, EvalConfig, choose_split, select_tasks
from agenthub.errors import ConfigError
from agenthub.rollout.store import RunStore, RunStoreError
from agenthub.types import EnvInfo, TaskList


def info(*splits: str) -> EnvInfo:
    return EnvInfo(name="guess", version="1", default_max_turns=10, splits=list(splits))


def test_the_split_is_test_where_the_env_has_it_else_its_first_and_an_unknown_one_is_refused() -> None:
    assert choose_split(info("train", "test"), None) == "test"
    assert choose_split(info("train", "dev"), None) == "train"
    assert choose_split(info("train", "dev"), "dev") == "dev"
    with pytest.raises(ConfigError, match=r"env 'guess' has no split 'test'; it has: train, dev"):
        choose_split(info("train", "dev"), "test")


def test_n_tasks_are_spread_over_a_range_listing_with_the_run_s_seed_and_turn_limit() -> None:
    config = EvalConfig(env="guess", n=4, seed=7, max_turns=3)
    tasks = select_tasks(config, info("test"), "test", TaskList(split="test", count=100, start=1000, stop=1100))
    assert [(t.task_id - 1000) // 25 for t in tasks] == [0, 1, 2, 3]  # one from each quarter of the split
    assert {(t.env, t.split, t.seed, t.max_turns) for t in tasks} == {("guess", "test", 7, 3)}


def test_without_n_every_listed_id_is_scored_in_order() -> None:
    listing = TaskList(split="dev", count=3, ids=["b", "a", "c"])
    tasks = select_tasks(EvalConfig(env="guess"), info("dev"), "dev", listing)
    assert [t.task_id for t in tasks] == ["b", "a", "c"]


def test_more_tasks_than_the_split_has_are_refused_with_the_number_to_use() -> None:
    listing = TaskList(split="test", count=3, start=0, stop=3)
    with pytest.raises(ConfigError, match=r"n=5, but split 'test' of env 'guess' has 3 tasks; use n=3 or leave n out"):
        select_tasks(EvalConfig(env="guess", n=5), info("test"), "test", listing)


def test_a_result_file_is_written_whole_beside_the_run_and_only_under_a_plain_json_name(tmp_path: Path) -> None:
    store = RunStore.create({"env": "guess"}, root=tmp_path, run_id="r")
    written = store.write_json(RESULTS_FILE, {"overall": {"avg_at_k": 0.5}, "path": Path("x")})
    assert written == tmp_path / "r" / "eval.json"
    assert json.loads(written.read_text()) == {"overall": {"avg_at_k": 0.5}, "path": "x"}
    assert sorted(p.name for p in store.path.iterdir()) == ["config.yaml", "eval.json", "run.json"]  # no .tmp left
    for name in ("run.json", "../eval.json", "eval.txt"):
        with pytest.raises(RunStoreError, match="is not a result file name"):
            store.write_json(name, {})
