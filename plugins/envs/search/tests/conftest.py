from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from agenthub import EnvSpec, ThreadedServer, get_plugin_host

from agenthub_env_search.bm25 import BM25Index
from agenthub_env_search.service import make_app

# A hand-made corpus: two namesakes, so that the qualifier in the title is what finds the right one.
SMALL_CORPUS = [
    {
        "id": "a",
        "contents": "Ilsa Varn (architect)\nIlsa Varn is an architect, born in Korvath (Elmaria). She built bridges.",
    },
    {"id": "b", "contents": "Ilsa Varn (poet)\nIlsa Varn is a poet, born in Tessaly (Orund). She wrote sonnets."},
    {"id": "c", "contents": "Korvath (Elmaria)\nKorvath is a city in Elmaria. Its mayor is Ilsa Varn (poet)."},
    {"id": "d", "contents": '"Tessaly (Orund)"\nTessaly is a harbour city in Orund, known for lanterns.'},
    {"id": "e", "contents": "Elmaria\nElmaria is a country of hills; its capital is Korvath."},
]
SMALL_QA = [
    {"id": "q0", "question": "Where was the architect Ilsa Varn born?", "golden_answers": ["Korvath"]},
    {"id": "q1", "question": "Who is the mayor of Korvath?", "golden_answers": ["Ilsa Varn", "Ilsa Varn (poet)"]},
]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def small_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("flashrag")
    write_jsonl(directory / "corpus.jsonl", SMALL_CORPUS)  # type: ignore[arg-type]
    write_jsonl(directory / "qa.jsonl", SMALL_QA)  # type: ignore[arg-type]
    return directory


@pytest.fixture(scope="session")
def search_spec() -> EnvSpec:
    return get_plugin_host().env("search")


@pytest.fixture(scope="module")
def search_url(search_spec: EnvSpec) -> Iterator[str]:
    """A real search env server on loopback over the generated corpus."""
    server = ThreadedServer(search_spec).start()
    try:
        yield server.url
    finally:
        server.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def retriever_url(small_dir: Path) -> Iterator[str]:
    """``serve-retriever``'s app, run by uvicorn on loopback over the small corpus."""
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(make_app(BM25Index(small_dir / "corpus.jsonl")), port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the retrieval service did not start within 20 s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
