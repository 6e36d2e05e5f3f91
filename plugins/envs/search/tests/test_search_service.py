"""The retrieval service (serve-retriever's app) under concurrent batch queries, and retriever=url."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from agenthub_env_search.env import SearchEnv


def test_concurrent_batches_each_get_their_own_ranked_results(retriever_url: str) -> None:
    titles = ["Ilsa Varn (architect)", "Ilsa Varn (poet)", "Korvath (Elmaria)", "Tessaly (Orund)"]
    expected = ["a", "b", "c", "d"]

    def batch(shift: int) -> list[str]:
        queries = titles[shift:] + titles[:shift]
        response = httpx.post(
            f"{retriever_url}/retrieve", json={"queries": queries, "topk": 2, "return_scores": True}, timeout=30
        )
        response.raise_for_status()
        result = response.json()["result"]
        assert all(len(row) == 2 and "score" in row[0] for row in result)
        return [row[0]["document"]["id"] for row in result]

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(batch, [i % 4 for i in range(32)]))
    assert answers == [expected[i % 4 :] + expected[: i % 4] for i in range(32)]
    assert httpx.get(f"{retriever_url}/healthz").json()["passages"] == 5


def test_search_r1_requests_are_answered_as_search_r1_answers_them(retriever_url: str) -> None:
    # Search-R1 sends an empty list on a turn where no sample searched, and null/0 for its default topk.
    empty = httpx.post(f"{retriever_url}/retrieve", json={"queries": []})
    assert empty.status_code == 200 and empty.json() == {"result": []}
    for topk in (None, 0):
        rows = httpx.post(f"{retriever_url}/retrieve", json={"queries": ["Ilsa Varn"], "topk": topk}).json()["result"]
        assert len(rows[0]) == 3 and set(rows[0][0]) == {"id", "contents"}  # bare documents without return_scores
    quoted = httpx.post(f"{retriever_url}/retrieve", json={"queries": ["Tessaly harbour"], "topk": 1}).json()
    assert quoted["result"][0][0]["contents"].startswith('"Tessaly (Orund)"\n')  # the corpus's own contents


def test_the_env_searches_through_the_service(retriever_url: str, small_dir: Path) -> None:
    env = SearchEnv(retriever="url", retriever_url=retriever_url, qa=str(small_dir / "qa.jsonl"))
    env.reset(task_id="q1")
    text = env.step("<search>Korvath (Elmaria)</search>")[0]
    assert text.startswith("<information>Doc 1(Title: Korvath (Elmaria)) Korvath is a city in Elmaria.")
    assert env.step("<answer>Ilsa Varn</answer>")[1] == 1.0
    env.close()
    down = SearchEnv(retriever="url", retriever_url="http://127.0.0.1:9", qa=str(small_dir / "qa.jsonl"))
    down.reset(task_id=0)
    try:
        down.step("<search>x</search>")
    except RuntimeError as exc:
        assert "serve-retriever" in str(exc)
    else:
        raise AssertionError("a search against a closed port should fail")
