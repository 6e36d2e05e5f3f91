"""A real OpenAI-compatible chat-completions server on loopback that replays scripted answers.

It stands in for vLLM, SGLang or a hosted API, which cannot run here: it
speaks their HTTP (``POST /v1/chat/completions``, ``GET /v1/models``), runs in
uvicorn in a thread of the test process, records every request it receives
(headers, body, arrival time) and counts the requests in flight.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn
from agenthub import EnvInfo, get_plugin_host
from fastapi import FastAPI, Request, Response

from agenthub_agent_openai import OpenAIAgent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Answer:
    """One scripted answer: a status, a JSON (dict) or raw (str) body, headers, and a delay before it."""

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body["messages"])

    @property
    def prompt_token_ids(self) -> list[int]:
        """The prompt as :meth:`ScriptedChatServer.tokenized` renders it."""
        return render_chat(self.messages)


Responder = Callable[[dict[str, Any]], Answer | Awaitable[Answer]]


class ScriptedChatServer:
    """Answers chat completions from a queue of :class:`Answer`, else from ``responder(body)``."""

    def __init__(self) -> None:
        self.app = FastAPI()
        self.url = ""
        self.script: deque[Answer] = deque()
        self.responder: Responder | None = None
        self.requests: list[Received] = []
        self.models = ["scripted-model"]
        self.in_flight = 0
        self.peak = 0
        self._ids = itertools.count()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.app.add_api_route("/v1/chat/completions", self._chat, methods=["POST"])
        self.app.add_api_route("/v1/models", self._models, methods=["GET"])

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    # -- scripting ----------------------------------------------------------------------

    def reset(self) -> None:
        self.script.clear()
        self.responder = None
        self.requests.clear()
        self.models = ["scripted-model"]
        self.peak = 0

    def enqueue(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def answer(
        self,
        body: dict[str, Any] | str,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay_s: float = 0,
    ) -> None:
        """Queue any answer: a JSON (dict) or raw (str) body, sent after ``delay_s``."""
        self.enqueue(Answer(status, body, headers or {}, delay_s))

    def answer_of(self, content: str | None, *, delay_s: float = 0, **fields: Any) -> Answer:
        """A 200 chat completion of ``content``, for responders (see :meth:`completion` for ``fields``)."""
        return Answer(body=self.completion(content, **fields), delay_s=delay_s)

    def reply(self, content: str | None = None, **fields: Any) -> None:
        """Queue a 200 chat completion (see :meth:`completion` for ``fields``)."""
        self.enqueue(Answer(body=self.completion(content, **fields)))

    def fail(self, status: int, message: str = "scripted failure", *, headers: dict[str, str] | None = None) -> None:
        """Queue an OpenAI-style error answer."""
        body = {"error": {"message": message, "type": "scripted", "code": status}}
        self.enqueue(Answer(status=status, body=body, headers=headers or {}))

    def completion(
        self,
        content: str | None = None,
        *,
        tool_calls: list[dict[str, Any]] | None = None,
        finish_reason: str = "stop",
        logprobs: list[float] | None = None,
        tokens: list[str] | None = None,
        token_ids: list[int] | None = None,
        prompt_token_ids: list[int] | None = None,
    ) -> dict[str, Any]:
        """A chat-completion body shaped as vLLM returns it (``token_ids`` and ``prompt_token_ids`` optional)."""
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls is not None:
            message["tool_calls"] = tool_calls
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish_reason}
        if logprobs is not None:
            names = tokens or [f"t{i}" for i in range(len(logprobs))]
            entries = [{"token": t, "logprob": lp, "top_logprobs": []} for t, lp in zip(names, logprobs, strict=True)]
            choice["logprobs"] = {"content": entries}
        if token_ids is not None:
            choice["token_ids"] = token_ids
        body: dict[str, Any] = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.models[0],
            "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        if prompt_token_ids is not None:
            body["prompt_token_ids"] = prompt_token_ids
        return body

    def tokenized(self, body: dict[str, Any], content: str, logprob: float = -0.5) -> Answer:
        """A completion of ``content`` with token ids from a one-token-per-character "chat template".

        The prompt renders each message as ``<role>content</role>`` and ends with ``<assistant>``; the
        sampled ids are the reply's characters and ``</assistant>`` (its "end of turn"). So each turn's
        prompt starts with the last prompt and the last sampled ids, as with an append-only template.
        """
        sampled = char_ids(content + "</assistant>")
        return Answer(
            body=self.completion(
                content,
                logprobs=[logprob] * len(sampled),
                token_ids=sampled,
                prompt_token_ids=render_chat(body["messages"]),
            )
        )

    @property
    def chat_requests(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # -- serving --------------------------------------------------------------------------

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(Received(request.method, request.url.path, dict(request.headers), body, time.monotonic()))
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            answer = await self._next(body)
            if answer.delay_s:
                await asyncio.sleep(answer.delay_s)
        finally:
            self.in_flight -= 1
        content = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
        media = "text/plain" if isinstance(answer.body, str) else "application/json"
        return Response(content, status_code=answer.status, headers=answer.headers, media_type=media)

    async def _next(self, body: dict[str, Any]) -> Answer:
        if self.script:
            return self.script.popleft()
        if self.responder is not None:
            answer = self.responder(body)
            return await answer if inspect.isawaitable(answer) else answer
        return Answer(500, {"error": {"message": "the test scripted no answer for this request"}})

    async def _models(self, request: Request) -> Response:
        self.requests.append(Received(request.method, request.url.path, dict(request.headers), None, time.monotonic()))
        body = {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "test"} for m in self.models]}
        return Response(json.dumps(body), media_type="application/json")

    def start(self) -> ScriptedChatServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(256)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            self.app, log_level="warning", log_config=None, access_log=False, timeout_graceful_shutdown=1
        )
        self._server = server = uvicorn.Server(config)

        def run() -> None:
            # uvloop where installed (it is with agenthub on Linux): asyncio's own loop meets delayed ACKs here.
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                runner.run(server.serve(sockets=[sock]))

        self._thread = threading.Thread(target=run, name="scripted-chat-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the scripted chat server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def char_ids(text: str) -> list[int]:
    return [ord(c) for c in text]


def render_chat(messages: list[dict[str, Any]]) -> list[int]:
    rendered = "".join(f"<{m['role']}>{m.get('content') or ''}</{m['role']}>" for m in messages)
    return char_ids(rendered + "<assistant>")


@pytest.fixture(scope="session")
def _chat_server() -> Iterator[ScriptedChatServer]:
    server = ScriptedChatServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def chat(_chat_server: ScriptedChatServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedChatServer:
    """The scripted server, emptied for this test; OPENAI_API_KEY is unset so that no real key leaks in."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _chat_server.reset()
    return _chat_server


@pytest.fixture
async def make_agent(chat: ScriptedChatServer) -> AsyncIterator[Callable[..., OpenAIAgent]]:
    """``make_agent(**settings)``: an agent on the scripted server with fast retries, closed after the test."""
    agents: list[OpenAIAgent] = []

    def make(**settings: Any) -> OpenAIAgent:
        agent = OpenAIAgent(**{"base_url": chat.base_url, "model": "scripted-model", "backoff_s": 0.01, **settings})
        agents.append(agent)
        return agent

    yield make
    for agent in agents:
        await agent.aclose()


@pytest.fixture(scope="session")
def guess_info() -> EnvInfo:
    """What the built-in ``guess`` env advertises in /v1/info (its instructions included)."""
    return get_plugin_host().env("guess").info()
