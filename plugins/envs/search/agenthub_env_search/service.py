"""``agenthub serve-retriever``: one index behind HTTP, shared by env servers on many machines.

Served the way ``agenthub serve`` serves an env: loopback by default; a host beyond loopback with no
token is refused unless ``--insecure`` says the network is trusted (and then it warns).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Literal

import uvicorn
from agenthub import ConfigError
from agenthub.config import build_config
from agenthub.service import TOKEN_ENV_VAR, bind_socket, loop_factory, refuse_open_exposure, url_of
from pydantic import ConfigDict, Field

from agenthub_env_search.bm25 import BM25Params, shared_index
from agenthub_env_search.data import default_dataset
from agenthub_env_search.retriever_app import Limits, SearchIndex, make_app


class RetrieverConfig(Limits):
    model_config = ConfigDict(extra="forbid")

    corpus: str | None = Field(default=None, description="FlashRAG JSONL; default: the generated Fictopedia.")
    host: str = Field(default="127.0.0.1", description="Address to bind; 127.0.0.1 unless you mean to expose it.")
    port: int = Field(default=8300, ge=0, le=65535, description="0 picks a free port.")
    token: str | None = Field(
        default_factory=lambda: os.environ.get(TOKEN_ENV_VAR) or None,
        description=f"Bearer token required on every route except /healthz (default: ${TOKEN_ENV_VAR}).",
    )
    k1: float = 1.2
    b: float = 0.75
    stemmer: str = "english"
    retriever: Literal["bm25", "dense"] = "bm25"
    embedding_url: str | None = None
    embedding_model: str | None = None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="corpus=PATH (FlashRAG JSONL; default: the generated Fictopedia) host=127.0.0.1 port=8300 "
        f"token=SECRET (default ${TOKEN_ENV_VAR}) topk=3 max_results=16384 max_body_bytes=8388608 "
        "k1=1.2 b=0.75 stemmer=english|none; retriever=dense embedding_url=URL embedding_model=NAME for FAISS "
        "over an OpenAI-compatible /v1/embeddings endpoint",
    )
    parser.add_argument("--ready-file", default=None, help="write {url, pid} here once listening")
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a host beyond loopback (e.g. host=0.0.0.0) with no token, on a trusted network",
    )


def check_exposure(config: RetrieverConfig, *, insecure: bool) -> str | None:
    """Refuse a retriever open beyond loopback without a token, unless ``insecure``; then return a warning."""
    return refuse_open_exposure(
        config.host,
        config.token,
        insecure=insecure,
        command="serve-retriever",
        exposes="query the index at will",
        set_token=f"set token=SECRET (or ${TOKEN_ENV_VAR}) and give env servers the same token "
        "(env_kwargs.retriever_token)",
    )


def open_index(config: RetrieverConfig) -> SearchIndex:
    corpus = Path(config.corpus) if config.corpus else default_dataset() / "corpus.jsonl"
    if config.retriever == "dense":
        from agenthub_env_search.dense import shared_dense

        if not config.embedding_url or not config.embedding_model:
            raise ConfigError("serve-retriever: retriever=dense needs embedding_url=URL and embedding_model=NAME")
        return shared_dense(corpus, config.embedding_url, config.embedding_model)
    return shared_index(corpus, BM25Params(k1=config.k1, b=config.b, stemmer=config.stemmer))


async def _serve(config: RetrieverConfig, index: SearchIndex, ready_file: Path | None) -> None:
    sock = bind_socket(config.host, config.port)
    app = make_app(index, Limits.model_validate(config.model_dump(include=set(Limits.model_fields))))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():  # noqa: ASYNC110 - uvicorn offers no startup event
        await asyncio.sleep(0.01)
    if server.started:
        url = url_of(sock)
        print(f"agenthub: serving retriever ({len(index)} passages) on {url} (pid {os.getpid()})", file=sys.stderr)
        if ready_file is not None:
            tmp = ready_file.with_suffix(".tmp")
            tmp.write_text(json.dumps({"url": url, "pid": os.getpid()}))
            tmp.replace(ready_file)  # atomic: a reader never sees half a file
    await task
    sock.close()


def run(args: argparse.Namespace) -> int:
    config = build_config(RetrieverConfig, args.overrides)
    warning = check_exposure(config, insecure=args.insecure)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    index = open_index(config)
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(_serve(config, index, Path(args.ready_file) if args.ready_file else None))
    return 0
