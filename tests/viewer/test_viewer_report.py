"""``agenthub report``: one self-contained file holding what the viewer shows, safe whatever the run's text."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agenthub import Outcome, Task, Trajectory
from agenthub.errors import ConfigError
from agenthub.rollout.store import RunStore
from agenthub.types import Turn
from agenthub.viewer.report import choose_episodes, write_report

from .conftest import EVAL_RUN, TOKEN_RUN

HOSTILE = '</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> & <!-- end'


def embedded(html: str) -> Any:
    match = re.search(r'<script type="application/json" id="agenthub-data">(.*?)</script>', html, re.S)
    assert match is not None, "the report holds no embedded data"
    return json.loads(match.group(1))


def hostile_run(root: Path) -> Path:
    store = RunStore.create({"env": "guess"}, root=root, run_id="hostile")
    turn = Turn(action=HOSTILE, observation=HOSTILE, reward=0.0, terminated=True, truncated=False)
    store.write(
        Trajectory(task=Task(env="guess", task_id=1), first_observation=HOSTILE, turns=[turn], outcome=Outcome.FAILURE)
    )
    store.finish()
    return store.path


def test_the_report_is_one_file_with_no_outside_references(runs_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    written = write_report(runs_root, out)
    assert written["runs"] == 2 and written["episodes"] == 24 + 15 == written["embedded"]
    html = out.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|static/)""", html)  # nothing fetched: works offline
    assert "<style>" in html and "fetch(" in html  # the app's own code, inlined (fetch only in view mode)
    data = embedded(html)
    assert [r["id"] for r in data["runs"]] == [EVAL_RUN, TOKEN_RUN]
    tokens = data["data"][TOKEN_RUN]
    assert len(tokens["rows"]) == 15 and tokens["embedded"] == 15
    stored = list(RunStore.existing(runs_root / TOKEN_RUN).trajectories())
    for key, episode in tokens["episodes"].items():
        assert episode["key"] == stored[int(key)].key
        if stored[int(key)].tokens is not None:
            assert len(episode["token_text"]["response"]) == len(episode["tokens"]["response_ids"])
    assert tokens["tasks"]["ks"] == [1, 2, 3] and len(tokens["tasks"]["rows"]) == 7
    assert [s["name"] for s in tokens["metrics"]["series"]][:2] == ["success", "reward"]


def test_full_episodes_are_capped_with_every_outcome_and_task_kept(runs_root: Path, tmp_path: Path) -> None:
    written = write_report(runs_root / EVAL_RUN, tmp_path / "r.html", episodes=10)
    assert written["episodes"] == 24 and written["embedded"] == 10
    data = embedded((tmp_path / "r.html").read_text())["data"][EVAL_RUN]
    rows = [dict(zip(data["columns"], row, strict=True)) for row in data["rows"]]
    assert len(rows) == 24  # every summary row, so filters and counts are whole
    kept = {rows[int(i)]["outcome"] for i in data["episodes"]}
    assert kept == {r["outcome"] for r in rows}


def test_choose_episodes_takes_each_combination_first_then_run_order() -> None:
    # id, env, task, split, key, outcome: the leading columns of agenthub.viewer.queries.COLUMNS
    rows: list[list[Any]] = [
        [0, "guess", "1", None, None, "failure"],
        [1, "guess", "1", None, None, "failure"],
        [2, "guess", "1", None, None, "success"],
        [3, "guess", "2", None, None, "failure"],
        [4, "guess", "2", None, None, "failure"],
    ]
    assert choose_episodes(rows, 3) == [0, 2, 3]
    assert choose_episodes(rows, 4) == [0, 1, 2, 3]
    assert choose_episodes(rows, 0) == []


def test_run_text_cannot_break_out_of_the_embedded_data(tmp_path: Path) -> None:
    write_report(hostile_run(tmp_path / "runs"), tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    assert html.count("</script>") == 2  # the data's and the app's own: none came from the run
    episode = embedded(html)["data"]["hostile"]["episodes"]["0"]
    assert episode["first_observation"] == HOSTILE and episode["turns"][0]["action"] == HOSTILE


def test_a_negative_cap_is_refused(runs_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="episodes must be 0 or more"):
        write_report(runs_root, tmp_path / "r.html", episodes=-1)
