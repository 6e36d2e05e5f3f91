"""What an agent-loop worker process shares across all its episodes: one env pool, one seating.

verl builds a new agent loop object for every sample, inside an
``AgentLoopWorker`` Ray actor that runs them all on one event loop. The pool
(connections, and the local env servers when no ``urls`` are given) must
outlive each sample, so it is kept here, keyed by its settings and the
running loop. Local servers are stopped when the worker process exits. So is a
multi-player env's seating: its opponent (a model, say) is built by the first
episode and played by every later one, as ``agenthub eval`` plays one opponent.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json

from agenthub import EnvInfo
from agenthub.rollout import EnvPool
from agenthub.training import Seating, seating

from agenthub_trainer_verl.loop_settings import LoopSettings

PoolKey = tuple[int, str, tuple[str, ...], int, int, str | None, float]

_pools: dict[PoolKey, EnvPool] = {}
_locks: dict[PoolKey, asyncio.Lock] = {}
_seatings: dict[str, Seating] = {}


def shared_seating(settings: LoopSettings, info: EnvInfo) -> Seating:
    """This process's seating for ``settings`` on the env ``info`` describes: built (and checked) once."""
    key = json.dumps(
        [info.name, info.players, settings.seat, settings.opponent, settings.opponent_kwargs],
        sort_keys=True,
        default=str,
    )
    if key not in _seatings:  # no await between the check and the store: one build per key on this loop
        _seatings[key] = seating(settings, info)
    return _seatings[key]


def _key(settings: LoopSettings) -> PoolKey:
    loop = id(asyncio.get_running_loop())
    urls = tuple(settings.urls or ())
    return (loop, settings.env, urls, settings.processes, settings.capacity, settings.token, settings.unhealthy_wait_s)


async def shared_pool(settings: LoopSettings) -> EnvPool:
    """This process's pool for ``settings``: opened (servers started) by the first episode that asks."""
    key = _key(settings)
    if key in _pools:
        return _pools[key]
    lock = _locks.setdefault(key, asyncio.Lock())
    async with lock:
        if key not in _pools:
            _pools[key] = await _open(settings)
    return _pools[key]


async def _open(settings: LoopSettings) -> EnvPool:
    if settings.urls:
        pool = EnvPool.from_urls(
            settings.urls, token=settings.token, capacity=settings.capacity, unhealthy_wait_s=settings.unhealthy_wait_s
        )
    else:
        overrides = {"token": settings.token} if settings.token else None
        pool = await EnvPool.launch(
            settings.env,
            processes=settings.processes,
            capacity=settings.capacity,
            overrides=overrides,
            unhealthy_wait_s=settings.unhealthy_wait_s,
        )
    pool.start()
    return pool


async def close_pools() -> None:
    """Close the pools of the running loop (tests; a worker's servers otherwise stop at exit)."""
    loop = id(asyncio.get_running_loop())
    for key in [k for k in _pools if k[0] == loop]:
        pool = _pools.pop(key)
        _locks.pop(key, None)
        await pool.close()


@atexit.register
def _stop_local_servers() -> None:
    # The worker's loop is gone at exit: stop the child server processes directly.
    for pool in _pools.values():
        for endpoint in pool.endpoints:
            if endpoint.server is not None:
                with contextlib.suppress(Exception):
                    endpoint.server.stop(timeout_s=5.0)
