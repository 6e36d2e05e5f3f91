"""Any env served as an MCP server, through the official ``mcp`` SDK (``agenthub mcp env=NAME``).

Four tools: ``list_tasks``, ``start_episode``, ``act`` and ``end_episode``. One MCP session
holds at most one env session (stdio is one MCP session per process), under the HTTP
protocol's rules: at most ``max_sessions`` at once (a further ``start_episode`` is refused),
closed after ``ttl`` idle seconds, and with ``token`` set every HTTP request must carry
``Authorization: Bearer TOKEN`` (401 with a JSON error body otherwise). A refused tool call
answers an MCP tool error whose text says what to do.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from agenthub.errors import ConfigError
from agenthub.protocols import Environment
from agenthub.service.settings import ServiceSettings
from agenthub.specs import EnvSpec

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError as exc:  # an optional extra: say how to get it
    raise ConfigError(f"serving an env over MCP needs the mcp SDK ({exc}); pip install 'agenthub[mcp]'") from None

STDIO_SESSION = "stdio"
"""The key of the one MCP session a stdio server has."""

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[MutableMapping[str, Any]], Awaitable[None]]],
    Awaitable[None],
]


@dataclass
class _Held:
    env: Environment
    task_id: Any
    last_used: float = field(default_factory=time.monotonic)
    turns: int = 0
    done: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class EnvMCP:
    """The env sessions of one MCP server, one per MCP session."""

    def __init__(self, spec: EnvSpec, settings: ServiceSettings | None = None) -> None:
        self.spec = spec
        self.settings = settings or ServiceSettings()
        self.held: dict[str, _Held] = {}
        self.server = self._build()

    # -- sessions -----------------------------------------------------------

    async def _expire(self) -> None:
        """Close env sessions idle for longer than ttl, as the HTTP service's sweeper does."""
        now = time.monotonic()
        for key in [k for k, h in self.held.items() if now - h.last_used > self.settings.ttl]:
            held = self.held.pop(key)
            await asyncio.to_thread(held.env.close)

    def _key(self, ctx: Context) -> str:
        # Streamable HTTP names its MCP session in a header; stdio has one session per process.
        request = ctx.request_context.request
        if request is None:
            return STDIO_SESSION
        session_id = request.headers.get("mcp-session-id")
        if not session_id:
            raise ToolError("this request carries no Mcp-Session-Id; initialize an MCP session first")
        return str(session_id)

    async def _current(self, ctx: Context) -> _Held:
        await self._expire()
        held = self.held.get(self._key(ctx))
        if held is None:
            raise ToolError(
                "no episode is running in this MCP session (never started, ended, or idle past the server's "
                f"ttl of {self.settings.ttl:g} s); call start_episode first"
            )
        return held

    async def close_all(self) -> None:
        for held in self.held.values():
            await asyncio.to_thread(held.env.close)
        self.held.clear()

    # -- tools --------------------------------------------------------------

    def _build(self) -> MCPServer[Any]:
        info = self.spec.info()
        splits = self.spec.resolved_splits()
        server: MCPServer[Any] = MCPServer(
            name=f"agenthub-{info.name}",
            version=info.version,
            instructions=(
                f"{info.description}\n\nPlay it with start_episode, then act until the episode is done, then "
                f"end_episode. Rules for the player:\n{info.instructions or ''}"
            ),
        )

        @server.tool(description=f"The splits of {info.name} and the task ids in one split.")
        async def list_tasks(split: str = "test", limit: int = 100) -> dict[str, Any]:
            if split not in splits:
                raise ToolError(f"env {info.name!r} has no split {split!r}; choose one of: {', '.join(splits)}")
            tasks = splits[split]
            if tasks.ids is not None:
                ids: list[Any] = list(tasks.ids[:limit])
            else:
                assert tasks.start is not None and tasks.stop is not None
                ids = list(range(tasks.start, min(tasks.stop, tasks.start + limit)))
            return {"env": info.name, "splits": list(splits), "split": split, "count": tasks.count, "ids": ids}

        @server.tool(
            description="Start an episode of a task (replacing this session's running one); returns the first "
            "observation and the env's rules."
        )
        async def start_episode(
            ctx: Context, task_id: int | str | None = None, seed: int | None = None
        ) -> dict[str, Any]:
            await self._expire()
            key = self._key(ctx)
            old = self.held.pop(key, None)
            if old is not None:
                await asyncio.to_thread(old.env.close)
            if len(self.held) >= self.settings.max_sessions:
                raise ToolError(
                    f"the server is at capacity: {len(self.held)} episodes are running, its max_sessions; "
                    "end an episode elsewhere, wait for idle ones to expire, or retry later"
                )
            env = await asyncio.to_thread(lambda: self.spec.make(**self.settings.env_kwargs))
            try:
                observation, env_info = await asyncio.to_thread(lambda: env.reset(task_id=task_id, seed=seed))
            except (ValueError, TypeError, KeyError) as exc:
                await asyncio.to_thread(env.close)
                raise ToolError(f"task {task_id!r} cannot start: {exc}; list_tasks shows the valid ids") from None
            self.held[key] = _Held(env=env, task_id=task_id)
            return {
                "observation": observation,
                "info": env_info,
                "instructions": info.instructions,
                "max_turns": info.default_max_turns,
            }

        @server.tool(description="Take one action (the reply text) in this session's episode.")
        async def act(ctx: Context, action: str) -> dict[str, Any]:
            held = await self._current(ctx)
            async with held.lock:
                if held.done:
                    raise ToolError("the episode is over; call end_episode, or start_episode for a new one")
                try:
                    stepped = await asyncio.to_thread(held.env.step, action)
                except Exception as exc:  # the env's own failure ends its episode, as HTTP's session_failed does
                    held.done = True
                    raise ToolError(
                        f"env {info.name!r} raised {type(exc).__name__}: {exc}; this episode cannot go on: "
                        "call start_episode to begin another"
                    ) from None
                observation, reward, terminated, truncated, env_info = stepped
                held.turns += 1
                held.last_used = time.monotonic()
                truncated = bool(truncated) or held.turns >= info.default_max_turns
                held.done = bool(terminated) or truncated
            return {
                "observation": observation,
                "reward": float(reward),
                "terminated": bool(terminated),
                "truncated": truncated,
                "done": held.done,
                "info": env_info,
            }

        @server.tool(description="End this session's episode and free its place on the server.")
        async def end_episode(ctx: Context) -> dict[str, Any]:
            held = await self._current(ctx)
            self.held.pop(self._key(ctx), None)
            await asyncio.to_thread(held.env.close)
            return {"ended": True, "turns": held.turns, "done": held.done}

        return server

    # -- transports -----------------------------------------------------------

    def http_app(self) -> ASGIApp:
        """The streamable-HTTP app at ``/mcp``, behind the bearer token when one is set."""
        app: ASGIApp = self.server.streamable_http_app(
            session_idle_timeout=self.settings.ttl,
            host=self.settings.host,
        )
        token = self.settings.token
        if not token:
            return app
        expected = f"Bearer {token}".encode()

        async def guarded(
            scope: MutableMapping[str, Any],
            receive: Callable[[], Awaitable[Any]],
            send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
        ) -> None:
            if scope["type"] == "http":
                given = dict(scope.get("headers") or []).get(b"authorization", b"")
                if not hmac.compare_digest(given, expected):
                    body = (
                        b'{"error": {"code": "unauthorized", "message": "this MCP server needs the header '
                        b"'Authorization: Bearer TOKEN' with the server's token (its token= setting)\"}}"
                    )
                    headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
                    await send({"type": "http.response.start", "status": 401, "headers": headers})
                    await send({"type": "http.response.body", "body": body})
                    return
            await app(scope, receive, send)

        return guarded

    async def run_stdio(self) -> None:
        try:
            await self.server.run_stdio_async()
        finally:
            await self.close_all()

    async def run_http(self, on_ready: Callable[[str], None] | None = None) -> None:
        import uvicorn

        config = uvicorn.Config(
            self.http_app(), host=self.settings.host, port=self.settings.port, log_level="warning", lifespan="on"
        )
        server = uvicorn.Server(config)
        try:
            if on_ready is None:
                await server.serve()
                return
            task = asyncio.create_task(server.serve())
            while not server.started and not task.done():  # noqa: ASYNC110 (uvicorn offers only a flag)
                await asyncio.sleep(0.02)
            if server.started:
                port = server.servers[0].sockets[0].getsockname()[1]
                on_ready(f"http://{self.settings.host}:{port}/mcp")
            await task
        finally:
            await self.close_all()
