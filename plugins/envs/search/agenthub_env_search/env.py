"""``search``: multi-hop QA by searching a corpus, as in Search-R1 and AgentGym-RL's Deep Search.

Each turn the model either searches (``<search>query</search>``, answered with the top-k
passages inside ``<information>...</information>``) or answers (``<answer>...</answer>``), which
ends the episode with reward 1.0 on an exact match after SQuAD normalization, else 0.0.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenthub import Action, begin_reset

from agenthub_env_search.actions import parse_action as parse_reply
from agenthub_env_search.bm25 import BM25Params, Passage
from agenthub_env_search.data import DEFAULT_SEED, default_dataset, load_questions
from agenthub_env_search.normalize import exact_match, f1_score
from agenthub_env_search.retrievers import BM25Retriever, Retriever, UrlRetriever
from agenthub_env_search.tasks import TEST_COUNT, TRAIN_COUNT

StepTuple = tuple[str, float, bool, bool, dict[str, Any]]

# Search-R1's words for a reply with no action (execute_predictions), less its surrounding newlines.
INVALID = (
    "My previous action is invalid. If I want to search, I should put the query between <search> and </search>. "
    "If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again."
)


def parse_action(action: Action, *, lenient: bool = False) -> tuple[str, str] | None:
    """``("search" | "answer", text)`` from a model message, or ``None`` when it holds neither."""
    return parse_reply(action, lenient=lenient)


def passages_to_string(passages: list[Passage]) -> str:
    """Search-R1's ``_passages2string``: the first line of a passage's contents is its title, as written."""
    out = ""
    for i, passage in enumerate(passages, 1):
        title, _, text = passage.contents.partition("\n")
        out += f"Doc {i}(Title: {title}) {text}\n"
    return out


def format_information(passages: list[Passage]) -> str:
    """Search-R1's observation of a search: ``<information>`` around the stripped passages string."""
    return f"<information>{passages_to_string(passages).strip()}</information>"


def question_file(split: str, qa: str | None, seed: int) -> str:
    return qa if qa else str(default_dataset(seed) / f"{split}.jsonl")


class SearchEnv:
    """One question per episode; the index is shared by every session of the process.

    Settings: ``topk`` passages per search, ``max_turns`` (turns before the episode is cut),
    ``retriever`` (``bm25`` in-process; ``dense`` with ``embedding_url`` and ``embedding_model``; or
    ``url`` with ``retriever_url`` and, for a server with a token, ``retriever_token``), ``corpus`` and ``qa``
    (FlashRAG JSONL paths; default: the generated Fictopedia for ``seed``), ``lenient_tags``
    (also read tags in any case and ``search:``/``answer:`` lines, with no cut at the first closer;
    default off: replies are read exactly as Search-R1 reads them).
    """

    def __init__(
        self,
        *,
        topk: int = 3,
        max_turns: int = 10,
        retriever: str = "bm25",
        retriever_url: str | None = None,
        retriever_token: str | None = None,
        corpus: str | None = None,
        qa: str | None = None,
        seed: int = DEFAULT_SEED,
        stemmer: str = "english",
        embedding_url: str | None = None,
        embedding_model: str | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        lenient_tags: bool = False,
    ) -> None:
        if topk < 1 or max_turns < 1:
            raise ValueError(f"topk and max_turns must be at least 1, got topk={topk} max_turns={max_turns}")
        self.topk, self.max_turns, self.qa, self.seed = topk, max_turns, qa, seed
        self.lenient_tags = lenient_tags
        self._retriever: Retriever
        if retriever == "bm25":
            path = Path(corpus) if corpus else default_dataset(seed) / "corpus.jsonl"
            self._retriever = BM25Retriever(path, BM25Params(stemmer=stemmer))
        elif retriever == "dense":
            from agenthub_env_search.dense import shared_dense

            if not embedding_url or not embedding_model:
                raise ValueError(
                    "retriever=dense needs embedding_url=http://HOST:PORT and embedding_model=NAME "
                    "(an OpenAI-compatible /v1/embeddings server)"
                )
            path = Path(corpus) if corpus else default_dataset(seed) / "corpus.jsonl"
            self._retriever = shared_dense(path, embedding_url, embedding_model, query_prefix, passage_prefix)
        elif retriever == "url":
            if not retriever_url:
                raise ValueError("retriever=url needs retriever_url=http://HOST:PORT (see `agenthub serve-retriever`)")
            self._retriever = UrlRetriever(retriever_url, token=retriever_token)
        else:
            raise ValueError(f"retriever must be 'bm25', 'dense' or 'url', got {retriever!r}")
        self._row: dict[str, Any] | None = None
        self._turns = 0
        self._searches = 0
        self._done = False

    def _question(self, task_id: int | str) -> dict[str, Any]:
        if self.qa:
            rows = load_questions(self.qa)
            if isinstance(task_id, int) and not isinstance(task_id, bool) and 0 <= task_id < len(rows):
                return rows[task_id]
            for row in rows:
                if str(row.get("id")) == str(task_id):
                    return row
            raise ValueError(
                f"unknown task id {task_id!r} for {self.qa}: give a line index 0-{len(rows) - 1} or a row id"
            )
        if isinstance(task_id, bool) or not isinstance(task_id, int) or not 0 <= task_id < TRAIN_COUNT + TEST_COUNT:
            raise ValueError(
                f"unknown search task id {task_id!r}; valid ids are integers: train 0-{TRAIN_COUNT - 1}, "
                f"test {TRAIN_COUNT}-{TRAIN_COUNT + TEST_COUNT - 1}"
            )
        split, index = ("train", task_id) if task_id < TRAIN_COUNT else ("test", task_id - TRAIN_COUNT)
        return load_questions(question_file(split, None, self.seed))[index]

    def reset(
        self,
        *,
        task_id: int | str | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        count = len(load_questions(self.qa)) if self.qa else TRAIN_COUNT  # a seed draws a train task
        start = begin_reset("search", task_id=task_id, seed=seed, options=options, train=range(count))
        self._row = self._question(start.task_id)
        self._turns = self._searches = 0
        self._done = False
        return f"Question: {self._row['question']}", self._info()

    def step(self, action: Action) -> StepTuple:
        if self._row is None:
            raise RuntimeError("step() called before reset()")
        if self._done:
            return "The episode is over. Reset to play again.", 0.0, True, False, self._info()
        self._turns += 1
        parsed = parse_action(action, lenient=self.lenient_tags)
        if parsed is not None and parsed[0] == "answer":
            golden = self._row["golden_answers"]
            em, f1 = exact_match(parsed[1], golden), f1_score(parsed[1], golden)
            self._done = True
            info = {**self._info(), "em": em, "f1": f1, "won": em == 1.0, "score": em, "answer": parsed[1]}
            return f"Your answer {parsed[1]!r} is {'correct' if em else 'wrong'}.", em, True, False, info
        # Search-R1 searches for an empty query too; the lenient reading calls it invalid, as it always did.
        if parsed is None or (self.lenient_tags and not parsed[1]):
            text, info = INVALID, {**self._info(), "invalid_action": True}
        else:
            self._searches += 1
            text, info = format_information(self._retriever.search([parsed[1]], self.topk)[0]), self._info()
        if self._turns >= self.max_turns:
            self._done = True
            return (
                text + "\nThe turn limit is reached without an answer.",
                0.0,
                False,
                True,
                {
                    **info,
                    "em": 0.0,
                    "f1": 0.0,
                    "won": False,
                    "score": 0.0,
                },
            )
        return text, 0.0, False, False, info

    def close(self) -> None:
        self._row = None
        if isinstance(self._retriever, UrlRetriever):  # its own client; the indexes are shared, kept open
            self._retriever.close()

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"searches": self._searches, "turns": self._turns}
        if self._row is not None and isinstance(self._row.get("metadata"), dict) and "hops" in self._row["metadata"]:
            info["hops"] = self._row["metadata"]["hops"]
        return info
