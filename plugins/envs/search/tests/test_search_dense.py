"""retriever=dense: FAISS over a real OpenAI-compatible /v1/embeddings server on loopback.

The server here embeds by hashed bag of words (no model can be downloaded in CI); what is under
test is the client, the FAISS index, its cache and the env wiring, not embedding quality.
"""

from __future__ import annotations

import re
import shutil
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from agenthub_env_search.dense import DenseIndex, Embedder
from agenthub_env_search.env import SearchEnv

DIM = 256


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def embedding_app(calls: list[int]) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/embeddings")
    async def embeddings(body: dict[str, Any]) -> dict[str, Any]:
        calls.append(len(body["input"]))
        data = []
        for i, text in enumerate(body["input"]):
            vector = [0.0] * DIM
            for token in re.findall(r"\w\w+", text.lower()):
                vector[zlib.crc32(token.encode()) % DIM] += 1.0
            data.append({"object": "embedding", "index": i, "embedding": vector})
        return {"object": "list", "data": data[::-1], "model": body["model"]}  # out of order, as servers may

    return app


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[tuple[str, list[int]]]:
    calls: list[int] = []
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(embedding_app(calls), port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the embeddings server did not start within 20 s"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", calls
    finally:
        server.should_exit = True
        thread.join(10)


def test_dense_ranks_exact_titles_first_and_caches_the_index(
    embedding_server: tuple[str, list[int]], small_dir: Path, tmp_path: Path
) -> None:
    url, calls = embedding_server
    corpus = tmp_path / "corpus.jsonl"
    shutil.copy(small_dir / "corpus.jsonl", corpus)
    index = DenseIndex(corpus, Embedder(url, "bow-hash"))
    assert len(index) == 5 and (index.index_dir / "faiss.index").is_file()
    top = index.search(["Ilsa Varn poet", "Ilsa Varn architect", "Tessaly Orund"], k=2)
    assert [row[0].id for row in top] == ["b", "a", "d"]
    index.close()
    before = sum(calls)
    again = DenseIndex(corpus, Embedder(url, "bow-hash"))
    again.search(["Korvath"], k=1)
    again.close()
    assert sum(calls) == before + 1  # only the query was embedded: the passages' index was read back


def test_the_env_plays_with_retriever_dense(embedding_server: tuple[str, list[int]], small_dir: Path) -> None:
    url, _ = embedding_server
    env = SearchEnv(
        retriever="dense",
        embedding_url=url,
        embedding_model="bow-hash",
        corpus=str(small_dir / "corpus.jsonl"),
        qa=str(small_dir / "qa.jsonl"),
    )
    env.reset(task_id="q0")
    assert env.step("<search>Ilsa Varn architect</search>")[0].startswith(
        "<information>Doc 1(Title: Ilsa Varn (architect))"
    )
    assert env.step("<answer>Korvath</answer>")[1] == 1.0
    env.close()
    other = SearchEnv(
        retriever="dense", embedding_url=url, embedding_model="bow-hash", corpus=str(small_dir / "corpus.jsonl")
    )
    assert other._retriever.search(["Korvath"], 1)[0]  # closing a session leaves the shared index open
    with pytest.raises(ValueError, match="embedding_model=NAME"):
        SearchEnv(retriever="dense", embedding_url=url)
    closed_port = Embedder("http://127.0.0.1:9", "m")
    with pytest.raises(RuntimeError, match="embedding_url"):
        closed_port.embed(["x"])
    closed_port.close()
