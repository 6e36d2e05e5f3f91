"""The clients of protocol v1, where they have always been imported from.

Each lives in a module of its own: the async :class:`EnvClient` and :class:`RemoteSession` in
:mod:`agenthub.service.async_client`, the blocking :class:`SyncEnvClient` in
:mod:`agenthub.service.sync_client`, how a request travels (aiohttp, or an httpx transport such as
``httpx.ASGITransport(app)``) in :mod:`agenthub.service.transports`, and the sync client's event-loop
thread in :mod:`agenthub.service.loop_thread`. Plugins import them from ``agenthub``.
"""

from __future__ import annotations

from agenthub.service.async_client import EnvClient, RemoteSession
from agenthub.service.sync_client import SyncEnvClient

__all__ = ["EnvClient", "RemoteSession", "SyncEnvClient"]
