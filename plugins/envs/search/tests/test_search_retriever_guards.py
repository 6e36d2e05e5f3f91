"""``serve-retriever``'s guards, served for real: body limit, token, loopback, error shape, result cap."""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest
from agenthub import ConfigError

from agenthub_env_search.env import SearchEnv
from agenthub_env_search.service import RetrieverConfig, check_exposure, run

Serve = Callable[..., AbstractContextManager[str]]


def test_a_token_guards_every_route_but_healthz(serve_retriever: Serve, small_dir: Path) -> None:
    with serve_retriever(f"corpus={small_dir / 'corpus.jsonl'}", token="s3cret") as url:
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok", "passages": 5}
        refused = httpx.post(f"{url}/retrieve", json={"queries": ["Korvath"]})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
        wrong = httpx.post(f"{url}/retrieve", json={"queries": ["x"]}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = httpx.post(f"{url}/retrieve", json={"queries": ["Korvath"]}, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and len(ok.json()["result"][0]) == 3
        env = SearchEnv(retriever="url", retriever_url=url, retriever_token="s3cret", qa=str(small_dir / "qa.jsonl"))
        env.reset(task_id="q0")
        assert env.step("<search>Korvath</search>")[0].startswith("<information>Doc 1(Title: ")
        env.close()


def test_bodies_over_the_limit_are_refused_before_they_are_read(serve_retriever: Serve, small_dir: Path) -> None:
    with serve_retriever(f"corpus={small_dir / 'corpus.jsonl'}", "max_body_bytes=4096") as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            # Announce 100 MB and send none of it: the answer comes from the header alone.
            sock.sendall(
                b"POST /retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000000\r\n\r\n"
            )
            answer = b""
            while b"}}" not in answer:  # the status line and the body may come in separate segments
                data = sock.recv(65536)
                if not data:
                    break
                answer += data
            head = answer.decode()
        assert head.startswith("HTTP/1.1 413") and '"code":"body_too_large"' in head and "4096" in head
        chunked = httpx.post(f"{url}/retrieve", content=iter([b'{"queries": ["' + b"a" * 5000 + b'"]}']))
        assert chunked.status_code == 413


def test_errors_use_the_project_shape_and_never_echo_the_input(retriever_url: str) -> None:
    marker = "SECRET-INPUT-" * 50
    answers = [
        httpx.post(f"{retriever_url}/retrieve", json={"queries": marker}),  # not a list
        httpx.post(f"{retriever_url}/retrieve", json={"queries": ["x"], "topk": -1}),
        httpx.post(
            f"{retriever_url}/retrieve", content=b"{" + marker.encode(), headers={"content-type": "application/json"}
        ),
        httpx.post(f"{retriever_url}/retrieve", content=marker.encode(), headers={"content-type": "text/plain"}),
        httpx.get(f"{retriever_url}/{marker[:40]}"),
        httpx.get(f"{retriever_url}/retrieve"),
    ]
    assert [a.status_code for a in answers] == [422, 422, 400, 415, 404, 405]
    for answer in answers:
        body = answer.json()
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
        assert "SECRET-INPUT" not in answer.text, answer.text
    assert answers[0].json()["error"]["message"].startswith("queries: ")
    assert answers[5].headers["allow"] == "POST"


def test_a_request_over_max_results_is_refused_naming_the_cap(retriever_url: str) -> None:
    answer = httpx.post(f"{retriever_url}/retrieve", json={"queries": ["x"] * 200, "topk": 100})
    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == "too_many_results" and "max_results of 16384" in answer.text


def test_large_batches_are_answered_in_order_across_chunks(retriever_url: str) -> None:
    titles = ["Ilsa Varn (architect)", "Ilsa Varn (poet)", "Korvath (Elmaria)", "Tessaly (Orund)"]
    queries = [titles[i % 4] for i in range(1000)]  # four chunks of 256
    rows = httpx.post(f"{retriever_url}/retrieve", json={"queries": queries, "topk": 1}, timeout=60).json()["result"]
    assert [row[0]["id"] for row in rows] == [["a", "b", "c", "d"][i % 4] for i in range(1000)]


def test_beyond_loopback_needs_a_token_or_insecure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTHUB_TOKEN", raising=False)
    with pytest.raises(ConfigError, match=r"token=SECRET .* --insecure"):
        check_exposure(RetrieverConfig(host="0.0.0.0"), insecure=False)
    assert "warning" in str(check_exposure(RetrieverConfig(host="0.0.0.0"), insecure=True))
    assert check_exposure(RetrieverConfig(host="0.0.0.0", token="t"), insecure=False) is None
    assert check_exposure(RetrieverConfig(host="localhost"), insecure=False) is None
    monkeypatch.setenv("AGENTHUB_TOKEN", "from-env")
    assert RetrieverConfig().token == "from-env"
    monkeypatch.delenv("AGENTHUB_TOKEN")
    # The CLI refuses before it opens an index or a port.
    with pytest.raises(ConfigError, match="serves beyond this machine"):
        run(
            argparse.Namespace(overrides=["host=0.0.0.0", "corpus=/nonexistent.jsonl"], insecure=False, ready_file=None)
        )
    with pytest.raises(ConfigError, match="max_results"):
        run(argparse.Namespace(overrides=["max_results=0"], insecure=False, ready_file=None))
