"""The env servers of a trainer's rollout, where its settings say: given URLs, local processes, or a Ray cluster.

A trainer whose rollout the hub drives keeps the executor (and the policy) in its own process; its
settings inherit :class:`agenthub.config.RolloutBackendConfig` (``backend=local|ray``, ``address=``),
and :func:`open_env_pool` turns them into the :class:`~agenthub.rollout.pool.EnvPool` it plays
through, with no code of its own for either backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agenthub.config import RolloutBackendConfig, check_rollout_backend
from agenthub.rollout.pool import EnvPool
from agenthub.training.env_urls import env_url_list


class PoolSettings(Protocol):
    """The settings :func:`open_env_pool` reads (a trainer's config model has them)."""

    @property
    def env(self) -> str: ...
    @property
    def url(self) -> Sequence[str] | str | None: ...
    @property
    def token(self) -> str | None: ...
    @property
    def processes(self) -> int: ...
    @property
    def concurrency(self) -> int: ...


async def open_env_pool(config: PoolSettings, backend: RolloutBackendConfig | None = None) -> EnvPool:
    """The pool for ``config``: its ``url=`` servers, else ``processes`` local servers, else (``backend=ray``)
    ``processes`` servers on every Ray node with room. ``backend`` defaults to ``config`` itself."""
    keys = backend if backend is not None else config
    if not isinstance(keys, RolloutBackendConfig):
        keys = RolloutBackendConfig()
    urls = env_url_list(config.url)
    check_rollout_backend(keys, urls=urls)
    capacity = max(config.concurrency, 8)
    overrides = {"token": config.token} if config.token else {}
    if keys.backend == "ray":
        from agenthub.rollout.ray import launch_on_ray

        return await launch_on_ray(
            config.env,
            address=keys.address,
            processes_per_node=config.processes,
            capacity=capacity,
            overrides=overrides,
        )
    if urls:
        return EnvPool.from_urls(urls, token=config.token, capacity=max(1, config.concurrency // len(urls) + 1))
    return await EnvPool.launch(config.env, processes=config.processes, capacity=capacity, overrides=overrides or None)
