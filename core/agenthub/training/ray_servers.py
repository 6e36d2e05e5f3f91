"""Env servers that a framework's own workers cannot start themselves: ``backend=ray``'s, on a Ray cluster.

The workers of such a framework start their own env servers (or use ``url=``); with ``backend=ray`` the run
places them on the cluster's nodes instead, before the framework starts, so that every worker on any node
reaches them (their URLs and token then go into the framework's launch files).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Literal, Protocol

from agenthub.config import RolloutBackendConfig
from agenthub.training.lifecycle import ServerUrls, env_servers


class RayServedSettings(Protocol):
    """What :func:`ray_env_servers` reads of a trainer's settings (a :class:`RolloutBackendConfig` with
    the env it serves)."""

    @property
    def env(self) -> str: ...

    @property
    def processes(self) -> int: ...

    @property
    def token(self) -> str | None: ...

    @property
    def backend(self) -> Literal["local", "ray"]: ...

    @property
    def address(self) -> str | None: ...


@contextlib.contextmanager
def ray_env_servers(settings: RayServedSettings, *, max_sessions: int) -> Iterator[ServerUrls | None]:
    """``backend=ray``: the env servers on the Ray cluster's nodes for the length of the run, ``processes``
    of ``max_sessions`` sessions on each node; None otherwise: each worker starts its own, or uses ``url=``."""
    if settings.backend != "ray":
        yield None
        return
    backend = RolloutBackendConfig(backend=settings.backend, address=settings.address)
    with env_servers(
        settings.env,
        None,
        processes=settings.processes,
        max_sessions=max_sessions,
        token=settings.token,
        backend=backend,
    ) as urls:
        yield urls
