"""``agenthub.make``: a gymnasium.Env for a registered env name or a server URL."""

from __future__ import annotations

from typing import Any

from agenthub.gymnasium.remote_env import RemoteGymEnv, seated
from agenthub.plugins import get_plugin_host
from agenthub.protocols import Agent
from agenthub.service.client import SyncEnvClient
from agenthub.service.launcher import LocalServer


def make(
    env: str,
    *,
    token: str | None = None,
    task_id: Any = None,
    split: str | None = None,
    server_overrides: dict[str, Any] | None = None,
    opponent: Agent | str | None = None,
    seat: int | None = None,
) -> RemoteGymEnv:
    """Return a ``gymnasium.Env`` for ``env``.

    ``env`` is either a server URL (``http://host:port``), used as it is, or the
    name of an installed env, for which a local server process is started and
    stopped again by ``close()``.

    A multi-player env needs ``opponent``, the agent (or the name of an installed one; ``oracle``
    is the env's own) that plays every seat but ``seat`` (default 0) inside ``reset`` and ``step``.

    >>> import agenthub
    >>> env = agenthub.make("guess")  # doctest: +SKIP
    >>> observation, info = env.reset(seed=123)  # doctest: +SKIP
    """
    seating: dict[str, Any] = {"opponent": opponent, "seat": seat}
    if env.startswith(("http://", "https://")):
        client = SyncEnvClient(env, token=token)
        try:
            return RemoteGymEnv(client, task_id=task_id, split=split, owns_client=True, **seating)
        except BaseException:
            client.close()
            raise
    spec = get_plugin_host().env(env)  # unknown names fail here, with suggestions, before a process starts
    seating["opponent"], _ = seated(spec.info(), opponent, seat)  # so does a bad seating; a name is built once
    overrides = {**(server_overrides or {}), **({"token": token} if token else {})}
    server = LocalServer(env, overrides=overrides).start()
    try:
        client = SyncEnvClient(server.url, token=token)
    except BaseException:
        server.stop()
        raise
    try:
        return RemoteGymEnv(client, task_id=task_id, split=split, owns_client=True, on_close=server.stop, **seating)
    except BaseException:  # a refused seating: nothing is left running
        client.close()
        server.stop()
        raise
