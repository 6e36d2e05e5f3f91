"""A run that the store test kills with SIGKILL: ``python collect_child.py URL RUN_DIR``.

Plays 30 guess episodes, two at a time, slowly, into a run directory.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from agenthub import AgentReply, EnvInfo, Observation, Task
from agenthub.builtin.agents import GuessOracleEpisode
from agenthub.rollout.collect import collect
from agenthub.rollout.executor import Executor, episode_requests
from agenthub.rollout.pool import EnvPool
from agenthub.rollout.store import RunStore

CONFIG = {"env": "guess", "agent": "guess-oracle", "n": 30}
TASKS = [Task(env="guess", task_id=i) for i in range(30)]


class SlowOracle:
    def start_episode(self, task: Task, env: EnvInfo) -> SlowEpisode:
        return SlowEpisode()


class SlowEpisode(GuessOracleEpisode):
    async def act(self, observation: Observation) -> AgentReply:
        await asyncio.sleep(0.05)
        return await super().act(observation)


async def main(url: str, run_dir: Path, resume: bool) -> None:
    store = (
        RunStore.resume(run_dir, CONFIG)
        if resume
        else RunStore.create(CONFIG, root=run_dir.parent, run_id=run_dir.name)
    )
    async with EnvPool.from_urls([url]) as pool:
        summary = await collect(Executor(pool, SlowOracle(), concurrency=2), episode_requests(TASKS), store=store)
    store.finish(summary.as_dict())


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), resume=len(sys.argv) > 3))
