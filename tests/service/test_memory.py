"""1,000 sessions created and closed leave memory and the session table where they started."""

from __future__ import annotations

import gc
import itertools
import tracemalloc

import psutil
import pytest

from agenthub import EnvClient, LocalServer, create_app
from agenthub.specs import EnvSpec

from ..conftest import serving

pytestmark = pytest.mark.anyio


async def cycle(client: EnvClient, n: int) -> None:
    for i in range(n):
        session = await client.create_session(task_id=i)
        await session.step("guess 8")
        await session.close()


async def test_in_process_allocations_do_not_grow(guess_spec: EnvSpec) -> None:
    app = create_app(guess_spec)
    async with serving(app) as (client, raw):
        await cycle(client, 200)  # warm caches, pools and lazy imports
        tracemalloc.start()
        snapshots = []
        for _ in range(2):  # 1,000 sessions in two windows
            gc.collect()
            snapshots.append(tracemalloc.take_snapshot())
            await cycle(client, 500)
        gc.collect()
        snapshots.append(tracemalloc.take_snapshot())
        tracemalloc.stop()
        # A leak grows in every window; a one-off allocation (a cache filling, another
        # test's thread) shows in one window only, so take the smallest growth.
        growth = min(sum(s.size_diff for s in b.compare_to(a, "filename")) for a, b in itertools.pairwise(snapshots))
        assert len(app.state.service.table) == 0
        assert (await raw.get("/healthz")).json()["sessions"] == 0
        # A leak of even 100 bytes per session would show as 50 KB.
        assert growth < 50_000, f"allocations grew by {growth} bytes over 500 sessions"


async def test_server_process_memory_is_flat(guess_server: LocalServer) -> None:
    process = psutil.Process(guess_server.pid)
    async with EnvClient(guess_server.url) as client:
        await cycle(client, 300)
        rss_before = process.memory_info().rss
        await cycle(client, 1000)
        rss_after = process.memory_info().rss
        assert (await client.health())["sessions"] == 0
    assert rss_after - rss_before < 2 * 1024 * 1024, f"RSS grew {rss_after - rss_before} bytes over 1,000 sessions"
