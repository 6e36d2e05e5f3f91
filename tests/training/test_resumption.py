"""``agenthub.training.resumption``: what every trainer's ``--resume RUN_DIR`` checks, and what it drops."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, model_validator

from agenthub import ConfigError
from agenthub.rollout import RunStore
from agenthub.training import resumption

ALLOWED = frozenset({"steps", "resume"})


class Settings(BaseModel):
    env: str = "trail"
    steps: int = 10
    learning_rate: float = 1e-3
    token: str | None = None
    model: str | None = None
    turn_tokens: int | None = None  # resolved: 4 with the tiny model (no model=), 64 with a given one
    resume: str | None = None

    @model_validator(mode="after")
    def _resolve(self) -> Settings:
        if self.turn_tokens is None:
            self.turn_tokens = 4 if self.model is None else 64
        return self


def test_a_new_run_then_a_resumed_one_that_may_change_only_the_allowed_settings(tmp_path: Path) -> None:
    store = resumption.open_run(Settings(token="s3cret"), ALLOWED, root=tmp_path, run_id="r")
    store.finish(status="interrupted")
    assert "s3cret" not in (store.path / "config.yaml").read_text()  # secrets are never stored
    stored = store.config()

    changed = Settings.model_validate({**stored, "resume": str(store.path), "learning_rate": 0.5})
    with pytest.raises(ConfigError, match=r"learning_rate: 0\.001 -> 0\.5; only steps may change on resume"):
        resumption.open_run(changed, ALLOWED, root=tmp_path)
    with pytest.raises(ConfigError, match="learning_rate"):  # a dry run refuses it the same way
        resumption.planned_run_dir(changed, ALLOWED, root=tmp_path)

    more = Settings.model_validate({**stored, "resume": str(store.path), "steps": 20, "token": "new"})
    assert resumption.planned_run_dir(more, ALLOWED, root=tmp_path) == store.path
    reopened = resumption.open_run(more, ALLOWED, root=tmp_path)
    assert reopened.path == store.path and reopened.config()["steps"] == 20
    assert reopened.meta()["status"] == "running"


def test_a_setting_added_since_the_run_counts_as_the_default_its_config_resolves_to(tmp_path: Path) -> None:
    old = resumption.saved_config(Settings(model="org/m"))
    del old["turn_tokens"]  # the plugin had no such setting when the run started
    store = RunStore.create(old, root=tmp_path, run_id="old")
    store.finish()
    same = Settings.model_validate({**old, "resume": str(store.path)})
    assert resumption.open_run(same, ALLOWED, root=tmp_path).path == store.path  # 64 for a given model, not 4
    with pytest.raises(ConfigError, match="turn_tokens: 64 -> 8"):
        fewer = Settings.model_validate({**old, "resume": str(store.path), "turn_tokens": 8})
        resumption.open_run(fewer, ALLOWED, root=tmp_path)


def test_a_dry_run_names_a_new_run_directory_without_making_it(tmp_path: Path) -> None:
    planned = resumption.planned_run_dir(Settings(), ALLOWED, root=tmp_path / "runs")
    assert planned.parent == tmp_path / "runs" and not (tmp_path / "runs").exists()
    assert resumption.planned_run_dir(Settings(), ALLOWED, root=tmp_path, run_id="x") == tmp_path / "x"


def test_rewind_keeps_what_the_predicates_accept_and_drops_a_torn_last_line(tmp_path: Path) -> None:
    store = RunStore.create({}, root=tmp_path, run_id="r")
    for step in (1, 2, 3):
        store.log_metrics({"step": step})
    lines = [json.dumps({"key": f"{step}/1/0", "n": step}) for step in (0, 1, 2)]
    (store.path / "trajectories.jsonl").write_text("\n".join(lines) + '\n{"key": "3/1')  # killed mid-write

    resumption.rewind(
        store,
        keep_metric=lambda record: record["step"] <= 2,
        keep_trajectory=lambda episode: int(str(episode["key"]).split("/")[0]) < 2,
    )
    assert [m["step"] for m in store.metrics()] == [1, 2]
    kept = (store.path / "trajectories.jsonl").read_text().splitlines()
    assert [json.loads(line)["n"] for line in kept] == [0, 1]
    assert not list(store.path.glob("*.tmp"))  # swapped in whole
