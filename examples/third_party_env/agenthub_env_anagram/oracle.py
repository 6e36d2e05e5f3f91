"""``anagram-oracle``: finds the listed word with the same letters; wins every task."""

from __future__ import annotations

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task

from agenthub_env_anagram.env import words


class AnagramOracleEpisode:
    async def act(self, observation: Observation) -> AgentReply:
        scrambled = observation.text.rsplit(":", 1)[-1].strip()
        for word in words():
            if sorted(word) == sorted(scrambled):
                return AgentReply(action=word, text=word)
        raise AgenthubError(f"the anagram oracle knows no word with the letters {scrambled!r}")


class AnagramOracle:
    def start_episode(self, task: Task, env: EnvInfo) -> AnagramOracleEpisode:
        return AnagramOracleEpisode()
