"""Env endpoints the executor spreads sessions over: local server processes or URLs.

Each endpoint has a capacity (sessions held at once). ``slot()`` waits for the
least-loaded healthy endpoint. A background task checks ``/healthz``; an
endpoint that fails is avoided until it answers again, and a local server
whose process died is restarted (on a new port) by the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthub.errors import AgenthubError, EnvServerUnavailableError, EnvServiceError
from agenthub.service.client import EnvClient
from agenthub.service.launcher import LocalServer
from agenthub.types import EnvInfo

log = logging.getLogger("agenthub.pool")


class NoHealthyEndpointError(EnvServerUnavailableError):
    """Every endpoint of the pool has been failing for longer than the pool waits."""


@dataclass(eq=False)
class Endpoint:
    """One env server: its client, how many sessions it may hold, how many it holds."""

    url: str
    client: EnvClient
    capacity: int
    server: LocalServer | None = None
    in_use: int = 0
    healthy: bool = True
    failures: int = 0
    restarts: int = 0
    sessions_started: int = 0
    last_error: str | None = field(default=None, repr=False)

    @property
    def free(self) -> int:
        return self.capacity - self.in_use


class EnvPool:
    """Sessions spread over env servers, with health checks and restarts.

    Example::

        async with await EnvPool.launch("textcraft", processes=2) as pool:
            async with pool.slot() as endpoint:
                session = await endpoint.client.create_session(task_id=3)
    """

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        *,
        health_interval_s: float = 2.0,
        unhealthy_wait_s: float = 60.0,
        restart: bool = True,
    ) -> None:
        if not endpoints:
            raise AgenthubError("an EnvPool needs at least one endpoint (a URL or a local server)")
        self.endpoints = list(endpoints)
        self.health_interval_s = health_interval_s
        self.unhealthy_wait_s = unhealthy_wait_s
        self.restart = restart
        self._changed = asyncio.Condition()
        self._health_task: asyncio.Task[None] | None = None
        self._info: EnvInfo | None = None
        self._retired_clients: list[EnvClient] = []

    # -- construction ---------------------------------------------------------

    @classmethod
    def from_urls(
        cls, urls: Sequence[str], *, capacity: int = 64, token: str | None = None, **pool_kwargs: Any
    ) -> EnvPool:
        """Servers that run elsewhere (another machine, a Kubernetes Service); never restarted."""
        clients = [EnvClient(url, token=token, max_connections=max(capacity, 8)) for url in urls]
        return cls([Endpoint(c.base_url, c, capacity) for c in clients], **pool_kwargs)

    @classmethod
    async def launch(
        cls,
        env: str,
        *,
        processes: int = 1,
        capacity: int = 64,
        overrides: dict[str, Any] | None = None,
        **pool_kwargs: Any,
    ) -> EnvPool:
        """Start ``processes`` local ``agenthub serve env=ENV`` servers (in parallel) and pool them."""
        if processes < 1:
            raise AgenthubError(f"processes must be >= 1, got {processes}")
        settings = {"max_sessions": capacity, **(overrides or {})}
        servers = [LocalServer(env, overrides=settings) for _ in range(processes)]
        try:
            await asyncio.gather(*(asyncio.to_thread(s.start) for s in servers))
        except BaseException:
            for server in servers:
                await asyncio.to_thread(server.stop)
            raise
        token = settings.get("token")
        endpoints = [
            Endpoint(s.url, EnvClient(s.url, token=token, max_connections=max(capacity, 8)), capacity, server=s)
            for s in servers
        ]
        return cls(endpoints, **pool_kwargs)

    # -- lifecycle --------------------------------------------------------------

    async def __aenter__(self) -> EnvPool:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def start(self) -> None:
        if self._health_task is None:
            self._health_task = asyncio.create_task(self._watch_health(), name="agenthub-pool-health")

    async def close(self) -> None:
        if self._health_task is not None:
            self._health_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._health_task
            self._health_task = None
        for client in self._retired_clients:
            await client.aclose()
        for endpoint in self.endpoints:
            await endpoint.client.aclose()
            if endpoint.server is not None:
                await asyncio.to_thread(endpoint.server.stop)

    async def info(self) -> EnvInfo:
        """The env's description, from the first endpoint that answers."""
        if self._info is None:
            errors = []
            for endpoint in self.endpoints:
                try:
                    self._info = await endpoint.client.info()
                    break
                except (EnvServiceError, EnvServerUnavailableError) as exc:
                    errors.append(f"{endpoint.url}: {exc}")
            else:
                raise NoHealthyEndpointError("no env server answered /v1/info: " + "; ".join(errors))
        return self._info

    # -- sessions -----------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Endpoint]:
        """Hold one session's worth of capacity on the least-loaded healthy endpoint."""
        endpoint = await self._acquire()
        try:
            yield endpoint
        finally:
            async with self._changed:
                endpoint.in_use -= 1
                self._changed.notify()

    async def _acquire(self) -> Endpoint:
        self.start()  # health checks are what bring a failed endpoint back
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.unhealthy_wait_s
        async with self._changed:
            while True:
                healthy = [e for e in self.endpoints if e.healthy]
                ready = [e for e in healthy if e.free > 0]
                if ready:
                    endpoint = max(ready, key=lambda e: e.free)
                    endpoint.in_use += 1
                    endpoint.sessions_started += 1
                    return endpoint
                if not healthy and loop.time() > deadline:
                    raise NoHealthyEndpointError(
                        f"none of the {len(self.endpoints)} env servers has been healthy for "
                        f"{self.unhealthy_wait_s:g}s: " + "; ".join(f"{e.url}: {e.last_error}" for e in self.endpoints)
                    )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=max(0.05, self.health_interval_s))

    def report_failure(self, endpoint: Endpoint, error: BaseException) -> None:
        """Called by the executor when a request to ``endpoint`` could not reach the server."""
        endpoint.failures += 1
        endpoint.last_error = f"{type(error).__name__}: {error}"
        if isinstance(error, EnvServerUnavailableError):
            endpoint.healthy = False

    # -- health -------------------------------------------------------------------

    async def check_health(self) -> None:
        """One round of health checks (and restarts of dead local servers)."""
        await asyncio.gather(*(self._check(e) for e in self.endpoints))
        async with self._changed:
            self._changed.notify_all()

    async def _check(self, endpoint: Endpoint) -> None:
        if endpoint.server is not None and not endpoint.server.alive() and self.restart:
            await self._restart(endpoint)
            return
        try:
            await endpoint.client.health()
        except (EnvServiceError, EnvServerUnavailableError) as exc:
            if endpoint.healthy:
                log.warning("env server %s is unhealthy: %s", endpoint.url, exc)
            endpoint.healthy = False
            endpoint.last_error = f"{type(exc).__name__}: {exc}"
        else:
            if not endpoint.healthy:
                log.info("env server %s is healthy again", endpoint.url)
            endpoint.healthy = True

    async def _restart(self, endpoint: Endpoint) -> None:
        old = endpoint.server
        assert old is not None
        log.warning("env server %s (pid %s) died; restarting it", endpoint.url, old.process and old.process.pid)
        endpoint.healthy = False
        await asyncio.to_thread(old.stop)
        fresh = LocalServer(old.env, overrides=old.overrides, extra_env=old.extra_env, python=old.python)
        try:
            await asyncio.to_thread(fresh.start)
        except AgenthubError as exc:
            endpoint.last_error = f"restart failed: {exc}"
            log.error("restarting env server %s failed: %s", old.env, exc)
            return
        # Sessions in flight may still hold the old client: close it with the pool, not now.
        self._retired_clients.append(endpoint.client)
        endpoint.client = EnvClient(fresh.url, token=endpoint.client.token, max_connections=max(endpoint.capacity, 8))
        endpoint.server, endpoint.url = fresh, fresh.url
        endpoint.restarts += 1
        endpoint.healthy = True

    async def _watch_health(self) -> None:
        while True:
            await asyncio.sleep(self.health_interval_s)
            try:
                await self.check_health()
            except Exception:  # the watcher must outlive any one failure
                log.exception("health check round failed")

    def stats(self) -> list[dict[str, Any]]:
        return [
            {
                "url": e.url,
                "healthy": e.healthy,
                "in_use": e.in_use,
                "capacity": e.capacity,
                "sessions_started": e.sessions_started,
                "failures": e.failures,
                "restarts": e.restarts,
            }
            for e in self.endpoints
        ]
