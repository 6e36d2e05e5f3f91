"""``agenthub serve-retriever``: one BM25 index behind HTTP, shared by env servers on many machines."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

from agenthub_env_search.bm25 import BM25Params, Passage, shared_index
from agenthub_env_search.data import default_dataset

MAX_BATCH = 1024
SETTINGS = ("corpus", "host", "port", "k1", "b", "stemmer", "retriever", "embedding_url", "embedding_model")


class SearchIndex(Protocol):
    index_dir: Path

    def __len__(self) -> int: ...

    def search(self, queries: list[str], k: int = 3) -> list[list[Passage]]: ...


class RetrieveRequest(BaseModel):
    queries: list[str] = Field(max_length=MAX_BATCH)
    topk: int = Field(default=3, ge=1, le=100)
    return_scores: bool = True


def make_app(index: SearchIndex) -> FastAPI:
    app = FastAPI(title="agenthub search retriever")

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "passages": len(index), "index": str(index.index_dir)}

    @app.post("/retrieve")
    async def retrieve(request: RetrieveRequest) -> dict[str, Any]:
        if not request.queries:
            raise HTTPException(422, "queries is empty; send at least one query string")
        # Scoring is CPU work: off the event loop so /health stays responsive under load.
        rows = await asyncio.to_thread(index.search, request.queries, request.topk)
        return {
            "result": [
                [
                    {
                        "document": {"id": p.id, "contents": p.contents},
                        **({"score": p.score} if request.return_scores else {}),
                    }
                    for p in row
                ]
                for row in rows
            ]
        }

    return app


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="corpus=PATH (FlashRAG JSONL; default: the generated Fictopedia) host=127.0.0.1 port=8300 "
        "k1=1.2 b=0.75 stemmer=english|none; retriever=dense embedding_url=URL embedding_model=NAME for FAISS "
        "over an OpenAI-compatible /v1/embeddings endpoint",
    )


def run(args: argparse.Namespace) -> int:
    import uvicorn

    settings: dict[str, str] = {}
    for item in args.overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"serve-retriever: expected key=value, got {item!r} (e.g. corpus=wiki-18.jsonl port=8300)")
        settings[key] = value
    unknown = set(settings) - set(SETTINGS)
    if unknown:
        raise SystemExit(f"serve-retriever: unknown settings {sorted(unknown)}; known: {' '.join(SETTINGS)}")
    corpus = Path(settings["corpus"]) if "corpus" in settings else default_dataset() / "corpus.jsonl"
    params = BM25Params(
        k1=float(settings.get("k1", 1.2)), b=float(settings.get("b", 0.75)), stemmer=settings.get("stemmer", "english")
    )
    index: SearchIndex
    if settings.get("retriever", "bm25") == "dense":
        from agenthub_env_search.dense import shared_dense

        if "embedding_url" not in settings or "embedding_model" not in settings:
            raise SystemExit("serve-retriever: retriever=dense needs embedding_url=URL and embedding_model=NAME")
        index = shared_dense(corpus, settings["embedding_url"], settings["embedding_model"])
    elif settings.get("retriever", "bm25") == "bm25":
        index = shared_index(corpus, params)
    else:
        raise SystemExit(f"serve-retriever: retriever must be bm25 or dense, got {settings['retriever']!r}")
    uvicorn.run(make_app(index), host=settings.get("host", "127.0.0.1"), port=int(settings.get("port", 8300)))
    return 0
