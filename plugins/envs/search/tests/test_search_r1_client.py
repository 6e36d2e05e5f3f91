"""``serve-retriever`` driven by Search-R1's own client code, at the batch its training sends.

Search-R1's ``train_grpo.sh`` rolls out 512 prompts x 5 samples, so one turn's ``_batch_search`` posts
up to 2,560 queries with topk 3, and an empty list on a turn where no sample searched; its
``batch_search`` reads ``.json()['result']`` and formats each row with ``_passages2string``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from agenthub_env_search.bm25 import shared_index
from agenthub_env_search.data import default_dataset, load_questions
from agenthub_env_search.env import format_information

BATCH = 512 * 5


def test_search_r1_training_batch_through_its_own_client(
    serve_retriever: Callable[..., AbstractContextManager[str]], make_search_r1_manager: Callable[..., Any]
) -> None:
    data = default_dataset()
    questions = [row["question"] for row in load_questions(str(data / "train.jsonl"))[:BATCH]]
    assert len(questions) == BATCH
    with serve_retriever() as url:
        manager = make_search_r1_manager(search_url=f"{url}/retrieve", topk=3)
        started = time.perf_counter()
        texts = manager.batch_search(questions)
        seconds = time.perf_counter() - started
        print(f"\nSearch-R1 batch_search: {BATCH} queries x topk 3 in {seconds:.2f} s")
        # A turn where no sample searched sends an empty list.
        assert manager.batch_search([]) == []
        # One whole step of its loop: every sample searches, and each gets its <information> back.
        replies = [f"<think>look it up</think>\n<search>{q}</search> trailing text" for q in questions[:64]]
        obs, dones, valid, is_search = manager.execute_predictions(replies, "<pad>", [True] * 64)
        assert (sum(dones), sum(valid), sum(is_search)) == (0, 64, 64)
    assert len(texts) == BATCH
    index = shared_index(data / "corpus.jsonl")
    expected = index.search(questions, 3)
    # What the env shows for a search is what Search-R1's client builds from the server's answer.
    assert all(
        format_information(rows) == f"<information>{text.strip()}</information>"
        for rows, text in zip(expected, texts, strict=True)
    )
    assert all(text.count("Doc ") == 3 for text in texts)
    assert obs[0] == f"\n\n{format_information(expected[0])}\n\n"
