"""The viewer's HTTP app: the page, its static assets, and a small JSON API over a run's index.

* ``GET /`` — the page (``static/index.html``); ``/static/*`` its assets;
* ``GET /api/runs`` — the runs under RUN_DIR, newest first;
* ``GET /api/runs/{run}`` — one run: config, ``run.json`` summary, index status, overall numbers;
* ``GET /api/runs/{run}/episodes`` — a page of episode summaries and the ``total`` matching:
  ``env``, ``task``, ``outcome`` (comma-separated), ``min_reward``, ``max_reward``, ``sort``,
  ``offset``, ``limit``;
* ``GET /api/runs/{run}/episodes/{index}`` — one full episode, with token text where a tokenizer is found;
* ``GET /api/runs/{run}/tasks`` — the per-task table (``sort``, ``offset``, ``limit``), with pass@k
  where tasks have several samples;
* ``GET /api/runs/{run}/metrics`` — the learning-curve series from ``metrics.jsonl``;
* ``GET /api/runs/{run}/facets`` — the values the filter controls offer;
* ``GET /api/runs/{run}/status`` — how far indexing has got.

Errors answer their real status with ``{"error": {"code", "message"}}``, as env
servers do: 404 for an unknown run or episode (the message says what exists),
422 for a bad filter or page value (an episode number or offset outside 0 to
2**63-1, which SQLite holds, is one: the message names the range), 401 without
the token of a viewer started with ``token=`` (:mod:`agenthub.viewer.auth`), 503
while an episode is not indexed yet. Answers name runs by id, never by their
path on disk.
Routes are plain ``def``: SQLite and file reads run in the thread pool, never
on the event loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
from fastapi import FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from agenthub._version import __version__
from agenthub.errors import AgenthubError
from agenthub.viewer import queries
from agenthub.viewer.auth import ViewerTokenMiddleware
from agenthub.viewer.episode import episode_payload
from agenthub.viewer.index import RunIndex
from agenthub.viewer.indexer import BackgroundIndexer
from agenthub.viewer.learning_curves import curves
from agenthub.viewer.runs import RunCatalog, RunNotFoundError

STATIC = Path(__file__).parent / "static"
FIRST_PAGE_WAIT_S = 2.0  # a fresh run's first page waits this long for its rows to be indexed
MAX_NUMBER = queries.MAX_OFFSET
RANGES = {
    "number": f"an episode number from 0 to {MAX_NUMBER}",
    "offset": f"an integer from 0 to {queries.MAX_OFFSET}",
    "limit": f"an integer from 1 to {queries.MAX_LIMIT}; page with offset= for more",
}
"""What each integer of the API takes, named in the 422 of a value outside it."""


class EpisodeNotFoundError(AgenthubError, LookupError):
    """An episode index past the end of the run (an HTTP 404)."""


class StillIndexingError(AgenthubError):
    """An episode that may exist but is not indexed yet (an HTTP 503)."""


def json_response(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


def error_response(status: int, code: str, message: str) -> Response:
    return json_response({"error": {"code": code, "message": message}}, status)


STATUS_OF: dict[type[Exception], tuple[int, str]] = {
    RunNotFoundError: (404, "run_not_found"),
    EpisodeNotFoundError: (404, "episode_not_found"),
    queries.QueryError: (422, "invalid_query"),
    StillIndexingError: (503, "still_indexing"),
}


def create_app(root: str | Path, *, tokenizer: str | Path | None = None, token: str | None = None) -> FastAPI:
    """The viewer app for RUN_DIR (one run or a runs/ root); raises RunNotFoundError on a wrong directory.

    With ``token``, every ``/api/`` route needs it (``agenthub.viewer.auth``)."""
    catalog = RunCatalog(root, tokenizer=tokenizer)
    indexer = BackgroundIndexer()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        indexer.start()
        for info in catalog.runs()[:1]:
            indexer.watch(catalog.index(info.id))  # the run the page opens first is indexed before anyone asks
        try:
            yield
        finally:
            indexer.stop()

    app = FastAPI(title="agenthub view", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(AgenthubError)
    async def _known_error(request: Request, exc: AgenthubError) -> Response:
        status, code = STATUS_OF.get(type(exc), (400, "bad_request"))
        return error_response(status, code, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        def problem(e: Any) -> str:
            name = ".".join(str(p) for p in e["loc"][1:]) or str(e["loc"][0])
            takes = f"; it takes {RANGES[name]}" if name in RANGES else ""
            return f"{name}: {e['msg']} (got {e.get('input')!r}){takes}"

        problems = "; ".join(problem(e) for e in exc.errors())
        return error_response(422, "invalid_query", f"{problems}; fix the value or leave it out")

    def index_of(run_id: str, *, wait_for: int = 0) -> RunIndex:
        """The run's index, with at least ``wait_for`` episodes in it if the run has them (within a wait)."""
        index = catalog.index(run_id)
        if not indexer.running:
            index.update()  # no indexer process (an app used without its lifespan): index inline
            return index
        indexer.watch(index)
        if wait_for and index.status().episodes < wait_for:
            index.update(max_seconds=0)  # one chunk here: a fresh run's first page need not wait for the child
            index.wait_for(wait_for, FIRST_PAGE_WAIT_S)
        return index

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/api/runs")
    def runs() -> Response:
        # The root's name, not its path: what is on the disk beyond the runs is none of the page's business.
        return json_response({"root": catalog.root.name, "runs": [r.describe() for r in catalog.runs()]})

    @app.get("/api/runs/{run_id}")
    def run(run_id: str) -> Response:
        index = index_of(run_id, wait_for=1)
        with index.reading() as db:
            overall = queries.summary(db)
        described = catalog.run(run_id).describe()
        return json_response({**described, "overall": overall, "index": index.status().as_dict()})

    @app.get("/api/runs/{run_id}/status")
    def status(run_id: str) -> Response:
        return json_response(index_of(run_id).status().as_dict())

    @app.get("/api/runs/{run_id}/episodes")
    def episodes(
        run_id: str,
        env: str | None = None,
        task: str | None = None,
        outcome: str | None = None,
        min_reward: float | None = None,
        max_reward: float | None = None,
        sort: str = "index",
        offset: int = Query(0, ge=0, le=queries.MAX_OFFSET),
        limit: int = Query(50, ge=1, le=queries.MAX_LIMIT),
    ) -> Response:
        where = queries.EpisodeFilter.parse(
            env=env, task=task, outcome=outcome, min_reward=min_reward, max_reward=max_reward
        )
        page = queries.Page(offset, limit)
        index = index_of(run_id, wait_for=offset + limit)
        with index.reading() as db:
            result = queries.episodes(db, where, page, sort)
        return json_response({**result, "index": index.status().as_dict()})

    @app.get("/api/runs/{run_id}/episodes/{number}")
    def episode(run_id: str, number: int = PathParam(ge=0, le=MAX_NUMBER)) -> Response:
        index = index_of(run_id, wait_for=number + 1)
        record = index.read(number)
        if record is None:
            status = index.status()
            if not status.complete:
                raise StillIndexingError(
                    f"episode {number} of run {run_id!r} is not indexed yet ({status.episodes} episodes so far); "
                    "try again in a moment"
                )
            last = f"0 to {status.episodes - 1}" if status.episodes else "none: the run has no episodes yet"
            raise EpisodeNotFoundError(
                f"run {run_id!r} has no episode {number}; its episodes are numbered {last} "
                f"(GET /api/runs/{run_id}/episodes lists them)"
            )
        return json_response(episode_payload(number, record, catalog.decoder(run_id)))

    @app.get("/api/runs/{run_id}/tasks")
    def tasks(
        run_id: str,
        sort: str = "order",
        offset: int = Query(0, ge=0, le=queries.MAX_OFFSET),
        limit: int = Query(100, ge=1, le=queries.MAX_LIMIT),
    ) -> Response:
        page = queries.Page(offset, limit)
        index = index_of(run_id, wait_for=1)
        with index.reading() as db:
            rows, ks = queries.task_rows(db)
        rows = queries.sort_tasks(rows, sort)
        return json_response(
            {
                "total": len(rows),
                "offset": page.offset,
                "limit": page.limit,
                "ks": ks,
                "tasks": rows[page.offset : page.offset + page.limit],
                "index": index.status().as_dict(),
            }
        )

    @app.get("/api/runs/{run_id}/metrics")
    def metrics(run_id: str) -> Response:
        return json_response(curves(catalog.run(run_id).path))

    @app.get("/api/runs/{run_id}/facets")
    def facets(run_id: str) -> Response:
        index = index_of(run_id, wait_for=1)
        with index.reading() as db:
            return json_response(queries.facets(db))

    @app.api_route("/api/{rest:path}", methods=["GET", "POST", "PUT", "DELETE"], include_in_schema=False)
    def unknown(rest: str) -> Response:
        return error_response(
            404,
            "not_found",
            f"no API route /api/{rest}; routes: /api/runs, /api/runs/RUN, and under it "
            "/status, /episodes, /episodes/N, /tasks, /metrics, /facets",
        )

    if token:
        app.add_middleware(ViewerTokenMiddleware, token=token)
    app.state.catalog = catalog
    app.state.indexer = indexer
    return app
