"""The HTTP side: chat-completion requests over aiohttp with a concurrency limit and retries.

aiohttp rather than the ``openai`` SDK: the SDK's typed models would drop
vLLM's extra fields (``token_ids``, ``prompt_token_ids``) that trainers need,
and its retry policy is not ours to set (a semaphore that spans episodes,
Retry-After up to a cap). aiohttp rather than httpx (which agenthub's env
client also left): the executor sends one of these requests per turn, and on
2 slow cores aiohttp spends ~0.3 ms of CPU per request where httpx spends
2-5 ms (``benchmarks/env_client_transports.py`` in the agenthub repository).

The limit is held only while a request is in flight, not while a request
waits to be retried, so a throttled episode does not keep others waiting.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import random
import re
import ssl
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import certifi
import orjson
from agenthub.rollout import ContextLengthExceeded

from agenthub_agent_openai.errors import ChatReplyError, ChatServerError, ChatServerUnavailableError, clip
from agenthub_agent_openai.settings import OpenAISettings

log = logging.getLogger("agenthub.agent.openai")

RETRY_STATUSES = frozenset({408, 429})
"""Retried besides every 5xx."""

_CONTEXT_TOO_LONG = re.compile(
    r"maximum context length|context length|context_length_exceeded|too many tokens|prompt is too long|"
    r"exceeds the (?:model'?s? )?(?:maximum )?context",
    re.IGNORECASE,
)


@dataclass
class _LoopState:
    """What belongs to one event loop: aiohttp's connections and asyncio's primitives are bound to it."""

    loop: asyncio.AbstractEventLoop
    http: aiohttp.ClientSession
    limit: asyncio.Semaphore
    model_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    in_flight: int = 0


@dataclass(frozen=True)
class _Answer:
    """One complete HTTP answer."""

    method: str
    url: str
    status: int
    headers: Mapping[str, str]  # case-insensitive
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return orjson.loads(self.content)


class ChatCompletionsClient:
    """``POST {base_url}/chat/completions`` with retries, backoff and at most N requests in flight."""

    def __init__(self, settings: OpenAISettings, api_key: str | None) -> None:
        self.settings = settings
        self._api_key = api_key
        self._state: _LoopState | None = None
        self._model = settings.model
        self.requests_sent = 0
        self.retries = 0

    def __repr__(self) -> str:  # never the key
        return f"ChatCompletionsClient({self.settings.base_url!r}, model={self._model!r})"

    @property
    def chat_url(self) -> str:
        return f"{self.settings.base_url}/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self.settings.extra_headers}
        if self._api_key:
            name = self.settings.api_key_header
            headers[name] = f"Bearer {self._api_key}" if name.lower() == "authorization" else self._api_key
        return headers

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            # A new event loop (a second asyncio.run): the old loop's connections cannot be reused.
            s = self.settings
            http = aiohttp.ClientSession(
                headers=self._headers(),
                # connect: waiting for a pooled connection plus connecting; sock_read: silence while answering.
                timeout=aiohttp.ClientTimeout(
                    total=None, connect=s.timeout_s, sock_connect=s.connect_timeout_s, sock_read=s.timeout_s
                ),
                connector=aiohttp.TCPConnector(limit=s.max_concurrency, limit_per_host=0, ssl=_tls_context()),
                # HTTP(S)_PROXY and NO_PROXY are read here, once: aiohttp's trust_env reads them (and
                # ~/.netrc, in a thread) on every request, which cost more CPU than the request itself.
                proxy=env_proxy(s.base_url),
                skip_auto_headers=("User-Agent",),
            )
            self._state = _LoopState(loop, http, asyncio.Semaphore(s.max_concurrency))
        return self._state

    async def aclose(self) -> None:
        state, self._state = self._state, None
        if state is not None and (state.loop is asyncio.get_running_loop() or state.loop.is_closed()):
            await state.http.close()  # on a closed loop its sockets are gone: this only marks it closed

    # -- the two requests ---------------------------------------------------------------

    async def model(self) -> str:
        """The model to ask for: the setting, else the one model ``GET /models`` lists."""
        if self._model is not None:
            return self._model
        async with self._loop_state().model_lock:
            if self._model is None:
                payload = await self._request("GET", f"{self.settings.base_url}/models")
                served = [m.get("id") for m in payload.get("data", []) if isinstance(m, dict)]
                if len(served) != 1 or not isinstance(served[0], str):
                    raise ChatServerError(
                        f"model is not set and {self.settings.base_url}/models lists {served or 'no models'}; "
                        "pass agent.model=NAME with one of them"
                    )
                self._model = served[0]
                log.info("using model %r, the one served at %s", self._model, self.settings.base_url)
        return self._model

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One chat completion's JSON answer."""
        return await self._request("POST", self.chat_url, body)

    # -- retries ------------------------------------------------------------------------

    async def _request(self, method: str, url: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        state = self._loop_state()
        attempts = self.settings.max_retries + 1
        problem = ""
        for attempt in range(1, attempts + 1):
            retry_after: float | None = None
            async with state.limit:
                state.in_flight += 1
                try:
                    self.requests_sent += 1
                    response = await self._send(state.http, method, url, body)
                except (aiohttp.ClientError, TimeoutError) as exc:
                    problem = _describe(exc, self.settings)
                else:
                    if response.status < 400:
                        return _json_of(response)
                    if response.status not in RETRY_STATUSES and response.status < 500:
                        raise self._refusal(response)
                    problem = f"HTTP {response.status}: {_server_message(response)}"
                    retry_after = retry_after_s(response.headers)
                finally:
                    state.in_flight -= 1
            if attempt == attempts:
                break
            delay = self._delay(attempt, retry_after)
            self.retries += 1
            log.warning("%s %s failed (%s); retry %d/%d in %.2fs", method, url, problem, attempt, attempts - 1, delay)
            await asyncio.sleep(delay)
        raise ChatServerUnavailableError(
            f"{method} {url} failed {attempts} time(s); the last error was {problem}. Check that the server is "
            "running and reachable at agent.base_url, or give it more time with agent.max_retries / agent.timeout_s"
        )

    @staticmethod
    async def _send(http: aiohttp.ClientSession, method: str, url: str, body: dict[str, Any] | None) -> _Answer:
        data = None if body is None else orjson.dumps(body)
        headers = _JSON if data is not None else None
        async with http.request(method, url, data=data, headers=headers) as response:
            return _Answer(method, str(response.url), response.status, response.headers, await response.read())

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Retry-After when the server sent one (capped), else exponential backoff with jitter."""
        s = self.settings
        if retry_after is not None:
            return min(retry_after, s.retry_after_max_s)
        ceiling: float = min(s.backoff_max_s, s.backoff_s * 2 ** (attempt - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _refusal(self, response: _Answer) -> Exception:
        status, message = response.status, _server_message(response)
        what = f"{response.method} {response.url} answered HTTP {status}: {message}"
        if status in (401, 403):
            env = self.settings.api_key_env
            if not self._api_key:
                advice = f"this server needs an API key: export it as {env or 'OPENAI_API_KEY'} (see api_key_env)"
            else:
                advice = f"check the API key in the environment variable {env} and its permissions for this model"
            return ChatServerError(f"{what}; {advice}", status=status)
        if status == 404:
            return ChatServerError(
                f"{what}; check agent.base_url (the API root, such as http://localhost:8000/v1) and agent.model "
                f"(the served names are listed at {self.settings.base_url}/models)",
                status=status,
            )
        if status in (400, 413, 422) and _CONTEXT_TOO_LONG.search(message):
            return ContextLengthExceeded(f"the conversation no longer fits the model's context: {what}")
        return ChatServerError(
            f"{what}; the server refused the request: check the sampling settings, tool_choice and extra_body",
            status=status,
        )


_JSON = {"Content-Type": "application/json"}


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context per process (certifi's CAs): building one costs ~60 ms, and each event loop gets a client."""
    return ssl.create_default_context(cafile=certifi.where())


def env_proxy(url: str) -> str | None:
    """The proxy that HTTP_PROXY / HTTPS_PROXY and NO_PROXY choose for ``url``, or None."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _describe(exc: BaseException, settings: OpenAISettings) -> str:
    """What went wrong on the wire, in words, with aiohttp's exception for detail."""
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        limit = settings.connect_timeout_s
        return f"connect timeout: no connection within agent.connect_timeout_s={limit:g} ({detail})"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"connect error: {detail}"
    if isinstance(exc, TimeoutError):
        return f"read timeout: no answer within agent.timeout_s={settings.timeout_s:g} ({detail})"
    return f"connection error: {detail}"


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _server_message(response: _Answer) -> str:
    """The error message in an OpenAI-style body, else the body itself (clipped)."""
    try:
        body = response.json()
    except ValueError:
        return clip(response.text.strip(), 500) or "(empty body)"
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail")
            if message:
                return clip(str(message), 500)
        elif isinstance(error, str):
            return clip(error, 500)
        if isinstance(body.get("detail"), str):
            return clip(body["detail"], 500)
    return clip(json.dumps(body), 500)


def _json_of(response: _Answer) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        raise ChatReplyError(
            f"{response.url} answered HTTP {response.status} with a body that is not JSON: "
            f"{clip(response.text, 300)!r}; check that agent.base_url points at an OpenAI-compatible API"
        ) from None
    if not isinstance(payload, dict):
        raise ChatReplyError(f"{response.url} answered with JSON that is not an object: {clip(repr(payload))}")
    return payload
