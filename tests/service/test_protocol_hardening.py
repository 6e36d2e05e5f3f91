"""Refusals of bad input, at the edges the schema fuzzing does not reach: raw HTTP, odd text, metrics, docs.

In-process (ASGI) where the app decides; a real server (``guess_server``) where the HTTP parser or
a chunked transfer is involved.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import orjson
import pytest
from pydantic import BaseModel, ValidationError

from agenthub import LocalServer, create_app, get_plugin_host
from agenthub.service.settings import ServiceSettings
from agenthub.specs import EnvSpec
from agenthub.types import CreateSessionRequest, EnvInfo, ResetRequest, SessionState, TaskList

from ..conftest import serving
from .envs import NotJsonEnv, SurrogateEnv

pytestmark = pytest.mark.anyio
JSON = {"content-type": "application/json"}


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()
    return response.status_code, body["error"]["code"], body["error"]["message"]


def raw_http(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are (httpx would fix a bad request before sending it); the status, headers and body."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


# -- integers are integers ---------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [{"task_id": False}, {"task_id": True}, {"seed": True}, {"task_id": 1.5}, {"seed": "3"}],
    ids=["task_id-false", "task_id-true", "seed-true", "task_id-float", "seed-string"],
)
async def test_booleans_and_other_non_integers_are_refused_where_integers_are_meant(
    guess_spec: EnvSpec, body: dict[str, object]
) -> None:
    async with serving(create_app(guess_spec)) as (client, raw):
        status, code, message = error_of(await raw.post("/v1/sessions", json=body))
        assert (status, code) == (422, "invalid_request") and next(iter(body)) in message
        session = await client.create_session(task_id=3)
        status, code, _ = error_of(await raw.post(f"/v1/sessions/{session.id}/reset", json=body))
        assert (status, code) == (422, "invalid_request")
        assert (await session.state()).task_id == 3


_VALID: list[tuple[type[BaseModel], dict[str, object]]] = [
    (CreateSessionRequest, {}),
    (ResetRequest, {}),
    (EnvInfo, {"name": "e", "version": "1", "default_max_turns": 3, "splits": ["train"]}),
    (TaskList, {"split": "train", "count": 2, "start": 0, "stop": 2}),
    (SessionState, {"session_id": "s", "task_id": 1, "turns": 0, "done": False, "created_at": 0, "last_used_at": 0}),
]


@pytest.mark.parametrize("model, valid", _VALID, ids=[m.__name__ for m, _ in _VALID])
def test_every_integer_field_of_the_wire_models_refuses_a_boolean(
    model: type[BaseModel], valid: dict[str, object]
) -> None:
    model.model_validate(valid)
    properties = model.model_json_schema()["properties"]
    integers = [
        name
        for name, prop in properties.items()
        if "integer" in (prop.get("type"), *(option.get("type") for option in prop.get("anyOf", [])))
    ]
    assert integers, f"{model.__name__} has no integer field"
    for name in integers:
        with pytest.raises(ValidationError, match=name):
            model.model_validate({**valid, name: True})


# -- bodies: size, Content-Length, Content-Type -------------------------------------------


def test_a_chunked_body_over_the_limit_is_413_like_one_with_content_length(guess_server: LocalServer) -> None:
    big = b'{"action": "' + b"x" * (2 << 20) + b'"}'

    def chunks() -> Iterator[bytes]:  # a generator body: httpx sends it chunked, without Content-Length
        yield from (big[i : i + 65536] for i in range(0, len(big), 65536))

    with httpx.Client(base_url=guess_server.url) as client:
        response = client.post("/v1/sessions", content=chunks(), headers=JSON)
        assert "content-length" not in response.request.headers
        status, code, message = error_of(response)
        assert (status, code) == (413, "body_too_large") and "max_body_bytes" in message
        # A chunked body within the limit is served as usual.
        small = client.post("/v1/sessions", content=iter([b'{"task_id": ', b"7}"]), headers=JSON)
        assert small.status_code == 201 and small.json()["task_id"] == 7


@pytest.mark.parametrize("length", [b"abc", b"-1", b"1, 2", b"99999999999999999999999"])
def test_a_bad_content_length_gets_the_json_error_body(guess_server: LocalServer, length: bytes) -> None:
    request = (
        b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: " + length + b"\r\n\r\n{}"
    )
    status, headers, body = raw_http(guess_server.url, request)
    assert status == 400 and headers["content-type"] == "application/json"
    error = orjson.loads(body)["error"]
    assert error["code"] == "bad_content_length" and "Content-Length" in error["message"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
async def test_a_body_that_is_not_declared_json_is_415_naming_the_type(
    guess_spec: EnvSpec, content_type: str | None
) -> None:
    async with serving(create_app(guess_spec)) as (_, raw):
        headers = {"content-type": content_type} if content_type else {}
        request = raw.build_request("POST", "/v1/sessions", content=b'{"task_id": 1}', headers=headers)
        if content_type is None:
            request.headers.pop("content-type", None)
        status, code, message = error_of(await raw.send(request))
        assert (status, code) == (415, "unsupported_media_type") and "application/json" in message
        assert (content_type or "no Content-Type") in message


# -- text that is not Unicode ---------------------------------------------------------------


async def test_a_lone_surrogate_in_an_action_is_refused_before_the_env_is_touched() -> None:
    textcraft = get_plugin_host().env("textcraft")
    async with serving(create_app(textcraft)) as (client, raw):
        session = await client.create_session(split="train")
        step = f"/v1/sessions/{session.id}/step"
        for body in (
            b'{"action": "get 1 \\ud800 logs", "request_id": "r1"}',
            b'{"action": {"name": "get", "arguments": {"item": "\\udfff"}}}',
        ):
            status, code, message = error_of(await raw.post(step, content=body, headers=JSON))
            assert (status, code) == (422, "invalid_request") and "lone surrogate" in message
        assert (await session.state()).turns == 0
        # The same request id, now valid, is applied: the refusal stored nothing.
        retried = await raw.post(step, json={"action": "inventory", "request_id": "r1"})
        assert retried.status_code == 200 and "idempotent-replayed" not in retried.headers
        assert (await session.state()).turns == 1


async def test_an_env_answer_with_a_lone_surrogate_is_sent_and_replayed_not_500() -> None:
    async with serving(create_app(SurrogateEnv)) as (_, raw):
        created = await raw.post("/v1/sessions", json={})
        assert created.status_code == 201 and created.json()["observation"] == "ready \ufffd"
        step = f"/v1/sessions/{created.json()['session_id']}/step"
        first = await raw.post(step, json={"action": "look", "request_id": "q"})
        again = await raw.post(step, json={"action": "look", "request_id": "q"})
        assert first.status_code == again.status_code == 200
        assert first.content == again.content and again.headers["idempotent-replayed"] == "true"
        assert first.json()["observation"] == "read \ufffd bytes"


async def test_an_answer_that_cannot_be_encoded_fails_the_session_and_its_replay_says_so() -> None:
    NotJsonEnv.steps = 0
    async with serving(create_app(NotJsonEnv)) as (client, raw):
        session = await client.create_session()
        step = f"/v1/sessions/{session.id}/step"
        status, code, message = error_of(await raw.post(step, json={"action": "go", "request_id": "q"}))
        assert (status, code) == (500, "env_contract") and "not JSON-serializable" in message
        # Retrying the request id never re-applies the step nor answers a bare 500: the session says why it failed.
        status, code, message = error_of(await raw.post(step, json={"action": "go", "request_id": "q"}))
        assert (status, code) == (409, "session_failed") and "not JSON-serializable" in message
        assert NotJsonEnv.steps == 1


# -- what refusals look like ---------------------------------------------------------------


async def test_405_names_the_allowed_methods_in_allow(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec)) as (client, raw):
        session = await client.create_session(task_id=1)
        for method, path, allowed in [
            ("PUT", f"/v1/sessions/{session.id}", "DELETE, GET"),
            ("GET", "/v1/sessions", "POST"),
            ("TRACE", "/v1/info", "GET"),
        ]:
            response = await raw.request(method, path)
            status, code, message = error_of(response)
            assert (status, code) == (405, "method_not_allowed")
            assert response.headers["allow"] == allowed and allowed in message


async def test_every_refusal_is_counted_in_the_error_metrics(guess_spec: EnvSpec) -> None:
    settings = ServiceSettings(token="s3cret", max_body_bytes=4096)
    async with serving(create_app(guess_spec, settings)) as (_, raw):
        auth = {"Authorization": "Bearer s3cret"}
        await raw.get("/v1/info")  # 401
        await raw.post("/v1/sessions", content=b"x" * 5000, headers={**auth, **JSON})  # 413
        await raw.post("/v1/sessions", content=b"{nope", headers={**auth, **JSON})  # 400
        await raw.post("/v1/sessions", json={"seed": True}, headers=auth)  # 422
        await raw.put("/v1/sessions", headers=auth)  # 405
        await raw.post("/v1/sessions", content=b"{}", headers={**auth, "content-type": "text/plain"})  # 415
        text = (await raw.get("/metrics", headers=auth)).text
    counted = dict(re.findall(r'agenthub_errors_total\{code="(\w+)"\} (\S+)', text))
    for code in (
        "unauthorized",
        "body_too_large",
        "malformed_json",
        "invalid_request",
        "method_not_allowed",
        "unsupported_media_type",
    ):
        assert counted.get(code) == "1.0", f"{code} not counted: {counted}"


def test_a_request_the_http_parser_refuses_is_counted(guess_server: LocalServer) -> None:
    raw_http(guess_server.url, b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n")
    text = httpx.get(f"{guess_server.url}/metrics").text
    assert re.search(r'agenthub_errors_total\{code="bad_content_length"\} [1-9]', text), text


# -- what the schema and the docs say -----------------------------------------------------------


async def test_the_schema_documents_what_the_routes_answer(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec)) as (_, raw):
        schema = (await raw.get("/openapi.json")).json()
    created = schema["components"]["schemas"]["SessionCreated"]["properties"]
    assert "task_id" in created  # the create answer carries it, and the model forbids extra fields
    metrics = schema["paths"]["/metrics"]["get"]["responses"]["200"]["content"]
    assert list(metrics) == ["text/plain"]
    split = schema["components"]["schemas"]["CreateSessionRequest"]["properties"]["split"]
    assert {"type": "string", "enum": ["train", "test"]} in split["anyOf"]
    seed = schema["components"]["schemas"]["CreateSessionRequest"]["properties"]["seed"]
    integer = next(option for option in seed["anyOf"] if option.get("type") == "integer")
    assert (integer["minimum"], integer["maximum"]) == (-(2**63), 2**63 - 1)  # exact, not rounded to a float


async def test_an_empty_split_is_refused_not_read_as_the_default(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec)) as (_, raw):
        status, code, message = error_of(await raw.get("/v1/tasks", params={"split": ""}))
        assert (status, code) == (422, "unknown_split") and "train, test" in message
        assert (await raw.get("/v1/tasks")).json()["split"] == "train"


async def test_docs_pages_load_every_asset_from_the_server_itself(guess_spec: EnvSpec) -> None:
    async with serving(create_app(guess_spec)) as (_, raw):
        for page in ("/docs", "/redoc"):
            html = (await raw.get(page)).text
            urls = re.findall(r'(?:src|href)="([^"]+)"', html)
            assert urls and all(url.startswith("/") for url in urls), f"{page} loads from elsewhere: {urls}"
            for url in urls:
                asset = await raw.get(url)
                assert asset.status_code == 200 and len(asset.content) > 1000, url
