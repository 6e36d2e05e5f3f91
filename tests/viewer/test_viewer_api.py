"""The viewer's HTTP API on real runs: what the page shows must be what the run holds."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agenthub import Outcome, Task, Trajectory
from agenthub.rollout.store import RunStore
from agenthub.viewer.api import create_app
from agenthub.viewer.runs import RunCatalog, RunNotFoundError

from .conftest import EVAL_RUN, STEPS, TOKEN_RUN, metric_record


@pytest.fixture(scope="module")
def client(runs_root: Path) -> Iterator[TestClient]:
    with TestClient(create_app(runs_root)) as test_client:
        yield test_client


def stored(root: Path, run: str) -> list[Trajectory]:
    return list(RunStore.existing(root / run).trajectories())


def get(client: TestClient, url: str, status: int = 200) -> Any:
    response = client.get(url)
    assert response.status_code == status, response.text
    return response.json()


def test_runs_are_listed_newest_first_with_their_config_and_summary(client: TestClient) -> None:
    runs = get(client, "/api/runs")["runs"]
    assert [r["id"] for r in runs] == [EVAL_RUN, TOKEN_RUN]  # the eval run was started last
    assert runs[0]["status"] == "finished" and runs[0]["config"]["agent"] == "random"
    assert runs[0]["summary"]["episodes"] == 24


def test_the_run_summary_counts_what_the_store_holds(client: TestClient, runs_root: Path) -> None:
    trajectories = stored(runs_root, TOKEN_RUN)
    run = get(client, f"/api/runs/{TOKEN_RUN}")
    overall = run["overall"]
    assert overall["episodes"] == len(trajectories) and not run["index"]["indexing"]
    assert overall["outcomes"] == dict(sorted(Counter(t.outcome.value for t in trajectories).items()))
    wins = sum(t.outcome is Outcome.SUCCESS for t in trajectories)
    assert overall["success_rate"] == pytest.approx(wins / len(trajectories))
    assert overall["mean_reward"] == pytest.approx(sum(t.reward for t in trajectories) / len(trajectories))
    assert overall["tasks"] == len({(t.task.env, t.task.task_id) for t in trajectories})


def test_episode_pages_match_the_file_in_order(client: TestClient, runs_root: Path) -> None:
    trajectories = stored(runs_root, EVAL_RUN)
    first = get(client, f"/api/runs/{EVAL_RUN}/episodes?limit=10")
    second = get(client, f"/api/runs/{EVAL_RUN}/episodes?limit=10&offset=10")
    assert first["total"] == second["total"] == len(trajectories) == 24
    rows = first["episodes"] + second["episodes"]
    assert [r["index"] for r in rows] == list(range(20))
    for row, trajectory in zip(rows, trajectories, strict=False):
        assert row["key"] == trajectory.key and row["outcome"] == trajectory.outcome.value
        assert row["task"] == str(trajectory.task.task_id) and row["turns"] == len(trajectory.turns)
        assert row["reward"] == trajectory.reward and row["has_tokens"] is False


@pytest.mark.parametrize(
    ("query", "keep"),
    [
        ("outcome=success", lambda t: t.outcome is Outcome.SUCCESS),
        ("outcome=success,truncated", lambda t: t.outcome in (Outcome.SUCCESS, Outcome.TRUNCATED)),
        ("env=trail", lambda t: t.task.env == "trail"),
        ("task=4", lambda t: str(t.task.task_id) == "4"),
        ("min_reward=0.3&max_reward=0.7", lambda t: 0.3 <= t.reward <= 0.7),
        ("env=trail&outcome=failure&min_reward=0.1", lambda t: t.task.env == "trail" and t.reward >= 0.1
         and t.outcome is Outcome.FAILURE),
    ],
    ids=["outcome", "two-outcomes", "env", "task", "reward-range", "combined"],
)  # fmt: skip
def test_filters_select_exactly_the_matching_episodes(
    client: TestClient, runs_root: Path, query: str, keep: Any
) -> None:
    expected = [i for i, t in enumerate(stored(runs_root, TOKEN_RUN)) if keep(t)]
    assert expected, "the fixture run must hold episodes that match"
    page = get(client, f"/api/runs/{TOKEN_RUN}/episodes?{query}&limit=500")
    assert page["total"] == len(expected)
    assert [r["index"] for r in page["episodes"]] == expected


def test_sorting_by_reward_descending(client: TestClient) -> None:
    rows = get(client, f"/api/runs/{TOKEN_RUN}/episodes?sort=-reward&limit=500")["episodes"]
    rewards = [r["reward"] for r in rows]
    assert rewards == sorted(rewards, reverse=True) and rewards[0] > rewards[-1]


def test_one_episode_is_the_stored_trajectory_with_token_text(client: TestClient, runs_root: Path) -> None:
    trajectories = stored(runs_root, TOKEN_RUN)
    number = next(i for i, t in enumerate(trajectories) if t.tokens is not None and len(t.turns) > 1)
    episode = get(client, f"/api/runs/{TOKEN_RUN}/episodes/{number}")
    extra = {k: episode.pop(k) for k in ("index", "token_text", "tokenizer")}
    assert Trajectory.model_validate(episode) == trajectories[number]
    assert extra["index"] == number and extra["tokenizer"].endswith("tiny-model")
    # Each id decoded alone by the tokenizer the run saved (found without being named).
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(runs_root / TOKEN_RUN / "tiny-model"))
    trace = trajectories[number].tokens
    assert trace is not None
    assert extra["token_text"]["response"] == [tokenizer.decode([i]) for i in trace.response_ids]
    assert "".join(extra["token_text"]["prompt"] + extra["token_text"]["response"]) == tokenizer.decode(
        trace.prompt_ids + trace.response_ids
    )


def test_a_run_without_a_tokenizer_shows_ids_and_an_explicit_one_is_used(fresh_root: Path, tmp_path: Path) -> None:
    model = fresh_root / TOKEN_RUN / "tiny-model"
    elsewhere = shutil.move(model, tmp_path / "tok")
    with TestClient(create_app(fresh_root)) as client:
        episode = get(client, f"/api/runs/{TOKEN_RUN}/episodes/0")
        assert episode["tokens"]["response_ids"] and episode["token_text"] is None
    with TestClient(create_app(fresh_root, tokenizer=elsewhere)) as client:
        episode = get(client, f"/api/runs/{TOKEN_RUN}/episodes/0")
        assert len(episode["token_text"]["response"]) == len(episode["tokens"]["response_ids"])


def test_the_task_table_agrees_with_agenthub_eval(client: TestClient, runs_root: Path) -> None:
    """eval.json is what `agenthub eval` computed for the same run: the viewer must show the same scores."""
    per_task = json.loads((runs_root / EVAL_RUN / "eval.json").read_text())["per_task"]
    table = get(client, f"/api/runs/{EVAL_RUN}/tasks")
    assert table["ks"] == [1, 2, 3] and table["total"] == len(per_task)
    for row, expected in zip(table["tasks"], per_task, strict=True):
        assert row["task"] == str(expected["task_id"])
        assert (row["episodes"], row["successes"], row["excluded"]) == (
            expected["n"],
            expected["successes"],
            expected["excluded"],
        )
        assert row["mean_reward"] == pytest.approx(expected["avg"])
        for k in (1, 2, 3):
            assert row[f"pass@{k}"] == pytest.approx(expected[f"pass@{k}"])


def test_the_task_table_sorts_and_pages(client: TestClient) -> None:
    rows = get(client, f"/api/runs/{TOKEN_RUN}/tasks?sort=-success_rate")["tasks"]
    rates = [r["success_rate"] for r in rows]
    assert rates == sorted(rates, reverse=True) and rates[0] == 1.0
    page = get(client, f"/api/runs/{TOKEN_RUN}/tasks?limit=2&offset=2")
    assert page["total"] == 7 and len(page["tasks"]) == 2


def test_metrics_become_curves_by_step(client: TestClient, runs_root: Path) -> None:
    metrics = get(client, f"/api/runs/{TOKEN_RUN}/metrics")
    assert metrics["x"] == "step" and metrics["records"] == STEPS
    series = {s["name"]: s["points"] for s in metrics["series"]}
    assert [s["name"] for s in metrics["series"]][:2] == ["success", "reward"]  # the ones a user looks for first
    assert series["loss"] == [[float(step), metric_record(step)["loss"]] for step in range(1, STEPS + 1)]
    summary = get(client, f"/api/runs/{EVAL_RUN}/metrics")  # eval logs one summary record, no step
    assert summary["x"] == "record"
    scored = json.loads((runs_root / EVAL_RUN / "eval.json").read_text())["overall"]["success_rate"]
    assert {s["name"]: s["points"] for s in summary["series"]}["eval.success_rate"] == [[1.0, scored]]


def test_facets_offer_every_outcome_and_the_envs_and_tasks_present(client: TestClient, runs_root: Path) -> None:
    trajectories = stored(runs_root, TOKEN_RUN)
    facets = get(client, f"/api/runs/{TOKEN_RUN}/facets")
    assert facets["envs"] == [{"value": "guess", "count": 3}, {"value": "trail", "count": 12}]
    assert facets["outcomes"] == [
        {"value": o.value, "count": sum(t.outcome is o for t in trajectories)} for o in Outcome
    ]
    first_seen = list(dict.fromkeys(str(t.task.task_id) for t in trajectories))
    assert [f["value"] for f in facets["tasks"]] == first_seen and not facets["tasks_truncated"]


@pytest.mark.parametrize(
    ("url", "status", "needle"),
    [
        ("/api/runs/nope", 404, "no run 'nope' in"),
        (f"/api/runs/{TOKEN_RUN}/episodes/999", 404, "episodes are numbered 0 to 14"),
        (f"/api/runs/{TOKEN_RUN}/episodes?outcome=sucess", 422, "did you mean 'success'?"),
        (f"/api/runs/{TOKEN_RUN}/episodes?min_reward=1&max_reward=0", 422, "swap them or leave one out"),
        (f"/api/runs/{TOKEN_RUN}/episodes?min_reward=high", 422, "min_reward: "),
        (f"/api/runs/{TOKEN_RUN}/episodes?limit=100000", 422, "page with offset="),
        (f"/api/runs/{TOKEN_RUN}/episodes?sort=rewards", 422, "did you mean 'reward'?"),
        (f"/api/runs/{TOKEN_RUN}/tasks?sort=best", 422, "use one of: order"),
        ("/api/nothing/here", 404, "routes: /api/runs"),
    ],
    ids=["run", "episode", "outcome", "range", "number", "limit", "sort", "task-sort", "route"],
)
def test_errors_have_their_status_and_say_what_to_do(client: TestClient, url: str, status: int, needle: str) -> None:
    body = get(client, url, status)
    assert set(body) == {"error"} and needle in body["error"]["message"]


def test_the_page_and_its_assets_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and 'src="static/app.js"' in page.text
    for asset, kind in (("app.js", "javascript"), ("style.css", "css")):
        response = client.get(f"/static/{asset}")
        assert response.status_code == 200 and kind in response.headers["content-type"]


def test_one_run_directory_is_a_run_dir_too(runs_root: Path) -> None:
    with TestClient(create_app(runs_root / EVAL_RUN)) as client:
        assert [r["id"] for r in get(client, "/api/runs")["runs"]] == [EVAL_RUN]
        assert get(client, f"/api/runs/{EVAL_RUN}/episodes")["total"] == 24


def test_a_wrong_directory_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(RunNotFoundError, match="does not exist"):
        create_app(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunNotFoundError, match=r"holds none.*agenthub eval"):
        create_app(tmp_path / "empty")


def test_a_run_being_written_shows_new_episodes(fresh_root: Path) -> None:
    run = fresh_root / EVAL_RUN
    with TestClient(create_app(fresh_root)) as client:
        assert get(client, f"/api/runs/{EVAL_RUN}/episodes")["total"] == 24
        store = RunStore.resume(run)
        extra = Trajectory(task=Task(env="guess", task_id=77), first_observation="new", outcome=Outcome.FAILURE)
        store.write(extra)
        store.write(extra.model_copy(update={"key": "late/1"}))
        store.close()
        deadline = time.monotonic() + 15
        while (total := get(client, f"/api/runs/{EVAL_RUN}/episodes")["total"]) < 26:  # the indexer polls
            assert time.monotonic() < deadline, f"still {total} episodes after appending two"
            time.sleep(0.1)
        assert get(client, f"/api/runs/{EVAL_RUN}/episodes?task=77")["total"] == 2


def test_a_run_id_cannot_reach_outside_run_dir(runs_root: Path) -> None:
    catalog = RunCatalog(runs_root / TOKEN_RUN)  # one run: its neighbour is outside
    for name in ("..", f"../{EVAL_RUN}", EVAL_RUN, ""):
        with pytest.raises(RunNotFoundError, match=f"runs there: {TOKEN_RUN}"):
            catalog.run(name)
    assert RunCatalog(runs_root).run(EVAL_RUN).path == runs_root / EVAL_RUN


@pytest.mark.parametrize(
    ("url", "name"),
    [
        (f"/api/runs/{TOKEN_RUN}/episodes/9223372036854775808", "number"),
        (f"/api/runs/{TOKEN_RUN}/episodes/-1", "number"),
        (f"/api/runs/{TOKEN_RUN}/episodes?offset=9223372036854775808", "offset"),
        (f"/api/runs/{TOKEN_RUN}/episodes?offset=-1", "offset"),
        (f"/api/runs/{TOKEN_RUN}/tasks?offset=18446744073709551616", "offset"),
    ],
    ids=["number-2^63", "number-negative", "offset-2^63", "offset-negative", "task-offset-2^64"],
)
def test_integers_out_of_range_are_422_naming_the_range_not_500(client: TestClient, url: str, name: str) -> None:
    body = get(client, url, 422)
    assert body["error"]["code"] == "invalid_query"
    assert f"{name}: " in body["error"]["message"] and "from 0 to 9223372036854775807" in body["error"]["message"]


def test_the_largest_offset_and_episode_number_are_answered(client: TestClient) -> None:
    last = 2**63 - 1
    assert get(client, f"/api/runs/{TOKEN_RUN}/episodes?offset={last}")["episodes"] == []
    assert get(client, f"/api/runs/{TOKEN_RUN}/tasks?offset={last}")["tasks"] == []
    assert (
        "episodes are numbered 0 to 14"
        in get(client, f"/api/runs/{TOKEN_RUN}/episodes/{last}", 404)["error"]["message"]
    )


def test_no_answer_shows_where_the_runs_lie_on_disk(client: TestClient, runs_root: Path) -> None:
    answers = [
        client.get("/api/runs").text,
        client.get(f"/api/runs/{TOKEN_RUN}").text,
        client.get(f"/api/runs/{TOKEN_RUN}/episodes/0").text,
        client.get("/api/runs/nope").text,
    ]
    assert get(client, "/api/runs")["root"] == runs_root.name
    for text in answers:
        assert str(runs_root.parent) not in text


TOKEN = "viewer-token-0123456789"


def test_with_a_token_every_api_route_needs_it_and_a_browser_logs_in_once(runs_root: Path) -> None:
    with TestClient(create_app(runs_root, token=TOKEN)) as client:
        for url in ("/api/runs", f"/api/runs/{TOKEN_RUN}/episodes/0", "/api/nothing"):
            refused = client.get(url)
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
            assert refused.json()["error"]["code"] == "unauthorized" and "?token=" in refused.json()["error"]["message"]
            assert client.get(url, headers={"Authorization": f"Bearer {TOKEN}"}).status_code in (200, 404)
        assert client.get("/api/runs", headers={"Authorization": "Bearer wrong-token-0123456789"}).status_code == 401
        assert client.get("/").status_code == 200 and client.get("/static/app.js").status_code == 200  # no run data
        assert client.get(f"/?token=wrong-{TOKEN}", follow_redirects=False).status_code == 401
        login = client.get(f"/?token={TOKEN}", follow_redirects=False)
        assert login.status_code == 303 and login.headers["location"] == "/"  # the token leaves the address bar
        cookie = login.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert [r["id"] for r in get(client, "/api/runs")["runs"]] == [EVAL_RUN, TOKEN_RUN]  # the cookie, now
