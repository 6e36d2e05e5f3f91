"""Built-in agents: the ``guess`` oracle and the uniform ``random`` baseline."""

from __future__ import annotations

import random
import re
from typing import ClassVar

from agenthub.errors import AgenthubError
from agenthub.types import AgentReply, EnvInfo, Observation, Task

_RANGE = re.compile(r"from (\d+) to (\d+)")
_FEEDBACK = re.compile(r"(-?\d+) is too (low|high)")


class GuessOracleEpisode:
    """Binary search driven only by what the environment says."""

    def __init__(self) -> None:
        self.low = 1
        self.high = 1
        self.last_guess: int | None = None

    async def act(self, observation: Observation) -> AgentReply:
        if (found := _RANGE.search(observation.text)) and self.last_guess is None:
            self.low, self.high = int(found.group(1)), int(found.group(2))
        if feedback := _FEEDBACK.search(observation.text):
            number = int(feedback.group(1))
            if feedback.group(2) == "low":
                self.low = max(self.low, number + 1)
            else:
                self.high = min(self.high, number - 1)
        self.last_guess = (self.low + self.high) // 2
        action = f"guess {self.last_guess}"
        return AgentReply(action=action, text=action)


class GuessOracle:
    """Solves every ``guess`` task in at most ceil(log2(high + 1)) guesses."""

    def start_episode(self, task: Task, env: EnvInfo) -> GuessOracleEpisode:
        if env.name != "guess":
            raise AgenthubError(f"the guess oracle only plays env 'guess', not {env.name!r}")
        return GuessOracleEpisode()


class RandomEpisode:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    async def act(self, observation: Observation) -> AgentReply:
        actions = observation.available_actions
        if not actions:
            raise AgenthubError(
                "the random agent needs info['available_actions'] from the environment; "
                "this environment does not provide it, so use another agent"
            )
        action = self.rng.choice(actions)
        return AgentReply(action=action, text=action)


class RandomAgent:
    """Picks uniformly among ``info['available_actions']``; a baseline for any env that lists them."""

    needs: ClassVar[frozenset[str]] = frozenset({"available_actions"})
    """Checked on an env's first observation before a run (``agenthub.agent_fit``)."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    def start_episode(self, task: Task, env: EnvInfo) -> RandomEpisode:
        # One RNG per episode, derived from the task, so that concurrent episodes stay reproducible.
        return RandomEpisode(random.Random(f"{self.seed}:{task.env}:{task.task_id}:{task.seed}"))
