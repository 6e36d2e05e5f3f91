"""The lean hot path answers exactly as FastAPI does, and well-formed hot requests never reach FastAPI."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from agenthub import create_app
from agenthub.service.launcher import ThreadedServer
from agenthub.service.server import spec_from_factory
from agenthub.service.settings import ServiceSettings
from agenthub.specs import EnvSpec

from ..conftest import serving
from .envs import FailingEnv

AUTH = {"Authorization": "Bearer s3cret"}
COMPARED_HEADERS = ("content-type", "retry-after", "idempotent-replayed", "www-authenticate")

TIMESTAMP = re.compile(r'"(created_at|last_used_at)":[0-9.e+-]+')

Observation = tuple[int, dict[str, str], str]


class Recorder:
    """Talks to one server and records every answer, with session ids made comparable across servers."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.ids: list[str] = []
        self.seen: list[Observation] = []

    def __call__(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        for index, session_id in enumerate(self.ids):
            path = path.replace(f"<{index}>", session_id)
        response = self.client.request(method, path, **kwargs)
        if response.status_code == 201:
            self.ids.append(response.json()["session_id"])
        text = TIMESTAMP.sub(r'"\1":0', response.text)
        for index, session_id in enumerate(self.ids):
            text = text.replace(session_id, f"<{index}>")
        headers = {name: response.headers[name] for name in COMPARED_HEADERS if name in response.headers}
        self.seen.append((response.status_code, headers, text))
        return response


@contextlib.contextmanager
def both_ways(spec: EnvSpec, settings: ServiceSettings) -> Iterator[tuple[Recorder, Recorder]]:
    """The same env served with the lean path on and off, on real loopback servers."""
    with (
        ThreadedServer(spec, settings.model_copy(update={"lean_routes": True})) as lean,
        ThreadedServer(spec, settings.model_copy(update={"lean_routes": False})) as full,
        httpx.Client(base_url=lean.url) as lean_client,
        httpx.Client(base_url=full.url) as full_client,
    ):
        yield Recorder(lean_client), Recorder(full_client)


def guess_script(call: Callable[..., httpx.Response]) -> None:
    call("POST", "/v1/sessions", json={"task_id": 3}, headers=AUTH)
    call("POST", "/v1/sessions", json={"task_id": 3})  # no token
    call("POST", "/v1/sessions", content=b"{nope", headers={**AUTH, "content-type": "application/json"})
    call("POST", "/v1/sessions", json={"task_id": 1, "sed": 3}, headers=AUTH)
    call("POST", "/v1/sessions", json=[1, 2], headers=AUTH)
    call("POST", "/v1/sessions", content=b'{"task_id": 1}', headers={**AUTH, "content-type": "text/plain"})
    call("POST", "/v1/sessions", content=b'{"task_id": 1}', headers=AUTH)  # no content type
    call("POST", "/v1/sessions", content=b"", headers={**AUTH, "content-type": "application/json"})
    call("POST", "/v1/sessions", json={"task_id": -5}, headers=AUTH)
    call("POST", "/v1/sessions", json={"split": "dev"}, headers=AUTH)
    call("POST", "/v1/sessions/", json={"task_id": 1}, headers=AUTH)
    step = "/v1/sessions/<0>/step"
    call("POST", step, json={"action": "guess 1", "request_id": "r1"}, headers=AUTH)
    call("POST", step, json={"action": "guess 1", "request_id": "r1"}, headers=AUTH)  # replayed
    call("POST", step, json={"action": 7}, headers=AUTH)
    call("POST", step, json={"action": "guess 2", "request_id": "x" * 129}, headers=AUTH)
    call("POST", step, json={"action": "x" * 5000}, headers=AUTH)  # over the body limit
    call("POST", step, json={"action": "x" * 5000})  # over the limit and no token: 413 first
    call("POST", step, json={"action": "guess 2"})  # no token
    call("POST", step, json={"action": "guess 2"}, headers={"Authorization": "Bearer wrong"})
    call(
        "POST",
        step,
        content=iter([b'{"action": ', b'"guess 2"}']),
        headers={**AUTH, "content-type": "application/json"},
    )
    call(
        "POST",
        step,
        content=b'{"action": "guess 3"}',
        headers={**AUTH, "content-type": "application/json; charset=utf-8"},
    )
    call("POST", "/v1/sessions/missing/step", json={"action": "guess 1"}, headers=AUTH)
    call("GET", step, headers=AUTH)
    for number in range(4, 17):
        if call("POST", step, json={"action": f"guess {number}"}, headers=AUTH).json()["terminated"]:
            break
    call("POST", step, json={"action": "guess 1"}, headers=AUTH)  # episode over: 409
    call("POST", "/v1/sessions", json={"task_id": 4}, headers=AUTH)
    call("POST", "/v1/sessions", json={"task_id": 5}, headers=AUTH)  # past max_sessions: 503
    call("GET", "/v1/sessions/<0>", headers=AUTH)
    call("DELETE", "/v1/sessions/<0>")  # no token
    call("DELETE", "/v1/sessions/<0>", headers=AUTH)
    call("DELETE", "/v1/sessions/<0>", headers=AUTH)  # already closed
    call("DELETE", "/v1/sessions/<0>/step", headers=AUTH)
    call("GET", "/metrics", headers=AUTH)  # error counts, by code


def test_hot_routes_answer_as_fastapi_does_for_good_and_bad_requests(guess_spec: EnvSpec) -> None:
    settings = ServiceSettings(token="s3cret", max_sessions=2, max_body_bytes=4096)
    with both_ways(guess_spec, settings) as (lean, full):
        guess_script(lean)
        guess_script(full)
    metrics_lean, metrics_full = lean.seen.pop(), full.seen.pop()
    assert lean.seen == full.seen
    counted = [line for line in metrics_lean[2].splitlines() if line.startswith("agenthub_errors_total")]
    assert counted == [line for line in metrics_full[2].splitlines() if line.startswith("agenthub_errors_total")]
    assert len(counted) >= 6  # the error answers were counted, by code, both ways


def test_env_failures_answer_as_fastapi_does() -> None:
    with both_ways(spec_from_factory(FailingEnv), ServiceSettings()) as (lean, full):
        for call in (lean, full):
            call("POST", "/v1/sessions", json={})
            call("POST", "/v1/sessions/<0>/step", json={"action": "explode"})
            call("POST", "/v1/sessions/<0>/step", json={"action": "fine"})
            call("DELETE", "/v1/sessions/<0>")
    assert lean.seen == full.seen
    assert [status for status, _, _ in lean.seen] == [201, 500, 409, 204]


class PathsReachingFastAPI:
    """ASGI middleware inside the FastAPI app: records the requests that got that far."""

    def __init__(self, app: ASGIApp, seen: list[str]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.seen.append(f"{scope['method']} {scope['path']}")
        await self.app(scope, receive, send)


@pytest.mark.anyio
async def test_well_formed_hot_requests_never_reach_fastapi(guess_spec: EnvSpec) -> None:
    seen: list[str] = []
    app = create_app(guess_spec)
    app.add_middleware(PathsReachingFastAPI, seen=seen)
    async with serving(app) as (client, raw):
        session = await client.create_session(task_id=1)
        await session.step("guess 8")
        await session.close()
        assert seen == []
        assert (await raw.post("/v1/sessions", json={"task_id": "x", "bogus": 1})).status_code == 422
        await client.info()
    assert seen == ["POST /v1/sessions", "GET /v1/info"]
