"""The HTTP app of ``agenthub serve-retriever``: Search-R1's ``POST /retrieve``, guarded like an env server.

Requests are read as Search-R1's retrieval server reads them (``search_r1/search/retrieval_server.py``):
any number of ``queries`` (an empty list answers an empty ``result``), ``topk`` null or 0 for the
server's default, ``return_scores`` false by default, then each hit is the bare document. Past that,
the guards of core's env server: a body limit, a bearer token, the project's JSON error body (which
never repeats the input), and a cap on results per request. A batch is searched and written in
chunks, so a large one (Search-R1 sends 512 x 5 = 2,560 queries a turn) holds one chunk in memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, Protocol

import orjson
from agenthub.service import BearerTokenMiddleware, BodyLimitMiddleware, error_body
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from agenthub_env_search.bm25 import Passage

log = logging.getLogger(__name__)
CHUNK_QUERIES = 256
"""Queries searched and written at a time: bounds a batch's memory whatever its size."""


class SearchIndex(Protocol):
    index_dir: Path

    def __len__(self) -> int: ...

    def search(self, queries: list[str], k: int = 3) -> list[list[Passage]]: ...


class Limits(BaseModel):
    topk: int = Field(default=3, ge=1, description="Passages per query when a request's topk is null or 0.")
    max_results: int = Field(
        default=16384,
        ge=1,
        description="Most passages one request may ask for (queries x topk); more gets 413. "
        "Search-R1's training batch asks for 2,560 x 3.",
    )
    token: str | None = Field(default=None, description="Bearer token required on every route but /healthz.")
    max_body_bytes: int = Field(default=8 << 20, ge=1024, description="Larger request bodies get 413.")


def _json_integer(value: object) -> object:
    """JSON Schema's integer: 3 or 3.0, never "3" or true (pydantic's lax mode would take both)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool | str | float):
        raise ValueError("topk must be an integer (or null)")
    return value


class RetrieveRequest(BaseModel):
    """Search-R1's ``QueryRequest``; a negative ``topk`` is refused (Search-R1 would fail on it).

    JSON's own types only (``0`` is not ``false``): the server accepts exactly what it publishes.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"queries": ["Ilsa Varn (architect)", "who founded Korvath"], "topk": 3, "return_scores": True},
                {"queries": [], "topk": None},
            ]
        },
    )

    queries: list[str] = Field(strict=True, description="Any number of queries; an empty list answers an empty result.")
    topk: Annotated[int | None, BeforeValidator(_json_integer)] = Field(
        default=None, ge=0, strict=True, description="Passages per query; null or 0: the server's default."
    )
    return_scores: bool = Field(
        default=False, strict=True, description="Each hit as {document, score} instead of the document."
    )


class Document(BaseModel):
    id: str
    contents: str


class Hit(BaseModel):
    document: Document
    score: float


class RetrieveResponse(BaseModel):
    result: list[list[Hit] | list[Document]]


class Health(BaseModel):
    status: str
    passages: int


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(error_body(code, message), status_code=status, media_type="application/json", headers=headers)


def _documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    reasons = {
        400: "The body is not valid JSON.",
        401: "The bearer token is missing or wrong (only when the server has a token).",
        413: "The body is over max_body_bytes, or the request asks for more than max_results passages.",
        415: "The body is not sent as application/json.",
        422: "The body does not follow the schema (the message names the field).",
    }
    return {s: {"model": ErrorBody, "description": reasons[s]} for s in statuses}


def _rows(passages: list[list[Passage]], scores: bool) -> list[list[dict[str, Any]]]:
    def doc(p: Passage) -> dict[str, Any]:
        return {"id": p.id, "contents": p.contents}

    return [[{"document": doc(p), "score": p.score} if scores else doc(p) for p in row] for row in passages]


async def _stream(
    index: SearchIndex, queries: list[str], topk: int, scores: bool, first: list[list[Passage]]
) -> AsyncIterator[bytes]:
    yield b'{"result":[' + orjson.dumps(_rows(first, scores))[1:-1]
    for start in range(CHUNK_QUERIES, len(queries), CHUNK_QUERIES):
        rows = await asyncio.to_thread(index.search, queries[start : start + CHUNK_QUERIES], topk)
        yield b"," + orjson.dumps(_rows(rows, scores))[1:-1]
    yield b"]}"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> Response:
        content_type = request.headers.get("content-type", "")
        if request.method == "POST" and content_type.split(";")[0].strip().lower() != "application/json":
            got = f"Content-Type {content_type!r}" if content_type else "no Content-Type"
            return _error(415, "unsupported_media_type", f"the request has {got}; send JSON as application/json")
        problems = exc.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return _error(400, "malformed_json", "the request body is not valid JSON; send a JSON object")
        # Where and what, never the input itself: a refused body may be large or hostile.
        parts = [
            f"{'.'.join(str(x) for x in p.get('loc', ()) if x != 'body') or 'body'}: {p.get('msg')}" for p in problems
        ]
        return _error(422, "invalid_request", "; ".join(parts) + f" (see /docs for the {request.url.path} schema)")

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return _error(
                404, "no_such_route", "no such route; the retriever answers POST /retrieve and GET /healthz (see /docs)"
            )
        if exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            return _error(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed on {request.url.path}; it allows {allowed}",
                {"Allow": allowed},
            )
        return _error(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return _error(500, "internal_error", f"{type(exc).__name__}; see the retriever's log")


def make_app(index: SearchIndex, limits: Limits | None = None) -> FastAPI:
    limits = limits or Limits()
    app = FastAPI(title="agenthub search retriever", responses=_documented(413))
    _install_error_handlers(app)

    @app.get("/healthz", response_model=Health)
    async def healthz() -> dict[str, Any]:
        return {"status": "ok", "passages": len(index)}

    @app.get("/health", response_model=Health, include_in_schema=False)
    async def health() -> dict[str, Any]:  # the older name, kept for existing callers
        return {"status": "ok", "passages": len(index)}

    @app.post("/retrieve", response_model=RetrieveResponse, responses=_documented(400, 401, 415, 422))
    async def retrieve(request: RetrieveRequest) -> Response:
        topk = request.topk or limits.topk
        asked = len(request.queries) * topk
        if asked > limits.max_results:
            return _error(
                413,
                "too_many_results",
                f"{len(request.queries)} queries x topk {topk} = {asked} passages is over this server's "
                f"max_results of {limits.max_results}; send fewer queries per request or a smaller topk, "
                "or start serve-retriever with a larger max_results",
            )
        # The first chunk before the answer starts: a failing index (a dense one's embeddings server
        # down) is then a 500 with a reason, not a cut-off 200. Scoring is CPU work: off the event loop.
        first = await asyncio.to_thread(index.search, request.queries[:CHUNK_QUERIES], topk)
        if len(request.queries) <= CHUNK_QUERIES:
            return Response(
                orjson.dumps({"result": _rows(first, request.return_scores)}), media_type="application/json"
            )
        return StreamingResponse(
            _stream(index, request.queries, topk, request.return_scores, first), media_type="application/json"
        )

    # Outermost last: the body limit applies before authentication reads anything.
    if limits.token:
        app.add_middleware(BearerTokenMiddleware, token=limits.token)
    app.add_middleware(BodyLimitMiddleware, max_bytes=limits.max_body_bytes)
    return app
