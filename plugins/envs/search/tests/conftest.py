from __future__ import annotations

import functools
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import uvicorn
from agenthub import EnvSpec, ThreadedServer, get_plugin_host

from agenthub_env_search.bm25 import BM25Index
from agenthub_env_search.retriever_app import make_app

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


@contextmanager
def served_retriever(*settings: str, token: str | None = None) -> Iterator[str]:
    """``agenthub serve-retriever`` for real, in its own process on a free loopback port."""
    with tempfile.TemporaryDirectory() as tmp:
        ready, log = Path(tmp) / "ready.json", Path(tmp) / "stderr.log"
        env = {**os.environ, "AGENTHUB_TOKEN": token or ""}
        command = [sys.executable, "-m", "agenthub", "serve-retriever", "port=0", *settings, "--ready-file", str(ready)]
        with log.open("w") as stderr:
            process = subprocess.Popen(command, env=env, stderr=stderr)
        try:
            deadline = time.monotonic() + 60
            while not ready.exists():
                if process.poll() is not None:
                    raise RuntimeError(f"serve-retriever exited {process.returncode}: {log.read_text()}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"serve-retriever did not listen within 60 s: {log.read_text()}")
                time.sleep(0.05)
            yield str(json.loads(ready.read_text())["url"])
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


REFERENCE = Path(__file__).parent / "reference"


def load_reference(name: str) -> ModuleType:
    """Search-R1's ``tests/reference/<name>.py``, imported by path under a name no other test uses."""
    module_name = f"search_r1_reference_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, REFERENCE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def search_r1() -> dict[str, ModuleType]:
    """Search-R1's pure code, pinned (tests/reference/README.md): the oracle of the parity tests."""
    return {name: load_reference(name) for name in ("qa_em", "generation", "retrieval_server")}


def generation_manager(generation: ModuleType, search_url: str | None = None, topk: int = 3) -> Any:
    """Search-R1's ``LLMGenerationManager`` (its pure methods), configured as its train_grpo.sh runs it."""
    config = generation.GenerationConfig(
        max_turns=4,
        max_start_length=2048,
        max_prompt_length=4096,
        max_response_length=500,
        max_obs_length=500,
        num_gpus=1,
        search_url=search_url,
        topk=topk,
    )
    return generation.LLMGenerationManager(config)


@pytest.fixture(scope="session")
def search_r1_manager(search_r1: dict[str, ModuleType]) -> Any:
    return generation_manager(search_r1["generation"])


@pytest.fixture(scope="session")
def make_search_r1_manager(search_r1: dict[str, ModuleType]) -> Callable[..., Any]:
    """``make(search_url=..., topk=...)``: Search-R1's manager pointed at a retrieval server."""
    return functools.partial(generation_manager, search_r1["generation"])


@pytest.fixture(scope="session")
def serve_retriever() -> Callable[..., AbstractContextManager[str]]:
    """``with serve_retriever("corpus=...", token=...) as url``: the real CLI, in its own process."""
    return served_retriever
