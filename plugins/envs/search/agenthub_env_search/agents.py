"""``search-oracle`` searches along the gold chain; ``search-one-shot`` searches once and guesses.

Both read the gold chain from the generated question file (it ships with the corpus), never
from the env: the oracle searches each entity of the chain by its title and answers only if
every search surfaced the next hop, so it measures the retrieval as well as the data. The
one-search baseline searches the question text once and answers with the entity that the top
passage links through the question's last relation; it is right when one search is enough.
"""

from __future__ import annotations

from typing import Any

from agenthub import AgenthubError, AgentReply, EnvInfo, Observation, Task

from agenthub_env_search.data import DEFAULT_SEED, load_questions
from agenthub_env_search.env import question_file
from agenthub_env_search.tasks import TRAIN_COUNT

# The phrase each article uses for a relation, followed by the linked title (see fictopedia.article).
_LINK_WORDS = {
    "country": "is a city in ",
    "mayor": "Its mayor is ",
    "capital": "whose capital is ",
    "born_in": "born in ",
    "employer": "worked for ",
    "headquarters": "has its headquarters in ",
    "founder": "founded by ",
    "creator": "created by ",
    "publisher": "published by ",
}


def _row_for(task: Task, seed: int) -> dict[str, Any]:
    if not isinstance(task.task_id, int):
        raise AgenthubError(f"the search agents play the generated tasks (integer ids), got {task.task_id!r}")
    split, index = ("train", task.task_id) if task.task_id < TRAIN_COUNT else ("test", task.task_id - TRAIN_COUNT)
    row = load_questions(question_file(split, None, seed))[index]
    if "chain" not in row.get("metadata", {}):
        raise AgenthubError("this question has no gold chain in its metadata; the oracle needs generated questions")
    return row


def _linked_title(information: str, relation: str) -> str | None:
    """The title the first passage of ``information`` links through ``relation``."""
    first = information.split("\nDoc 2(", 1)[0]
    words = _LINK_WORDS[relation]
    at = first.find(words)
    if at < 0:
        return None
    rest = first[at + len(words) :]
    close = rest.find(")")
    return rest[: close + 1] if close >= 0 else None


class OracleEpisode:
    def __init__(self, row: dict[str, Any]) -> None:
        self.chain: list[str] = row["metadata"]["chain"]
        self.hop = 0
        self.lost = False

    async def act(self, observation: Observation) -> AgentReply:
        if self.hop > 0 and f"(Title: {self.chain[self.hop - 1]})" not in observation.text:
            self.lost = True  # the search did not surface the entity: retrieval failed this hop
        if self.hop < len(self.chain) - 1 and not self.lost:
            query = self.chain[self.hop]
            self.hop += 1
            text = f"<think>I need the article on {query}.</think>\n<search>{query}</search>"
            return AgentReply(action=text, text=text)
        final = self.chain[-1]
        answer = final.rsplit(" (", 1)[0] if not self.lost and final in observation.text else "unknown"
        text = f"<answer>{answer}</answer>"
        return AgentReply(action=text, text=text)


class OneSearchEpisode:
    def __init__(self, row: dict[str, Any]) -> None:
        self.question: str = row["question"]
        self.relation: str = row["metadata"]["relations"][-1]
        self.searched = False

    async def act(self, observation: Observation) -> AgentReply:
        if not self.searched:
            self.searched = True
            text = f"<search>{self.question}</search>"
            return AgentReply(action=text, text=text)
        title = _linked_title(observation.text, self.relation)
        text = f"<answer>{title.rsplit(' (', 1)[0] if title else 'unknown'}</answer>"
        return AgentReply(action=text, text=text)


class _Agent:
    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.seed = seed

    def _row(self, task: Task, env: EnvInfo) -> dict[str, Any]:
        if env.name != "search":
            raise AgenthubError(f"this agent only plays env 'search', not {env.name!r}")
        return _row_for(task, self.seed)


class SearchOracle(_Agent):
    """Searches each entity of the gold chain by title, then answers."""

    def start_episode(self, task: Task, env: EnvInfo) -> OracleEpisode:
        return OracleEpisode(self._row(task, env))


class OneSearchBaseline(_Agent):
    """Searches the question once and answers from the top passage."""

    def start_episode(self, task: Task, env: EnvInfo) -> OneSearchEpisode:
        return OneSearchEpisode(self._row(task, env))
