"""``agenthub.make``: a gymnasium.Env for a registered env name or a server URL."""

from __future__ import annotations

from typing import Any

from agenthub.gymnasium.remote_env import RemoteGymEnv
from agenthub.plugins import get_plugin_host
from agenthub.service.client import SyncEnvClient
from agenthub.service.launcher import LocalServer


def make(
    env: str,
    *,
    token: str | None = None,
    task_id: Any = None,
    split: str | None = None,
    server_overrides: dict[str, Any] | None = None,
) -> RemoteGymEnv:
    """Return a ``gymnasium.Env`` for ``env``.

    ``env`` is either a server URL (``http://host:port``), used as it is, or the
    name of an installed env, for which a local server process is started and
    stopped again by ``close()``.

    >>> import agenthub
    >>> env = agenthub.make("guess")  # doctest: +SKIP
    >>> observation, info = env.reset(seed=123)  # doctest: +SKIP
    """
    if env.startswith(("http://", "https://")):
        return RemoteGymEnv(SyncEnvClient(env, token=token), task_id=task_id, split=split, owns_client=True)
    get_plugin_host().env(env)  # unknown names fail here, with suggestions, before a process starts
    overrides = {**(server_overrides or {}), **({"token": token} if token else {})}
    server = LocalServer(env, overrides=overrides).start()
    try:
        client = SyncEnvClient(server.url, token=token)
    except BaseException:
        server.stop()
        raise
    return RemoteGymEnv(client, task_id=task_id, split=split, owns_client=True, on_close=server.stop)
