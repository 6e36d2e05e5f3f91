"""What every trainer plugin shares from ``agenthub.training``: a split's task ids, ``url=`` as a list, the
launch checks' tokenizer, the horizon's longest limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from agenthub import ConfigError, TaskList
from agenthub.training import (
    EnvUrls,
    LaunchReport,
    checks_with_tokenizer,
    env_url_list,
    most_turns,
    policy_tokenizer,
    split_task_ids,
)
from agenthub.types import TaskSplit


def test_split_task_ids_reads_either_form_and_cuts_a_range_without_expanding_it() -> None:
    assert split_task_ids(TaskList(split="train", count=3, ids=["a", "b", "c"])) == ["a", "b", "c"]
    assert split_task_ids(TaskList(split="train", count=3, ids=["a", "b", "c"]), 2) == ["a", "b"]
    assert split_task_ids(TaskList(split="test", count=4, start=10, stop=14)) == [10, 11, 12, 13]
    huge = TaskList(split="train", count=10**9, start=0, stop=10**9)
    assert split_task_ids(huge, 3) == [0, 1, 2]  # a billion-task range costs nothing to cut short
    assert split_task_ids(TaskSplit.range(5, 8)) == [5, 6, 7]  # as an installed env declares a split
    assert split_task_ids(TaskSplit.of([7, 3]), 0) == []


def test_split_task_ids_refuses_a_listing_with_neither_form_and_a_negative_limit() -> None:
    with pytest.raises(ConfigError, match=r"split 'train' names neither ids nor a start\.\.stop range"):
        split_task_ids(TaskList(split="train", count=0))
    with pytest.raises(ConfigError, match="must be 0 or more, not -1"):
        split_task_ids(TaskList(split="train", count=1, ids=[1]), -1)


class Servers(BaseModel):
    url: EnvUrls = None


def test_url_takes_one_url_or_a_list_and_reads_back_a_list() -> None:
    assert Servers(url="http://a:1").url == ["http://a:1"]
    assert Servers.model_validate({"url": ["http://a:1", "http://b:2"]}).url == ["http://a:1", "http://b:2"]
    assert Servers().url is None  # no url=: the trainer starts its own servers
    with pytest.raises(ValidationError):
        Servers.model_validate({"url": 8000})
    assert env_url_list("http://a:1") == ["http://a:1"]
    assert env_url_list(("http://a:1",)) == ["http://a:1"] and env_url_list(None) == []


def test_the_tiny_model_tokenizer_lives_in_a_temporary_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    with policy_tokenizer(None, offline=True, seed=1) as tokenizer:
        assert tokenizer.encode("hello", add_special_tokens=False)
        assert list(tmp_path.iterdir())  # built here...
    assert list(tmp_path.iterdir()) == []  # ...and removed: a dry run writes nothing
    rejected = pytest.raises(ConfigError, match=r"tiny_model settings \{'layers': 'x'\} were rejected")
    with rejected, policy_tokenizer(None, offline=True, tiny_model={"layers": "x"}):
        pass


def test_a_model_not_on_disk_is_skipped_on_a_dry_run_and_refused_on_a_real_one(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-model")
    checked: list[object] = []

    def check(tokenizer: object) -> LaunchReport:
        checked.append(tokenizer)
        return LaunchReport(env="trail")

    skipped = checks_with_tokenizer("trail", missing, check, dry_run=True)
    assert skipped.skipped == f"the tokenizer of {missing!r} is not on this machine yet" and checked == []
    with pytest.raises(ConfigError, match=f"cannot load the tokenizer of model={missing!r}"):
        checks_with_tokenizer("trail", missing, check, dry_run=False)
    assert checks_with_tokenizer("trail", None, check, dry_run=True).skipped is None and len(checked) == 1


def test_most_turns_is_the_horizons_largest_limit_over_the_run() -> None:
    assert most_turns(None, 10) is None
    assert most_turns(4, 10) == 4
    assert most_turns({"kind": "stepwise", "rounds": [2, 5, 9], "every": 3}, 5) == 5  # steps 0-4: two stages
    assert most_turns({"kind": "stepwise", "rounds": [2, 5, 9], "every": 3}, 100) == 9
