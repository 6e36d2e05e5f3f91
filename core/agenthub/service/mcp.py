"""Any env served as an MCP server, through the official ``mcp`` SDK.

Four tools: ``list_tasks``, ``start_episode``, ``act`` and ``end_episode``. Every episode is an
env session in an ``EnvService``'s session table, so the HTTP protocol's rules hold as they are:
at most ``max_sessions`` at once (a further ``start_episode`` is refused), closed after ``ttl``
idle seconds, and with ``token`` set every HTTP request must carry ``Authorization: Bearer TOKEN``
(401 with a JSON error body otherwise). A refused tool call answers an MCP tool error whose text
says what to do.

Both MCP protocol eras are served. ``start_episode`` answers ``episode_id``, a handle the server
mints (random, so it cannot be guessed), and ``act`` and ``end_episode`` take it back as an
argument: that is how the 2026-07-28 revision, which has no handshake and no ``Mcp-Session-Id``,
carries state from one tool call to the next, and it is the only way a sessionless HTTP request
names its episode. A client with an MCP session (stdio, or a 2025-era ``initialize`` over HTTP)
may leave ``episode_id`` out: its session's episode is used, at most one at a time, and it ends
with the session.

A multi-player env (``players`` > 1, e.g. ``tictactoe``) is played through the same four tools,
one MCP session playing every seat in turn: ``start_episode`` and ``act`` answer ``seat`` and
``seat_name``, the seat on turn (``null`` once the game is over), and ``act`` takes ``seat``, the
seat that acts, which must be the one on turn; ``act`` also answers ``rewards``, every seat's
reward for the step, and, on the step that ends the game, ``observations``, every seat's final
observation. A single-player env's tools take no seat and answer none.

Two ways to serve it:

- ``agenthub mcp env=NAME`` (``EnvMCP.standalone``): MCP only, over stdio or streamable HTTP;
- ``agenthub serve env=NAME mcp=true`` (``mount_mcp``): the protocol-v1 server also answers MCP
  at ``/mcp``, from the same table, so MCP episodes and HTTP sessions share one capacity.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import FastAPI

from agenthub.errors import ConfigError
from agenthub.service.env_service import EnvService
from agenthub.service.middleware import BearerTokenMiddleware
from agenthub.service.sessions import ServiceError
from agenthub.service.settings import ServiceSettings, apply_env_defaults
from agenthub.specs import EnvSpec
from agenthub.types import CreateSessionRequest, EnvInfo, StepRequest

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
except ImportError as exc:  # an optional extra: say how to get it
    raise ConfigError(f"serving an env over MCP needs the mcp SDK ({exc}); pip install 'agenthub[mcp]'") from None

__all__ = ["MCP_PATH", "STDIO_SESSION", "EnvMCP", "mount_mcp"]

STDIO_SESSION = "stdio"
"""The key of the one MCP session a stdio server (or an in-process client) has."""
MCP_PATH = "/mcp"
"""Where streamable HTTP is answered, by ``agenthub mcp transport=http`` and ``agenthub serve mcp=true``."""

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[MutableMapping[str, Any]], Awaitable[None]]],
    Awaitable[None],
]


class EnvMCP:
    """The MCP tools of one env, over the sessions of ``service``: one env session per MCP session."""

    def __init__(self, service: EnvService) -> None:
        self.service = service
        self.episodes: dict[str, _Episode] = {}
        """Each running episode, by the ``episode_id`` handle its client holds."""
        self.current: dict[str, str] = {}
        """The handle of each MCP session's running episode (sessions: stdio, 2025-era HTTP)."""
        self.server = self._build()

    @classmethod
    def standalone(cls, spec: EnvSpec, settings: ServiceSettings | None = None) -> EnvMCP:
        """MCP only (``agenthub mcp``): a service of its own, with the env's service defaults applied."""
        settings = apply_env_defaults(settings or ServiceSettings(), spec.service_defaults, env_name=spec.name)
        return cls(EnvService(spec, settings))

    @property
    def settings(self) -> ServiceSettings:
        return self.service.settings

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[EnvMCP]:
        """The service's reaper (idle sessions expire) while open; every session closed on the way out."""
        await self.service.start()
        try:
            yield self
        finally:
            self.episodes.clear()
            self.current.clear()
            await self.service.stop()

    # -- sessions -----------------------------------------------------------

    def _connection(self, ctx: Context) -> str | None:
        """The MCP session of a request: stdio's one, a 2025-era HTTP client's ``Mcp-Session-Id``, or
        None for a 2026-07-28 HTTP request, which stands alone."""
        request = ctx.request_context.request
        if request is None:
            return STDIO_SESSION
        session_id = request.headers.get("mcp-session-id")
        return str(session_id) if session_id else None

    def _handle(self, ctx: Context, episode_id: str | None) -> str:
        """The handle of the episode a call is about: ``episode_id``, else its MCP session's episode."""
        if episode_id is not None:
            return episode_id
        connection = self._connection(ctx)
        if connection is None:
            raise ToolError(
                "this request names no episode: pass episode_id, the id start_episode answered (an MCP "
                "2026-07-28 request carries no session that could remember it)"
            )
        handle = self.current.get(connection)
        if handle is None:
            raise ToolError(
                "no episode is running in this MCP session (never started, or ended); call start_episode first"
            )
        return handle

    def _running(self, handle: str) -> str:
        """The env session id of ``handle``'s episode, or a tool error saying why there is none."""
        episode = self.episodes.get(handle)
        if episode is None:
            raise ToolError(
                "no episode has this episode_id (never started on this server, or ended); call start_episode "
                "for a new one and pass the episode_id it answers"
            )
        try:
            self.service.table.get(episode.session_id)
        except ServiceError:
            self._drop(handle)
            raise ToolError(self._gone()) from None
        return episode.session_id

    def _drop(self, handle: str) -> _Episode | None:
        """Forget ``handle``'s episode (its env session is not closed here)."""
        episode = self.episodes.pop(handle, None)
        if episode is not None and episode.connection is not None and self.current.get(episode.connection) == handle:
            del self.current[episode.connection]
        return episode

    def _gone(self) -> str:
        return (
            f"this episode is gone: it was idle past the server's ttl of {self.settings.ttl:g} s "
            "(or the server was restarting); call start_episode for a new one"
        )

    async def _end(self, session_id: str) -> None:
        with contextlib.suppress(ServiceError):  # expired meanwhile: nothing left to close
            await self.service.close_session(session_id)

    async def end_connection(self, connection: str) -> None:
        """End every episode ``connection`` (an MCP session its client closed) started: their places free at once."""
        for handle in [h for h, e in self.episodes.items() if e.connection == connection]:
            episode = self._drop(handle)
            if episode is not None:
                await self._end(episode.session_id)

    def _forget_stale(self) -> None:
        """Drop episodes whose session expired, once there are more than could be running."""
        if len(self.episodes) <= self.settings.max_sessions:
            return
        for handle, episode in list(self.episodes.items()):
            try:
                self.service.table.get(episode.session_id)
            except ServiceError:
                self._drop(handle)

    def _failure(self, session_id: str) -> str | None:
        """Why the env of ``session_id`` can no longer be trusted, if it failed."""
        try:
            return self.service.table.get(session_id).failure
        except ServiceError:
            return None

    def _refusal(self, exc: ServiceError, task_id: Any) -> ToolError:
        """A tool error in MCP's words for a refusal the service made in HTTP's."""
        if exc.code == "at_capacity":
            return ToolError(
                f"the server is at capacity: {len(self.service.table)} sessions are running, its max_sessions "
                f"({self.settings.max_sessions}, HTTP and MCP together); end an episode elsewhere, wait for idle "
                "ones to expire, or retry later"
            )
        if exc.status == 422:
            return ToolError(f"task {task_id!r} cannot start: {exc.message}; list_tasks shows the valid ids")
        return ToolError(exc.message)

    # -- seats (multi-player envs) ---------------------------------------------

    @property
    def seat_names(self) -> list[str]:
        """Each seat's name: the env's own (``EnvInfo.seats``), else ``seat N``."""
        info = self.service.info
        return list(info.seats or (f"seat {s}" for s in range(info.players)))

    def _on_turn(self, seat: int | None) -> dict[str, Any]:
        """A result's ``seat`` and ``seat_name``: the seat on turn, or null once the game is over."""
        return {"seat": seat, "seat_name": None if seat is None else self.seat_names[seat]}

    def _seat_refusal(self, session_id: str, seat: int | None) -> ToolError:
        """A tool error for an act whose ``seat`` is missing, unknown or not on turn: it names the seat on turn."""
        info = self.service.info
        try:
            session = self.service.table.get(session_id)
        except ServiceError:
            return ToolError(self._gone())
        if session.done or session.seat is None:
            return ToolError("the episode is over; call end_episode, or start_episode for a new one")
        on_turn = session.seat
        turn = f"it is seat {on_turn} ({self.seat_names[on_turn]})'s turn"
        if seat is None:
            return ToolError(
                f"env {info.name!r} has {info.players} seats, so act needs `seat`, the seat that acts: {turn}; "
                f"call act with seat={on_turn}"
            )
        if not 0 <= seat < info.players:
            return ToolError(
                f"seat {seat} does not exist (env {info.name!r} has seats 0 to {info.players - 1}); {turn}: "
                f"call act with seat={on_turn}"
            )
        return ToolError(f"{turn}, not seat {seat} ({self.seat_names[seat]})'s: call act with seat={on_turn}")

    # -- tools --------------------------------------------------------------

    def _build(self) -> MCPServer[Any]:
        service = self.service
        info = service.info
        splits = service.splits
        server: MCPServer[Any] = MCPServer(
            name=f"agenthub-{info.name}",
            version=info.version,
            instructions=(
                f"{info.description}\n\nPlay it with start_episode, then act until the episode is done, then "
                "end_episode, passing act and end_episode the episode_id start_episode answered."
                f"{_seats_note(info)} Rules for the player:\n{info.instructions or ''}"
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
            description="Start an episode: a task id, or a split and seed to draw one; returns its episode_id "
            "(pass it to act and end_episode), the task id, the first observation and the env's rules. With "
            "episode_id, that episode is replaced; in an MCP session, so is the session's running one."
        )
        async def start_episode(
            ctx: Context,
            task_id: int | str | None = None,
            split: str | None = None,
            seed: int | None = None,
            episode_id: str | None = None,
        ) -> dict[str, Any]:
            connection = self._connection(ctx)
            replaced = episode_id if episode_id is not None else self.current.get(connection or "")
            old = self._drop(replaced) if replaced is not None else None
            if old is not None:
                await self._end(old.session_id)
            self._forget_stale()
            try:
                created = await service.create_session(CreateSessionRequest(task_id=task_id, split=split, seed=seed))
            except ServiceError as exc:
                raise self._refusal(exc, task_id) from None
            except Exception as exc:  # the env's own failure to build or reset
                raise ToolError(
                    f"task {task_id!r} cannot start: env {info.name!r} raised {type(exc).__name__}: {exc}; "
                    "list_tasks shows the valid ids"
                ) from None
            answer = orjson.loads(created)
            handle = secrets.token_urlsafe(18)  # the client's proof that the episode is its own: unguessable
            self.episodes[handle] = _Episode(answer["session_id"], connection)
            if connection is not None:
                self.current[connection] = handle
            started = {
                "episode_id": handle,
                "task_id": answer["task_id"],
                "observation": answer["observation"],
                "info": answer["info"],
                "instructions": info.instructions,
                "max_turns": info.default_max_turns,
            }
            if info.multi_player:
                started |= {"players": info.players, "seats": self.seat_names, **self._on_turn(answer.get("seat"))}
            return started

        async def step(session_id: str, action: str, seat: int | None) -> dict[str, Any]:
            try:
                stepped, _ = await service.step_session(session_id, StepRequest(action=action, seat=seat))
            except ServiceError as exc:
                if exc.code == "session_not_found":
                    raise ToolError(self._gone()) from None
                if exc.code == "episode_done":
                    raise ToolError("the episode is over; call end_episode, or start_episode for a new one") from None
                if exc.code in ("seat_required", "not_your_turn", "unknown_seat"):
                    raise self._seat_refusal(session_id, seat) from None
                failure = self._failure(session_id)
                if failure is not None:
                    raise ToolError(
                        f"env {info.name!r} failed ({failure}); this episode cannot go on: "
                        "call start_episode to begin another"
                    ) from None
                raise ToolError(exc.message) from None
            reply = orjson.loads(stepped)
            session = service.table.get(session_id)
            if not session.done and session.turns >= info.default_max_turns:
                # No hub drives an MCP client's turns: the server holds the env's turn limit.
                session.done = True
                reply["truncated"] = True
            reply["done"] = session.done
            if info.multi_player:
                reply |= self._on_turn(None if session.done else reply.get("seat"))
            return dict(reply)

        if info.multi_player:
            names = ", ".join(f"{s} ({name})" for s, name in enumerate(self.seat_names))

            @server.tool(
                name="act",
                description=f"Take one action (the reply text) in the episode `episode_id` names, as `seat`: "
                f"{info.name} has {info.players} seats, {names}, and only the seat on turn may act. Every result "
                "names the seat on turn next (`seat`, `seat_name`; null once the game is over) and every seat's "
                f"reward for the step (`rewards`, keyed by seat number).{_SESSION_NOTE}",
            )
            async def act_as_seat(
                ctx: Context, action: str, seat: int | None = None, episode_id: str | None = None
            ) -> dict[str, Any]:
                return await step(self._running(self._handle(ctx, episode_id)), action, seat)

        else:

            @server.tool(
                description=f"Take one action (the reply text) in the episode `episode_id` names.{_SESSION_NOTE}"
            )
            async def act(ctx: Context, action: str, episode_id: str | None = None) -> dict[str, Any]:
                return await step(self._running(self._handle(ctx, episode_id)), action, None)

        @server.tool(description=f"End the episode `episode_id` names and free its place on the server.{_SESSION_NOTE}")
        async def end_episode(ctx: Context, episode_id: str | None = None) -> dict[str, Any]:
            handle = self._handle(ctx, episode_id)
            session_id = self._running(handle)
            session = service.table.get(session_id)
            turns, done = session.turns, session.done
            self._drop(handle)
            await self._end(session_id)
            return {"ended": True, "turns": turns, "done": done}

        return server

    # -- transports -----------------------------------------------------------

    def http_handler(self) -> ASGIApp:
        """The bare streamable-HTTP endpoint (no token check, no lifespan): for mounting at ``MCP_PATH``."""
        self.server.streamable_http_app(
            streamable_http_path=MCP_PATH, session_idle_timeout=self.settings.ttl, host=self.settings.host
        )
        return self._ending_episodes(StreamableHTTPASGIApp(self.server.session_manager))

    def http_app(self) -> ASGIApp:
        """The streamable-HTTP app of ``agenthub mcp`` at ``/mcp``, behind the bearer token when one is set."""
        _quiet_sdk_log()
        app: ASGIApp = self._ending_episodes(
            self.server.streamable_http_app(
                streamable_http_path=MCP_PATH, session_idle_timeout=self.settings.ttl, host=self.settings.host
            )
        )
        if not self.settings.token:
            return app
        return BearerTokenMiddleware(app, self.settings.token, open_paths=frozenset())

    def _ending_episodes(self, app: ASGIApp) -> ASGIApp:
        """``app``, and once a client ends its MCP session (``DELETE``), the end of that session's episode:
        its place is free at once, not after the ttl."""
        return _EndingEpisodes(app, self)

    async def run_stdio(self) -> None:
        async with self.running():
            await self.server.run_stdio_async()

    async def run_http(self, on_ready: Callable[[str], None] | None = None) -> None:
        import asyncio

        import uvicorn

        config = uvicorn.Config(
            self.http_app(), host=self.settings.host, port=self.settings.port, log_level="warning", lifespan="on"
        )
        server = uvicorn.Server(config)
        async with self.running():
            if on_ready is None:
                await server.serve()
                return
            task = asyncio.create_task(server.serve())
            while not server.started and not task.done():  # noqa: ASYNC110 (uvicorn offers only a flag)
                await asyncio.sleep(0.02)
            if server.started:
                port = server.servers[0].sockets[0].getsockname()[1]
                on_ready(f"http://{self.settings.host}:{port}{MCP_PATH}")
            await task


_SESSION_NOTE = (
    " episode_id: the id start_episode answered; a client with an MCP session (stdio, or an initialize "
    "handshake) may leave it out for its session's episode."
)


@dataclass(frozen=True)
class _Episode:
    """A running episode: its env session, and the MCP session that started it (None if sessionless)."""

    session_id: str
    connection: str | None


def _seats_note(info: EnvInfo) -> str:
    if not info.multi_player:
        return ""
    names = ", ".join(info.seats or (f"seat {s}" for s in range(info.players)))
    return (
        f" This env has {info.players} seats, numbered from 0 ({names}); each result "
        "names the seat on turn (`seat`), and act takes that seat as its `seat` argument."
    )


class _EndingEpisodes:
    """An ASGI app (a class: Starlette would wrap a plain function as a request handler) that ends
    the episodes of an MCP session its client deleted."""

    def __init__(self, app: ASGIApp, served: EnvMCP) -> None:
        self.app = app
        self.served = served

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        await self.app(scope, receive, send)
        if scope["type"] == "http" and scope["method"] == "DELETE":
            key = dict(scope.get("headers") or []).get(b"mcp-session-id", b"").decode("latin-1")
            if key:
                await self.served.end_connection(key)


def _quiet_sdk_log() -> None:
    if logging.getLogger("mcp").level == logging.NOTSET:
        # The SDK logs every MCP session and refused tool call at INFO; the HTTP side logs no request.
        logging.getLogger("mcp").setLevel(logging.WARNING)


def mount_mcp(app: FastAPI) -> EnvMCP:
    """Answer MCP at ``/mcp`` in ``app`` (from ``create_app``), over the app's own service.

    The endpoint sits behind the app's middleware (body limit, bearer token), and the MCP session
    manager runs inside the app's lifespan, stopping before the service closes its sessions.
    """
    from starlette.routing import Route

    _quiet_sdk_log()
    served = EnvMCP(app.state.service)
    app.router.routes.append(Route(MCP_PATH, endpoint=served.http_handler()))
    service_lifespan = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(instance: Any) -> AsyncIterator[None]:
        async with service_lifespan(instance), served.server.session_manager.run():
            yield

    app.router.lifespan_context = lifespan
    return served
