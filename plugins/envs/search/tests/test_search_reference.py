"""The env against Search-R1's own code (tests/reference) on thousands of generated replies.

What is compared: the action read from a reply (generation.py's tag cut, then
``postprocess_predictions``); what the env answers (``execute_predictions``'s observation for a
search or an invalid reply, with the <information> text of ``_passages2string``); and the reward of
an answer (``qa_em.compute_score_em`` over Search-R1's prompt followed by the reply, as its reward
manager scores the decoded prompt and response).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agenthub_env_search.bm25 import BM25Index
from agenthub_env_search.env import INVALID, SearchEnv, format_information, parse_action

# Search-R1's prompt (scripts/data_process/nq_search.py, template "base"): its reward manager scores
# the decoded prompt and response together, and the prompt's own example answer is why
# extract_solution wants two <answer> matches.
PREFIX = (
    "Answer the given question. You must conduct reasoning inside <think> and </think> first every time you get "
    "new information. After reasoning, if you find you lack some knowledge, you can call a search engine by "
    "<search> query </search> and it will return the top searched results between <information> and "
    "</information>. You can search as many times as your want. If you find no further external knowledge "
    "needed, you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. "
    "For example, <answer> Beijing </answer>. Question: {question}\n"
)

FRAGMENTS = [
    "<search>", "</search>", "<answer>", "</answer>", "<think>", "</think>", "<information>", "</information>",
    "<SEARCH>", "</Search>", "<Answer>", "</ANSWER>", "< search>", "<search >", "</search", "<answer", "<<", ">",
    "Korvath", "the Korvath.", " korvath! ", "Ilsa Varn", "Ilsa Varn (poet)", "Tessaly", "Beijing", "lanterns",
    "search: Korvath", "answer: Korvath", "Answer: Korvath", "\n", "\n\n", " ", "\t", "  ", "I think ", "so",
    "\u00e9", "\u2205", "</", "/", "<search></search>", "<answer></answer>", "<answer> </answer>",
]  # fmt: skip

TEMPLATES = [
    "<think>{a}</think>\n<search>{b}</search>",
    "<think>{a}</think>\n<answer>{b}</answer>",
    "<search>{a}<search>{b}</search></search>",
    "<answer>{a}<answer>{b}</answer></answer>",
    "<search>{a}</answer>{b}</search>",
    "{a}</search>{b}<answer>{a}</answer>",
    "<answer>{a}</answer>{b}<search>{b}</search>",
    "<search>{a}\n{b}</search>\n<answer>{b}</answer>",
    "<SEARCH>{a}</SEARCH><answer>{b}</answer>",
    "<Answer>{a}</Answer>",
    "answer: {a}\n<search>{b}</search>",
    "  <search>  {a}  </search>  ",
    "<search>{a}",
    "{a}</answer>",
    "<think><search>{a}</search></think><answer>{b}</answer>",
    "<information>{a}</information><answer>{b}</answer>",
]
WORDS = ["Korvath", "the Korvath.", "Ilsa Varn", "Tessaly (Orund)", "", " ", "\n", "lanterns", "Beijing", "korvath"]

# Passages whose contents test the title rule: quoted titles, several lines, a title with no text.
ODD_CORPUS = [
    {"id": "q", "contents": '"Evan Morris"\nEvan Morris was a lobbyist in Korvath.'},
    {"id": "m", "contents": "Korvath harbour\nFirst line of text.\nSecond line.\n\nAfter a blank line."},
    {"id": "t", "contents": "Korvath alone"},
    {"id": "s", "contents": "  Spaced Korvath title  \n  text with spaces  "},
    {"id": "u", "contents": "Caf\u00e9 Korvath\nUnicode text \u2014 lanterns."},
]


def replies(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = [t.format(a=a, b=b) for t in TEMPLATES for a in WORDS for b in WORDS]
    while len(out) < count:
        out.append("".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 14))))
    return out


def reference_action(manager: Any, reply: str) -> tuple[str, str] | None:
    cut = manager._postprocess_responses_str([reply])[0]
    actions, contents = manager.postprocess_predictions([cut])
    return None if actions[0] is None else (actions[0], contents[0])


def test_actions_match_search_r1_on_generated_replies(search_r1_manager: Any) -> None:
    cases = replies(6000)
    differ = [r for r in cases if parse_action(r) != reference_action(search_r1_manager, r)]
    assert not differ, f"{len(differ)} of {len(cases)} replies read differently, e.g. {differ[:5]!r}"
    kinds = {None if (a := reference_action(search_r1_manager, r)) is None else a[0] for r in cases}
    assert kinds == {None, "search", "answer"}  # the corpus exercises every outcome


def test_observations_and_rewards_match_search_r1(
    search_r1: dict[str, ModuleType], search_r1_manager: Any, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in ODD_CORPUS), encoding="utf-8")
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "k", "question": "Which city?", "golden_answers": ["Korvath", "Tessaly"]}) + "\n")
    env = SearchEnv(corpus=str(corpus), qa=str(qa), topk=3)
    index = BM25Index(corpus)
    compared = {"search": 0, "answer": 0, "invalid": 0}
    for reply in replies(3000, seed=1):
        env.reset(task_id="k")
        text, reward, terminated, _, _ = env.step(reply)
        cut = search_r1_manager._postprocess_responses_str([reply])[0]
        expected = reference_action(search_r1_manager, reply)
        obs, dones, valid, _ = search_r1_manager.execute_predictions([cut], "<pad>", [True], do_search=False)
        if expected is None:
            assert text == obs[0].strip() == INVALID and (dones[0], valid[0]) == (0, 0)
            compared["invalid"] += 1
        elif expected[0] == "search":
            rows = [{"document": {"id": p.id, "contents": p.contents}} for p in index.search([expected[1]], 3)[0]]
            want = f"\n\n<information>{search_r1_manager._passages2string(rows).strip()}</information>\n\n"
            assert "\n\n" + text + "\n\n" == want, reply
            compared["search"] += 1
        else:
            with contextlib.redirect_stdout(io.StringIO()):  # compute_score_em prints one call in 64
                score = search_r1["qa_em"].compute_score_em(
                    PREFIX.format(question="Which city?") + cut, {"target": ["Korvath", "Tessaly"]}
                )
            assert (reward, terminated, dones[0]) == (float(score), True, 1), reply
            compared["answer"] += 1
    assert min(compared.values()) >= 100, compared


def test_information_keeps_titles_as_the_corpus_writes_them(search_r1_manager: Any) -> None:
    from agenthub_env_search.bm25 import Passage

    passages = [Passage(r["id"], "", "", 1.0, r["contents"]) for r in ODD_CORPUS]
    rows = [{"document": {"contents": p.contents}} for p in passages]
    assert (
        format_information(passages) == f"<information>{search_r1_manager._passages2string(rows).strip()}</information>"
    )
    assert format_information(passages).startswith('<information>Doc 1(Title: "Evan Morris") Evan Morris was')


@pytest.mark.parametrize("golden", [["Korvath"], ["the Korvath"], ["Tessaly (Orund)"], ["Beijing"], ["caf\u00e9"]])
def test_exact_match_agrees_with_qa_em(search_r1: dict[str, ModuleType], golden: list[str]) -> None:
    from agenthub_env_search.normalize import exact_match

    for answer in WORDS + FRAGMENTS + ["Café", "CAF\u00c9!", "an apple", "Tessaly, Orund", "A  Korvath"]:
        assert exact_match(answer, golden) == float(search_r1["qa_em"].em_check(answer, golden)), (answer, golden)


class _SearchR1Retriever:
    """Search-R1's retriever interface (``batch_search`` of its BaseRetriever) over this env's BM25 index,
    documents as its dense retriever gives them: the corpus rows."""

    def __init__(self, index: BM25Index) -> None:
        self.index = index

    def batch_search(self, query_list: list[str], num: int, return_score: bool) -> Any:
        rows = self.index.search(query_list, num)
        results = [[{"id": p.id, "contents": p.contents} for p in row] for row in rows]
        return (results, [[p.score for p in row] for row in rows]) if return_score else results


def test_the_retrieval_server_answers_as_search_r1s_handler(
    search_r1: dict[str, ModuleType], retriever_url: str, small_dir: Path
) -> None:
    import httpx

    server = search_r1["retrieval_server"]
    # The module globals its __main__ would set: serve-retriever's default topk, and the index.
    setattr(server, "config", type("Config", (), {"retrieval_topk": 3})())  # noqa: B010
    setattr(server, "retriever", _SearchR1Retriever(BM25Index(small_dir / "corpus.jsonl")))  # noqa: B010
    rng = random.Random(2)
    words = ["Ilsa", "Varn", "poet", "Korvath", "Tessaly", "lanterns", "Elmaria", "the", "", "bridges", "of"]
    # Search-R1's client always sends return_scores true; an empty batch and null/0 topk included.
    requests: list[dict[str, Any]] = [
        {"queries": [], "return_scores": True},
        {"queries": [], "topk": 0, "return_scores": True},
        {"queries": ["Korvath"], "topk": None, "return_scores": True},
    ]
    for _ in range(200):
        queries = [" ".join(rng.choices(words, k=rng.randint(0, 4))) for _ in range(rng.randint(0, 6))]
        requests.append({"queries": queries, "topk": rng.choice([None, 0, 1, 2, 3, 5, 9]), "return_scores": True})
    with httpx.Client(timeout=30) as client:
        for body in requests:
            want = server.retrieve_endpoint(server.QueryRequest(**body))
            got = client.post(f"{retriever_url}/retrieve", json=body)
            assert got.status_code == 200 and got.json() == want, body
    # Without scores Search-R1's handler unpacks (results, scores) from a call that returns results only:
    # it fails (README, "Differences from the reference"); ours answers the bare documents it means to.
    with pytest.raises(ValueError):
        server.retrieve_endpoint(server.QueryRequest(queries=["Korvath", "Ilsa", "poet"], topk=1))
    plain = httpx.post(f"{retriever_url}/retrieve", json={"queries": ["Korvath", "Ilsa", "poet"], "topk": 1}).json()
    assert [set(row[0]) for row in plain["result"]] == [{"id", "contents"}] * 3
