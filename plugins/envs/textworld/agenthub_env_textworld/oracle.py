"""``textworld-oracle``: plays TextWorld's own walkthrough of the game, one command per turn.

The walkthrough is the one TextWorld's generator records with each game (the
env's ``request_infos`` extra ``walkthrough``). The oracle takes it from the
first observation's ``info["walkthrough"]`` when the episode was reset with
``options={"walkthrough": True}``; otherwise it reads it from the game in its
own cache, by task id, generating the game there if it is missing (the same
task id gives the same game on every machine).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task

from .games import GameCache
from .tasks import game_spec


class TextWorldOracleEpisode:
    """Sends the walkthrough's commands in order; raises if the game refuses one or the list runs out."""

    def __init__(self, cache: GameCache, task: Task) -> None:
        self._cache = cache
        self._task = task
        self._plan: list[str] | None = None
        self._next = 0

    async def _walkthrough(self, observation: Observation) -> list[str]:
        listed = observation.info.get("walkthrough")
        if isinstance(listed, list):
            return [str(command) for command in listed]
        try:
            spec = game_spec(self._task.task_id)
        except ValueError as exc:
            raise AgenthubError(f"the textworld oracle needs the episode's task id to find its game: {exc}") from None
        return await asyncio.to_thread(self._cache.walkthrough, spec)

    async def act(self, observation: Observation) -> AgentReply:
        if self._plan is None:
            self._plan = await self._walkthrough(observation)
        elif observation.info.get("invalid_action"):
            raise AgenthubError(
                f"textworld did not understand the walkthrough's command {self._plan[self._next - 1]!r}: "
                f"{observation.text[:200]!r}"
            )
        if self._next >= len(self._plan):
            raise AgenthubError(
                f"the walkthrough of task {self._task.task_id!r} ({len(self._plan)} commands) is spent "
                "but the game is not won"
            )
        action = self._plan[self._next]
        self._next += 1
        return AgentReply(action=action, text=action)


class TextWorldOracle:
    """Wins every textworld task whose walkthrough fits the turn limit; see ``README.md`` for measured rates."""

    def __init__(self, *, cache_dir: str | Path | None = None) -> None:
        """``cache_dir``: where to find (or generate) games, as for the env (default: the same default)."""
        self._cache = GameCache(cache_dir)

    def start_episode(self, task: Task, env: EnvInfo) -> TextWorldOracleEpisode:
        if env.name != "textworld":
            raise AgenthubError(f"the textworld oracle only plays env 'textworld', not {env.name!r}")
        return TextWorldOracleEpisode(self._cache, task)
